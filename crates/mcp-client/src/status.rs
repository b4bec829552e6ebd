//! What a host reports about each server (`tackle mcp list`).

/// Where a server's connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum State {
    /// Not connected yet (the first attempt is under way).
    Connecting,
    /// Connected; its tools are registered.
    Connected,
    /// Not connected: the last attempt failed or the server went away; retried with backoff.
    Failed,
}

impl State {
    /// `connecting`, `connected` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Failed => "failed",
        }
    }
}

/// One registered tool of a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredTool {
    /// The name the model calls (and the permission action).
    pub name: String,
    /// The tool's own name on the server.
    pub original: String,
}

/// A tool of the server that was not registered, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedTool {
    /// The tool's own name on the server.
    pub original: String,
    /// Why it was left out (an invalid schema, a builtin's name).
    pub reason: String,
}

/// The status of one configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    /// The configured name.
    pub name: String,
    /// Its connection state.
    pub state: State,
    /// The last error (kept after a reconnection, until the next one fails).
    pub last_error: Option<String>,
    /// The tools registered by the current connection.
    pub tools: Vec<RegisteredTool>,
    /// The tools left out of the current registration.
    pub skipped: Vec<SkippedTool>,
    /// How many connections were made so far.
    pub connections: u64,
}

impl ServerStatus {
    pub(crate) fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            state: State::Connecting,
            last_error: None,
            tools: Vec::new(),
            skipped: Vec::new(),
            connections: 0,
        }
    }
}
