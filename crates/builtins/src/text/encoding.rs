//! The encodings a text file may be in besides UTF-8, one decoder for reading them (read's pages,
//! edit's and write's view of an existing file) and the encoder that writes them back.
//!
//! Decoding is `encoding_rs` without replacement: a byte sequence that is not text in its
//! encoding is an error naming its offset, never U+FFFD. Windows-1252 maps every byte, so its
//! decode and encode round-trip any file byte for byte; UTF-16 round-trips every valid file.
//! `encoding_rs` writes no UTF-16 (the web never does), so that encoder is ours: a code unit
//! per `str::encode_utf16` item.

use std::fmt;
use std::io::{self, Read};

/// A UTF-16 little-endian byte order mark.
const UTF16_LE_BOM: &[u8] = b"\xFF\xFE";
/// A UTF-16 big-endian byte order mark.
const UTF16_BE_BOM: &[u8] = b"\xFE\xFF";
/// Raw bytes read per refill of a streaming [`Decoder`].
const CHUNK: usize = 64 * 1024;

/// How a text file's bytes become text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// UTF-8, with the number of BOM bytes skipped (0 or 3).
    Utf8 { bom: usize },
    /// UTF-16 little-endian after a BOM.
    Utf16Le,
    /// UTF-16 big-endian after a BOM.
    Utf16Be,
    /// Not UTF-8 but shaped like Latin-1 text; decoded as Windows-1252.
    Windows1252,
}

impl Encoding {
    /// How the encoding is named to the model, for anything but plain UTF-8.
    pub(crate) fn label(self) -> Option<&'static str> {
        match self {
            Self::Utf8 { .. } => None,
            Self::Utf16Le => Some("UTF-16LE"),
            Self::Utf16Be => Some("UTF-16BE"),
            Self::Windows1252 => Some("Windows-1252 (Latin-1)"),
        }
    }

    /// The byte order mark a file in this encoding starts with (empty for none).
    pub(crate) fn bom(self) -> &'static [u8] {
        match self {
            Self::Utf8 { bom: 0 } | Self::Windows1252 => b"",
            Self::Utf8 { .. } => super::BOM,
            Self::Utf16Le => UTF16_LE_BOM,
            Self::Utf16Be => UTF16_BE_BOM,
        }
    }

    fn codec(self) -> &'static encoding_rs::Encoding {
        match self {
            Self::Utf8 { .. } => encoding_rs::UTF_8,
            Self::Utf16Le => encoding_rs::UTF_16LE,
            Self::Utf16Be => encoding_rs::UTF_16BE,
            Self::Windows1252 => encoding_rs::WINDOWS_1252,
        }
    }
}

/// The encoding of a sample of a file's first bytes (`complete` when it is the whole file): a
/// UTF-16 BOM decides; then valid UTF-8 (after an optional BOM); then Latin-1-shaped bytes are
/// Windows-1252. Anything else is not text we can read: the first invalid byte's offset.
pub(crate) fn detect(sample: &[u8], complete: bool) -> Result<Encoding, usize> {
    if sample.starts_with(UTF16_LE_BOM) {
        return Ok(Encoding::Utf16Le);
    }
    if sample.starts_with(UTF16_BE_BOM) {
        return Ok(Encoding::Utf16Be);
    }
    let bom = if sample.starts_with(super::BOM) {
        super::BOM.len()
    } else {
        0
    };
    match std::str::from_utf8(&sample[bom..]) {
        Ok(_) => Ok(Encoding::Utf8 { bom }),
        // A sample that stops inside a character is still UTF-8 so far.
        Err(err) if err.error_len().is_none() && !complete => Ok(Encoding::Utf8 { bom }),
        Err(_) if latin1_shaped(sample) => Ok(Encoding::Windows1252),
        Err(err) => Err(bom + err.valid_up_to()),
    }
}

/// Latin-1 text has its non-ASCII letters alone or in pairs between ASCII (`é`, `ção`); legacy
/// multibyte encodings (GBK, Shift-JIS) and Cyrillic code pages have long runs of high bytes.
fn latin1_shaped(sample: &[u8]) -> bool {
    let mut high = 0usize;
    let mut run = 0usize;
    for &byte in sample {
        if byte >= 0x80 {
            high += 1;
            run += 1;
            if run > 2 {
                return false;
            }
        } else {
            run = 0;
        }
    }
    high * 4 <= sample.len()
}

/// Bytes that are not text in their encoding (only UTF-16 can have them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Malformed {
    /// An unpaired surrogate starting at this byte offset of the file.
    Invalid { offset: u64 },
    /// The file ends inside a character that starts at this byte offset.
    Truncated { offset: u64 },
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid { offset } => write!(
                f,
                "the file is not valid UTF-16: an unpaired surrogate at byte offset {offset}"
            ),
            Self::Truncated { offset } => write!(
                f,
                "the file ends inside a UTF-16 character (byte offset {offset})"
            ),
        }
    }
}

impl From<Malformed> for io::Error {
    fn from(malformed: Malformed) -> Self {
        io::Error::new(io::ErrorKind::InvalidData, malformed.to_string())
    }
}

/// One decoding pass: `encoding_rs`'s decoder and the file offset of what it was given.
#[derive(Debug)]
struct Pass {
    decoder: encoding_rs::Decoder,
    /// Raw bytes given to the decoder so far, counted from the start of the file.
    position: u64,
}

impl Pass {
    fn new(encoding: Encoding, position: u64) -> Self {
        Self {
            decoder: encoding.codec().new_decoder_without_bom_handling(),
            position,
        }
    }

