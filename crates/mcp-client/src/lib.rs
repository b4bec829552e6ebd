//! Consumes MCP servers: each server's tools become canonical tackle tools, registered as one
//! batch per connection in a Location's registry.
//!
//! [`Servers::start`] connects every configured server concurrently (stdio processes and
//! streamable HTTP endpoints, through `rmcp`, which has no client for the legacy HTTP+SSE
//! transport: such a server is reported as [`McpClientError::LegacySse`]), each under its
//! timeout. A connected server's
//! tools are built with [`Tool::dynamic_rendered`](tackle_tool_core::Tool::dynamic_rendered)
//! from its `inputSchema` (validated at settle) and `outputSchema` (checked against
//! `structuredContent`), named `<server>_<tool>` fitted to tackle's name rule (see [`name`]),
//! and registered through the [`Tools`] view in one batch whose guard
//! the connection holds for its life. So the model reaches them only through a registry
//! snapshot and its settle, like every tool: bounded, redacted, and stale when the server went
//! away (`Stale tool call: <name>`).
//!
//! Invariants:
//! - One batch per connection: when the server exits or the connection fails the batch is
//!   dropped at once; the server is reconnected with backoff (250 ms doubling to 30 s) and a
//!   fresh batch registered; a `tools/list_changed` notification registers a fresh batch
//!   before the old one goes.
//! - A local server is started with [`nesting::DEPTH_VARIABLE`] one deeper than this process,
//!   set after its configured environment; a process at [`nesting::MAX_DEPTH`] starts none
//!   (the server is failed with the reason, and not retried). Stopping a local server kills
//!   its whole tree, what it started in other process groups included.
//! - A tool whose schema does not compile, or whose name would shadow a builtin (the host's
//!   reserved names), is skipped and reported in [`ServerStatus::skipped`]; the server's other
//!   tools register.
//! - Every call passes the host's [`Gate`] first (its permission service: the action is the
//!   registered name) and is bounded by the server's timeout; cancelling the call's context
//!   cancels the request.
//! - Results: text → text, images and blobs → file parts (one over the store's inline limit
//!   is replaced by a note), text resources → text, `isError` → a failure the model reads,
//!   `structuredContent` → the structured output.
//! - A local server's answer over rmcp's 16 MiB line limit answers its call at once: its text
//!   is streamed to the output store ([`Options::store`]) while it is read, and the model
//!   reads its ends and the `tool-output://` reference (a failure when the tool has an output
//!   schema, whose value was lost with the message). Nothing beyond one line within the limit
//!   and the ends is held; an oversized message that answers nothing is dropped.
//!
//! Layering: below the host; uses tool-core, the registry and output-store's limits, never
//! permission (the [`Gate`] is how the host's rules apply).
#![deny(missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tackle_output_store::OutputStore;
use tackle_registry::Tools;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

mod config;
mod connect;
mod convert;
mod error;
mod gate;
pub mod name;
pub mod nesting;
mod oversize;
mod status;
mod stdio;
mod supervise;
mod tree;

pub use config::{DEFAULT_TIMEOUT, ServerConfig, Transport};
pub use error::McpClientError;
pub use gate::{Gate, GateFuture, GateRequest, OpenGate};
pub use status::{RegisteredTool, ServerStatus, SkippedTool, State};

/// How servers are consumed.
#[derive(Clone)]
#[non_exhaustive]
pub struct Options {
    /// Names no server tool may take (the builtins'): such a tool is skipped and reported.
    pub reserved: BTreeSet<String>,
    /// What every call passes first.
    pub gate: Arc<dyn Gate>,
    /// The first delay before reconnecting and the longest.
    pub backoff: (Duration, Duration),
    /// Where an answer too large for one message is saved (a local server's): without one,
    /// such an answer is a failure naming its size.
    pub store: Option<OutputStore>,
    /// How deep in tackle-started servers this process runs ([`nesting::depth`]): at
    /// [`nesting::MAX_DEPTH`] no local server is started.
    pub depth: u32,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("reserved", &self.reserved)
            .field("backoff", &self.backoff)
            .field("depth", &self.depth)
            .finish_non_exhaustive()
    }
}

