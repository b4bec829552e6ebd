//! The one place unified diffs are made (with `similar`), and the one "file changed" result
//! type edit, write and apply_patch report ([`FileDiff`]).
//!
//! A whole-file line diff costs O(N·D): for a 100,000-line file with 1,000 scattered changes
//! that is most of a patch's time. When the places that changed are known (`Window`s, from
//! apply_patch's single update hunk) only those are diffed (`window.rs`); anything else is diffed
//! whole, with `DEADLINE`.

mod window;

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;
use similar::udiff::UnifiedHunkHeader;
use similar::{Algorithm, DiffOp, capture_diff_slices_deadline, group_diff_ops};

use crate::text::lines::with_endings;

pub(crate) use window::Window;

/// How long a whole-file diff may search for a minimal edit script; past it `similar` settles
/// for a correct but coarser one. The diff only informs (counts and patch text), so it must
/// never dominate a call, yet a second lets Myers finish the files models really change.
pub(crate) const DEADLINE: Duration = Duration::from_secs(1);
/// Context lines around each change.
const CONTEXT: usize = 3;

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DiffStatus {
    /// The file was created.
    Added,
    /// The file was changed in place.
    Modified,
    /// The file was removed.
    Deleted,
    /// The file was moved (and perhaps changed); only apply_patch moves files.
    Moved,
    /// The file was left as it was: the changes asked for were already applied, or cancelled
    /// each other out (apply_patch).
    Unchanged,
}

/// The change of one file, as results report it. edit and write fill in the file, status,
/// counts and patch; apply_patch also the target, the source of a move and the changes found
/// already applied. Absent fields are left out of the JSON, so each tool's output keeps its
/// shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    /// The file's resource (relative to the Location, or absolute outside it).
    pub file: String,
    /// The real path that was changed (apply_patch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// How the file changed.
    pub status: DiffStatus,
    /// For a move: the file it was moved from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Lines added.
    pub additions: usize,
    /// Lines removed.
    pub deletions: usize,
    /// Changes of a patch that were already in place (apply_patch; a replayed patch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub already_applied: Option<usize>,
    /// The unified diff; dropped when a result must be compacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
}

impl FileDiff {
    /// The diff of `before` → `after` for `file`, with a unified patch of 3 context lines.
    pub fn new(file: &str, status: DiffStatus, before: &str, after: &str) -> Self {
        Self::from_diff(file, status, unified(file, file, before, after, None))
    }

    /// The result entry for a diff made with [`unified`].
    pub(crate) fn from_diff(file: &str, status: DiffStatus, diff: Diff) -> Self {
        Self {
            file: file.to_owned(),
            target: None,
            status,
            from: None,
            additions: diff.additions,
            deletions: diff.deletions,
            already_applied: None,
            patch: Some(diff.patch),
        }
    }

    /// The same diff without its patch text (the reference's "compact" form).
    #[must_use]
    pub fn compact(mut self) -> Self {
        self.patch = None;
        self
    }
}

/// A unified diff and its counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Diff {
    pub(crate) patch: String,
    pub(crate) additions: usize,
    pub(crate) deletions: usize,
}

/// The diff of `before` and `after` (texts without BOM; `""` for no file), headed
/// `--- old_name` / `+++ new_name`. `windows`, when known, says where the lines may differ;
/// windows that do not fit the texts are ignored and the whole texts diffed.
pub(crate) fn unified(
    old_name: &str,
    new_name: &str,
    before: &str,
    after: &str,
    windows: Option<&[Window]>,
) -> Diff {
    let (old, new) = (with_endings(before), with_endings(after));
    let ops = windows
        .and_then(|windows| window::scripted(&old, &new, windows))
        .unwrap_or_else(|| {
            let deadline = Instant::now() + DEADLINE;
            capture_diff_slices_deadline(Algorithm::Myers, &old, &new, Some(deadline))
        });
    let (additions, deletions) = tally(&ops);
    Diff {
        patch: render(old_name, new_name, &old, &new, ops),
        additions,
        deletions,
    }
}

/// Lines added and removed from `before` to `after` (whole texts, [`DEADLINE`]), without
/// rendering a patch.
pub(crate) fn counts(before: &str, after: &str) -> (usize, usize) {
    let (old, new) = (with_endings(before), with_endings(after));
    let deadline = Instant::now() + DEADLINE;
    let ops = capture_diff_slices_deadline(Algorithm::Myers, &old, &new, Some(deadline));
    tally(&ops)
}

