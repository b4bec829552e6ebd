//! What decides whether a call of a server's tool may run: the host's permission service,
//! which this crate does not know.

use std::future::Future;
use std::pin::Pin;

use tackle_tool_core::{Context, ToolError};

/// A call about to be sent to a server, as the [`Gate`] sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct GateRequest<'a> {
    /// The registered name (the permission action).
    pub name: &'a str,
    /// The configured server's name.
    pub server: &'a str,
    /// The tool's own name on the server.
    pub tool: &'a str,
    /// The server marks the tool destructive (`destructiveHint`): asking is its default.
    pub destructive: bool,
    /// The call's input.
    pub input: &'a serde_json::Value,
}

/// The future a [`Gate`] returns.
pub type GateFuture<'a> = Pin<Box<dyn Future<Output = Result<(), ToolError>> + Send + 'a>>;

/// Checks every call before it reaches a server; an error is the call's result (a denial is a
/// failure the model reads, a declined ask a halt).
pub trait Gate: Send + Sync + 'static {
    /// May `request`, made in `ctx`, be sent?
    fn check<'a>(&'a self, request: GateRequest<'a>, ctx: &'a Context) -> GateFuture<'a>;
}

/// A gate that lets every call through (tests, or a host that checks elsewhere).
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenGate;

impl Gate for OpenGate {
    fn check<'a>(&'a self, _request: GateRequest<'a>, _ctx: &'a Context) -> GateFuture<'a> {
        Box::pin(async { Ok(()) })
    }
}
