//! The preview of a text that is over the limits: a head and a tail on line and code-point
//! boundaries with one marker line between them.
//!
//! Invariants (checked by unit and property tests):
//! - the rendered preview has at most `limits.lines` lines and `limits.bytes` bytes, marker
//!   included;
//! - every piece of input text appears verbatim and in order: whole lines, or the head and tail
//!   of a line too long for the budget, shortened in the middle with its own inline marker;
//! - the marker states exactly how many lines and bytes were left out, which lines, and how to
//!   read them (the reference, and the tool the host offers for paging, when it offers one).
//!
//! The budget is tail-biased (40% head, 60% tail): build and test summaries and the last error
//! are at the end; unused budget on one side goes to the other.

use std::ops::Range;

use crate::PagingHint;
use crate::text::{Text, line_marker};

/// Lines and bytes a preview may have, marker included.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) lines: usize,
    pub(crate) bytes: usize,
}

/// What the marker names: the reference, the host's paging tool if any, and an optional note.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MarkerInfo<'a> {
    /// The managed output's reference, or why the full output could not be saved.
    pub(crate) reference: Result<&'a str, &'a str>,
    pub(crate) paging: Option<&'a PagingHint>,
    pub(crate) note: Option<&'a str>,
}

/// A piece of the rendered preview.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Verbatim input.
    Input(Range<usize>),
    /// A marker or a separating newline.
    Owned(String),
}

/// The selected preview and its exact accounting.
#[derive(Clone, Debug)]
pub(crate) struct Preview {
    pub(crate) pieces: Vec<Piece>,
    pub(crate) omitted_lines: u64,
    pub(crate) omitted_bytes: u64,
}

impl Preview {
    pub(crate) fn render(&self, text: Text<'_>) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Input(range) => text.push(range.clone(), &mut out),
                Piece::Owned(owned) => out.push_str(owned),
            }
        }
        out
    }
}

/// Displayed bytes of content a shortened line must keep to be worth showing.
const MIN_SHOWN: usize = 16;

#[derive(Clone, Debug)]
enum Shown {
    Whole(Range<usize>),
    /// `head` is a prefix of the line, `tail` its suffix (with the newline, if any).
    Clamped {
        head: Range<usize>,
        tail: Range<usize>,
        marker: String,
    },
}

impl Shown {
    fn end(&self) -> usize {
        match self {
            Self::Whole(range) => range.end,
            Self::Clamped { tail, .. } => tail.end,
        }
    }
}

#[derive(Debug)]
struct Side {
    items: Vec<Shown>,
    /// Displayed bytes.
    bytes: usize,
    /// Input bytes shown.
    input: usize,
    /// Head: end of the last line taken; tail: start of the last line taken.
    edge: usize,
}

impl Side {
    fn new(edge: usize) -> Self {
        Self {
            items: Vec::new(),
            bytes: 0,
            input: 0,
            edge,
        }
    }

    fn push(&mut self, shown: Shown, cost: usize, input: usize, edge: usize) {
        self.items.push(shown);
        self.bytes += cost;
        self.input += input;
        self.edge = edge;
    }
}

