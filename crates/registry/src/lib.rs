//! Tool registration and the settle boundary.
//!
//! Three layers of registrations hold [`Tool`](tackle_tool_core::Tool) values under names:
//! - [`ApplicationTools`]: process-scoped, shared by every Location (one value, cloned, per
//!   process — not a global static, so tests stay isolated);
//! - the Location layer of a [`ToolRegistry`] (one registry per workspace directory), fed
//!   through the register-only [`Tools`] view the host hands to whatever produces Location
//!   tools (the builtins, an MCP connection);
//! - Session layers of the same registry ([`ToolRegistry::session_tools`]), seen only by that
//!   session's snapshots, and removed whole by [`ToolRegistry::close_session`] when the host
//!   deletes the session.
//!
//! Invariants:
//! - `register` validates every name before changing anything; a batch is added atomically and
//!   removed exactly, by dropping its [`Registration`] guard, which reveals the next active
//!   registration of each name. The newest active registration of a name wins; Session shadows
//!   Location, Location shadows application.
//! - [`ToolRegistry::materialize`] takes an immutable snapshot ([`Materialization`]);
//!   [`Materialization::settle`] is the only place that executes a tool and bounds its output
//!   (through `tackle-output-store`). A call whose effective registration changed since the
//!   snapshot is refused as `Stale tool call: <name>`; an execution that started finishes.
//! - [`Materialization::settle_batch`] settles one turn's calls: those of read-only tools
//!   ([`ToolClass`](tackle_tool_core::ToolClass)) side by side, every other one alone and in
//!   call order on its Location; the results come back in call order.
//! - Every change of a layer (a batch registered or removed, a session closed) wakes the
//!   registry's [`CatalogChanges`] watchers; they re-materialize to see what changed.
//! - Every settle is a `tracing` span (`settle`: tool, call id, session, agent, duration,
//!   result type, bytes in and out, truncated, managed reference); a host that keeps its own
//!   record of calls gives the registry a [`SettleObserver`]. Neither can change a result.
//! - The registry authorizes nothing and never depends on `tackle-permission`: catalog
//!   filtering sees only the [`Visibility`](tackle_tool_core::Visibility) trait.

#![deny(missing_docs)]

mod application;
mod batch;
mod changes;
mod error;
mod inner;
mod layer;
mod observe;
mod registry;
mod settlement;
mod snapshot;

pub use application::ApplicationTools;
pub use changes::CatalogChanges;
pub use error::SettleError;
pub use layer::Registration;
pub use observe::{SettleObserver, SettleRecord};
pub use registry::{ToolRegistry, Tools};
pub use settlement::Settlement;
pub use snapshot::Materialization;

// The README's examples are compiled and run as doc tests here, where every crate they use
// is a dependency.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
