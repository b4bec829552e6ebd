//! The text core of the file tools: how read, edit, write and apply_patch see a file's bytes
//! as text.
//!
//! One place for what they must agree on, so the same input means the same thing in each:
//! what a file is ([`sniff`], read's rule), its encoding and the one decoder and encoder of the
//! encodings besides UTF-8 ([`encoding`]), the UTF-8 decoding with its BOM ([`decode`]), a
//! whole file's text in its own encoding ([`read_text`]), the line model that keeps each line's
//! ending ([`lines`]) and the typographic fold table ([`fold`]).

pub(crate) mod encoding;
pub(crate) mod fold;
pub(crate) mod lines;
pub(crate) mod sniff;

use std::borrow::Cow;
use std::path::Path;

use encoding::{Encoding, Malformed};

/// Characters of one line a model is shown: read and grep shorten longer lines (the
/// reference's `MAX_LINE_LENGTH`), so one minified line cannot fill a result.
pub const MAX_LINE_CHARS: usize = 2000;

/// A UTF-8 byte order mark.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A file's bytes as UTF-8 text: whether a BOM came first, and the text after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decoded<'a> {
    pub(crate) bom: bool,
    pub(crate) body: &'a str,
}

/// The bytes are not UTF-8: the first invalid byte's offset in the file (BOM included) and the
/// 1-based line it is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotUtf8 {
    pub(crate) offset: usize,
    pub(crate) line: usize,
}

/// Decodes `bytes` as UTF-8 after an optional BOM, refusing anything else: the file tools never
/// write U+FFFD in place of bytes they could not read.
pub(crate) fn decode(bytes: &[u8]) -> Result<Decoded<'_>, NotUtf8> {
    let (bom, rest) = match bytes.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, bytes),
    };
    match std::str::from_utf8(rest) {
        Ok(body) => Ok(Decoded { bom, body }),
        Err(err) => {
            let valid = err.valid_up_to();
            Err(NotUtf8 {
                offset: valid + if bom { BOM.len() } else { 0 },
                line: memchr::memchr_iter(b'\n', &rest[..valid]).count() + 1,
            })
        }
    }
}

/// `bytes` without a BOM, as text for display only (a diff of a file that was not UTF-8):
/// borrowed when valid, with U+FFFD for invalid bytes otherwise.
pub(crate) fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    // The strict check first: it validates whole words of ASCII at a time, while the lossy
    // decoder goes byte by byte (on a 100,000-line file, a tenth of an apply_patch call).
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// A file's text as read would read it: its encoding, and the text after its BOM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileText<'a> {
    pub(crate) encoding: Encoding,
    pub(crate) body: Cow<'a, str>,
}

/// Why a file's bytes are not text edit or write can take apart and put back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// Taken for UTF-8, but not UTF-8.
    NotUtf8(NotUtf8),
    /// Not valid in its encoding (named).
    Malformed {
        encoding: &'static str,
        error: Malformed,
    },
}

/// The text of the whole file `bytes` at `path`, in the encoding read pages it in
/// ([`sniff::file_encoding`]); nothing is ever replaced by U+FFFD.
pub(crate) fn read_text<'a>(bytes: &'a [u8], path: &Path) -> Result<FileText<'a>, Unreadable> {
    let encoding = sniff::file_encoding(bytes, path);
    let body = match encoding {
        Encoding::Utf8 { .. } => Cow::Borrowed(decode(bytes).map_err(Unreadable::NotUtf8)?.body),
        other => Cow::Owned(encoding::decode_all(bytes, other).map_err(|error| {
            Unreadable::Malformed {
                encoding: other.label().unwrap_or("UTF-8"),
                error,
            }
        })?),
    };
    Ok(FileText { encoding, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_with_and_without_a_bom() {
        assert_eq!(
            decode(b"\xEF\xBB\xBFa\n"),
            Ok(Decoded {
                bom: true,
                body: "a\n"
            })
        );
        assert_eq!(
            decode(b"a"),
            Ok(Decoded {
                bom: false,
                body: "a"
            })
        );
    }

    #[test]
    fn refuses_invalid_utf8_with_offset_and_line() {
        assert_eq!(decode(b"ab\xFFc"), Err(NotUtf8 { offset: 2, line: 1 }));
        assert_eq!(
            decode(b"\xEF\xBB\xBFa\n\xC3"),
            Err(NotUtf8 { offset: 5, line: 2 })
        );
    }

    #[test]
    fn lossy_strips_the_bom() {
        assert_eq!(lossy(b"\xEF\xBB\xBFa\xFF"), "a\u{FFFD}");
        assert!(matches!(lossy(b"ok"), Cow::Borrowed("ok")));
    }
}
