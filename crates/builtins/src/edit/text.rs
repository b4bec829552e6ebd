//! Text as the edit tool sees it: lines with their own endings, and the character comparisons
//! the match ladder uses (optionally folding typographic punctuation and spaces).

/// One line of a text: `start..content_end` is the content, `content_end..end` its ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    pub(crate) start: usize,
    pub(crate) content_end: usize,
    pub(crate) end: usize,
}

/// A text split into lines; a final line ending does not start another line.
#[derive(Debug)]
pub(crate) struct Lines<'a> {
    pub(crate) text: &'a str,
    pub(crate) lines: Vec<Line>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut lines = Vec::new();
        let mut start = 0;
        while start < bytes.len() {
            let (content_end, end) = match memchr::memchr(b'\n', &bytes[start..]) {
                Some(at) => {
                    let newline = start + at;
                    let content_end = if newline > start && bytes[newline - 1] == b'\r' {
                        newline - 1
                    } else {
                        newline
                    };
                    (content_end, newline + 1)
                }
                None => (bytes.len(), bytes.len()),
            };
            lines.push(Line {
                start,
                content_end,
                end,
            });
            start = end;
        }
        Self { text, lines }
    }

    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    /// The content of line `index` (0-based), without its ending.
    pub(crate) fn content(&self, index: usize) -> &'a str {
        let line = self.lines[index];
        &self.text[line.start..line.content_end]
    }

    /// The ending of line `index`: `"\r\n"`, `"\n"` or `""` (a last line without one).
    pub(crate) fn ending(&self, index: usize) -> &'a str {
        let line = self.lines[index];
        &self.text[line.content_end..line.end]
    }

    /// The 1-based number of the line holding byte `offset`.
    pub(crate) fn number_at(&self, offset: usize) -> usize {
        self.lines.partition_point(|line| line.end <= offset) + 1
    }

    /// The file's prevailing ending: CRLF when any line uses it, else LF (reference ED4).
    pub(crate) fn dominant_ending(&self) -> &'static str {
        if self.text.contains("\r\n") {
            "\r\n"
        } else {
            "\n"
        }
    }
}

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

/// Folds typographic quotes, dashes and the no-break space family to ASCII, one char for one.
pub(crate) fn fold(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        _ => c,
    }
}

fn key(c: char, unicode: bool) -> char {
    if unicode { fold(c) } else { c }
}

/// `a` equals `b`, comparing folded characters when `unicode`.
pub(crate) fn equal(a: &str, b: &str, unicode: bool) -> bool {
    if !unicode {
        return a == b;
    }
    a.chars().map(fold).eq(b.chars().map(fold))
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
    fn lines_keep_their_own_endings() {
        let lines = Lines::new("a\r\nb\nc");
        assert_eq!(lines.len(), 3);
        assert_eq!((lines.content(0), lines.ending(0)), ("a", "\r\n"));
        assert_eq!((lines.content(1), lines.ending(1)), ("b", "\n"));
        assert_eq!((lines.content(2), lines.ending(2)), ("c", ""));
        assert_eq!(lines.number_at(0), 1);
        assert_eq!(lines.number_at(3), 2);
        assert_eq!(Lines::new("x\n").len(), 1);
        assert_eq!(Lines::new("").len(), 0);
    }

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
