//! A file's text as apply_patch rebuilds it: the shared line model (each line keeps its own
//! ending) plus the BOM and the trailing-newline state, so that a patched file differs from the
//! original only where the patch says.

use crate::mutation::BOM;
use crate::text::lines::{Ending, Lines};
use crate::text::{NotUtf8, decode};

/// A file's bytes seen as UTF-8 text (BOM stripped) split into lines; it borrows the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileText<'a> {
    bom: bool,
    lines: Lines<'a>,
}

impl<'a> FileText<'a> {
    /// Decodes `bytes`, refusing anything that is not valid UTF-8.
    pub(crate) fn decode(bytes: &'a [u8]) -> Result<Self, NotUtf8> {
        let decoded = decode(bytes)?;
        Ok(Self {
            bom: decoded.bom,
            lines: Lines::new(decoded.body),
        })
    }

    /// The bytes to store: the BOM (if the file had one) and the text.
    #[cfg(test)]
    pub(crate) fn encode(&self) -> Vec<u8> {
        let body = self.lines.text();
        let mut bytes = Vec::with_capacity(body.len() + BOM.len());
        if self.bom {
            bytes.extend_from_slice(BOM);
        }
        bytes.extend_from_slice(body.as_bytes());
        bytes
    }

    /// The ending of line `index`.
    pub(crate) fn ending(&self, index: usize) -> Ending {
        self.lines.ending(index)
    }

    /// Every line without its ending.
    pub(crate) fn lines(&self) -> Vec<&'a str> {
        self.lines.contents()
    }

    /// The bytes of `pieces`: the original lines kept (with their own endings) and new lines,
    /// behind the original's BOM. New lines without an ending of their own take the one most
    /// lines use. The trailing-newline state of the original is kept: a file that ended without
    /// a line break still does, one that ended with one (or was empty) does too.
    pub(crate) fn rebuild(&self, pieces: &[Piece<'_>]) -> Vec<u8> {
        let dominant = self.lines.majority_ending();
        let count = self.lines.len();
        let keep_unterminated = count > 0 && self.lines.ending(count - 1) == Ending::None;
        let mut body = Vec::with_capacity(self.lines.text().len() + BOM.len() + 64);
        if self.bom {
            body.extend_from_slice(BOM);
        }
        for (index, piece) in pieces.iter().enumerate() {
            let (text, ending) = match *piece {
                Piece::Original(i) => (self.lines.content(i), self.lines.ending(i)),
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
        let pieces: Vec<Piece<'_>> = (0..text.lines().len()).map(Piece::Original).collect();
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
        assert_eq!(
            FileText::decode(b"ab\xFFc").map(|_| ()),
            Err(NotUtf8 { offset: 2, line: 1 })
        );
        assert_eq!(
            FileText::decode(b"\xEF\xBB\xBF\xC3").map(|_| ()),
            Err(NotUtf8 { offset: 3, line: 1 })
        );
    }
}
