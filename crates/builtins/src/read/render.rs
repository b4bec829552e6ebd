//! The model text of `read`, in the format Kilo/opencode models know (the legacy V1 read):
//! `<path>…</path>\n<type>file</type>\n<content>\n1: line\n…\n\n(hint)\n</content>`.
//!
//! A page's budget counts its lines only; the tags, line numbers and hints are its frame,
//! which settle's bound does not count, so a page of 2000 lines and 50 KB passes whole.

use std::fmt::Write as _;

use tackle_tool_core::{Budget, Frame};

use super::listing::Entry;

/// Lines of content on one page within `budget`: its line budget (the frame around the lines,
/// numbers included, is not content; see [`frame`]).
pub(crate) fn page_lines(budget: &Budget) -> usize {
    budget.max_lines.max(1)
}

/// The frame of a rendered page of `lines` (each counted with its newline, as the page budget
/// counts them): everything else in `text`.
pub(crate) fn frame<'a>(text: &str, lines: impl ExactSizeIterator<Item = &'a str>) -> Frame {
    let count = lines.len();
    let bytes = lines.map(|line| line.len() + 1).sum();
    Frame::beyond(text, count, bytes)
}

/// What a text page says after its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hint {
    /// Stopped by the byte budget.
    Capped {
        first: u64,
        last: u64,
        next: u64,
        kib: usize,
    },
    /// Stopped by the line budget.
    More {
        first: u64,
        last: u64,
        total: u64,
        next: u64,
    },
    /// Stopped inside line `last`, after character `column - 1`.
    Cut {
        first: u64,
        last: u64,
        total: u64,
        column: u64,
    },
    /// Reached the end.
    End { total: u64, what: &'static str },
}

impl Hint {
    fn text(self) -> String {
        match self {
            Self::Capped {
                first,
                last,
                next,
                kib,
            } => format!(
                "(Output capped at {kib} KB. Showing lines {first}-{last}. Use offset={next} to continue.)"
            ),
            Self::More {
                first,
                last,
                total,
                next,
            } => {
                format!("(Showing lines {first}-{last} of {total}. Use offset={next} to continue.)")
            }
            Self::Cut {
                first,
                last,
                total,
                column,
            } => format!(
                "(Showing lines {first}-{last} of {total}; line {last} is cut after character {}. \
                 Use offset={last} and column={column} to continue.)",
                column - 1
            ),
            Self::End { total, what } => format!("(End of {what} - total {total} lines)"),
        }
    }
}

/// The header of a text page, before its lines.
pub(crate) fn header(path: &str) -> String {
    format!("<path>{path}</path>\n<type>file</type>\n<content>\n")
}

/// A numbered text page.
pub(crate) fn text_page<'a>(
    path: &str,
    offset: u64,
    lines: impl Iterator<Item = &'a str> + Clone,
    hint: Hint,
    notes: &[String],
) -> String {
    let mut out = header(path);
    // A line's number, ": " and newline take at most this many bytes.
    const FRAME: usize = 24;
    out.reserve(lines.clone().map(|line| line.len() + FRAME).sum::<usize>() + 128);
    let mut number = itoa::Buffer::new();
    for (index, line) in lines.enumerate() {
        out.push_str(number.format(offset + index as u64));
        out.push_str(": ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&hint.text());
    for note in notes {
        out.push('\n');
        out.push_str(note);
    }
    out.push_str("\n</content>");
    out
}

/// A directory page.
pub(crate) fn list_page(
    path: &str,
    entries: &[Entry],
    offset: u64,
    total: u64,
    next: Option<u64>,
) -> String {
    let mut out = format!("<path>{path}</path>\n<type>directory</type>\n<entries>\n");
    for entry in entries {
        out.push_str(&entry.name);
        out.push('\n');
    }
    match next {
        Some(next) => {
            let _ = write!(
                out,
                "\n(Showing entries {offset}-{} of {total}. Use offset={next} to continue.)",
                next - 1
            );
        }
        None => {
            let _ = write!(out, "\n({total} entries)");
        }
    }
    out.push_str("\n</entries>");
    out
}
