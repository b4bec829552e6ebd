//! Failure texts for chunks that cannot be located: which file and chunk, the first expected
//! line that was not found, and the nearest lines of the file with their numbers, so the model
//! can fix the patch without reading the whole file again.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::seek::{LEVELS, seek};
use crate::text::fold::fold;

/// Candidates shown for a line that was not found.
const CANDIDATES: usize = 3;
/// The least bigram similarity (0..1) for a line to be shown as a candidate.
const MIN_SIMILARITY: f64 = 0.4;

/// Which chunk of which file failed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChunkAt<'a> {
    pub(crate) resource: &'a str,
    /// 1-based.
    pub(crate) number: usize,
    pub(crate) count: usize,
    pub(crate) patch_line: usize,
}

impl ChunkAt<'_> {
    fn head(&self, what: &str) -> String {
        format!(
            "Failed to find {what} in {} (chunk {} of {}, patch line {})",
            self.resource, self.number, self.count, self.patch_line
        )
    }
}

/// An `@@ <context>` line was not found after `cursor`.
pub(crate) fn context(at: &ChunkAt<'_>, context: &str, lines: &[&str], cursor: usize) -> String {
    let mut out = at.head(&format!("context '{context}'"));
    out.push_str(&after(cursor));
    out.push_str(".\n");
    earlier(&mut out, lines, &[context], cursor);
    candidates(&mut out, context, lines, cursor, true);
    out
}

/// A chunk's old lines were not found after `cursor` (nor its new lines).
pub(crate) fn lines(at: &ChunkAt<'_>, old: &[&str], lines: &[&str], cursor: usize) -> String {
    let mut out = at.head("expected lines");
    out.push_str(".\n");
    if earlier(&mut out, lines, old, cursor) {
        return out;
    }
    let (start, matched) = longest_prefix(lines, old, cursor);
    let missing = old[matched];
    if matched == 0 {
        let _ = writeln!(
            out,
            "The chunk's first line was not found{}:\n  expected: {missing:?}",
            after(cursor)
        );
    } else {
        let span = if matched == 1 {
            format!("Line 1 of the chunk matches the file at line {}", start + 1)
        } else {
            format!(
                "Lines 1-{matched} of the chunk match the file at lines {}-{}",
                start + 1,
                start + matched
            )
        };
        let _ = writeln!(
            out,
            "{span}, but chunk line {} does not:\n  expected: {missing:?}",
            matched + 1
        );
        match lines.get(start + matched) {
            Some(actual) => {
                let _ = writeln!(out, "  line {}: {actual:?}", start + matched + 1);
            }
            None => {
                let _ = writeln!(out, "  the file ends after line {}", lines.len());
            }
        }
    }
    candidates(&mut out, missing, lines, cursor, matched == 0);
    out
}

fn after(cursor: usize) -> String {
    if cursor == 0 {
        String::new()
    } else {
        format!(" after line {cursor}")
    }
}

/// Says so when the lines exist above the cursor: the chunks are out of file order.
fn earlier(out: &mut String, lines: &[&str], pattern: &[&str], cursor: usize) -> bool {
    if cursor == 0 {
        return false;
    }
    let Some((at, _)) = seek(
        &lines[..lines.len().min(cursor + pattern.len())],
        pattern,
        0,
        false,
    ) else {
        return false;
    };
    let _ = writeln!(
        out,
        "They are at line {}, above line {cursor} where the previous chunk or context matched: \
         the chunks of one file must follow the file's order.",
        at + 1
    );
    true
}

/// The position from `cursor` where the longest prefix of `old` matches (at the loosest level),
/// and its length (less than `old.len()`).
fn longest_prefix(lines: &[&str], old: &[&str], cursor: usize) -> (usize, usize) {
    let loosest = LEVELS[LEVELS.len() - 1];
    let mut best = (cursor.min(lines.len()), 0);
    for at in cursor..lines.len() {
        let matched = old
            .iter()
            .zip(&lines[at..])
            .take_while(|(expected, actual)| loosest.matches(actual, expected))
            .count()
            .min(old.len().saturating_sub(1));
        if matched > best.1 {
            best = (at, matched);
        }
    }
    best
}

