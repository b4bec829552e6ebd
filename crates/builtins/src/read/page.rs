//! Streaming, line-numbered pages of a text file.
//!
//! Invariants:
//! - Memory is bounded by the page, never the file: lines before `offset` are skipped by
//!   counting newlines in buffer-sized chunks, a line longer than [`MAX_LINE_CHARS`] keeps only
//!   its first characters (the rest is scanned, not stored), and the total is counted the same
//!   way after the page.
//! - A page holds at most `max_lines` lines and `max_bytes` bytes as shown (each line with its
//!   `"<n>: "` number and its newline, see [`numbered_len`]); the first line that does not fit
//!   becomes `next`.
//! - Lines are split on `\n`, a trailing `\r` is dropped; a final newline does not start a line.

use std::borrow::Cow;
use std::io::{self, BufRead};

use super::render::numbered_len;

pub(crate) use crate::text::MAX_LINE_CHARS;
/// Appended to a line cut at [`MAX_LINE_CHARS`].
pub(crate) const LINE_TRUNCATED: &str = "... (line truncated to 2000 chars)";
/// Bytes of one line kept while reading: enough for `MAX_LINE_CHARS` of any UTF-8 text.
const LINE_CAPTURE: usize = MAX_LINE_CHARS * 4 + 4;

/// What a page may hold.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageBudget {
    /// The first line (1-based).
    pub(crate) offset: u64,
    /// Lines at most.
    pub(crate) max_lines: usize,
    /// Bytes of the numbered lines at most (see [`numbered_len`]).
    pub(crate) max_bytes: usize,
}

/// One page of a text file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextPage {
    /// The lines, without endings, long ones clamped.
    pub(crate) lines: PageLines,
    /// The number of `lines[0]`.
    pub(crate) offset: u64,
    /// Lines in the whole file.
    pub(crate) total_lines: u64,
    /// The next line to read when the page stopped early.
    pub(crate) next: Option<u64>,
    /// The page stopped because of its byte budget.
    pub(crate) capped: bool,
    /// Lines shown clamped to [`MAX_LINE_CHARS`].
    pub(crate) clamped: usize,
}

/// A page's lines, without endings: one string holding them all and where each ends, so a
/// page of many short lines is not one allocation per line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PageLines {
    text: String,
    ends: Vec<usize>,
}

impl PageLines {
    fn push(&mut self, line: &str) {
        self.text.push_str(line);
        self.ends.push(self.text.len());
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &str> + Clone + '_ {
        (0..self.ends.len()).map(|at| {
            let start = at.checked_sub(1).map_or(0, |before| self.ends[before]);
            &self.text[start..self.ends[at]]
        })
    }
}

#[cfg(test)]
impl PartialEq<Vec<&str>> for PageLines {
    fn eq(&self, other: &Vec<&str>) -> bool {
        self.iter().eq(other.iter().copied())
    }
}

#[cfg(test)]
impl<const N: usize> PartialEq<[&str; N]> for PageLines {
    fn eq(&self, other: &[&str; N]) -> bool {
        self.iter().eq(other.iter().copied())
    }
}

/// Why no page could be produced.
#[derive(Debug)]
pub(crate) enum PageError {
    /// `offset` lies beyond the last line.
    OffsetOutOfRange { offset: u64, total: u64 },
    /// A shown line is not valid UTF-8; `offset` is relative to the stream's start.
    NotUtf8 { offset: u64, line: u64 },
    /// Reading failed (or a decoder found invalid input).
    Io(io::Error),
}

impl From<io::Error> for PageError {
    fn from(err: io::Error) -> Self {
        Self::Io(err)
    }
}

