//! The crate's error type.

/// Why serving stopped before the client disconnected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The MCP handshake failed (the client sent no valid `initialize`, or vanished).
    #[error("MCP initialization failed: {0}")]
    Initialize(String),
    /// The session's task ended abnormally.
    #[error("the MCP session stopped: {0}")]
    Session(String),
}
