//! A PDF stream's content as the text extractor will see it, decompressed under a cap, and a
//! scan of that content that counts operators and finds what `Do` draws without building the
//! operations (a stream of a few megabytes can hold millions of them).

use std::io::{self, Read as _, Write};

use pdf_extract::{Dictionary, Object, Stream};

/// The stream's content as the extractor will see it, or `None` when it decompresses to more
/// than `cap` bytes. Each filter of a chain is undone in turn under the same cap, the way the
/// PDF library does it (a filter it does not know leaves the stream as stored).
pub(super) fn contents(stream: &Stream, cap: u64) -> Option<Vec<u8>> {
    let Ok(filters) = stream.filters() else {
        return (stream.content.len() as u64 <= cap).then(|| stream.content.clone());
    };
    let mut data = stream.content.clone();
    for filter in filters {
        data = match filter {
            b"FlateDecode" => inflate(&data, cap)?,
            b"LZWDecode" => unlzw(&data, cap, early_change(stream))?,
            b"ASCII85Decode" => {
                // Four bytes out for each `z` at most: the library's decoder stays within it.
                if (data.len() as u64).saturating_mul(4) > cap {
                    return None;
                }
                let mut dict = Dictionary::new();
                dict.set("Filter", Object::Name(b"ASCII85Decode".to_vec()));
                Stream::new(dict, data).decompressed_content().ok()?
            }
            _ => stream.content.clone(),
        };
        if data.len() as u64 > cap {
            return None;
        }
    }
    Some(data)
}

fn early_change(stream: &Stream) -> bool {
    stream
        .dict
        .get(b"DecodeParms")
        .and_then(Object::as_dict)
        .and_then(|params| params.get(b"EarlyChange"))
        .and_then(Object::as_i64)
        .map_or(true, |value| value != 0)
}

/// zlib data inflated up to `cap` bytes (what the library keeps of a damaged stream is kept
/// here too, and it falls back to raw deflate the same way).
fn inflate(input: &[u8], cap: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    if input.is_empty() {
        return Some(out);
    }
    let zlib = flate2::read::ZlibDecoder::new(input)
        .take(cap + 1)
        .read_to_end(&mut out);
    if zlib.is_err() && out.is_empty() && input.len() > 2 {
        let _ = flate2::read::DeflateDecoder::new(&input[2..])
            .take(cap + 1)
            .read_to_end(&mut out);
    }
    (out.len() as u64 <= cap).then_some(out)
}

/// LZW data decoded up to `cap` bytes.
fn unlzw(input: &[u8], cap: u64, early_change: bool) -> Option<Vec<u8>> {
    use weezl::{BitOrder, decode::Decoder};
    let mut decoder = if early_change {
        Decoder::with_tiff_size_switch(BitOrder::Msb, 8)
    } else {
        Decoder::new(BitOrder::Msb, 8)
    };
    let mut out = Capped {
        data: Vec::new(),
        cap,
    };
    let result = decoder.into_stream(&mut out).decode_all(input);
    match result.status {
        Err(err) if err.kind() == io::ErrorKind::OutOfMemory => None,
        _ => Some(out.data),
    }
}

/// A writer that refuses to grow past `cap` bytes.
struct Capped {
    data: Vec<u8>,
    cap: u64,
}

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.data.len() as u64 + buf.len() as u64 > self.cap {
            return Err(io::ErrorKind::OutOfMemory.into());
        }
        self.data.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What a content stream holds, found without building its operations.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Scan {
    /// Operators, `Do` included (an operand-like keyword such as `true` counts too: the count
    /// only has to be at least the real one).
    pub(super) operations: u64,
    pub(super) bytes: u64,
    /// The names drawn with `Do`, in order, repeated as often as drawn.
    pub(super) drawn: Vec<Vec<u8>>,
}

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'\0')
}

