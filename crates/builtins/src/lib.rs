//! The builtin leaf tools of tackle, and the Location services they share.
//!
//! This crate holds [`Location`] and path resolution ([`location`]), safe file mutation
//! ([`mutation`]) and the leaf tools built on them. Every leaf follows one order: resolve the
//! path, assert `external_directory` if it lies outside the Location, assert the tool's own
//! action, and only then read or touch anything, so a denial means the file was never read.
//!
//! Invariants:
//! - Writes are atomic, serialized per canonical path and uninterruptible ([`FileMutation`]).
//! - No tool loses or changes a byte it was not asked to change.

#[cfg(feature = "apply-patch")]
pub mod apply_patch;
pub mod authorize;
#[cfg(feature = "bash")]
pub mod bash;
mod blocking;
pub mod diff;
pub mod edit;
pub mod error;
mod interactive;
pub mod location;
pub mod mutation;
pub mod question;
pub mod read;
#[cfg(feature = "search")]
pub mod search;
mod services;
pub mod skill;
mod text;
pub mod todo;
#[cfg(feature = "web")]
pub mod web;
pub mod write;

pub use authorize::{authorize, authorize_external};
pub use diff::{DiffStatus, FileDiff};
pub use error::{Error, PathReason};
pub use interactive::{InteractiveServices, interactive_tools};
pub use location::{EntryKind, ExternalDirectory, Kind, Location, Resolved};
pub use mutation::{ContentHash, FileMutation, Operation, TextWritten, Transaction, Written};
pub use services::LocationServices;

use tackle_tool_core::Tool;

/// Every builtin leaf for the Location of `services`, by name, in catalog order.
pub fn builtin_tools(services: &LocationServices) -> Vec<(String, Tool)> {
    // Each family is there only with its cargo feature.
    let mut tools: Vec<(String, Tool)> = [
        #[cfg(feature = "bash")]
        ("bash", bash::tool(services)),
        ("read", read::tool(services)),
        ("edit", edit::tool(services)),
        ("write", write::tool(services)),
        #[cfg(feature = "apply-patch")]
        ("apply_patch", apply_patch::tool(services)),
        #[cfg(feature = "search")]
        ("glob", search::glob_for(services)),
        #[cfg(feature = "search")]
        ("grep", search::grep_for(services)),
    ]
    .into_iter()
    .map(|(name, tool)| (name.to_owned(), tool))
    .collect();
    // question, skill, todowrite, webfetch, websearch: those the services make usable.
    tools.extend(interactive_tools(
        &services.permission,
        services.location.root(),
        &services.interactive,
    ));
    tools
}
