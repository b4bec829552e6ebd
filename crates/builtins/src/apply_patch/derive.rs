//! Applying one update hunk's chunks to a file's text, in memory (reference PA4, codex's
//! `apply`), with replays recognised as already applied.
//!
//! Each chunk is located from a cursor that only moves forward: its `@@` anchors first, then its
//! old lines (see [`seek`](super::seek)). Replacements are collected against the original lines
//! and the new text is built in one pass. Kept lines keep the file's own text and line ending,
//! even when they matched only loosely; inserted lines take the file's dominant ending.

use std::collections::VecDeque;

use super::miss;
use super::parse::{Chunk, Op};
use super::seek::{Level, matches_at, seek, seek_line_start};
use super::text::{FileText, Piece};
use crate::diff::Window;

/// The outcome of one update hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Derived {
    /// The new bytes; `None` when no chunk changed anything.
    pub(crate) bytes: Option<Vec<u8>>,
    /// Chunks that changed the file.
    pub(crate) applied: usize,
    /// Chunks whose new lines were already in place (a replay).
    pub(crate) already_applied: usize,
    /// Where the lines may differ, in order; everything between is unchanged.
    pub(crate) windows: Vec<Window>,
}

/// One located chunk: the old lines at `start..start + len` become `ops`.
#[derive(Debug)]
struct Replacement<'c> {
    start: usize,
    ops: &'c [Op],
}

enum Found {
    /// Old lines at `start`, to be replaced by the first `ops` operations of the chunk.
    Old { start: usize, ops: usize },
    /// The new lines are there already, from `start` for `len` lines.
    Already { start: usize, len: usize },
}

/// Applies `chunks` to `text`. On failure, returns the model-facing reason.
pub(crate) fn derive(
    resource: &str,
    text: &FileText<'_>,
    chunks: &[Chunk],
) -> Result<Derived, String> {
    let lines = text.lines();
    let mut cursor = 0;
    let mut replacements: Vec<Replacement<'_>> = Vec::new();
    let mut appends: Vec<&Chunk> = Vec::new();
    let mut already_applied = 0;
    let position = |n: usize, chunk: &Chunk| miss::ChunkAt {
        resource,
        number: n + 1,
        count: chunks.len(),
        patch_line: chunk.line,
    };
    for (n, chunk) in chunks.iter().enumerate() {
        for context in &chunk.contexts {
            let found = seek(&lines, &[context.as_str()], cursor, false)
                .map(|(at, _)| at)
                .or_else(|| seek_line_start(&lines, context, cursor));
            match found {
                Some(at) => cursor = at + 1,
                None => {
                    return Err(miss::context(&position(n, chunk), context, &lines, cursor));
                }
            }
        }
        if !chunk
            .ops
            .iter()
            .any(|op| matches!(op, Op::Keep(_) | Op::Remove(_)))
        {
            appends.push(chunk);
            continue;
        }
        match locate(&lines, chunk, cursor) {
            Some(Found::Old { start, ops }) => {
                let ops = &chunk.ops[..ops];
                cursor = start + ops.iter().filter(|op| !matches!(op, Op::Insert(_))).count();
                replacements.push(Replacement { start, ops });
            }
            Some(Found::Already { start, len }) => {
                already_applied += 1;
                cursor = start + len;
            }
            None => {
                let old: Vec<&str> = chunk.old_lines().collect();
                return Err(miss::lines(&position(n, chunk), &old, &lines, cursor));
            }
        }
    }
    // Pure insertions append at the end of the file. On a replay (other chunks of the hunk
    // found already applied, none applied now) they are already there when the file ends with
    // them; a hunk of insertions alone cannot be told apart from a wish to append again.
    let appended: Vec<&str> = appends.iter().flat_map(|c| c.new_lines()).collect();
    let appends_present = !appends.is_empty()
        && already_applied > 0
        && replacements.is_empty()
        && lines.len() >= appended.len()
        && lines[lines.len() - appended.len()..] == appended[..];
    if appends_present {
        already_applied += appends.len();
        appends.clear();
    }
    let applied = replacements.len() + appends.len();
    if applied == 0 {
        return Ok(Derived {
            bytes: None,
            applied,
            already_applied,
            windows: Vec::new(),
        });
    }
    let mut pieces = Vec::with_capacity(lines.len() + 16);
    let mut windows = Vec::with_capacity(replacements.len() + 1);
    let mut at = 0;
    for replacement in &replacements {
        pieces.extend((at..replacement.start).map(Piece::Original));
        at = replacement.start;
        let new_start = pieces.len();
        // An added line that takes the place of a removed one takes its line ending too, so
        // a line replaced by itself changes no byte even in a file with mixed endings.
        let mut removed = VecDeque::new();
        for op in replacement.ops {
            match op {
                Op::Keep(_) => {
                    removed.clear();
                    pieces.push(Piece::Original(at));
                    at += 1;
                }
                Op::Remove(_) => {
                    removed.push_back(text.ending(at));
                    at += 1;
                }
                Op::Insert(new) => pieces.push(Piece::New(new, removed.pop_front())),
            }
        }
        windows.push(Window {
            old: replacement.start..at,
            new: new_start..pieces.len(),
        });
    }
    pieces.extend((at..lines.len()).map(Piece::Original));
    if !appends.is_empty() {
        let new_start = pieces.len();
        pieces.extend(appended.iter().map(|line| Piece::New(line, None)));
        windows.push(Window {
            old: lines.len()..lines.len(),
            new: new_start..pieces.len(),
        });
    }
    Ok(Derived {
        bytes: Some(text.rebuild(&pieces)),
        applied,
        already_applied,
        windows,
    })
}

