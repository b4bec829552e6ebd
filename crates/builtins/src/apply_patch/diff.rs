//! Unified diffs of a file's change, made with `similar`.
//!
//! A whole-file line diff costs O(N·D): for a 100,000-line file with 1,000 scattered changes
//! that is most of a patch's time. When the change comes from one update hunk the places that
//! changed are known ([`Window`]s), so only those windows are diffed (each with `similar`'s
//! Myers) and the lines between them are verified equal; anything else (several hunks on one
//! file, added and deleted files, a window whose surroundings differ, such as a line that lost
//! its missing final newline) is diffed whole, with a deadline.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::ops::Range;
use std::time::{Duration, Instant};

use similar::udiff::UnifiedHunkHeader;
use similar::{
    Algorithm, DiffOp, capture_diff_slices, capture_diff_slices_deadline, group_diff_ops,
};

use crate::mutation::BOM;

/// How long a whole-file diff may take before `similar` approximates.
const DEADLINE: Duration = Duration::from_secs(2);
/// Context lines around each change.
const CONTEXT: usize = 3;

/// A stretch of lines that may differ: `old` lines of the original became `new` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) old: Range<usize>,
    pub(crate) new: Range<usize>,
}

/// A unified diff and its counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Diff {
    pub(crate) patch: String,
    pub(crate) additions: usize,
    pub(crate) deletions: usize,
}

/// The diff of `before` and `after` (files as bytes, `None` for no file; BOM aside, decoded
/// lossily for display). `windows`, when known, says where the lines may differ.
pub(crate) fn diff(
    old_name: &str,
    new_name: &str,
    before: Option<&[u8]>,
    after: Option<&[u8]>,
    windows: Option<&[Window]>,
) -> Diff {
    let (old_text, new_text) = (text(before), text(after));
    let old: Vec<&str> = old_text.split_inclusive('\n').collect();
    let new: Vec<&str> = new_text.split_inclusive('\n').collect();
    let ops = windows
        .and_then(|windows| scripted(&old, &new, windows))
        .unwrap_or_else(|| {
            let deadline = Instant::now() + DEADLINE;
            capture_diff_slices_deadline(Algorithm::Myers, &old, &new, Some(deadline))
        });
    let (mut additions, mut deletions) = (0, 0);
    for op in &ops {
        let (_, old_range, new_range) = op.as_tag_tuple();
        if !matches!(op, DiffOp::Equal { .. }) {
            deletions += old_range.len();
            additions += new_range.len();
        }
    }
    Diff {
        patch: render(old_name, new_name, &old, &new, ops),
        additions,
        deletions,
    }
}

fn text(bytes: Option<&[u8]>) -> Cow<'_, str> {
    let bytes = bytes.unwrap_or_default();
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    // Valid UTF-8 (every updated or added file) is borrowed; the lossy path only serves a
    // deleted file that was not text.
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// The edit script from known windows, or `None` when the lines around them are not equal.
fn scripted(old: &[&str], new: &[&str], windows: &[Window]) -> Option<Vec<DiffOp>> {
    let mut ops = Vec::with_capacity(windows.len() * 3 + 1);
    let (mut o, mut n) = (0, 0);
    for window in windows {
        if window.old.start < o
            || window.new.start < n
            || window.old.end > old.len()
            || window.new.end > new.len()
        {
            return None;
        }
        equal(
            &mut ops,
            old,
            new,
            o,
            n,
            window.old.start - o,
            window.new.start - n,
        )?;
        let inner = capture_diff_slices(
            Algorithm::Myers,
            &old[window.old.clone()],
            &new[window.new.clone()],
        );
        for op in inner {
            push(&mut ops, shift(op, window.old.start, window.new.start));
        }
        (o, n) = (window.old.end, window.new.end);
    }
    equal(&mut ops, old, new, o, n, old.len() - o, new.len() - n)?;
    Some(ops)
}

/// Appends `old[o..]` = `new[n..]` for `len` lines, if the two stretches are the same lines.
fn equal(
    ops: &mut Vec<DiffOp>,
    old: &[&str],
    new: &[&str],
    o: usize,
    n: usize,
    old_len: usize,
    new_len: usize,
) -> Option<()> {
    if old_len != new_len || old[o..o + old_len] != new[n..n + new_len] {
        return None;
    }
    if old_len > 0 {
        push(
            ops,
            DiffOp::Equal {
                old_index: o,
                new_index: n,
                len: old_len,
            },
        );
    }
    Some(())
}

fn shift(op: DiffOp, o: usize, n: usize) -> DiffOp {
    match op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => DiffOp::Equal {
            old_index: old_index + o,
            new_index: new_index + n,
            len,
        },
        DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        } => DiffOp::Delete {
            old_index: old_index + o,
            old_len,
            new_index: new_index + n,
        },
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => DiffOp::Insert {
            old_index: old_index + o,
            new_index: new_index + n,
            new_len,
        },
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => DiffOp::Replace {
            old_index: old_index + o,
            old_len,
            new_index: new_index + n,
            new_len,
        },
    }
}

/// Pushes `op`, merging it into a preceding equal run.
fn push(ops: &mut Vec<DiffOp>, op: DiffOp) {
    if let (Some(DiffOp::Equal { len, .. }), DiffOp::Equal { len: more, .. }) = (ops.last_mut(), op)
    {
        *len += more;
        return;
    }
    ops.push(op);
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
        diff("f", "f", Some(old.as_bytes()), Some(new.as_bytes()), None)
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
        let added = diff("/dev/null", "n", None, Some(b"x\n"), None);
        assert_eq!(added.patch, "--- /dev/null\n+++ n\n@@ -0,0 +1 @@\n+x\n");
        assert_eq!(whole("same\n", "same\n").patch, "--- f\n+++ f\n");
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
        let fast = diff(
            "f",
            "f",
            Some(old.as_bytes()),
            Some(new.as_bytes()),
            Some(&windows),
        );
        assert_eq!(fast, whole(&old, &new));
    }

    #[test]
    fn wrong_windows_fall_back_to_the_whole_file() {
        let windows = [Window {
            old: 0..1,
            new: 0..1,
        }];
        let d = diff("f", "f", Some(b"a\nb\n"), Some(b"A\nB\n"), Some(&windows));
        assert_eq!(d, whole("a\nb\n", "A\nB\n"));
    }
}