/// The lines of the file most like `expected`, nearest to the cursor first among equals;
/// `say_none` says so when there are none.
fn candidates(out: &mut String, expected: &str, lines: &[&str], cursor: usize, say_none: bool) {
    if expected.trim().is_empty() {
        return;
    }
    let target = Bigrams::of(expected);
    let mut scored: Vec<(f64, usize)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            let score = target.similarity(line);
            (score >= MIN_SIMILARITY).then_some((score, i))
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.abs_diff(cursor).cmp(&b.1.abs_diff(cursor)))
    });
    if scored.is_empty() {
        if say_none {
            out.push_str("No similar line is in the file.\n");
        }
        return;
    }
    out.push_str("Nearest lines in the file:\n");
    for &(_, i) in scored.iter().take(CANDIDATES) {
        let _ = writeln!(out, "  {}: {:?}", i + 1, lines[i]);
    }
}

/// A line reduced to what the loosest seek level compares, as a multiset of character pairs.
struct Bigrams {
    counts: HashMap<(char, char), u32>,
    total: u32,
}

impl Bigrams {
    fn of(line: &str) -> Self {
        let mut counts = HashMap::new();
        let mut total = 0;
        for_each_bigram(line, |pair| {
            *counts.entry(pair).or_insert(0) += 1;
            total += 1;
        });
        Self { counts, total }
    }

    /// Dice's coefficient between this line and `line`.
    fn similarity(&self, line: &str) -> f64 {
        let mut seen: HashMap<(char, char), u32> = HashMap::new();
        let mut total = 0;
        let mut shared = 0;
        for_each_bigram(line, |pair| {
            total += 1;
            let used = seen.entry(pair).or_insert(0);
            if *used < self.counts.get(&pair).copied().unwrap_or(0) {
                *used += 1;
                shared += 1;
            }
        });
        if self.total + total == 0 {
            return 0.0;
        }
        f64::from(2 * shared) / f64::from(self.total + total)
    }
}

fn for_each_bigram(line: &str, mut f: impl FnMut((char, char))) {
    let mut chars = line.trim().chars().map(fold).filter(|c| !c.is_whitespace());
    let Some(mut previous) = chars.next() else {
        return;
    };
    for c in chars {
        f((previous, c));
        previous = c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: ChunkAt<'static> = ChunkAt {
        resource: "src/app.py",
        number: 2,
        count: 3,
        patch_line: 14,
    };

    #[test]
    fn names_the_first_missing_line_and_candidates() {
        let file = [
            "def total(items):",
            "    s = 0",
            "    for i in items:",
            "        s += i.price",
            "    return s",
        ];
        let old = ["    s = 0", "    for i in items:", "        s += i.cost"];
        insta::assert_snapshot!(lines(&AT, &old, &file, 0), @r#"
        Failed to find expected lines in src/app.py (chunk 2 of 3, patch line 14).
        Lines 1-2 of the chunk match the file at lines 2-3, but chunk line 3 does not:
          expected: "        s += i.cost"
          line 4: "        s += i.price"
        Nearest lines in the file:
          4: "        s += i.price"
        "#);
    }

    #[test]
    fn first_line_missing_and_nothing_similar() {
        let file = ["alpha", "beta"];
        insta::assert_snapshot!(lines(&AT, &["zzz qqq"], &file, 1), @r#"
        Failed to find expected lines in src/app.py (chunk 2 of 3, patch line 14).
        The chunk's first line was not found after line 1:
          expected: "zzz qqq"
        No similar line is in the file.
        "#);
    }

    #[test]
    fn out_of_order_chunks_are_named() {
        let file = ["a", "b", "c", "d"];
        insta::assert_snapshot!(lines(&AT, &["a", "b"], &file, 3), @r"
        Failed to find expected lines in src/app.py (chunk 2 of 3, patch line 14).
        They are at line 1, above line 3 where the previous chunk or context matched: the chunks of one file must follow the file's order.
        ");
    }

    #[test]
    fn missing_context() {
        let file = ["class Foo:", "    def barr(self):"];
        insta::assert_snapshot!(context(&AT, "def bar(self):", &file, 0), @r#"
        Failed to find context 'def bar(self):' in src/app.py (chunk 2 of 3, patch line 14).
        Nearest lines in the file:
          2: "    def barr(self):"
        "#);
    }

    #[test]
    fn similarity_is_symmetric_enough_and_bounded() {
        let a = Bigrams::of("return total");
        assert!((a.similarity("return total") - 1.0).abs() < f64::EPSILON);
        assert!(a.similarity("xyz") < MIN_SIMILARITY);
        assert_eq!(Bigrams::of("").similarity(""), 0.0);
    }
}
