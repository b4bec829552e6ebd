//! Byte-level text helpers: line counts, and prefixes and suffixes that never split a UTF-8
//! sequence.
//!
//! Text may be invalid UTF-8 (raw process output, or bytes read back from a spill file); it is
//! displayed lossily (each invalid sequence becomes U+FFFD, three bytes) and every size here is
//! a *displayed* size, so a budget measured on the output is never exceeded. For text known to
//! be valid the helpers skip the validation work.

use std::ops::Range;

/// Text to cut: bytes plus whether they are known to be valid UTF-8.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Text<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) valid: bool,
}

impl<'a> Text<'a> {
    pub(crate) fn str(text: &'a str) -> Self {
        Self {
            bytes: text.as_bytes(),
            valid: true,
        }
    }

    pub(crate) fn bytes(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            valid: false,
        }
    }

    /// Displayed size of `range`.
    pub(crate) fn display_len(self, range: Range<usize>) -> usize {
        let slice = &self.bytes[range];
        if self.valid {
            return slice.len();
        }
        slice
            .utf8_chunks()
            .map(|chunk| chunk.valid().len() + if chunk.invalid().is_empty() { 0 } else { 3 })
            .sum()
    }

    /// The longest prefix of `range` whose displayed size is at most `max`: (raw bytes used,
    /// displayed bytes).
    pub(crate) fn prefix(self, range: Range<usize>, max: usize) -> (usize, usize) {
        let slice = &self.bytes[range];
        if self.valid {
            let end = floor_boundary(slice, max.min(slice.len()));
            return (end, end);
        }
        let (mut raw, mut out) = (0, 0);
        for chunk in slice.utf8_chunks() {
            let valid = chunk.valid().as_bytes();
            if out + valid.len() > max {
                let take = floor_boundary(valid, max - out);
                return (raw + take, out + take);
            }
            raw += valid.len();
            out += valid.len();
            if !chunk.invalid().is_empty() {
                if out + 3 > max {
                    return (raw, out);
                }
                raw += chunk.invalid().len();
                out += 3;
            }
        }
        (raw, out)
    }

    /// The longest suffix of `range` whose displayed size is at most `max`: (absolute start of
    /// the suffix, displayed bytes). `range.start` need not be a character boundary.
    pub(crate) fn suffix(self, range: Range<usize>, max: usize) -> (usize, usize) {
        if self.valid {
            let start = range.end.saturating_sub(max).max(range.start);
            let start = ceil_boundary(self.bytes, start, range.end);
            return (start, range.end - start);
        }
        // A displayed byte costs at least one raw byte, so the suffix lies in the last `max`
        // bytes; start decoding there at a boundary (UTF-8 is self-synchronising).
        let window = range.end.saturating_sub(max).max(range.start);
        let window = ceil_boundary(self.bytes, window, range.end);
        let chunks: Vec<_> = self.bytes[window..range.end].utf8_chunks().collect();
        let (mut start, mut out) = (range.end, 0);
        for chunk in chunks.iter().rev() {
            if !chunk.invalid().is_empty() {
                if out + 3 > max {
                    return (start, out);
                }
                start -= chunk.invalid().len();
                out += 3;
            }
            let valid = chunk.valid().as_bytes();
            if out + valid.len() > max {
                let from = ceil_boundary(valid, valid.len() - (max - out), valid.len());
                let take = valid.len() - from;
                return (start - take, out + take);
            }
            start -= valid.len();
            out += valid.len();
        }
        (start, out)
    }

    /// Appends `range`, displayed lossily.
    pub(crate) fn push(self, range: Range<usize>, out: &mut String) {
        out.push_str(&String::from_utf8_lossy(&self.bytes[range]));
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// The largest boundary `<= at`. A boundary is a position not inside a UTF-8 sequence; stray
/// continuation bytes are their own (invalid) sequences, so at most three steps are needed.
pub(crate) fn floor_boundary(bytes: &[u8], at: usize) -> usize {
    let mut at = at.min(bytes.len());
    let mut steps = 0;
    while at > 0 && at < bytes.len() && is_continuation(bytes[at]) && steps < 3 {
        at -= 1;
        steps += 1;
    }
    at
}

/// The smallest boundary `>= at` (and `<= end`).
pub(crate) fn ceil_boundary(bytes: &[u8], at: usize, end: usize) -> usize {
    let mut at = at;
    let mut steps = 0;
    while at < end && is_continuation(bytes[at]) && steps < 3 {
        at += 1;
        steps += 1;
    }
    at
}

pub(crate) use tackle_tool_core::count_lines;

/// True when `bytes` has more than `max` lines; stops counting early.
pub(crate) fn more_lines_than(bytes: &[u8], max: usize) -> bool {
    if bytes.len() <= max {
        return false;
    }
    let mut newlines = memchr::memchr_iter(b'\n', bytes);
    if max == 0 {
        return !bytes.is_empty();
    }
    // Line `max + 1` exists when the `max`-th newline is followed by more bytes.
    match newlines.nth(max - 1) {
        Some(at) => at + 1 < bytes.len(),
        None => false,
    }
}

/// The inline marker of a line shortened in the middle.
pub(crate) fn line_marker(omitted: u64) -> String {
    format!(" [... {omitted} bytes of this line omitted ...] ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_counts() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"\n\n"), 2);
        for text in ["", "a", "a\n", "a\nb", "a\nb\n", "\n\n\n", "x\n\ny"] {
            let n = count_lines(text.as_bytes()) as usize;
            for max in 0..5 {
                assert_eq!(
                    more_lines_than(text.as_bytes(), max),
                    n > max,
                    "{text:?} {max}"
                );
            }
        }
    }

    #[test]
    fn valid_cuts_respect_code_points() {
        let text = "aé日😀b";
        let t = Text::str(text);
        let all = 0..text.len();
        assert_eq!(t.prefix(all.clone(), 2), (1, 1));
        assert_eq!(t.prefix(all.clone(), 3), (3, 3));
        assert_eq!(t.prefix(all.clone(), 5), (3, 3));
        assert_eq!(t.prefix(all.clone(), 6), (6, 6));
        assert_eq!(t.suffix(all.clone(), 1), (text.len() - 1, 1));
        assert_eq!(t.suffix(all.clone(), 4), (text.len() - 1, 1));
        assert_eq!(t.suffix(all.clone(), 5), (text.len() - 5, 5));
        assert_eq!(t.suffix(all.clone(), 100), (0, text.len()));
    }

    #[test]
    fn invalid_bytes_count_as_replacement_characters() {
        let bytes = b"ab\xffc\xe6\x97d";
        let t = Text::bytes(bytes);
        let all = 0..bytes.len();
        // a b U+FFFD c U+FFFD d
        assert_eq!(t.display_len(all.clone()), 2 + 3 + 1 + 3 + 1);
        assert_eq!(t.prefix(all.clone(), 4), (2, 2));
        assert_eq!(t.prefix(all.clone(), 5), (3, 5));
        assert_eq!(t.suffix(all.clone(), 3), (bytes.len() - 1, 1));
        assert_eq!(t.suffix(all.clone(), 4), (bytes.len() - 3, 4));
        let mut out = String::new();
        t.push(all, &mut out);
        assert_eq!(out, "ab\u{fffd}c\u{fffd}d");
    }

    #[test]
    fn suffix_from_the_middle_of_a_sequence_starts_at_a_boundary() {
        let text = "日本語";
        let t = Text::bytes(text.as_bytes());
        // Starting inside the first character: it must not appear as replacement characters.
        assert_eq!(t.suffix(1..text.len(), 100), (3, 6));
        assert_eq!(floor_boundary(text.as_bytes(), 4), 3);
        assert_eq!(ceil_boundary(text.as_bytes(), 4, 9), 6);
    }
}