/// Finds where `chunk` applies from `cursor`, or where it was already applied.
fn locate(lines: &[&str], chunk: &Chunk, cursor: usize) -> Option<Found> {
    // Blank context lines at the end of a chunk are often just the separator before the next
    // hunk: try with them, then without them.
    let trailing_blank = chunk
        .ops
        .iter()
        .rev()
        .take_while(|op| matches!(op, Op::Keep(s) if s.trim().is_empty()))
        .count();
    let mut tries = vec![chunk.ops.len()];
    if trailing_blank > 0 && trailing_blank < chunk.ops.len() {
        tries.push(chunk.ops.len() - trailing_blank);
    }
    for &used in &tries {
        let ops = &chunk.ops[..used];
        let old = old_of(ops);
        if old.is_empty() {
            continue;
        }
        if let Some((start, level)) = seek(lines, &old, cursor, chunk.end_of_file) {
            if let Some(found) = already_in_place(lines, ops, start, level) {
                return Some(found);
            }
            return Some(Found::Old { start, ops: used });
        }
    }
    // Nowhere to be found: is the result of the chunk there instead (its old lines absent)?
    for &used in &tries {
        let ops = &chunk.ops[..used];
        let new = new_of(ops);
        if new == old_of(ops) || new.is_empty() {
            continue;
        }
        if let Some((start, _)) = seek(lines, &new, cursor, chunk.end_of_file) {
            return Some(Found::Already {
                start,
                len: new.len(),
            });
        }
    }
    None
}

/// A chunk that only adds lines around its context still finds its old lines after it was
/// applied; it is a replay when its new lines stand where they would have been put.
fn already_in_place(lines: &[&str], ops: &[Op], start: usize, level: Level) -> Option<Found> {
    if ops.iter().any(|op| matches!(op, Op::Remove(_)))
        || !ops.iter().any(|op| matches!(op, Op::Insert(_)))
    {
        return None;
    }
    let leading = ops
        .iter()
        .take_while(|op| matches!(op, Op::Insert(_)))
        .count();
    let new_start = start.checked_sub(leading)?;
    let new = new_of(ops);
    matches_at(lines, &new, new_start, level).then_some(Found::Already {
        start: new_start,
        len: new.len(),
    })
}

fn old_of(ops: &[Op]) -> Vec<&str> {
    ops.iter()
        .filter_map(|op| match op {
            Op::Keep(s) | Op::Remove(s) => Some(s.as_str()),
            Op::Insert(_) => None,
        })
        .collect()
}

fn new_of(ops: &[Op]) -> Vec<&str> {
    ops.iter()
        .filter_map(|op| match op {
            Op::Keep(s) | Op::Insert(s) => Some(s.as_str()),
            Op::Remove(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests;
