//! The wildcard matcher of permission patterns (reference P6–P8).
//!
//! `*` matches any run of characters (newlines included), `?` exactly one character (a Unicode
//! scalar value), everything else itself; the match is anchored at both ends; `\` is read as `/`
//! in both the input and the pattern; a pattern that ends in ` *` also matches with that suffix
//! absent (`git push *` matches `git push`). Matching is case-sensitive except on Windows, where
//! both sides are lower-cased first, as the reference does.
//!
//! The matcher never backtracks. A pattern is split at its `*`s into segments; the first must be
//! a prefix, the last a suffix, and each middle segment is taken at its leftmost occurrence
//! after the previous one (greedy-leftmost is optimal because every occurrence of a segment has
//! the same length). Literal segments are found with the standard library's two-way substring
//! search; segments with `?` with a bit-parallel shift-and scan. Each input character is looked
//! at a bounded number of times, so a match costs `O(n · ⌈k/64⌉)` for an input of `n`
//! characters and a longest `?`-segment of `k` characters, `O(n + m)` without `?`.

use std::borrow::Cow;
use std::collections::HashMap;

/// Whether matching folds case on this platform (the reference folds on Windows only).
const FOLD_CASE: bool = cfg!(windows);

/// True when `input` matches the wildcard `pattern`.
///
/// `*` matches any run of characters (newlines included), `?` exactly one character, anything
/// else itself; the match is anchored at both ends; `\` is read as `/` on both sides; a
/// pattern ending in `" *"` also matches without that suffix (`git push *` matches
/// `git push`). Case-sensitive except on Windows. The cost is linear in the input.
///
/// This compiles `pattern` on every call; [`Pattern`] compiles once for repeated use.
pub fn matches(input: &str, pattern: &str) -> bool {
    Pattern::new(pattern).matches(input)
}

/// A compiled wildcard pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    source: String,
    main: Shape,
    /// The pattern without its trailing ` *` (P7), when it has one: the match is the union.
    short: Option<Shape>,
    /// The literal text every match starts with (up to the first wildcard, and common to
    /// both shapes): a quick rejection.
    head: String,
    fold: bool,
}

impl Pattern {
    /// Compiles `pattern`. Every string is a valid pattern.
    pub fn new(pattern: &str) -> Self {
        Self::with_fold(pattern, FOLD_CASE)
    }

    pub(crate) fn with_fold(pattern: &str, fold: bool) -> Self {
        let normal = normalise(pattern, fold);
        let shortened = normal.strip_suffix(" *");
        let head_of = shortened.unwrap_or(&normal);
        let head = head_of[..head_of.find(['*', '?']).unwrap_or(head_of.len())].to_owned();
        Self {
            source: pattern.to_owned(),
            main: Shape::compile(&normal),
            short: shortened.map(Shape::compile),
            head,
            fold,
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// True when `input` matches this pattern.
    pub fn matches(&self, input: &str) -> bool {
        self.matches_normalised(&normalise(input, self.fold))
    }

    /// [`Pattern::matches`] for an input already passed through [`normalise`] with this
    /// pattern's case folding; evaluation normalises once for many patterns.
    pub(crate) fn matches_normalised(&self, input: &str) -> bool {
        if !input.starts_with(self.head.as_str()) {
            return false;
        }
        self.main.matches(input) || self.short.as_ref().is_some_and(|s| s.matches(input))
    }
}

/// `\` read as `/`, and lower case where matching folds case.
pub(crate) fn normalise(text: &str, fold: bool) -> Cow<'_, str> {
    let text = if text.contains('\\') {
        Cow::Owned(text.replace('\\', "/"))
    } else {
        Cow::Borrowed(text)
    };
    if fold {
        Cow::Owned(text.to_lowercase())
    } else {
        text
    }
}

/// The normalised text of `pattern` when it has no wildcard, so that it matches exactly the
/// inputs that normalise to this text.
pub(crate) fn literal_key(pattern: &str) -> Option<String> {
    (!pattern.contains(['*', '?'])).then(|| normalise(pattern, FOLD_CASE).into_owned())
}

/// Normalises an input for [`Pattern::matches_normalised`] on this platform.
pub(crate) fn normalise_input(text: &str) -> Cow<'_, str> {
    normalise(text, FOLD_CASE)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    /// No `*`: the whole input must match this one segment.
    Exact(Segment),
    /// `first*middle*...*last`; empty middle segments are dropped.
    Star {
        first: Segment,
        middle: Vec<Segment>,
        last: Segment,
    },
}

impl Shape {
    fn compile(pattern: &str) -> Self {
        let parts: Vec<&str> = pattern.split('*').collect();
        match parts.as_slice() {
            [only] => Self::Exact(Segment::compile(only)),
            [first, middle @ .., last] => Self::Star {
                first: Segment::compile(first),
                middle: middle
                    .iter()
                    .filter(|part| !part.is_empty())
                    .map(|part| Segment::compile(part))
                    .collect(),
                last: Segment::compile(last),
            },
            // `split` yields at least one part.
            [] => Self::Exact(Segment::Literal(String::new())),
        }
    }

