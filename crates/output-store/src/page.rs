//! Paged reading of a managed output by line, with stable line numbers.
//!
//! Invariants:
//! - line numbers are those of the original output, also for a capped file: the lines the cap
//!   dropped are reported as a [`Dropped`] range (a page never spans one), and a line cut by
//!   the cap shows its kept ends with an inline marker;
//! - a page has at most `min(limit, page_lines)` lines and fits the byte budget (each line
//!   counted with the reader's per-line overhead); a line that does not fit ends the page and becomes
//!   `next`, except the first, which is shortened in the middle so every page makes progress;
//! - memory is bounded by the budget, whatever the length of a line.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};

use crate::StoreError;
use crate::reference::{Layout, OutputRef};
use crate::spill::CapHeader;
use crate::text::{Text, line_marker};

/// One page of a managed output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Consecutive lines starting at `offset`, without their newlines.
    pub lines: Vec<String>,
    /// The 1-based number of `lines[0]` (the requested offset).
    pub offset: usize,
    /// Lines in the whole output.
    pub total_lines: usize,
    /// More lines follow (`next` is set).
    pub truncated: bool,
    /// The line to read next, if any.
    pub next: Option<usize>,
    /// The page stopped at (or started in) lines the spill cap dropped; `next` skips them.
    pub dropped: Option<Dropped>,
    /// Lines shown shortened in the middle, with an inline marker.
    pub clamped_lines: usize,
    /// Some shown text was not valid UTF-8 (replaced by U+FFFD).
    pub invalid_utf8: bool,
}

/// Lines of an output that its spill file does not hold (it exceeded the spill cap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropped {
    /// First dropped line.
    pub first_line: usize,
    /// Last dropped line.
    pub last_line: usize,
    /// Their bytes, newlines included.
    pub bytes: u64,
}

/// How much one page may hold. The reader decides: it knows the frame it adds around the lines
/// (a header, line numbers, a hint) and the budget the page must fit with that frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PageLimits {
    /// Lines on the page, at most.
    pub lines: usize,
    /// Bytes of the page's lines, each counted with `line_overhead`.
    pub bytes: usize,
    /// Bytes the reader adds to every line (a line-number prefix and the newline).
    pub line_overhead: usize,
}

impl PageLimits {
    /// At most `lines` lines of at most `bytes` bytes in all, each line counted with
    /// `line_overhead` more.
    pub const fn new(lines: usize, bytes: usize, line_overhead: usize) -> Self {
        Self {
            lines,
            bytes,
            line_overhead,
        }
    }
}

/// One line being read: its first `keep` bytes, its last `keep` bytes, its length (dropped
/// bytes included) and whether the spill cap cut it.
#[derive(Debug)]
struct LineAcc {
    keep: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
    len: u64,
    gap: bool,
}

impl LineAcc {
    fn new(keep: usize) -> Self {
        Self {
            keep,
            head: Vec::new(),
            tail: Vec::new(),
            len: 0,
            gap: false,
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if !self.gap && self.head.len() < self.keep {
            let take = (self.keep - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
        }
        self.tail
            .extend_from_slice(&bytes[bytes.len().saturating_sub(self.keep)..]);
        if self.tail.len() > 2 * self.keep {
            self.tail.drain(..self.tail.len() - self.keep);
        }
    }

    fn gap(&mut self, dropped: u64) {
        self.len += dropped;
        self.gap = true;
        self.tail.clear();
    }

    /// The whole line, if it fits `budget` displayed bytes.
    fn whole(&self, budget: usize) -> Option<(String, bool)> {
        let complete = !self.gap && self.len == self.head.len() as u64;
        (complete && Text::bytes(&self.head).display_len(0..self.head.len()) <= budget)
            .then(|| lossy(&self.head))
    }

    /// The line shortened in the middle to `budget` displayed bytes (never less than its
    /// marker, so every page shows something).
    fn clamped(&self, budget: usize) -> (String, bool) {
        let avail = budget.saturating_sub(line_marker(self.len).len());
        let (head_raw, head_out) =
            Text::bytes(&self.head).prefix(0..self.head.len(), avail * 2 / 5);
        // Without a gap the tail buffer may overlap the head; never show a byte twice.
        let overlap = if self.gap {
            0
        } else {
            let tail_origin = self.len - self.tail.len() as u64;
            usize::try_from((head_raw as u64).saturating_sub(tail_origin)).unwrap_or(usize::MAX)
        };
        let from = overlap.min(self.tail.len());
        let (tail_start, _) =
            Text::bytes(&self.tail).suffix(from..self.tail.len(), avail - head_out);
        let shown = (head_raw + self.tail.len() - tail_start) as u64;
        let (head, head_lossy) = lossy(&self.head[..head_raw]);
        let (tail, tail_lossy) = lossy(&self.tail[tail_start..]);
        let text = format!("{head}{}{tail}", line_marker(self.len - shown));
        (text, head_lossy || tail_lossy)
    }
}

fn lossy(bytes: &[u8]) -> (String, bool) {
    match String::from_utf8(bytes.to_vec()) {
        Ok(text) => (text, false),
        Err(err) => (String::from_utf8_lossy(err.as_bytes()).into_owned(), true),
    }
}

enum End {
    Newline,
    Eof { partial: bool },
}

/// Reads one line (up to and consuming its newline) into `acc`.
fn read_line(reader: &mut impl BufRead, acc: &mut LineAcc) -> io::Result<End> {
    let mut partial = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(End::Eof { partial });
        }
        let (used, newline) = match memchr::memchr(b'\n', buf) {
            Some(i) => {
                acc.feed(&buf[..i]);
                (i + 1, true)
            }
            None => {
                acc.feed(buf);
                (buf.len(), false)
            }
        };
        reader.consume(used);
        if newline {
            return Ok(End::Newline);
        }
        partial = true;
    }
}

