//! The crate's one error type.

/// Why a server could not be connected or its tools not registered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpClientError {
    /// The configuration cannot work (an empty command, an invalid header).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The server process could not be started.
    #[error("could not start {command}: {source}")]
    Spawn {
        /// The program.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// The MCP handshake or a request failed.
    #[error("{0}")]
    Protocol(String),
    /// The remote server speaks only the legacy HTTP+SSE transport.
    #[error(
        "the server at {0} speaks only the legacy HTTP+SSE transport (a GET stream that \
         announces an `endpoint`), which is not supported: only streamable HTTP is. Configure \
         its streamable HTTP endpoint if it has one, or run it as a local server"
    )]
    LegacySse(String),
    /// The server did not answer within the configured timeout.
    #[error("no answer within {0} ms")]
    Timeout(u128),
    /// Registering the server's tools failed.
    #[error("registration failed: {0}")]
    Registration(#[from] tackle_tool_core::RegistrationError),
}
