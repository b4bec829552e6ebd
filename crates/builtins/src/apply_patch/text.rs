//! A file's text as lines that remember their own endings, its BOM and its trailing-newline
//! state, so that a patched file differs from the original only where the patch says.

use crate::mutation::BOM;

/// A line break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    Lf,
    CrLf,
    /// The last line of a file without a trailing newline.
    None,
}

impl Ending {
    fn as_str(self) -> &'static str {
        match self {
            Self::Lf => "\n",
            Self::CrLf => "\r\n",
            Self::None => "",
        }
    }
}

/// A file's bytes seen as UTF-8 text (BOM stripped) split into lines; it borrows the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileText<'a> {
    bom: bool,
    body: &'a str,
    lines: Vec<Span>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
    ending: Ending,
}

/// The file is not UTF-8; `offset` is the first invalid byte (BOM included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotUtf8 {
    pub(crate) offset: usize,
}

impl<'a> FileText<'a> {
    /// Decodes `bytes`, refusing anything that is not valid UTF-8.
    pub(crate) fn decode(bytes: &'a [u8]) -> Result<Self, NotUtf8> {
        let (bom, rest) = match bytes.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, bytes),
        };
        let body = std::str::from_utf8(rest).map_err(|err| NotUtf8 {
            offset: err.valid_up_to() + if bom { BOM.len() } else { 0 },
        })?;
        Ok(Self::from_body(bom, body))
    }

    fn from_body(bom: bool, body: &'a str) -> Self {
        let mut lines = Vec::with_capacity(body.len() / 32 + 1);
        let mut start = 0;
        for piece in body.split_inclusive('\n') {
            let end = start + piece.len();
            let span = if let Some(text) = piece.strip_suffix("\r\n") {
                Span {
                    start,
                    end: start + text.len(),
                    ending: Ending::CrLf,
                }
            } else if let Some(text) = piece.strip_suffix('\n') {
                Span {
                    start,
                    end: start + text.len(),
                    ending: Ending::Lf,
                }
            } else {
                Span {
                    start,
                    end,
                    ending: Ending::None,
                }
            };
            lines.push(span);
            start = end;
        }
        Self { bom, body, lines }
    }

    /// The bytes to store: the BOM (if the file had one) and the text.
    #[cfg(test)]
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.body.len() + BOM.len());
        if self.bom {
            bytes.extend_from_slice(BOM);
        }
        bytes.extend_from_slice(self.body.as_bytes());
        bytes
    }

    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    /// Line `index` without its ending.
    pub(crate) fn line(&self, index: usize) -> &'a str {
        let span = self.lines[index];
        &self.body[span.start..span.end]
    }

    /// The ending of line `index`.
    pub(crate) fn ending(&self, index: usize) -> Ending {
        self.lines[index].ending
    }

    /// Every line without its ending.
    pub(crate) fn lines(&self) -> Vec<&'a str> {
        (0..self.len()).map(|i| self.line(i)).collect()
    }

    /// The ending most lines use (CRLF only when it is the majority); new lines get it.
    pub(crate) fn dominant_ending(&self) -> Ending {
        let crlf = self
            .lines
            .iter()
            .filter(|s| s.ending == Ending::CrLf)
            .count();
        let lf = self.lines.iter().filter(|s| s.ending == Ending::Lf).count();
        if crlf > lf { Ending::CrLf } else { Ending::Lf }
    }

    /// The bytes of `pieces`: the original lines kept (with their own endings) and new lines,
    /// behind the original's BOM. The trailing-newline state of the original is kept: a file
    /// that ended without a line break still does, one that ended with one (or was empty) does
    /// too.
    pub(crate) fn rebuild(&self, pieces: &[Piece<'_>]) -> Vec<u8> {
        let dominant = self.dominant_ending();
        let keep_unterminated = self.lines.last().is_some_and(|s| s.ending == Ending::None);
        let mut body = Vec::with_capacity(self.body.len() + BOM.len() + 64);
        if self.bom {
            body.extend_from_slice(BOM);
        }
        for (index, piece) in pieces.iter().enumerate() {
            let (text, ending) = match *piece {
                Piece::Original(i) => (self.line(i), self.lines[i].ending),
                Piece::New(text, ending) => (text, ending.unwrap_or(dominant)),
            };
            let last = index + 1 == pieces.len();
            let ending = match ending {
                _ if last && keep_unterminated => Ending::None,
                Ending::None => dominant,
                ending => ending,
            };
            body.extend_from_slice(text.as_bytes());
            body.extend_from_slice(ending.as_str().as_bytes());
        }
        body
    }
}

/// A line of a rebuilt file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// Line `n` of the original, with its ending.
    Original(usize),
    /// A new line with the ending of the line it replaces, or else the file's dominant one.
    New(&'a str, Option<Ending>),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(bytes: &[u8]) {
        let text = FileText::decode(bytes).unwrap();
        let pieces: Vec<Piece<'_>> = (0..text.len()).map(Piece::Original).collect();
        assert_eq!(text.rebuild(&pieces), bytes);
        assert_eq!(text.encode(), bytes);
    }

    #[test]
    fn keeps_every_byte_when_nothing_changes() {
        for bytes in [
            &b""[..],
            b"\n",
            b"a",
            b"a\n",
            b"a\r\nb\nc",
            b"\xEF\xBB\xBFa\r\nb\r\n",
            b"\n\n\n",
            b"x\r",
            "héllo\n✓".as_bytes(),
        ] {
            roundtrip(bytes);
        }
    }

    #[test]
    fn lines_and_endings() {
        let text = FileText::decode(b"a\r\nb\nc").unwrap();
        assert_eq!(text.lines(), ["a", "b", "c"]);
        assert_eq!(text.dominant_ending(), Ending::Lf);
        let crlf = FileText::decode(b"a\r\nb\r\nc\n").unwrap();
        assert_eq!(crlf.dominant_ending(), Ending::CrLf);
    }

    #[test]
    fn new_lines_take_the_dominant_ending_and_the_trailing_state_is_kept() {
        let text = FileText::decode(b"\xEF\xBB\xBFa\r\nb").unwrap();
        let out = text.rebuild(&[
            Piece::Original(0),
            Piece::Original(1),
            Piece::New("c", None),
        ]);
        assert_eq!(out, b"\xEF\xBB\xBFa\r\nb\r\nc");
        let out = text.rebuild(&[Piece::Original(1), Piece::Original(0)]);
        assert_eq!(out, b"\xEF\xBB\xBFb\r\na");
        let empty = FileText::decode(b"").unwrap();
        assert_eq!(empty.rebuild(&[Piece::New("x", None)]), b"x\n");
    }

    #[test]
    fn refuses_invalid_utf8_with_the_offset() {
        assert_eq!(FileText::decode(b"ab\xFFc"), Err(NotUtf8 { offset: 2 }));
        assert_eq!(
            FileText::decode(b"\xEF\xBB\xBF\xC3"),
            Err(NotUtf8 { offset: 3 })
        );
    }
}
