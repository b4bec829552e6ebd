//! The one error type of this crate's services: path resolution and file mutation.
//!
//! Leaves turn these into the model-visible `ToolFailure` texts themselves; nothing here is
//! shown to a model verbatim except through a leaf's message.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// What went wrong resolving a path or mutating a file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A path argument cannot be used (LM2–LM4).
    #[error("{path}: {reason}")]
    Path {
        /// The path argument, as given.
        path: String,
        /// Why it was refused.
        reason: PathReason,
    },
    /// A Location directory is unusable.
    #[error("invalid Location {}: {problem}", directory.display())]
    InvalidLocation {
        /// The directory that was given.
        directory: PathBuf,
        /// Why it cannot be a Location.
        problem: String,
    },
    /// `create` found the file already there (FM1).
    #[error("{}: the file already exists", path.display())]
    TargetExists {
        /// The canonical target.
        path: PathBuf,
    },
    /// `write_if_unchanged` found other bytes than expected (FM4).
    #[error("{}: the file changed since it was read", path.display())]
    StaleContent {
        /// The canonical target.
        path: PathBuf,
    },
    /// The target is a directory where a file is needed.
    #[error("{}: is a directory", path.display())]
    IsDirectory {
        /// The canonical target.
        path: PathBuf,
    },
    /// The target exists but is neither a regular file nor a directory.
    #[error("{}: is not a regular file", path.display())]
    NotAFile {
        /// The canonical target.
        path: PathBuf,
    },
    /// The target file is read-only; it is not replaced behind the owner's back.
    #[error("{}: the file is read-only", path.display())]
    ReadOnly {
        /// The canonical target.
        path: PathBuf,
    },
    /// An operating-system error.
    #[error("cannot {op} {}: {source}", path.display())]
    Io {
        /// What was being done (`read`, `write`, `rename`, ...).
        op: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

impl Error {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// The reason of a [`Error::Path`], if it is one.
    pub fn path_reason(&self) -> Option<PathReason> {
        match self {
            Self::Path { reason, .. } => Some(*reason),
            _ => None,
        }
    }
}

/// Why a path argument was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathReason {
    /// The argument is not a usable path (it contains a NUL byte).
    Invalid,
    /// A relative path leads out of the Location (`../x`).
    RelativeEscape,
    /// A path inside the Location whose real target, through a symlink, lies outside it.
    LocationEscape,
    /// An existing ancestor of the path is not a directory.
    NonDirectoryAncestor,
    /// Symlinks along the path loop or nest too deeply.
    SymlinkLoop,
}

impl PathReason {
    /// The reference's machine name (`relative_escape`, `location_escape`, ...).
    pub fn code(self) -> &'static str {
        match self {
            Self::Invalid => "invalid_path",
            Self::RelativeEscape => "relative_escape",
            Self::LocationEscape => "location_escape",
            Self::NonDirectoryAncestor => "non_directory_ancestor",
            Self::SymlinkLoop => "symlink_loop",
        }
    }
}

impl fmt::Display for PathReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Invalid => "the path contains a NUL byte",
            Self::RelativeEscape => {
                "the relative path leads outside the working directory; use an absolute path for files outside it"
            }
            Self::LocationEscape => {
                "the path is inside the working directory but a symlink leads outside it"
            }
            Self::NonDirectoryAncestor => "a parent of the path is not a directory",
            Self::SymlinkLoop => "too many levels of symbolic links",
        })
    }
}