/// Reads the page `budget` describes from `reader`.
pub(crate) fn page(reader: &mut impl BufRead, budget: PageBudget) -> Result<TextPage, PageError> {
    let offset = budget.offset.max(1);
    // `line` is the number of the line starting at the reader's position; `position` counts
    // the bytes consumed so far; `last` is the last byte consumed.
    let mut line = 1u64;
    let mut position = 0u64;
    let mut last = b'\n';
    while line < offset {
        let buf = reader.fill_buf()?;
        let Some(&end) = buf.last() else { break };
        let wanted = offset - line;
        let newlines = count_newlines(buf) as u64;
        let used = if newlines < wanted {
            line += newlines;
            last = end;
            buf.len()
        } else {
            let at = nth_newline(buf, wanted);
            line += wanted;
            last = b'\n';
            at + 1
        };
        position += used as u64;
        reader.consume(used);
    }
    let mut lines = PageLines::default();
    let mut used_bytes = 0usize;
    let mut clamped = 0usize;
    let mut capped = false;
    let mut next = None;
    let mut raw = Vec::with_capacity(256);
    if line == offset {
        loop {
            if lines.len() >= budget.max_lines {
                if !reader.fill_buf()?.is_empty() {
                    next = Some(line);
                }
                break;
            }
            let start = position;
            let Some(read) = read_line(reader, &mut raw)? else {
                break;
            };
            position += read.len;
            last = read.last;
            let (text, was_clamped) =
                decode_line(&raw, read.cut).map_err(|valid| PageError::NotUtf8 {
                    offset: start + valid as u64,
                    line,
                })?;
            let shown = numbered_len(line, &text);
            if used_bytes + shown > budget.max_bytes && !lines.is_empty() {
                capped = true;
                next = Some(line);
                line += 1;
                break;
            }
            used_bytes += shown;
            clamped += usize::from(was_clamped);
            lines.push(&text);
            line += 1;
        }
    }
    // `line - 1` lines are behind us, plus a last one without a newline if the file ended so.
    let behind = line - 1 + u64::from(lines.is_empty() && next.is_none() && last != b'\n');
    let total = behind + count_lines(reader)?;
    if lines.is_empty() && offset > 1 && offset > total {
        return Err(PageError::OffsetOutOfRange { offset, total });
    }
    Ok(TextPage {
        lines,
        offset,
        total_lines: total,
        next,
        capped,
        clamped,
    })
}

struct RawLine {
    len: u64,
    cut: bool,
    last: u8,
}

/// Reads one line, keeping at most [`LINE_CAPTURE`] bytes of it in `raw` (without its ending).
fn read_line(reader: &mut impl BufRead, raw: &mut Vec<u8>) -> io::Result<Option<RawLine>> {
    raw.clear();
    let mut len = 0u64;
    let mut cut = false;
    let mut last = b'\n';
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((len > 0).then_some(RawLine { len, cut, last }));
        }
        let (content, used, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (&buf[..at], at + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = LINE_CAPTURE.saturating_sub(raw.len());
        cut |= content.len() > room;
        raw.extend_from_slice(&content[..content.len().min(room)]);
        last = buf[used - 1];
        len += used as u64;
        reader.consume(used);
        if done {
            if !cut && raw.last() == Some(&b'\r') {
                raw.pop();
            }
            return Ok(Some(RawLine { len, cut, last }));
        }
    }
}

/// The shown text of a raw line and whether it was clamped; `Err` carries the offset of the
/// first invalid byte.
fn decode_line(raw: &[u8], cut: bool) -> Result<(Cow<'_, str>, bool), usize> {
    let text = match std::str::from_utf8(raw) {
        Ok(text) => text,
        // Capturing stopped inside a character: what came before is the line's start.
        Err(err) if cut && err.error_len().is_none() => {
            std::str::from_utf8(&raw[..err.valid_up_to()]).map_err(|e| e.valid_up_to())?
        }
        Err(err) => return Err(err.valid_up_to()),
    };
    // A line of no more bytes than the limit has no more characters either: only a longer
    // one is walked character by character.
    let past_limit = if text.len() > MAX_LINE_CHARS {
        text.char_indices().nth(MAX_LINE_CHARS)
    } else {
        None
    };
    match past_limit {
        Some((at, _)) => Ok((format!("{}{LINE_TRUNCATED}", &text[..at]).into(), true)),
        None if cut => Ok((format!("{text}{LINE_TRUNCATED}").into(), true)),
        None => Ok((text.into(), false)),
    }
}

/// Lines left in `reader`: its newlines, plus one for a last line without a newline.
fn count_lines(reader: &mut impl BufRead) -> io::Result<u64> {
    let mut lines = 0u64;
    let mut last = b'\n';
    loop {
        let buf = reader.fill_buf()?;
        let Some(&end) = buf.last() else {
            return Ok(lines + u64::from(last != b'\n'));
        };
        lines += count_newlines(buf) as u64;
        last = end;
        let used = buf.len();
        reader.consume(used);
    }
}

/// Newlines in `buf` (a plain count the compiler vectorizes).
fn count_newlines(buf: &[u8]) -> usize {
    buf.iter().filter(|&&b| b == b'\n').count()
}

/// The index of the `n`-th (1-based) newline of `buf`, which has at least `n`.
fn nth_newline(buf: &[u8], n: u64) -> usize {
    let mut seen = 0u64;
    for (at, &byte) in buf.iter().enumerate() {
        if byte == b'\n' {
            seen += 1;
            if seen == n {
                return at;
            }
        }
    }
    buf.len().saturating_sub(1)
}

#[cfg(test)]
mod tests;