impl Options {
    /// Options whose calls pass `gate`, with nothing reserved and the default backoff.
    pub fn new(gate: Arc<dyn Gate>) -> Self {
        Self {
            reserved: BTreeSet::new(),
            gate,
            backoff: supervise::BACKOFF,
            store: None,
            depth: 0,
        }
    }

    /// The same options for a process at `depth` (read with [`nesting::depth`]).
    #[must_use]
    pub fn at_depth(mut self, depth: u32) -> Self {
        self.depth = depth;
        self
    }

    /// The same options saving oversized answers in `store` (the registry's).
    #[must_use]
    pub fn with_store(mut self, store: OutputStore) -> Self {
        self.store = Some(store);
        self
    }

    /// The same options with `names` reserved.
    #[must_use]
    pub fn reserving(mut self, names: impl IntoIterator<Item = String>) -> Self {
        self.reserved.extend(names);
        self
    }

    /// The same options with another backoff (first delay, longest delay).
    #[must_use]
    pub fn with_backoff(mut self, first: Duration, longest: Duration) -> Self {
        self.backoff = (first, longest.max(first));
        self
    }
}

/// The state the servers' tasks share with the [`Servers`] handle.
pub(crate) struct Shared {
    statuses: Mutex<Vec<ServerStatus>>,
    /// Registered name → server, across servers, so no two servers' tools share a name.
    claims: Mutex<BTreeMap<String, String>>,
    /// How many servers finished their first attempt.
    attempted: watch::Sender<usize>,
}

impl Shared {
    fn update(&self, server: &str, change: impl FnOnce(&mut ServerStatus)) {
        let mut statuses = self.statuses.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(status) = statuses.iter_mut().find(|s| s.name == server) {
            change(status);
        }
    }

    fn attempted(&self) {
        self.attempted.send_modify(|count| *count += 1);
    }
}

/// The configured servers of one Location, connected and supervised until this is dropped
/// (then every connection closes, its process is stopped and its tools are unregistered).
pub struct Servers {
    shared: Arc<Shared>,
    count: usize,
    cancel: CancellationToken,
}

impl std::fmt::Debug for Servers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Servers")
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl Servers {
    /// Starts connecting `servers` (name and configuration, in order) on the current Tokio
    /// runtime, each registering its tools through `tools`. Returns at once; [`ready`]
    /// waits for every first attempt. Without a runtime, every server is reported failed.
    ///
    /// [`ready`]: Self::ready
    pub fn start(servers: Vec<(String, ServerConfig)>, tools: &Tools, options: Options) -> Self {
        let count = servers.len();
        let shared = Arc::new(Shared {
            statuses: Mutex::new(servers.iter().map(|(n, _)| ServerStatus::new(n)).collect()),
            claims: Mutex::default(),
            attempted: watch::Sender::new(0),
        });
        let cancel = CancellationToken::new();
        let options = Arc::new(options);
        let runtime = tokio::runtime::Handle::try_current();
        for (name, config) in servers {
            let Ok(runtime) = &runtime else {
                shared.update(&name, |status| {
                    status.state = State::Failed;
                    status.last_error = Some("no async runtime to connect on".to_owned());
                });
                shared.attempted();
                continue;
            };
            let supervisor = supervise::Supervisor {
                name,
                config,
                tools: tools.clone(),
                shared: Arc::clone(&shared),
                options: Arc::clone(&options),
                cancel: cancel.child_token(),
            };
            runtime.spawn(supervisor.run());
        }
        Self {
            shared,
            count,
            cancel,
        }
    }

    /// Waits until every server was tried once (connected with its tools registered, or
    /// failed).
    pub async fn ready(&self) {
        let mut attempted = self.shared.attempted.subscribe();
        let _ = attempted.wait_for(|count| *count >= self.count).await;
    }

    /// Waits like [`ready`](Self::ready), at most `bound`; the servers whose first attempt is
    /// still under way then, by name.
    pub async fn ready_within(&self, bound: Duration) -> Vec<String> {
        let _ = tokio::time::timeout(bound, self.ready()).await;
        self.status()
            .into_iter()
            .filter(|status| status.state == State::Connecting)
            .map(|status| status.name)
            .collect()
    }

    /// Each server's status, in configuration order.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.shared
            .statuses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The status of the server `name`.
    pub fn server(&self, name: &str) -> Option<ServerStatus> {
        self.status().into_iter().find(|s| s.name == name)
    }

    /// True when no server is configured.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}