/// (additions, deletions) of an edit script.
fn tally(ops: &[DiffOp]) -> (usize, usize) {
    let (mut additions, mut deletions) = (0, 0);
    for op in ops {
        let (_, old_range, new_range) = op.as_tag_tuple();
        if !matches!(op, DiffOp::Equal { .. }) {
            deletions += old_range.len();
            additions += new_range.len();
        }
    }
    (additions, deletions)
}

/// The unified diff text (`---`/`+++` header, `@@` hunks with three lines of context).
fn render(old_name: &str, new_name: &str, old: &[&str], new: &[&str], ops: Vec<DiffOp>) -> String {
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    for group in group_diff_ops(ops, CONTEXT) {
        if group.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{}", UnifiedHunkHeader::new(&group));
        for op in &group {
            let (_, old_range, new_range) = op.as_tag_tuple();
            if let DiffOp::Equal { .. } = op {
                old_range.for_each(|i| line(&mut out, ' ', old[i]));
            } else {
                old_range.for_each(|i| line(&mut out, '-', old[i]));
                new_range.for_each(|i| line(&mut out, '+', new[i]));
            }
        }
    }
    out
}

fn line(out: &mut String, sign: char, line: &str) {
    out.push(sign);
    out.push_str(line);
    if !line.ends_with('\n') {
        out.push_str("\n\\ No newline at end of file\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(old: &str, new: &str) -> Diff {
        unified("f", "f", old, new, None)
    }

    #[test]
    fn unified_text_and_counts() {
        let d = whole("a\nb\nc\n", "a\nB\nc\nd\n");
        assert_eq!(
            d.patch,
            "--- f\n+++ f\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n"
        );
        assert_eq!((d.additions, d.deletions), (2, 1));
        let d = whole("a\nb", "a\nb\n");
        assert_eq!(
            d.patch,
            "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
        );
        let added = unified("/dev/null", "n", "", "x\n", None);
        assert_eq!(added.patch, "--- /dev/null\n+++ n\n@@ -0,0 +1 @@\n+x\n");
        assert_eq!(whole("same\n", "same\n").patch, "--- f\n+++ f\n");
    }

    #[test]
    fn file_diffs_count_and_compact() {
        let diff = FileDiff::new(
            "hello.txt",
            DiffStatus::Modified,
            "before\nrest\n",
            "after\nrest\n",
        );
        assert_eq!((diff.additions, diff.deletions), (1, 1));
        let patch = diff.patch.clone().unwrap_or_default();
        assert!(patch.contains("-before\n+after\n"), "{patch}");
        assert!(
            patch.starts_with("--- hello.txt\n+++ hello.txt\n"),
            "{patch}"
        );
        assert_eq!(diff.compact().patch, None);
        let added = FileDiff::new("n.txt", DiffStatus::Added, "", "a\nb\nc");
        assert_eq!((added.additions, added.deletions), (3, 0));
    }

    #[test]
    fn edit_and_write_entries_keep_their_json_shape() {
        let diff = FileDiff::new("f", DiffStatus::Modified, "a\n", "b\n");
        let json = serde_json::to_value(&diff).unwrap_or_default();
        let keys: Vec<&String> = json
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys.len(), 5, "{json}");
        for key in ["file", "status", "additions", "deletions", "patch"] {
            assert!(json.get(key).is_some(), "{key}: {json}");
        }
    }

    #[test]
    fn windows_give_the_same_diff_as_the_whole_file() {
        let old: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let mut lines: Vec<String> = (0..200).map(|i| format!("line {i}\n")).collect();
        lines[50] = "changed\n".into();
        lines.insert(120, "inserted\n".into());
        lines.remove(180);
        let new: String = lines.concat();
        let windows = [
            Window {
                old: 49..52,
                new: 49..52,
            },
            Window {
                old: 120..120,
                new: 120..121,
            },
            Window {
                old: 178..181,
                new: 179..181,
            },
        ];
        let fast = unified("f", "f", &old, &new, Some(&windows));
        assert_eq!(fast, whole(&old, &new));
    }

    #[test]
    fn wrong_windows_fall_back_to_the_whole_file() {
        let windows = [Window {
            old: 0..1,
            new: 0..1,
        }];
        let d = unified("f", "f", "a\nb\n", "A\nB\n", Some(&windows));
        assert_eq!(d, whole("a\nb\n", "A\nB\n"));
    }
}