fn is_delimiter(byte: u8) -> bool {
    matches!(
        byte,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

/// Scans `data` as PDF content: operators counted, `Do` operands kept.
pub(super) fn scan(data: &[u8]) -> Scan {
    let mut scan = Scan {
        bytes: data.len() as u64,
        ..Scan::default()
    };
    let token_end = |from: usize| {
        data[from..]
            .iter()
            .position(|&b| is_space(b) || is_delimiter(b))
            .map_or(data.len(), |n| from + n)
    };
    let mut last_name: Option<Vec<u8>> = None;
    let mut at = 0;
    while at < data.len() {
        let byte = data[at];
        if is_space(byte) {
            at += 1;
            continue;
        }
        match byte {
            b'%' => {
                at = data[at..]
                    .iter()
                    .position(|&b| b == b'\n' || b == b'\r')
                    .map_or(data.len(), |n| at + n);
            }
            b'/' => {
                let end = token_end(at + 1);
                last_name = Some(unescape_name(&data[at + 1..end]));
                at = end;
            }
            b'(' => {
                at = string_end(data, at);
                last_name = None;
            }
            b'<' if data.get(at + 1) == Some(&b'<') => at += 2,
            b'<' => {
                at = data[at..]
                    .iter()
                    .position(|&b| b == b'>')
                    .map_or(data.len(), |n| at + n + 1);
                last_name = None;
            }
            b'>' | b'[' | b']' | b'{' | b'}' | b')' => at += 1,
            _ => {
                let end = token_end(at).max(at + 1);
                let word = &data[at..end];
                at = end;
                if word[0].is_ascii_digit() || matches!(word[0], b'+' | b'-' | b'.') {
                    last_name = None;
                    continue;
                }
                scan.operations += 1;
                match word {
                    b"Do" => scan.drawn.extend(last_name.take()),
                    // Inline image data is binary up to `EI` alone between spaces.
                    b"ID" => at = inline_image_end(data, at),
                    _ => {}
                }
                last_name = None;
            }
        }
    }
    scan
}

/// Past the literal string starting at `from` (nested parentheses, backslash escapes).
fn string_end(data: &[u8], from: usize) -> usize {
    let mut depth = 0usize;
    let mut at = from;
    while at < data.len() {
        match data[at] {
            b'\\' => at += 1,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return at + 1;
                }
            }
            _ => {}
        }
        at += 1;
    }
    data.len()
}

fn inline_image_end(data: &[u8], from: usize) -> usize {
    let mut at = from;
    while at + 2 <= data.len() {
        if &data[at..at + 2] == b"EI"
            && at > 0
            && is_space(data[at - 1])
            && data.get(at + 2).is_none_or(|&b| is_space(b))
        {
            return at + 2;
        }
        at += 1;
    }
    data.len()
}

/// A name's bytes with its `#xx` escapes undone.
fn unescape_name(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut at = 0;
    while at < raw.len() {
        let hex = raw
            .get(at + 1..at + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (raw[at], hex) {
            (b'#', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_counts_operators_and_keeps_what_is_drawn() {
        let scan = scan(
            b"q 1 0 0 1 0 0 cm /F#31 12 Tf (a (nested) \\) string) Tj % Do in a comment\n\
              /Im1 Do [(x) 5 (y)] TJ BI /W 1 ID \x00Do EI\n /Fm2 Do Q",
        );
        assert_eq!(scan.drawn, [b"Im1".to_vec(), b"Fm2".to_vec()]);
        // q cm Tf Tj Do TJ BI ID Do Q
        assert_eq!(scan.operations, 10);
    }

    #[test]
    fn inflation_stops_at_the_cap() {
        let mut encoder =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(&[0u8; 100_000]).unwrap_or_default();
        let compressed = encoder.finish().unwrap_or_default();
        assert_eq!(
            inflate(&compressed, 100_000).map(|d| d.len()),
            Some(100_000)
        );
        assert_eq!(inflate(&compressed, 99_999), None);
    }
}