/// Selects the preview of `text` (which has `total_lines` lines) for `limits`.
pub(crate) fn preview(
    text: Text<'_>,
    total_lines: u64,
    limits: Limits,
    info: &MarkerInfo<'_>,
) -> Preview {
    let len = text.bytes.len();
    let maxima = Counts {
        omitted_lines: total_lines,
        total_lines,
        gap: Some((total_lines, total_lines)),
        omitted_bytes: len as u64,
        total_bytes: len as u64,
        clamped: total_lines,
    };
    let form = [Form::Full, Form::Short]
        .into_iter()
        .find(|form| marker(*form, &maxima, info).len() + 2 <= limits.bytes / 2)
        .unwrap_or(Form::Minimal);
    let reserve = marker(form, &maxima, info).len();
    let content_lines = limits.lines.saturating_sub(1);
    let content_bytes = limits.bytes.saturating_sub(reserve + 2);

    let mut head = Side::new(0);
    let mut tail = Side::new(len);
    let all_fit = total_lines <= content_lines as u64 && text.display_len(0..len) <= content_bytes;
    if all_fit {
        // Only when the caller spills anyway (invalid UTF-8): show everything, then the marker.
        if len > 0 {
            let cost = text.display_len(0..len);
            head.push(Shown::Whole(0..len), cost, len, len);
        }
    } else {
        let head_lines = content_lines * 2 / 5;
        let head_bytes = content_bytes * 2 / 5;
        forward(text, &mut head, len, head_lines, head_bytes, content_bytes);
        let lines_left = content_lines - head.items.len();
        let bytes_left = content_bytes - head.bytes;
        backward(text, &mut tail, head.edge, lines_left, bytes_left);
        let lines_left = content_lines - tail.items.len();
        let bytes_left = content_bytes - tail.bytes;
        forward(
            text, &mut head, tail.edge, lines_left, bytes_left, bytes_left,
        );
    }

    let shown_lines = (head.items.len() + tail.items.len()) as u64;
    let omitted_lines = total_lines.saturating_sub(shown_lines);
    let counts = Counts {
        omitted_lines,
        total_lines,
        gap: (omitted_lines > 0).then(|| {
            (
                head.items.len() as u64 + 1,
                total_lines - tail.items.len() as u64,
            )
        }),
        omitted_bytes: (len - head.input - tail.input) as u64,
        total_bytes: len as u64,
        clamped: head
            .items
            .iter()
            .chain(&tail.items)
            .filter(|shown| matches!(shown, Shown::Clamped { .. }))
            .count() as u64,
    };
    let mut marker_text = marker(form, &counts, info);
    if marker_text.len() > limits.bytes {
        // Unreachable with validated limits (MIN_BYTES holds the minimal marker); never exceed.
        let (end, _) = Text::str(&marker_text).prefix(0..marker_text.len(), limits.bytes);
        marker_text.truncate(end);
    }

    let mut pieces = Vec::with_capacity(head.items.len() + tail.items.len() + 3);
    push_items(&mut pieces, &head.items);
    if head
        .items
        .last()
        .is_some_and(|last| text.bytes[last.end() - 1] != b'\n')
    {
        pieces.push(Piece::Owned("\n".to_owned()));
    }
    pieces.push(Piece::Owned(marker_text));
    if !tail.items.is_empty() {
        pieces.push(Piece::Owned("\n".to_owned()));
        tail.items.reverse();
        push_items(&mut pieces, &tail.items);
    }
    Preview {
        pieces,
        omitted_lines,
        omitted_bytes: counts.omitted_bytes,
    }
}

fn push_items(pieces: &mut Vec<Piece>, items: &[Shown]) {
    for item in items {
        match item {
            Shown::Whole(range) => pieces.push(Piece::Input(range.clone())),
            Shown::Clamped { head, tail, marker } => {
                pieces.push(Piece::Input(head.clone()));
                pieces.push(Piece::Owned(marker.clone()));
                pieces.push(Piece::Input(tail.clone()));
            }
        }
    }
}

/// Takes lines from `side.edge` forward, up to `stop`. The line that does not fit is shortened
/// when there is room for it (`last_max` applies when it is the last line before `stop`, so a
/// single huge line gets the whole budget), and taking stops there.
fn forward(
    text: Text<'_>,
    side: &mut Side,
    stop: usize,
    max_lines: usize,
    max_bytes: usize,
    last_max: usize,
) {
    while side.items.len() < max_lines && side.edge < stop {
        let start = side.edge;
        let end = memchr::memchr(b'\n', &text.bytes[start..stop]).map_or(stop, |i| start + i + 1);
        let cap = if end == stop { last_max } else { max_bytes };
        let room = cap.saturating_sub(side.bytes);
        let cost = text.display_len(start..end);
        if cost <= room {
            side.push(Shown::Whole(start..end), cost, end - start, end);
            continue;
        }
        if let Some((shown, cost, input)) = clamp(text, start..end, room) {
            side.push(shown, cost, input, end);
        }
        break;
    }
}

/// Takes lines from `side.edge` backward, down to `stop` (a line start).
fn backward(text: Text<'_>, side: &mut Side, stop: usize, max_lines: usize, max_bytes: usize) {
    while side.items.len() < max_lines && side.edge > stop {
        let end = side.edge;
        let search_end = if text.bytes[end - 1] == b'\n' {
            end - 1
        } else {
            end
        };
        let start =
            memchr::memrchr(b'\n', &text.bytes[stop..search_end]).map_or(stop, |i| stop + i + 1);
        let room = max_bytes.saturating_sub(side.bytes);
        let cost = text.display_len(start..end);
        if cost <= room {
            side.push(Shown::Whole(start..end), cost, end - start, start);
            continue;
        }
        if let Some((shown, cost, input)) = clamp(text, start..end, room) {
            side.push(shown, cost, input, start);
        }
        break;
    }
}

