//! Locating a chunk's lines in a file: four levels of leniency, each scanned completely before
//! the next is tried, so an exact match anywhere after the cursor beats a normalised one nearer.

use crate::text::fold::{fold, folded_eq};

/// How loosely a match was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    /// Byte-identical lines.
    Exact,
    /// Trailing whitespace ignored.
    TrimEnd,
    /// Leading and trailing whitespace ignored.
    Trim,
    /// Whitespace around ignored and typographic punctuation and spaces folded (the table of
    /// [`crate::text::fold`], which edit's last rung uses too).
    Unicode,
}

pub(crate) const LEVELS: [Level; 4] = [Level::Exact, Level::TrimEnd, Level::Trim, Level::Unicode];

impl Level {
    pub(crate) fn matches(self, file: &str, pattern: &str) -> bool {
        match self {
            Self::Exact => file == pattern,
            Self::TrimEnd => file.trim_end() == pattern.trim_end(),
            Self::Trim => file.trim() == pattern.trim(),
            Self::Unicode => folded_eq(file.trim(), pattern.trim()),
        }
    }
}

/// Where `pattern` starts in `lines` at or after `start`, and at which level.
///
/// An empty pattern matches at `start`. With `end_of_file` the pattern must end the file,
/// though blank lines may follow it.
pub(crate) fn seek(
    lines: &[&str],
    pattern: &[&str],
    start: usize,
    end_of_file: bool,
) -> Option<(usize, Level)> {
    if pattern.is_empty() {
        return Some((start.min(lines.len()), Level::Exact));
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let last = lines.len() - pattern.len();
    if end_of_file {
        // Candidates: the very end, then earlier ends followed only by blank lines.
        let blank_tail = lines
            .iter()
            .rev()
            .take_while(|l| l.trim().is_empty())
            .count();
        let earliest = last.saturating_sub(blank_tail).max(start);
        return LEVELS.into_iter().find_map(|level| {
            (earliest..=last)
                .rev()
                .find(|&at| at >= start && matches_at(lines, pattern, at, level))
                .map(|at| (at, level))
        });
    }
    LEVELS.into_iter().find_map(|level| {
        (start..=last)
            .find(|&at| matches_at(lines, pattern, at, level))
            .map(|at| (at, level))
    })
}

/// The first line at or after `start` that begins with `prefix` (whitespace around and
/// typographic look-alikes ignored): the last resort for an `@@ <context>` anchor that names a
/// header by its start, such as `@@ def total` for `def total(items):`.
pub(crate) fn seek_line_start(lines: &[&str], prefix: &str, start: usize) -> Option<usize> {
    let prefix = prefix.trim();
    if prefix.is_empty() {
        return None;
    }
    (start..lines.len()).find(|&at| {
        let mut line = lines[at].trim().chars().map(fold);
        prefix.chars().map(fold).all(|c| line.next() == Some(c))
    })
}

/// True when `pattern` matches `lines` from `at` at `level`.
pub(crate) fn matches_at(lines: &[&str], pattern: &[&str], at: usize, level: Level) -> bool {
    lines.len() >= at + pattern.len()
        && pattern
            .iter()
            .zip(&lines[at..])
            .all(|(p, l)| level.matches(l, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_in_order() {
        let lines = ["a ", "  b", "c\u{2014}d", "a"];
        assert_eq!(seek(&lines, &["a"], 0, false), Some((3, Level::Exact)));
        assert_eq!(seek(&lines, &["a"], 0, false).map(|m| m.0), Some(3));
        assert_eq!(seek(&lines, &["b"], 0, false), Some((1, Level::Trim)));
        assert_eq!(seek(&lines, &["a  "], 0, false), Some((0, Level::TrimEnd)));
        assert_eq!(seek(&lines, &["c-d"], 0, false), Some((2, Level::Unicode)));
        assert_eq!(seek(&lines, &["x"], 0, false), None);
    }

    #[test]
    fn exact_after_the_cursor_beats_a_normalised_match_before_it() {
        let lines = ["x\u{201C}y\u{201D}", "x\"y\""];
        assert_eq!(seek(&lines, &["x\"y\""], 0, false), Some((1, Level::Exact)));
        assert_eq!(seek(&lines, &["x\"y\""], 2, false), None);
    }

    #[test]
    fn end_of_file_anchors_at_the_end() {
        let lines = ["a", "b", "a", "b", ""];
        assert_eq!(seek(&lines, &["a", "b"], 0, true), Some((2, Level::Exact)));
        assert_eq!(seek(&lines, &["a", "b"], 0, false), Some((0, Level::Exact)));
        assert_eq!(seek(&lines, &["a"], 0, true), None);
        assert_eq!(seek(&lines, &["b", ""], 0, true), Some((3, Level::Exact)));
    }

    #[test]
    fn empty_and_oversized_patterns() {
        let lines = ["a"];
        assert_eq!(seek(&lines, &[], 1, false), Some((1, Level::Exact)));
        assert_eq!(seek(&lines, &["a", "b"], 0, false), None);
    }

    #[test]
    fn line_starts() {
        let lines = ["class A:", "    def total(self, items):", "def total():"];
        assert_eq!(seek_line_start(&lines, "def total", 0), Some(1));
        assert_eq!(seek_line_start(&lines, "def total", 2), Some(2));
        assert_eq!(seek_line_start(&lines, "  ", 0), None);
        assert_eq!(seek_line_start(&lines, "def totals", 0), None);
    }

    #[test]
    fn nbsp_and_quotes_normalise() {
        assert!(Level::Unicode.matches("let\u{00A0}x = \u{2018}a\u{2019};", "let x = 'a';"));
        assert!(!Level::Trim.matches("let\u{00A0}x", "let x"));
    }
}
