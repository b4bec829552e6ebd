//! The model text of `read`, in the format Kilo/opencode models know (the legacy V1 read):
//! `<path>…</path>\n<type>file</type>\n<content>\n1: line\n…\n\n(hint)\n</content>`.
//!
//! The budget holds for the whole text: the frame around a page's lines (the tags, the blank
//! line, the hint, a note) is taken from it first ([`line_room`], [`entry_room`]), and each
//! line counts with its `N: ` number ([`numbered_len`]), so a page never needs settle's cut.

use std::fmt::Write as _;
use std::sync::LazyLock;

use tackle_tool_core::{Budget, count_lines};

use super::listing::Entry;
use crate::text::encoding::Encoding;

/// Lines on a page within `budget` (of a managed output, a PDF or a notebook): what a page's
/// frame leaves ([`line_room`]'s count for a path without a newline, as every reference is).
pub(crate) fn page_lines(budget: &Budget) -> usize {
    line_room("tool-output://", budget).max_lines
}

/// What the numbered lines of a text page of `path` may take within `budget`: the budget less
/// the page's largest frame (its tags, the blank line before the hint, the longest hint and
/// one note, with numbers of 20 digits), at least one line and one byte.
pub(crate) fn line_room(path: &str, budget: &Budget) -> Budget {
    static FRAME: LazyLock<Size> = LazyLock::new(|| {
        Size::of(&text_page(
            "",
            1,
            std::iter::empty(),
            Hint::longest(),
            &[longest_note()],
        ))
    });
    less(budget, FRAME.with(path))
}

/// What the entries of a directory page of `path` may take within `budget` (each with its
/// newline), the largest frame taken first.
pub(crate) fn entry_room(path: &str, budget: &Budget) -> Budget {
    static FRAME: LazyLock<Size> =
        LazyLock::new(|| Size::of(&list_page("", &[], u64::MAX, u64::MAX, Some(u64::MAX))));
    less(budget, FRAME.with(path))
}

/// The lines and bytes of a page's frame. Measured once for an empty path: the path stands in
/// the frame verbatim, so a page's frame is that plus the path itself.
#[derive(Debug, Clone, Copy)]
struct Size {
    lines: usize,
    bytes: usize,
}

impl Size {
    fn of(text: &str) -> Self {
        Self {
            lines: usize::try_from(count_lines(text.as_bytes())).unwrap_or(usize::MAX),
            bytes: text.len(),
        }
    }

    /// This frame around `path`.
    fn with(self, path: &str) -> Self {
        Self {
            lines: self
                .lines
                .saturating_add(memchr::memchr_iter(b'\n', path.as_bytes()).count()),
            bytes: self.bytes.saturating_add(path.len()),
        }
    }
}

fn less(budget: &Budget, frame: Size) -> Budget {
    Budget::new(
        budget.max_lines.saturating_sub(frame.lines).max(1),
        budget.max_bytes.saturating_sub(frame.bytes).max(1),
    )
}

/// Bytes line `number` showing `text` takes on a page: its number, `": "`, the text and the
/// newline.
pub(crate) fn numbered_len(number: u64, text: &str) -> usize {
    itoa::Buffer::new().format(number).len() + 2 + text.len() + 1
}

/// The note of a page decoded from another encoding (`label`).
pub(crate) fn encoding_note(label: &str) -> String {
    format!("(Decoded from {label}: the file is not UTF-8. edit and write keep its encoding.)")
}

/// The note of a page of a managed output whose lines `first`-`last` the spill cap dropped.
pub(crate) fn dropped_note(first: usize, last: usize) -> String {
    format!(
        "(Lines {first}-{last} of this output were not kept: it exceeded the size cap of \
         managed outputs.)"
    )
}

/// The longest note a page can carry (a page carries one at most).
fn longest_note() -> String {
    [Encoding::Utf16Le, Encoding::Utf16Be, Encoding::Windows1252]
        .into_iter()
        .filter_map(Encoding::label)
        .map(encoding_note)
        .chain([dropped_note(usize::MAX, usize::MAX)])
        .max_by_key(String::len)
        .unwrap_or_default()
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
    /// The hint with the longest text: every kind with numbers of 20 digits.
    fn longest() -> Self {
        let max = u64::MAX;
        [
            Self::Capped {
                first: max,
                last: max,
                next: max,
                kib: usize::MAX,
            },
            Self::More {
                first: max,
                last: max,
                total: max,
                next: max,
            },
            Self::Cut {
                first: max,
                last: max,
                total: max,
                column: max,
            },
            Self::End {
                total: max,
                what: "output",
            },
        ]
        .into_iter()
        .max_by_key(|hint| hint.text().len())
        .unwrap_or(Self::End {
            total: max,
            what: "output",
        })
    }

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