/// Shortens the line `line` (with its newline, if any) to at most `budget` displayed bytes:
/// (shown, displayed bytes, input bytes shown). `None` when the budget cannot hold the inline
/// marker and some content.
fn clamp(text: Text<'_>, line: Range<usize>, budget: usize) -> Option<(Shown, usize, usize)> {
    let newline = usize::from(text.bytes[line.end - 1] == b'\n');
    let content = line.start..line.end - newline;
    let reserve = line_marker(content.len() as u64).len();
    if budget < reserve + newline + MIN_SHOWN {
        return None;
    }
    let avail = budget - reserve - newline;
    let (head_raw, head_out) = text.prefix(content.clone(), avail * 2 / 5);
    let head_end = content.start + head_raw;
    let (tail_start, tail_out) = text.suffix(head_end..content.end, avail - head_out);
    let marker = line_marker((tail_start - head_end) as u64);
    let cost = head_out + marker.len() + tail_out + newline;
    let input = head_raw + (line.end - tail_start);
    let shown = Shown::Clamped {
        head: content.start..head_end,
        tail: tail_start..line.end,
        marker,
    };
    Some((shown, cost, input))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Full,
    Short,
    Minimal,
}

#[derive(Clone, Copy, Debug)]
struct Counts {
    omitted_lines: u64,
    total_lines: u64,
    /// First and last wholly omitted line.
    gap: Option<(u64, u64)>,
    omitted_bytes: u64,
    total_bytes: u64,
    clamped: u64,
}

fn marker(form: Form, counts: &Counts, info: &MarkerInfo<'_>) -> String {
    let reference = match info.reference {
        Ok(reference) => reference,
        Err(reason) => return unsaved_marker(form, counts, reason, info.note),
    };
    let (ol, ob) = (counts.omitted_lines, counts.omitted_bytes);
    match form {
        Form::Full => {
            let lead = lead(counts);
            let note = info.note.map(|n| format!(" {n}")).unwrap_or_default();
            match info.paging {
                Some(paging) => format!(
                    "[... {lead}. Full output: {reference} - the {} tool accepts it as path, with \
                     offset and limit (1-based lines, up to {} per page).{note} ...]",
                    paging.tool, paging.page_lines
                ),
                None => format!("[... {lead}. Full output: {reference}.{note} ...]"),
            }
        }
        Form::Short => match info.paging {
            Some(paging) => format!(
                "[... truncated: omitted {ol} lines, {ob} bytes; full output: {reference} ({} \
                 tool: offset/limit) ...]",
                paging.tool
            ),
            None => format!(
                "[... truncated: omitted {ol} lines, {ob} bytes; full output: {reference} ...]"
            ),
        },
        Form::Minimal => format!("[... truncated; full output: {reference} ...]"),
    }
}

/// The first words of a full marker: what was omitted.
fn lead(counts: &Counts) -> String {
    let Counts {
        omitted_lines: ol,
        total_lines: tl,
        omitted_bytes: ob,
        total_bytes: tb,
        ..
    } = *counts;
    if ob > 0 || counts.clamped > 0 {
        let gap = counts
            .gap
            .map(|(a, b)| format!(" (lines {a}-{b})"))
            .unwrap_or_default();
        let clamped = if counts.clamped > 0 {
            format!("; long lines shortened: {}", counts.clamped)
        } else {
            String::new()
        };
        format!("output truncated: omitted {ol} of {tl} lines{gap} and {ob} of {tb} bytes{clamped}")
    } else {
        format!("nothing omitted ({tl} lines, {tb} bytes)")
    }
}

/// The marker of a preview whose full output could not be saved: it says so and why, so the
/// model knows the omitted part is gone rather than looking for a reference.
fn unsaved_marker(form: Form, counts: &Counts, reason: &str, note: Option<&str>) -> String {
    let (ol, ob) = (counts.omitted_lines, counts.omitted_bytes);
    match form {
        Form::Full => {
            let note = note.map(|n| format!(" {n}")).unwrap_or_default();
            format!(
                "[... {}. The full output could not be saved ({reason}), so only this preview \
                 is left.{note} ...]",
                lead(counts)
            )
        }
        Form::Short => format!(
            "[... truncated: omitted {ol} lines, {ob} bytes; the full output could not be saved \
             ...]"
        ),
        Form::Minimal => "[... truncated; the full output could not be saved ...]".to_owned(),
    }
}

#[cfg(test)]
#[path = "preview_tests.rs"]
mod tests;
