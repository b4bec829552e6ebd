//! Streaming decoders from UTF-16 (after a BOM) and Windows-1252 to UTF-8, so the pager reads
//! every text file the same way with memory bounded by its buffers.

use std::io::{self, Read};

use super::sniff::Encoding;

const CHUNK: usize = 64 * 1024;

/// Windows-1252 bytes 0x80..=0x9F; the rest of the code page is Latin-1 (byte = code point).
const CP1252_HIGH: [char; 32] = [
    '\u{20AC}', '\u{0081}', '\u{201A}', '\u{0192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}',
    '\u{02C6}', '\u{2030}', '\u{0160}', '\u{2039}', '\u{0152}', '\u{008D}', '\u{017D}', '\u{008F}',
    '\u{0090}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}',
    '\u{02DC}', '\u{2122}', '\u{0161}', '\u{203A}', '\u{0153}', '\u{009D}', '\u{017E}', '\u{0178}',
];

/// A reader yielding UTF-8 for a stream in a non-UTF-8 [`Encoding`] (BOM already skipped).
#[derive(Debug)]
pub(crate) struct Decoder<R> {
    inner: R,
    encoding: Encoding,
    raw: Vec<u8>,
    /// Undecoded bytes carried over: an odd byte or half a surrogate pair.
    carry: Vec<u8>,
    out: Vec<u8>,
    at: usize,
    /// Raw bytes consumed from `inner`, for error offsets.
    position: u64,
    done: bool,
}

impl<R: Read> Decoder<R> {
    pub(crate) fn new(inner: R, encoding: Encoding, position: u64) -> Self {
        Self {
            inner,
            encoding,
            raw: vec![0; CHUNK],
            carry: Vec::new(),
            out: Vec::with_capacity(CHUNK * 2),
            at: 0,
            position,
            done: false,
        }
    }

    fn refill(&mut self) -> io::Result<()> {
        self.out.clear();
        self.at = 0;
        while self.out.is_empty() && !self.done {
            let n = self.inner.read(&mut self.raw)?;
            if n == 0 {
                self.done = true;
                if !self.carry.is_empty() {
                    return Err(invalid(format!(
                        "the file ends inside a UTF-16 character (byte offset {})",
                        self.position - self.carry.len() as u64
                    )));
                }
                break;
            }
            let mut bytes = std::mem::take(&mut self.carry);
            bytes.extend_from_slice(&self.raw[..n]);
            let start = self.position - (bytes.len() - n) as u64;
            self.position += n as u64;
            match self.encoding {
                Encoding::Windows1252 => {
                    let mut text = String::with_capacity(bytes.len());
                    text.extend(bytes.iter().map(|&b| windows1252(b)));
                    self.out.extend_from_slice(text.as_bytes());
                }
                Encoding::Utf16Le | Encoding::Utf16Be => {
                    let used = self.utf16(&bytes, start)?;
                    self.carry = bytes[used..].to_vec();
                }
                Encoding::Utf8 { .. } => self.out.extend_from_slice(&bytes),
            }
        }
        Ok(())
    }

    /// Decodes whole code units of `bytes` into `out`; returns how many bytes were used (a
    /// trailing odd byte or a high surrogate waiting for its pair are left).
    fn utf16(&mut self, bytes: &[u8], start: u64) -> io::Result<usize> {
        let little = self.encoding == Encoding::Utf16Le;
        let units: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|pair| {
                let pair = [pair[0], pair[1]];
                if little {
                    u16::from_le_bytes(pair)
                } else {
                    u16::from_be_bytes(pair)
                }
            })
            .collect();
        // Leave a final high surrogate for the next chunk, where its pair may be.
        let whole = match units.last() {
            Some(unit) if (0xD800..0xDC00).contains(unit) => units.len() - 1,
            _ => units.len(),
        };
        let mut text = String::with_capacity(whole * 2);
        let mut index = 0;
        for decoded in char::decode_utf16(units[..whole].iter().copied()) {
            match decoded {
                Ok(c) => {
                    index += c.len_utf16();
                    text.push(c);
                }
                Err(_) => {
                    return Err(invalid(format!(
                        "the file is not valid UTF-16: an unpaired surrogate at byte offset {}",
                        start + 2 * index as u64
                    )));
                }
            }
        }
        self.out.extend_from_slice(text.as_bytes());
        Ok(whole * 2)
    }
}

impl<R: Read> Read for Decoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.out.len() {
            self.refill()?;
        }
        let n = buf.len().min(self.out.len() - self.at);
        buf[..n].copy_from_slice(&self.out[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn windows1252(byte: u8) -> char {
    match byte {
        0x80..=0x9F => CP1252_HIGH[usize::from(byte - 0x80)],
        _ => char::from(byte),
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8], encoding: Encoding) -> io::Result<String> {
        let mut out = String::new();
        Decoder::new(bytes, encoding, 2).read_to_string(&mut out)?;
        Ok(out)
    }

    #[test]
    fn utf16_both_orders_with_surrogates() {
        let text = "hi 😀\r\nü";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(decode(&le, Encoding::Utf16Le).unwrap(), text);
        assert_eq!(decode(&be, Encoding::Utf16Be).unwrap(), text);
    }

    #[test]
    fn utf16_errors_name_the_offset() {
        let err = decode(&[0x00, 0xDC, 0x41, 0x00], Encoding::Utf16Le).unwrap_err();
        assert!(err.to_string().contains("byte offset 2"), "{err}");
        let err = decode(&[0x41, 0x00, 0x42], Encoding::Utf16Le).unwrap_err();
        assert!(err.to_string().contains("ends inside"), "{err}");
    }

    #[test]
    fn windows1252_maps_the_high_range() {
        assert_eq!(
            decode(b"caf\xE9 \x93q\x94 \x80", Encoding::Windows1252).unwrap(),
            "café “q” €"
        );
    }
}
