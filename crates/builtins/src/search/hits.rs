//! One file's grep results as the searcher reports them: matching lines (several per match in
//! multiline mode), the context lines around them, and the count.
//!
//! The searcher (`grep-searcher`) does the context and multiline work; this sink only keeps
//! what can be shown and counts the rest.

use std::io;

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};

use super::Budget;

/// Lines longer than this many characters are clamped to a window of this width.
pub use crate::text::MAX_LINE_CHARS;

/// How many characters of a clamped line to show before its first match.
const LEAD_CHARS: usize = 100;

/// What grep reports per file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The matching lines (and their context).
    Content,
    /// Only that the file matches: its search stops at the first match.
    Files,
    /// How many matches each file has.
    Count,
}

/// The part of an over-long line that is shown, as 1-based inclusive character columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Clip {
    pub(crate) first: usize,
    pub(crate) last: usize,
    /// The whole line's length in characters.
    pub(crate) length: usize,
}

/// Why a line is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineKind {
    /// The first (in multiline mode possibly the only) line of a match.
    Match,
    /// A further line of a match that spans lines (multiline mode).
    Continued,
    /// Context before a match.
    Before,
    /// Context after a match.
    After,
}

impl LineKind {
    pub(crate) fn is_match(self) -> bool {
        matches!(self, Self::Match | Self::Continued)
    }
}

/// One shown line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineHit {
    /// 1-based line number.
    pub(crate) line: u64,
    /// The line without its terminator (lossily decoded), or its shown window when clipped.
    pub(crate) text: String,
    /// Set when the line was longer than [`MAX_LINE_CHARS`].
    pub(crate) clip: Option<Clip>,
    pub(crate) kind: LineKind,
}

/// Collects one file's lines. At most `keep` matches keep their lines (with the context
/// around them); every match is counted.
pub(crate) struct Hits<'a> {
    pub(crate) matcher: &'a RegexMatcher,
    pub(crate) mode: Mode,
    pub(crate) keep: usize,
    pub(crate) lines: Vec<LineHit>,
    pub(crate) count: usize,
    pub(crate) binary: bool,
    pub(crate) budget: &'a Budget,
}

impl<'a> Hits<'a> {
    pub(crate) fn new(
        matcher: &'a RegexMatcher,
        mode: Mode,
        keep: usize,
        budget: &'a Budget,
    ) -> Self {
        Self {
            matcher,
            mode,
            keep,
            lines: Vec::new(),
            count: 0,
            binary: false,
            budget,
        }
    }

    /// How many of the file's matches keep their lines.
    pub(crate) fn kept(&self) -> usize {
        match self.mode {
            Mode::Content => self.count.min(self.keep),
            Mode::Files | Mode::Count => usize::from(self.count > 0),
        }
    }

    fn push(&mut self, line: u64, bytes: &[u8], kind: LineKind) {
        self.lines.push(line_hit(self.matcher, line, bytes, kind));
    }
}

impl Sink for Hits<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.count += 1;
        match self.mode {
            // One match decides the file.
            Mode::Files => return Ok(false),
            Mode::Count => {}
            Mode::Content if self.count <= self.keep => {
                let first = found.line_number().unwrap_or(0);
                for (offset, line) in (0u64..).zip(found.lines()) {
                    let kind = if offset == 0 {
                        LineKind::Match
                    } else {
                        LineKind::Continued
                    };
                    self.push(first + offset, line, kind);
                }
            }
            Mode::Content => {}
        }
        Ok(!self.budget.spent())
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        // Context before a match belongs to the next match, after a match to the last one:
        // either is kept with the match it belongs to.
        let kind = match context.kind() {
            SinkContextKind::Before if self.count < self.keep => LineKind::Before,
            SinkContextKind::After if self.count <= self.keep => LineKind::After,
            _ => return Ok(!self.budget.spent()),
        };
        let line = context.line_number().unwrap_or(0);
        self.push(line, context.bytes(), kind);
        Ok(!self.budget.spent())
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        // Binary files are skipped whole, including matches seen before the NUL byte.
        self.binary = true;
        Ok(false)
    }
}

/// Keeps the lines of the first `room` matches of `lines`, with the context after the last
/// of them. Returns how many matches were kept.
pub(crate) fn truncate_matches(lines: &mut Vec<LineHit>, room: usize) -> usize {
    let mut matches = 0usize;
    let mut cut = lines.len();
    for (index, hit) in lines.iter().enumerate() {
        match hit.kind {
            LineKind::Match if matches == room => {
                cut = index;
                break;
            }
            LineKind::Match => matches += 1,
            // Context before a match that is not kept goes with it.
            LineKind::Before if matches == room => {
                cut = index;
                break;
            }
            LineKind::Continued | LineKind::Before | LineKind::After => {}
        }
    }
    lines.truncate(cut);
    matches
}

/// One line as shown: terminator removed, clamped around its first match when over-long.
pub(crate) fn line_hit(matcher: &RegexMatcher, line: u64, bytes: &[u8], kind: LineKind) -> LineHit {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let text = String::from_utf8_lossy(bytes);
    if bytes.len() <= MAX_LINE_CHARS {
        return LineHit {
            line,
            text: text.into_owned(),
            clip: None,
            kind,
        };
    }
    let length = text.chars().count();
    if length <= MAX_LINE_CHARS {
        return LineHit {
            line,
            text: text.into_owned(),
            clip: None,
            kind,
        };
    }
    // Show the window that contains the first match, with some lead-in.
    let match_chars = matcher
        .find(text.as_bytes())
        .ok()
        .flatten()
        .map(|m| (chars_before(&text, m.start()), chars_before(&text, m.end())));
    let start = match match_chars {
        Some((_, end)) if end <= MAX_LINE_CHARS => 0,
        Some((start, _)) => start
            .saturating_sub(LEAD_CHARS)
            .min(length - MAX_LINE_CHARS),
        None => 0,
    };
    let window: String = text.chars().skip(start).take(MAX_LINE_CHARS).collect();
    LineHit {
        line,
        text: window,
        clip: Some(Clip {
            first: start + 1,
            last: start + MAX_LINE_CHARS,
            length,
        }),
        kind,
    }
}

/// How many characters start before byte offset `at` (safe for any offset).
fn chars_before(text: &str, at: usize) -> usize {
    text.char_indices().take_while(|(i, _)| *i < at).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(line: u64, kind: LineKind) -> LineHit {
        LineHit {
            line,
            text: String::new(),
            clip: None,
            kind,
        }
    }

    #[test]
    fn truncation_keeps_each_match_with_its_context() {
        use LineKind::{After, Before, Continued, Match};
        let lines = vec![
            hit(1, Before),
            hit(2, Match),
            hit(3, Continued),
            hit(4, After),
            hit(5, Before),
            hit(6, Match),
            hit(7, After),
        ];
        let mut one = lines.clone();
        assert_eq!(truncate_matches(&mut one, 1), 1);
        assert_eq!(one, lines[..4]);
        let mut all = lines.clone();
        assert_eq!(truncate_matches(&mut all, 5), 2);
        assert_eq!(all, lines);
        let mut none = lines.clone();
        assert_eq!(truncate_matches(&mut none, 0), 0);
        assert!(none.is_empty());
    }
}
