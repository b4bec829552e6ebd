//! What `grep` returns: the structured output the host reads (the model reads
//! `grep_text`'s rendering of it).

use schemars::JsonSchema;
use serde::Serialize;

use super::report::SkippedPaths;

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GrepMatch {
    /// The file, relative to the working directory (absolute outside it).
    pub path: String,
    /// The 1-based line number.
    pub line: u64,
    /// The line without its line ending; only the shown window when `clipped`.
    pub text: String,
    /// Present when the line was longer than 2000 characters and only a window is shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clipped: Option<ClippedLine>,
}

/// The window shown of an over-long line, as 1-based inclusive character columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ClippedLine {
    /// The first column shown.
    pub first: usize,
    /// The last column shown.
    pub last: usize,
    /// The line's full length in characters.
    pub length: usize,
}

/// A file with matches (`files_with_matches` and `count` modes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct GrepFile {
    /// The file, relative to the working directory (absolute outside it).
    pub path: String,
    /// Its number of matches (`count` mode only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
}

/// The output of `grep`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepOutput {
    /// The matching lines, grouped by file, files newest first (`content` mode).
    pub matches: Vec<GrepMatch>,
    /// The lines shown around the matches when context was asked for, in the same order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<GrepMatch>,
    /// The files with matches, newest first (`files_with_matches` and `count` modes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<GrepFile>,
    /// Matches seen in all (in `files_with_matches` mode, one per file: each file's search
    /// stops at its first match). A match spanning lines (`multiline`) counts once.
    pub total_matches: usize,
    /// Files with at least one matching line.
    pub total_files: usize,
    /// More results than the limit allowed.
    pub truncated: bool,
    /// Some lines were longer than 2000 characters and only a window of them is shown.
    pub clipped: bool,
    /// The time budget ran out: only part of the tree was searched.
    pub incomplete: bool,
    /// Files not searched because they contain binary data.
    pub binary_files: usize,
    /// What was passed over.
    pub skipped: SkippedPaths,
}
