//! The crate's one error type.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong while bounding, storing, reading or cleaning up managed output.
///
/// Storage errors carry the path and the operating-system error so a host can tell a directory
/// that is a file from one that is unwritable or full; none of them is ever turned into an empty
/// or silently shortened preview.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The configured limits cannot hold a preview.
    #[error(
        "invalid output limits: {problem} (max_lines = {max_lines}, max_bytes = {max_bytes}, spill_cap = {spill_cap})"
    )]
    InvalidLimits {
        /// What is wrong.
        problem: &'static str,
        /// The configured line limit.
        max_lines: usize,
        /// The configured byte limit.
        max_bytes: usize,
        /// The configured spill-file cap.
        spill_cap: u64,
    },
    /// An inline media item is larger than [`crate::MAX_INLINE_MEDIA_BYTES`].
    #[error("inline media {mime} is {bytes} bytes, over the {limit}-byte limit for one item")]
    MediaTooLarge {
        /// Its media type.
        mime: String,
        /// Its decoded size in bytes.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The managed directory's path exists but is not a directory.
    #[error("the managed output directory {} is not a directory", path.display())]
    NotADirectory {
        /// The configured directory.
        path: PathBuf,
    },
    /// The managed directory is a symbolic link; the store never follows one.
    #[error("the managed output directory {} is a symbolic link, which the store does not follow", path.display())]
    SymlinkedDirectory {
        /// The configured directory.
        path: PathBuf,
    },
    /// The managed directory could not be created or inspected.
    #[error("cannot create the managed output directory {}: {source}", path.display())]
    Directory {
        /// The configured directory.
        path: PathBuf,
        /// The operating-system error.
        source: io::Error,
    },
    /// A spill file could not be created or written (unwritable or full directory).
    #[error("cannot save the full output of call {call_id} to {}: {source}", path.display())]
    Write {
        /// The call whose output was being saved.
        call_id: String,
        /// The file (or directory) involved.
        path: PathBuf,
        /// The operating-system error.
        source: io::Error,
    },
    /// A managed output could not be read.
    #[error("cannot read managed output {reference}: {source}")]
    Read {
        /// The reference being read.
        reference: String,
        /// The operating-system error.
        source: io::Error,
    },
    /// The text is not a managed-output reference.
    #[error("not a managed output reference: {input:?} (expected tool-output://<id>)")]
    InvalidReference {
        /// The rejected text.
        input: String,
    },
    /// The reference is well formed but its output no longer exists (expired, evicted or removed).
    #[error("managed output {reference} does not exist (it may have expired or been removed)")]
    NotFound {
        /// The reference.
        reference: String,
    },
    /// A managed file does not have the layout the store wrote.
    #[error("managed output {reference} is damaged: {problem}")]
    Corrupt {
        /// The reference.
        reference: String,
        /// What does not match.
        problem: String,
    },
    /// A page request with a zero offset or limit.
    #[error("invalid page request: {problem}")]
    InvalidPage {
        /// What is wrong.
        problem: &'static str,
    },
    /// A page request that starts after the last character of its line.
    #[error("column {column} is out of range: line {line} of {reference} has {chars} characters")]
    ColumnOutOfRange {
        /// The reference.
        reference: String,
        /// The requested 1-based line.
        line: usize,
        /// The requested 1-based character of that line.
        column: usize,
        /// How many characters the line has.
        chars: usize,
    },
    /// A page request that starts after the last line.
    #[error("offset {offset} is out of range: {reference} has {total_lines} lines")]
    OffsetOutOfRange {
        /// The reference.
        reference: String,
        /// The requested 1-based line.
        offset: usize,
        /// How many lines the output has.
        total_lines: usize,
    },
    /// A structured value could not be encoded as JSON.
    #[error("cannot encode the structured output as JSON: {0}")]
    Encode(#[source] serde_json::Error),
    /// The operating system's random source failed, so no unguessable name could be made.
    #[error("cannot draw random bytes for a managed output name: {0}")]
    Random(getrandom::Error),
    /// The managed directory could not be listed during cleanup.
    #[error("cannot list the managed output directory {}: {source}", path.display())]
    Cleanup {
        /// The configured directory.
        path: PathBuf,
        /// The operating-system error.
        source: io::Error,
    },
}

impl StoreError {
    /// For a failure to save a managed output (the directory or the disk, not the request),
    /// the reason in words a model may read: the operating system's error, never a path.
    pub(crate) fn unsaved_reason(&self) -> Option<String> {
        match self {
            Self::NotADirectory { .. } => {
                Some("the managed output directory is not a directory".to_owned())
            }
            Self::SymlinkedDirectory { .. } => {
                Some("the managed output directory is a symbolic link".to_owned())
            }
            Self::Directory { source, .. } | Self::Write { source, .. } => Some(source.to_string()),
            Self::Random(err) => Some(format!("no random name could be drawn: {err}")),
            _ => None,
        }
    }
}
