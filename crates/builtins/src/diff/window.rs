//! The edit script of a change whose places are known: apply_patch's single update hunk says
//! which [`Window`]s of lines it replaced, so only those are diffed (each with `similar`'s Myers)
//! and the lines between them are verified equal. Windows whose surroundings differ (such as a
//! line that lost its missing final newline) give `None`, and the caller diffs the whole file.

use std::ops::Range;

use similar::{Algorithm, DiffOp, capture_diff_slices};

/// A stretch of lines that may differ: `old` lines of the original became `new` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) old: Range<usize>,
    pub(crate) new: Range<usize>,
}

/// The edit script from known windows, or `None` when the lines around them are not equal.
pub(super) fn scripted(old: &[&str], new: &[&str], windows: &[Window]) -> Option<Vec<DiffOp>> {
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