/// Lines left in `reader`.
fn count_lines(reader: &mut impl BufRead) -> io::Result<u64> {
    let (mut lines, mut last) = (0, b'\n');
    loop {
        let buf = reader.fill_buf()?;
        let Some(&end) = buf.last() else {
            return Ok(lines + u64::from(last != b'\n'));
        };
        lines += memchr::memchr_iter(b'\n', buf).count() as u64;
        last = end;
        let used = buf.len();
        reader.consume(used);
    }
}

enum Item {
    Line { number: u64, acc: LineAcc },
    Dropped(Dropped),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Head,
    Gap,
    TailStart,
    Tail,
    End,
}

/// Walks the original lines of a managed file, whatever its layout.
struct Cursor {
    reader: io::Take<BufReader<File>>,
    cap: Option<CapHeader>,
    header_len: u64,
    next_line: u64,
    stage: Stage,
}

impl Cursor {
    fn tail_len(cap: &CapHeader) -> u64 {
        cap.total_bytes - cap.tail_start
    }

    fn merged(cap: &CapHeader) -> bool {
        cap.head_partial && cap.tail_partial && cap.head_newlines == cap.newlines_before_tail
    }

    fn line(&mut self, acc: LineAcc) -> Item {
        let number = self.next_line;
        self.next_line += 1;
        Item::Line { number, acc }
    }

    /// Moves straight to the kept tail when `offset` lies there.
    fn jump(&mut self, offset: u64) -> io::Result<()> {
        let Some(cap) = self.cap else { return Ok(()) };
        let tail_line = cap.newlines_before_tail + 1;
        if offset > tail_line || (offset == tail_line && !Self::merged(&cap)) {
            self.reader
                .get_mut()
                .seek(SeekFrom::Start(self.header_len + cap.head_end))?;
            self.next_line = tail_line;
            self.stage = Stage::TailStart;
        }
        Ok(())
    }

