//! The crate's error type.

/// Why serving stopped before the client disconnected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The MCP handshake failed (the client sent no valid `initialize`, or vanished).
    #[error("MCP initialization failed: {0}")]
    Initialize(String),
    /// The HTTP listener could not be bound.
    #[error("cannot listen: {0}")]
    Listen(String),
    /// The bearer token could not be read or created.
    #[error("MCP token: {0}")]
    Token(String),
    /// This `tackle serve` runs inside servers tackle started, deeper than allowed.
    #[error("refusing to serve: {0}")]
    Nested(String),
    /// The session's task ended abnormally.
    #[error("the MCP session stopped: {0}")]
    Session(String),
}
