//! The crate's one error type, and the configuration error it carries.

use std::fmt;
use std::path::PathBuf;

/// Building a host failed: nothing was registered and nothing written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The Location cannot be resolved.
    #[error("the Location {}: {source}", path.display())]
    Location {
        /// The directory as given.
        path: PathBuf,
        /// Why it cannot be resolved.
        source: std::io::Error,
    },
    /// The Location is not a directory.
    #[error("the Location {}: not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// A configuration file, variable or flag is not valid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A configuration file exists but cannot be read.
    #[error("cannot read the configuration {}: {source}", path.display())]
    ConfigRead {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The saved approvals cannot be read or written.
    #[error(transparent)]
    Permission(#[from] tackle_permission::PermissionError),
    /// No data directory was given and the environment names none.
    #[error("no data directory: pass one (--data-dir), or set XDG_DATA_HOME or HOME")]
    NoDataDir,
    /// The Location cannot be used by the builtins.
    #[error("{0}")]
    Builtins(tackle_builtins::Error),
    /// The trust records cannot be read or written.
    #[error("trust records {}: {message}", path.display())]
    Trust {
        /// The records file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// `trust` found no project configuration file.
    #[error(
        "{}: no project configuration to trust (looked for tackle.json[c], opencode.json[c] \
         and .opencode/opencode.json[c] up to the repository root)",
        .0.display()
    )]
    NothingToTrust(PathBuf),
    /// A session's managed outputs could not be removed.
    #[error("cannot remove the session's managed outputs: {0}")]
    Store(tackle_output_store::StoreError),
    /// A tool could not be registered.
    #[error("cannot register the tools: {0}")]
    Registration(tackle_tool_core::RegistrationError),
    /// A plugin's tool would shadow a builtin or an earlier registration.
    #[error("cannot register {0}: a builtin or an earlier registration already has this name")]
    NameTaken(String),
}

/// A bad configuration value: where it is (a file, a variable, a flag), its key path, and what
/// is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// The file, `environment TACKLE_...` or `flag --set ...`.
    pub origin: String,
    /// The key path (`bash.default_timeout_ms`); empty for the whole file.
    pub path: String,
    /// Where in the file, when known: 1-based line and column.
    pub position: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
}

impl ConfigError {
    pub(crate) fn new(origin: &str, path: &str, message: impl Into<String>) -> Self {
        Self {
            origin: origin.to_owned(),
            path: path.to_owned(),
            position: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad configuration: {}", self.origin)?;
        if let Some((line, column)) = self.position {
            write!(f, ":{line}:{column}")?;
        }
        if !self.path.is_empty() {
            write!(f, ": {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}
