//! The one opaque tool value of tackle.
//!
//! Every executable tool — a shipped builtin, an application tool, a tool that an MCP server
//! describes at run time — is a [`Tool`]. A `Tool` is a cheap, cloneable handle around a private,
//! type-erased runtime. Authors build one from a typed description ([`Tool::typed`], with input
//! and output types that carry their own JSON Schema) or from a JSON Schema and a closure over
//! [`serde_json::Value`] ([`Tool::dynamic`]); both give the same type, and nothing outside this
//! crate can implement or inspect its runtime. A tool is executed through a registry snapshot's
//! `settle`, which bounds what the model reads; [`Tool::run_unbounded`] is that boundary's raw
//! step and nothing else calls it (`cargo xtask tidy` checks).
//!
//! Invariants:
//! - Settlement order is fixed: decode input through the one decoding layer (aliases and
//!   harmless value mistakes normalised, then checked against the input schema; failure:
//!   `Invalid tool input: <field>: <problem>` and [`REWRITE_HINT`], execute never runs) → execute → encode output (failure: `Tool returned an invalid value for its output
//!   schema: ...`) → structured projection → model content.
//! - The error discipline is carried by types: a [`ToolFailure`] is the only error a model sees;
//!   a [`Halt`] (declined, dismissed, cancelled) stops the host's turn; a [`Defect`] is a bug or a
//!   broken environment. Nothing converts one into another implicitly.
//! - A definition is derived once per name and the same `Arc` is returned afterwards.
//! - This crate depends on no other workspace crate and touches no filesystem or network.

#![deny(missing_docs)]

mod budget;
mod class;
mod content;
mod context;
#[cfg(feature = "dynamic")]
mod dynamic;
mod error;
mod input;
mod name;
mod progress;
mod rendered;
mod schema;
mod tool;
mod visibility;

pub use budget::{Budget, MAX_BYTES, MAX_LINES, MAX_STRUCTURED_BYTES, count_lines};
pub use class::ToolClass;
pub use content::{Content, OutputContent, ResultValue, ToolOutput};
pub use context::{Call, Context};
#[cfg(feature = "dynamic")]
pub use dynamic::DynamicTool;
#[cfg(feature = "dynamic")]
pub use error::InvalidSchema;
pub use error::{Defect, Halt, RegistrationError, ToolError, ToolFailure};
pub use input::{REWRITE_HINT, did_you_mean, value_kind};
pub use name::validate_name;
pub use progress::{OutputStream, Progress, ProgressSink};
pub use rendered::Rendered;
pub use schema::{input_schema_for, output_schema_for};
pub use tool::{Definition, Execute, FnExecute, SharedAction, Tool, TypedTool, from_fn};
pub use visibility::{ShowAll, Visibility};