    fn matches(&self, input: &str) -> bool {
        match self {
            Self::Exact(segment) => segment.prefix(input) == Some(input.len()),
            Self::Star {
                first,
                middle,
                last,
            } => {
                let Some(start) = first.prefix(input) else {
                    return false;
                };
                let Some(end) = last.suffix(input) else {
                    return false;
                };
                if end < start {
                    return false;
                }
                let mut pos = start;
                for segment in middle {
                    match segment.find(&input[pos..end]) {
                        Some(after) => pos += after,
                        None => return false,
                    }
                }
                true
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// No `?`: plain text.
    Literal(String),
    /// At least one `?`.
    Wild(Wild),
}

impl Segment {
    fn compile(text: &str) -> Self {
        if text.contains('?') {
            Self::Wild(Wild::compile(text))
        } else {
            Self::Literal(text.to_owned())
        }
    }

    /// The byte length of the prefix of `input` this segment matches.
    fn prefix(&self, input: &str) -> Option<usize> {
        match self {
            Self::Literal(text) => input.starts_with(text.as_str()).then_some(text.len()),
            Self::Wild(wild) => {
                let mut chars = input.chars();
                let mut len = 0;
                for item in &wild.items {
                    let c = chars.next()?;
                    if item.is_some_and(|want| want != c) {
                        return None;
                    }
                    len += c.len_utf8();
                }
                Some(len)
            }
        }
    }

    /// The byte offset where the suffix of `input` this segment matches begins.
    fn suffix(&self, input: &str) -> Option<usize> {
        match self {
            Self::Literal(text) => input
                .ends_with(text.as_str())
                .then(|| input.len() - text.len()),
            Self::Wild(wild) => {
                let mut chars = input.chars().rev();
                let mut len = 0;
                for item in wild.items.iter().rev() {
                    let c = chars.next()?;
                    if item.is_some_and(|want| want != c) {
                        return None;
                    }
                    len += c.len_utf8();
                }
                Some(input.len() - len)
            }
        }
    }

    /// The byte offset just after the leftmost occurrence of this segment in `haystack`.
    fn find(&self, haystack: &str) -> Option<usize> {
        match self {
            Self::Literal(text) => haystack.find(text.as_str()).map(|at| at + text.len()),
            Self::Wild(wild) => wild.find(haystack),
        }
    }
}

/// A segment with `?`s, compiled for a shift-and scan: bit `i` of the state is set when the
/// first `i + 1` items match the text ending at the current character.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Wild {
    /// `None` is `?`.
    items: Vec<Option<char>>,
    /// Words per bit vector.
    words: usize,
    /// The bits a character may advance, for ASCII characters (`128 * words`, `?` included).
    ascii: Vec<u64>,
    /// The same for the other characters that occur in the segment.
    other: HashMap<char, Vec<u64>>,
    /// The bits of `?` items: what any other character may advance.
    any: Vec<u64>,
}

impl Wild {
    fn compile(text: &str) -> Self {
        let items: Vec<Option<char>> = text.chars().map(|c| (c != '?').then_some(c)).collect();
        let words = items.len().div_ceil(64);
        let mut any = vec![0u64; words];
        for (i, item) in items.iter().enumerate() {
            if item.is_none() {
                any[i / 64] |= 1 << (i % 64);
            }
        }
        let mut ascii = Vec::with_capacity(128 * words);
        for _ in 0..128 {
            ascii.extend_from_slice(&any);
        }
        let mut other: HashMap<char, Vec<u64>> = HashMap::new();
        for (i, item) in items.iter().enumerate() {
            let Some(c) = *item else { continue };
            let bit = 1u64 << (i % 64);
            if c.is_ascii() {
                ascii[c as usize * words + i / 64] |= bit;
            } else {
                other.entry(c).or_insert_with(|| any.clone())[i / 64] |= bit;
            }
        }
        Self {
            items,
            words,
            ascii,
            other,
            any,
        }
    }

    fn mask(&self, c: char) -> &[u64] {
        if c.is_ascii() {
            let at = c as usize * self.words;
            &self.ascii[at..at + self.words]
        } else {
            self.other.get(&c).map_or(&self.any, Vec::as_slice)
        }
    }

    fn find(&self, haystack: &str) -> Option<usize> {
        let last = self.items.len().checked_sub(1)?;
        let (last_word, last_bit) = (last / 64, 1u64 << (last % 64));
        if self.words == 1 {
            // The common case, without the multi-word carry loop.
            let mut state = 0u64;
            for (at, c) in haystack.char_indices() {
                let mask = if c.is_ascii() {
                    self.ascii[c as usize]
                } else {
                    self.other.get(&c).map_or(self.any[0], |m| m[0])
                };
                state = ((state << 1) | 1) & mask;
                if state & last_bit != 0 {
                    return Some(at + c.len_utf8());
                }
            }
            return None;
        }
        let mut state = vec![0u64; self.words];
        for (at, c) in haystack.char_indices() {
            let mask = self.mask(c);
            let mut carry = 1u64;
            for (word, bits) in state.iter_mut().zip(mask) {
                let next_carry = *word >> 63;
                *word = ((*word << 1) | carry) & bits;
                carry = next_carry;
            }
            if state[last_word] & last_bit != 0 {
                return Some(at + c.len_utf8());
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_folding_lowercases_both_sides() {
        assert!(Pattern::with_fold("*.ENV", true).matches("src/.env"));
        assert!(Pattern::with_fold("*.env", true).matches("SRC\\.ENV"));
        assert!(!Pattern::with_fold("*.ENV", false).matches("src/.env"));
    }

    #[test]
    fn wild_segments_longer_than_one_word() {
        let pattern = format!("*{}b*", "?".repeat(100));
        let hit = format!("{}b", "a".repeat(100));
        assert!(matches(&hit, &pattern));
        assert!(!matches(&"a".repeat(500), &pattern));
        let mut exact = "x?".repeat(70);
        exact.push('z');
        let input = format!("{}z", "xy".repeat(70));
        assert!(matches(&input, &exact));
        assert!(!matches(&input[1..], &exact));
    }

    #[test]
    fn non_ascii_characters_in_wild_segments() {
        assert!(matches("ä€x", "?€?"));
        assert!(matches("aé€z", "*é?z"));
        assert!(!matches("aé€z", "*e?z"));
        assert!(matches("日本語", "*本?"));
    }
}
