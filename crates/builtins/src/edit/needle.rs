//! oldString and newString as the match ladder sees them, and the character comparisons it
//! makes (optionally folding typographic punctuation and spaces with the shared table of
//! [`crate::text::fold`]). The file's own lines are [`crate::text::lines::Lines`].

use crate::text::fold::{fold, folded_eq};

/// A needle (oldString or newString) as lines without endings, and whether it ended with one.
#[derive(Debug)]
pub(crate) struct Needle<'a> {
    pub(crate) lines: Vec<&'a str>,
    pub(crate) ends_with_newline: bool,
}

impl<'a> Needle<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let ends_with_newline = text.ends_with('\n');
        let body = if ends_with_newline {
            &text[..text.len() - 1]
        } else {
            text
        };
        let lines = body
            .split('\n')
            .map(|line| line.strip_suffix('\r').unwrap_or(line))
            .collect();
        Self {
            lines,
            ends_with_newline,
        }
    }

    /// The lines joined with `ending`, with a final `ending` if the needle had one.
    pub(crate) fn join(&self, ending: &str) -> String {
        let mut out = self.lines.join(ending);
        if self.ends_with_newline {
            out.push_str(ending);
        }
        out
    }
}

fn key(c: char, unicode: bool) -> char {
    if unicode { fold(c) } else { c }
}

/// `a` equals `b`, comparing folded characters when `unicode`.
pub(crate) fn equal(a: &str, b: &str, unicode: bool) -> bool {
    if unicode { folded_eq(a, b) } else { a == b }
}

/// Where `suffix` starts in `hay` if `hay` ends with it (byte offset into `hay`).
pub(crate) fn suffix_start(hay: &str, suffix: &str, unicode: bool) -> Option<usize> {
    let mut hay_chars = hay.char_indices().rev();
    let mut start = hay.len();
    for want in suffix.chars().rev() {
        let (at, got) = hay_chars.next()?;
        if key(got, unicode) != key(want, unicode) {
            return None;
        }
        start = at;
    }
    Some(start)
}

/// Where `prefix` ends in `hay` if `hay` starts with it (byte offset into `hay`).
pub(crate) fn prefix_end(hay: &str, prefix: &str, unicode: bool) -> Option<usize> {
    let mut hay_chars = hay.char_indices();
    let mut end = 0;
    for want in prefix.chars() {
        let (at, got) = hay_chars.next()?;
        if key(got, unicode) != key(want, unicode) {
            return None;
        }
        end = at + got.len_utf8();
    }
    Some(end)
}

/// Non-overlapping occurrences of `needle` in `hay` as byte ranges, comparing folded chars.
pub(crate) fn find_all(hay: &str, needle: &str, unicode: bool) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    if needle.is_empty() {
        return found;
    }
    let mut from = 0;
    while from < hay.len() {
        let rest = &hay[from..];
        let hit = rest
            .char_indices()
            .find_map(|(at, _)| prefix_end(&rest[at..], needle, unicode).map(|end| (at, at + end)));
        match hit {
            Some((start, end)) => {
                found.push((from + start, from + end));
                from += end;
            }
            None => break,
        }
    }
    found
}

/// The leading run of spaces and tabs, and the rest.
pub(crate) fn split_indent(line: &str) -> (&str, &str) {
    let rest = line.trim_start_matches([' ', '\t']);
    (&line[..line.len() - rest.len()], rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needles() {
        let needle = Needle::new("a\r\nb\n");
        assert_eq!(needle.lines, vec!["a", "b"]);
        assert!(needle.ends_with_newline);
        assert_eq!(needle.join("\r\n"), "a\r\nb\r\n");
    }

    #[test]
    fn folded_comparisons() {
        assert!(equal("it’s — “ok”", "it's - \"ok\"", true));
        assert!(!equal("it’s", "it's", false));
        assert_eq!(suffix_start("  let x = ‘a’", "x = 'a'", true), Some(6));
        assert_eq!(prefix_end("“a” b", "\"a\"", true), Some(7));
        assert_eq!(find_all("a’b a'b", "a'b", true), vec![(0, 5), (6, 9)]);
        assert_eq!(split_indent("\t  x "), ("\t  ", "x "));
    }
}
