//! tackle as an MCP server: every tool of a [`Host`] to any MCP client.
//!
//! [`serve_stdio`] speaks MCP over the process's stdin and stdout. One MCP connection is one
//! tackle session: its calls share the session id (todos, managed outputs, "this session"
//! approvals), and the session is deleted when the client disconnects. The Location is the
//! `--dir` given to [`ServeOptions`], else the client's first `roots` entry when the client
//! offers roots, else the current directory; the host is built for it on the first request that
//! needs tools. Without `--dir`, `roots/list_changed` moves the session to the new first root's
//! Location (calls in flight finish on the old one).
//!
//! `tools/list` comes from the session's materialized catalog ([`tools_list`]); `tools/call`
//! goes through the registry's settle and nothing else ([`result`] maps a settlement to MCP):
//! an error result and an input error are `isError` results the model reads, a halt is a
//! JSON-RPC error. The client hears `notifications/tools/list_changed` when its session's
//! catalog changes (a tool registered or dropped in any layer), and a call that carries a
//! progress token gets `notifications/progress` (bash: its latest output line), rate-limited,
//! the last one before the result. Permission asks go to the client as `elicitation/create` when it declares
//! the capability, else [`AskPolicy`] answers them, so no ask ever waits on nobody.
//!
//! Managed outputs are resources: a `tool-output://` reference a result of this session named
//! is listed by `resources/list` and read a page at a time by `resources/read`.
//!
//! Invariants: nothing but protocol is written to stdout (logs are `tracing` events; the host
//! chooses the subscriber, and the `tackle` binary's writes to stderr); a call whose request
//! is cancelled, or whose client disappears, is cancelled (a command's process group dies with
//! it).

#![deny(missing_docs)]

mod ask;
mod catalog;
mod error;
pub mod http;
mod progress;
mod resources;
pub mod result;
mod server;
mod session;
mod stdio;
pub mod tools_list;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tackle_host::{Environment, Host, HostError};
use tackle_permission::Asker;

pub use ask::AskPolicy;
pub use error::ServeError;
pub use http::{HttpOptions, serve_http};
pub use server::McpServer;

/// Builds the host of a Location with the given permission asker (the caller applies its own
/// configuration flags, data directory and environment).
pub type BuildHost = dyn Fn(&Path, Arc<dyn Asker>) -> Result<Host, HostError> + Send + Sync;

/// How `tackle serve` runs.
#[derive(Clone)]
#[non_exhaustive]
pub struct ServeOptions {
    /// The Location; `None`: the client's first root, else the current directory.
    pub dir: Option<PathBuf>,
    /// Who answers permission asks when the client cannot be asked.
    pub ask: AskPolicy,
    /// Builds the host once the Location is known.
    pub build: Arc<BuildHost>,
}

impl std::fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("dir", &self.dir)
            .field("ask", &self.ask)
            .finish_non_exhaustive()
    }
}

impl ServeOptions {
    /// Options with `build`, no fixed Location and the default policy (deny).
    pub fn new(build: Arc<BuildHost>) -> Self {
        Self {
            dir: None,
            ask: AskPolicy::default(),
            build,
        }
    }
}

/// Refuses to serve inside tackle-started servers nested deeper than
/// [`MAX_DEPTH`](tackle_host::mcp_nesting::MAX_DEPTH), as `env`'s
/// [`DEPTH_VARIABLE`](tackle_host::mcp_nesting::DEPTH_VARIABLE) says: a configuration whose
/// server is `tackle serve` then ends here instead of starting itself again.
pub fn check_nesting(env: &Environment) -> Result<(), ServeError> {
    use tackle_host::mcp_nesting::{DEPTH_VARIABLE, beyond_limit, depth};
    match beyond_limit(depth(env.get_os(DEPTH_VARIABLE).as_deref())) {
        Some(reason) => Err(ServeError::Nested(reason)),
        None => Ok(()),
    }
}

/// Serves one MCP session over stdin and stdout until the client disconnects, then deletes the
/// session.
pub async fn serve_stdio(options: ServeOptions) -> Result<(), ServeError> {
    let server = McpServer::new(options);
    let session = server.clone();
    let outcome = server::run(server, stdio::ends()).await;
    session.close();
    outcome
}
