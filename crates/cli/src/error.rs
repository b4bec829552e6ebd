//! The binary's one error type: everything that ends a command without a tool result.

/// A command could not produce a tool result.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("cannot read the input from standard input: {0}")]
    Stdin(#[source] std::io::Error),
    #[error("the input is not valid JSON: {0}")]
    InputJson(#[source] serde_json::Error),
    #[error("cannot write the output: {0}")]
    Output(#[source] std::io::Error),
    #[error("halted: {0}")]
    Halt(tackle_tool_core::Halt),
    #[error("the call could not be settled: {0}")]
    Defect(tackle_tool_core::Defect),
    /// The host could not be built (Location, configuration, data directory, trust records).
    #[error(transparent)]
    Host(#[from] tackle_host::HostError),
    /// The saved approvals cannot be read or written.
    #[error(transparent)]
    Permission(#[from] tackle_permission::PermissionError),
    #[error("the call could not be settled: {0}")]
    Store(tackle_output_store::StoreError),
    #[error("--set {0:?}: expected KEY=VALUE (e.g. --set output.max_lines=500)")]
    SetFlag(String),
    #[error("cannot create a scratch directory: {0}")]
    Scratch(#[source] std::io::Error),
    #[error("cannot encode JSON: {0}")]
    Json(#[source] serde_json::Error),
    #[error("no MCP server named {0:?} is configured (see `tackle mcp list`)")]
    UnknownServer(String),
    #[error("no audit log is configured: set audit.path (or pass --file)")]
    NoAuditLog,
    #[error("cannot read the audit log {path}: {source}")]
    Audit {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl From<tackle_registry::SettleError> for CliError {
    fn from(err: tackle_registry::SettleError) -> Self {
        match err {
            tackle_registry::SettleError::Halt(halt) => Self::Halt(halt),
            tackle_registry::SettleError::Defect(defect) => Self::Defect(defect),
            tackle_registry::SettleError::Store(store) => Self::Store(store),
            // A kind of failure added to the registry later: nothing settled, so a defect.
            other => Self::Defect(tackle_tool_core::Defect::new(other.to_string())),
        }
    }
}

impl From<tackle_host::ConfigError> for CliError {
    fn from(err: tackle_host::ConfigError) -> Self {
        Self::Host(err.into())
    }
}
