//! The binary's one error type: everything that ends a command without a tool result.

use std::path::PathBuf;

/// A command could not produce a tool result.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("--dir {}: {source}", path.display())]
    Location {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--dir {}: not a directory", .0.display())]
    NotADirectory(PathBuf),
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
    #[error("cannot read the configuration {}: {source}", path.display())]
    ConfigRead {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A bad configuration file or saved-approvals file.
    #[error(transparent)]
    Permission(#[from] tackle_permission::PermissionError),
    #[error("the call could not be settled: {0}")]
    Store(tackle_output_store::StoreError),
    #[error("no data directory: pass --data-dir (neither XDG_DATA_HOME nor HOME is set)")]
    NoDataDir,
    #[error("{0}")]
    Builtins(tackle_builtins::Error),
    #[error("trust records {}: {message}", path.display())]
    Trust { path: PathBuf, message: String },
    #[error(
        "{}: no project configuration to trust (looked for tackle.json and opencode.json)",
        .0.display()
    )]
    NothingToTrust(PathBuf),
    #[error("cannot create a scratch directory: {0}")]
    Scratch(#[source] std::io::Error),
    #[error("cannot encode JSON: {0}")]
    Json(#[source] serde_json::Error),
    #[error("cannot register the builtin tools: {0}")]
    Registration(tackle_tool_core::RegistrationError),
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