    fn next(&mut self, keep: usize) -> io::Result<Option<Item>> {
        loop {
            match self.stage {
                Stage::Head | Stage::Tail => {
                    let mut acc = LineAcc::new(keep);
                    let partial = match read_line(&mut self.reader, &mut acc)? {
                        End::Newline => return Ok(Some(self.line(acc))),
                        End::Eof { partial } => partial,
                    };
                    let cap = match self.cap {
                        Some(cap) if self.stage == Stage::Head => cap,
                        _ => {
                            self.stage = Stage::End;
                            return Ok(partial.then(|| self.line(acc)));
                        }
                    };
                    if !partial {
                        self.stage = Stage::Gap;
                        continue;
                    }
                    // The kept head ends inside a line.
                    if Self::merged(&cap) {
                        acc.gap(cap.tail_start - cap.head_end);
                        self.reader.set_limit(Self::tail_len(&cap));
                        read_line(&mut self.reader, &mut acc)?;
                        self.stage = Stage::Tail;
                    } else {
                        acc.gap(cap.head_rest.saturating_sub(1));
                        self.stage = Stage::Gap;
                    }
                    return Ok(Some(self.line(acc)));
                }
                Stage::Gap => {
                    self.stage = Stage::TailStart;
                    let Some(cap) = self.cap else { continue };
                    let tail_line = cap.newlines_before_tail + 1;
                    if self.next_line < tail_line {
                        let dropped = Dropped {
                            first_line: to_usize(self.next_line),
                            last_line: to_usize(tail_line - 1),
                            bytes: cap.tail_start - cap.head_end - cap.head_rest - cap.tail_lead,
                        };
                        self.next_line = tail_line;
                        return Ok(Some(Item::Dropped(dropped)));
                    }
                }
                Stage::TailStart => {
                    self.stage = Stage::Tail;
                    let Some(cap) = self.cap else { continue };
                    self.reader.set_limit(Self::tail_len(&cap));
                    if cap.tail_partial {
                        let mut acc = LineAcc::new(keep);
                        acc.gap(cap.tail_lead);
                        read_line(&mut self.reader, &mut acc)?;
                        return Ok(Some(self.line(acc)));
                    }
                }
                Stage::End => return Ok(None),
            }
        }
    }
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Reads the page of `reference` (opened as `file`) that starts at line `offset`.
pub(crate) fn read(
    mut file: File,
    reference: &OutputRef,
    offset: usize,
    budget: PageLimits,
) -> Result<Page, StoreError> {
    let read_error = |source| StoreError::Read {
        reference: reference.to_string(),
        source,
    };
    let (cap, header_len, head_limit) = match reference.layout() {
        Layout::Full => (None, 0, u64::MAX),
        Layout::Capped => {
            let cap = CapHeader::read(&mut file, reference)?;
            let file_len = file.metadata().map_err(read_error)?.len();
            let expected = CapHeader::len() as u64 + cap.head_end + Cursor::tail_len(&cap);
            if file_len != expected {
                return Err(StoreError::Corrupt {
                    reference: reference.to_string(),
                    problem: format!("its size is {file_len} bytes, the header says {expected}"),
                });
            }
            (Some(cap), CapHeader::len() as u64, cap.head_end)
        }
    };
    let mut cursor = Cursor {
        reader: BufReader::with_capacity(64 * 1024, file).take(head_limit),
        cap,
        header_len,
        next_line: 1,
        stage: Stage::Head,
    };
    let offset = offset as u64;
    cursor.jump(offset).map_err(read_error)?;

    let mut page = Page {
        lines: Vec::new(),
        offset: to_usize(offset),
        total_lines: 0,
        truncated: false,
        next: None,
        dropped: None,
        clamped_lines: 0,
        invalid_utf8: false,
    };
    // Skip to `offset`.
    while cursor.next_line < offset {
        match cursor.next(0).map_err(read_error)? {
            Some(Item::Line { .. }) => {}
            Some(Item::Dropped(dropped)) if offset <= dropped.last_line as u64 => {
                page.dropped = Some(dropped);
                page.next = Some(dropped.last_line + 1);
                break;
            }
            Some(Item::Dropped(_)) => {}
            None => {
                let total_lines = cap.map_or(cursor.next_line - 1, |cap| cap.total_lines);
                if offset == 1 && total_lines == 0 {
                    break;
                }
                return Err(StoreError::OffsetOutOfRange {
                    reference: reference.to_string(),
                    offset: to_usize(offset),
                    total_lines: to_usize(total_lines),
                });
            }
        }
    }

    let mut used = 0;
    let mut stopped = page.dropped.is_some();
    while !stopped && page.lines.len() < budget.lines {
        let remaining = budget.bytes.saturating_sub(used);
        let room = remaining >= budget.line_overhead;
        let keep = remaining.saturating_sub(budget.line_overhead);
        match cursor.next(keep).map_err(read_error)? {
            None => stopped = true,
            Some(Item::Dropped(dropped)) => {
                page.dropped = Some(dropped);
                page.next = Some(dropped.last_line + 1);
                stopped = true;
            }
            Some(Item::Line { number, acc }) => {
                let (text, invalid) = match acc.whole(keep).filter(|_| room) {
                    Some(whole) => whole,
                    None if page.lines.is_empty() => {
                        page.clamped_lines += 1;
                        acc.clamped(keep)
                    }
                    None => {
                        page.next = Some(to_usize(number));
                        break;
                    }
                };
                used += text.len() + budget.line_overhead;
                page.invalid_utf8 |= invalid;
                page.lines.push(text);
                if used > budget.bytes {
                    // A shortened first line keeps its marker even past the budget: it is the
                    // page's only line (an empty line would fit no budget left).
                    break;
                }
            }
        }
    }

    let total_lines = match cap {
        Some(cap) => cap.total_lines,
        None => {
            let rest = if cursor.stage == Stage::End {
                0
            } else {
                count_lines(&mut cursor.reader).map_err(read_error)?
            };
            cursor.next_line - 1 + rest
        }
    };
    if page.lines.is_empty() && page.dropped.is_none() && offset > total_lines.max(1) {
        return Err(StoreError::OffsetOutOfRange {
            reference: reference.to_string(),
            offset: page.offset,
            total_lines: to_usize(total_lines),
        });
    }
    page.total_lines = to_usize(total_lines);
    if page.next.is_none() && !stopped {
        // The line budget ran out; more may follow.
        page.next = (cursor.next_line <= total_lines).then(|| to_usize(cursor.next_line));
    }
    page.truncated = page.next.is_some();
    Ok(page)
}

#[cfg(test)]
#[path = "page_tests.rs"]
mod tests;