    /// Appends the text of `src` to `out`. `last` marks the end of the input: call it once more
    /// with an empty `src` then, so that only a character cut off by the end is `Truncated`.
    fn decode(&mut self, mut src: &[u8], out: &mut String, last: bool) -> Result<(), Malformed> {
        let flushing = src.is_empty();
        loop {
            let room = self
                .decoder
                .max_utf8_buffer_length_without_replacement(src.len())
                .unwrap_or(src.len().saturating_mul(3).saturating_add(4));
            out.reserve(room);
            let (result, read) = self
                .decoder
                .decode_to_string_without_replacement(src, out, last);
            self.position += read as u64;
            src = &src[read..];
            match result {
                encoding_rs::DecoderResult::InputEmpty => return Ok(()),
                encoding_rs::DecoderResult::OutputFull => {}
                // The malformed bytes end `after` bytes before what was read, and may have
                // started in an earlier buffer.
                encoding_rs::DecoderResult::Malformed(bad, after) => {
                    let offset = self.position - u64::from(after) - u64::from(bad);
                    return Err(if last && flushing {
                        Malformed::Truncated { offset }
                    } else {
                        Malformed::Invalid { offset }
                    });
                }
            }
        }
    }
}

/// The text of `bytes` (without its BOM, which starts at file offset 0) in `encoding`.
pub(crate) fn decode_all(bytes: &[u8], encoding: Encoding) -> Result<String, Malformed> {
    let skip = encoding.bom().len();
    let mut pass = Pass::new(encoding, skip as u64);
    let mut text = String::new();
    pass.decode(bytes.get(skip..).unwrap_or_default(), &mut text, false)?;
    pass.decode(&[], &mut text, true)?;
    Ok(text)
}

/// A reader yielding UTF-8 for a stream in a non-UTF-8 [`Encoding`] (BOM already skipped), so
/// read pages every text file the same way with memory bounded by its buffers.
#[derive(Debug)]
pub(crate) struct Decoder<R> {
    inner: R,
    pass: Pass,
    raw: Vec<u8>,
    out: String,
    at: usize,
    done: bool,
}

impl<R: Read> Decoder<R> {
    /// Decodes `inner`, whose first byte is at file offset `position` (for error offsets).
    pub(crate) fn new(inner: R, encoding: Encoding, position: u64) -> Self {
        Self {
            inner,
            pass: Pass::new(encoding, position),
            raw: vec![0; CHUNK],
            out: String::with_capacity(CHUNK * 2),
            at: 0,
            done: false,
        }
    }

    fn refill(&mut self) -> io::Result<()> {
        self.out.clear();
        self.at = 0;
        while self.out.is_empty() && !self.done {
            let n = loop {
                match self.inner.read(&mut self.raw) {
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    other => break other?,
                }
            };
            self.done = n == 0;
            self.pass.decode(&self.raw[..n], &mut self.out, self.done)?;
        }
        Ok(())
    }
}

impl<R: Read> Read for Decoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.out.len() {
            self.refill()?;
        }
        let n = buf.len().min(self.out.len() - self.at);
        buf[..n].copy_from_slice(&self.out.as_bytes()[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A character an encoding cannot hold, where it is in the text (1-based line and column,
/// counted in characters), and the encoding's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unencodable {
    pub(crate) character: char,
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) encoding: &'static str,
}

impl fmt::Display for Unencodable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the file is {} and cannot hold {:?} (U+{:04X}) at line {}, column {}; nothing was \
             written. Use characters the encoding has, or convert the file to UTF-8 first",
            self.encoding,
            self.character,
            u32::from(self.character),
            self.line,
            self.column
        )
    }
}

/// The bytes of a file holding `text` in `encoding`, its BOM first. A U+FEFF at the start of
/// `text` is the BOM, written once.
pub(crate) fn encode(text: &str, encoding: Encoding) -> Result<Vec<u8>, Unencodable> {
    let bom = encoding.bom();
    let body = if bom.is_empty() {
        text
    } else {
        text.strip_prefix('\u{FEFF}').unwrap_or(text)
    };
    let mut out = Vec::with_capacity(bom.len() + body.len() * 2);
    out.extend_from_slice(bom);
    match encoding {
        Encoding::Utf8 { .. } => out.extend_from_slice(body.as_bytes()),
        Encoding::Utf16Le => out.extend(body.encode_utf16().flat_map(u16::to_le_bytes)),
        Encoding::Utf16Be => out.extend(body.encode_utf16().flat_map(u16::to_be_bytes)),
        Encoding::Windows1252 => single_byte(body, encoding, &mut out)?,
    }
    Ok(out)
}

/// Encodes `text` in a single-byte `encoding` onto `out`, refusing a character it lacks.
fn single_byte(text: &str, encoding: Encoding, out: &mut Vec<u8>) -> Result<(), Unencodable> {
    let mut encoder = encoding.codec().new_encoder();
    // One byte per character at most: the text's UTF-8 length always suffices.
    let start = out.len();
    out.resize(start + text.len(), 0);
    let (result, read, written) =
        encoder.encode_from_utf8_without_replacement(text, &mut out[start..], true);
    out.truncate(start + written);
    match result {
        encoding_rs::EncoderResult::Unmappable(character) => {
            // `read` includes the refused character.
            let before = &text[..read - character.len_utf8()];
            let line_start = before.rfind('\n').map_or(0, |at| at + 1);
            Err(Unencodable {
                character,
                line: before.matches('\n').count() + 1,
                column: before[line_start..].chars().count() + 1,
                encoding: encoding.label().unwrap_or("UTF-8"),
            })
        }
        encoding_rs::EncoderResult::InputEmpty | encoding_rs::EncoderResult::OutputFull => Ok(()),
    }
}

#[cfg(test)]
mod tests;
