//! glob and grep: in-process search with ripgrep's own crates (`ignore`, `globset`,
//! `grep-regex`, `grep-searcher`), with no process spawn and no JSON round trip.
//!
//! The engine is a set of plain functions over a root directory (`find` for glob, `scan` for
//! grep) sharing one walk policy (`walk`); the tool wrappers resolve the path through the
//! Location, assert `external_directory` (outside paths) and the tool's action, and only then
//! run the engine on a blocking thread.
//!
//! Invariants:
//! - glob and grep see the same files: ignore files respected (also outside a git
//!   repository), hidden files included except `.git` (glob lists them only when its pattern
//!   names them with a leading dot), symlinks followed only when their real
//!   target stays inside the boundary (loops detected), links leading outside reported and
//!   never followed;
//! - results are ordered by modification time, newest first, ties by path; the model text
//!   shows absolute paths, the structured output paths relative to the Location;
//! - a spent wall-clock budget (default [`DEFAULT_BUDGET`]) returns what was found, marked
//!   incomplete; the search root defaults to the Location, never the home directory.

mod budget;
mod find;
mod glob;
mod grep;
mod grep_output;
mod grep_text;
mod hits;
mod pattern;
mod report;
mod scan;
mod scope;
mod shown;
mod walk;

pub use budget::DEFAULT_BUDGET;
pub(crate) use glob::glob_tool;
pub use glob::{DEFAULT_GLOB_LIMIT, GlobInput, GlobOutput};
pub(crate) use grep::grep_tool;
pub use grep::{ContextLines, DEFAULT_GREP_LIMIT, GrepInput, MAX_CONTEXT_LINES, OutputMode};
pub use grep_output::{ClippedLine, GrepFile, GrepMatch, GrepOutput};
pub use hits::MAX_LINE_CHARS;
pub use report::{SkippedLink, SkippedPaths};
pub use scope::SearchSettings;

pub(crate) use budget::Budget;
pub(crate) use scope::Services;

/// The machine's parallelism, looked up once per process: the lookup reads the cgroup's CPU
/// quota from `/proc` and `/sys` each time, which cost a search of a small tree more than its
/// walk.
fn parallelism() -> usize {
    static PARALLELISM: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PARALLELISM.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
