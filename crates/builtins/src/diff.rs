//! File diffs for results: a unified patch (`similar`) plus addition and deletion counts.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use similar::{DiffOp, TextDiff};

/// Longest a line diff may search for a minimal edit script before settling for a coarser one.
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DiffStatus {
    /// The file was created.
    Added,
    /// The file was changed.
    Modified,
    /// The file was removed.
    Deleted,
}

/// The change of one file, as results report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FileDiff {
    /// The file's resource (relative to the Location, or absolute outside it).
    pub file: String,
    /// The unified diff; dropped when a result must be compacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// How the file changed.
    pub status: DiffStatus,
    /// Lines added.
    pub additions: usize,
    /// Lines removed.
    pub deletions: usize,
}

impl FileDiff {
    /// The diff of `before` → `after` for `file`, with a unified patch of 3 context lines.
    pub fn new(file: &str, status: DiffStatus, before: &str, after: &str) -> Self {
        let diff = TextDiff::configure()
            .timeout(DIFF_TIMEOUT)
            .diff_lines(before, after);
        let (additions, deletions) = counts(diff.ops());
        let patch = diff
            .unified_diff()
            .context_radius(3)
            .header(file, file)
            .to_string();
        Self {
            file: file.to_owned(),
            patch: Some(patch),
            status,
            additions,
            deletions,
        }
    }

    /// The same diff without its patch text (the reference's "compact" form).
    #[must_use]
    pub fn compact(mut self) -> Self {
        self.patch = None;
        self
    }
}

/// Lines added and removed by a line diff's operations.
fn counts(ops: &[DiffOp]) -> (usize, usize) {
    ops.iter().fold((0, 0), |(add, del), op| match *op {
        DiffOp::Equal { .. } => (add, del),
        DiffOp::Delete { old_len, .. } => (add, del + old_len),
        DiffOp::Insert { new_len, .. } => (add + new_len, del),
        DiffOp::Replace {
            old_len, new_len, ..
        } => (add + new_len, del + old_len),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_patch() {
        let diff = FileDiff::new(
            "hello.txt",
            DiffStatus::Modified,
            "before\nrest\n",
            "after\nrest\n",
        );
        assert_eq!((diff.additions, diff.deletions), (1, 1));
        let patch = diff.patch.clone().unwrap();
        assert!(patch.contains("-before\n+after\n"), "{patch}");
        assert!(
            patch.starts_with("--- hello.txt\n+++ hello.txt\n"),
            "{patch}"
        );
        assert_eq!(diff.compact().patch, None);
    }

    #[test]
    fn added_file_counts_every_line() {
        let diff = FileDiff::new("n.txt", DiffStatus::Added, "", "a\nb\nc");
        assert_eq!((diff.additions, diff.deletions), (3, 0));
    }
}
