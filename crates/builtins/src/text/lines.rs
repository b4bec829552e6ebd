//! A text split into lines that remember their own endings: the one line model of edit and
//! apply_patch, so both keep every line's `\n` or `\r\n` (and a missing final one) as it was.
//!
//! Only `\n` ends a line; a `\r` is part of the line unless it comes right before the `\n`.

/// A line break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    Lf,
    CrLf,
    /// The last line of a text without a trailing newline.
    None,
}

impl Ending {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Lf => "\n",
            Self::CrLf => "\r\n",
            Self::None => "",
        }
    }
}

/// One line: `start..content_end` is its content, `content_end..end` its ending (byte offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    pub(crate) start: usize,
    pub(crate) content_end: usize,
    pub(crate) end: usize,
}

/// A text split into lines; a final line ending does not start another line, so `""` has no
/// lines and `"a\n"` one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lines<'a> {
    text: &'a str,
    lines: Vec<Line>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut lines = Vec::with_capacity(bytes.len() / 32 + 1);
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

    /// The whole text.
    pub(crate) fn text(&self) -> &'a str {
        self.text
    }

    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    /// The byte span of line `index` (0-based).
    pub(crate) fn span(&self, index: usize) -> Line {
        self.lines[index]
    }

    /// The content of line `index` (0-based), without its ending.
    pub(crate) fn content(&self, index: usize) -> &'a str {
        let line = self.lines[index];
        &self.text[line.start..line.content_end]
    }

    /// The ending of line `index`.
    pub(crate) fn ending(&self, index: usize) -> Ending {
        let line = self.lines[index];
        match line.end - line.content_end {
            0 => Ending::None,
            1 => Ending::Lf,
            _ => Ending::CrLf,
        }
    }

    /// Every line's content, without endings.
    #[cfg_attr(not(feature = "apply-patch"), allow(dead_code))]
    pub(crate) fn contents(&self) -> Vec<&'a str> {
        (0..self.len()).map(|i| self.content(i)).collect()
    }

    /// The 1-based number of the line holding byte `offset`.
    pub(crate) fn number_at(&self, offset: usize) -> usize {
        self.lines.partition_point(|line| line.end <= offset) + 1
    }

    /// CRLF when any line uses it, else LF: edit's rule for the lines of newString (the
    /// reference's ED4, which converts a whole oldString to CRLF when the file has any).
    pub(crate) fn crlf_if_any(&self) -> Ending {
        if self.text.contains("\r\n") {
            Ending::CrLf
        } else {
            Ending::Lf
        }
    }

    /// The ending most lines use (CRLF only when it is the majority): apply_patch's rule for
    /// lines a patch adds, so a mostly-LF file with a stray CRLF line stays mostly LF.
    #[cfg_attr(not(feature = "apply-patch"), allow(dead_code))]
    pub(crate) fn majority_ending(&self) -> Ending {
        let (mut crlf, mut lf) = (0, 0);
        for index in 0..self.len() {
            match self.ending(index) {
                Ending::CrLf => crlf += 1,
                Ending::Lf => lf += 1,
                Ending::None => {}
            }
        }
        if crlf > lf { Ending::CrLf } else { Ending::Lf }
    }
}

/// `text`'s lines, each with its ending, as `text.split_inclusive('\n')` gives them: found with
/// `memchr` into a vector sized for lines of 32 bytes, since a diff splits both sides of a
/// large file.
pub(crate) fn with_endings(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(bytes.len() / 32 + 1);
    let mut start = 0;
    for newline in memchr::memchr_iter(b'\n', bytes) {
        // A newline is ASCII, so both ends are character boundaries.
        lines.push(&text[start..=newline]);
        start = newline + 1;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_endings_splits_as_split_inclusive_does() {
        for text in ["", "a", "a\n", "\n\n", "a\r\nb\nc", "héllo\n✓\n", "x\n\ny"] {
            let expected: Vec<&str> = text.split_inclusive('\n').collect();
            assert_eq!(with_endings(text), expected, "{text:?}");
        }
    }

    #[test]
    fn lines_keep_their_own_endings() {
        let lines = Lines::new("a\r\nb\nc");
        assert_eq!(lines.len(), 3);
        assert_eq!((lines.content(0), lines.ending(0)), ("a", Ending::CrLf));
        assert_eq!((lines.content(1), lines.ending(1)), ("b", Ending::Lf));
        assert_eq!((lines.content(2), lines.ending(2)), ("c", Ending::None));
        assert_eq!(lines.contents(), ["a", "b", "c"]);
        assert_eq!(lines.number_at(0), 1);
        assert_eq!(lines.number_at(3), 2);
        assert_eq!(Lines::new("x\n").len(), 1);
        assert_eq!(Lines::new("").len(), 0);
        assert_eq!(Lines::new("x\r").content(0), "x\r");
        assert_eq!(Lines::new("\r\n").content(0), "");
    }

    #[test]
    fn the_two_ending_rules() {
        let mixed = Lines::new("a\r\nb\nc");
        assert_eq!(mixed.crlf_if_any(), Ending::CrLf);
        assert_eq!(mixed.majority_ending(), Ending::Lf);
        let crlf = Lines::new("a\r\nb\r\nc\n");
        assert_eq!(crlf.majority_ending(), Ending::CrLf);
        assert_eq!(Lines::new("a\nb").crlf_if_any(), Ending::Lf);
    }
}
