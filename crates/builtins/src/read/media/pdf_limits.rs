//! What a page costs the text extractor, measured before it runs.
//!
//! The extractor decompresses every content stream of a page and, for each `Do`, the drawn
//! XObject's stream again, recursing without a depth limit or a cycle check. A small file can
//! therefore ask for unbounded stack (a form that draws itself), memory (a stream listed
//! thousands of times, or compressed a thousandfold twice over) or time (forms drawing forms,
//! ten times at each of eight levels). This walk follows the same path the extractor will —
//! `/Contents`, then each `Do` through the resources it resolves names in — but inflates each
//! stream under a cap, counts operators with a scanner that allocates nothing per token, and
//! multiplies a form's cost by how often it is drawn, so such a page is refused before the
//! extractor sees it.

use std::collections::HashMap;
use std::io::{self, Read as _, Write};

use pdf_extract::{Dictionary, Document, Object, ObjectId, Stream};

use super::size_text;

/// Forms drawn inside forms, at most: real documents nest a handful (a page, an annotation's
/// appearance, a transparency group inside it); each level is a recursion of the extractor.
pub(crate) const MAX_FORM_DEPTH: usize = 12;
/// Content operators the extractor may run for one call, forms expanded each time drawn: a
/// dense vector drawing has a few hundred thousand; the extractor runs about a million a
/// second and keeps a stream's operators in memory while it runs them.
pub(crate) const MAX_OPERATIONS: u64 = 2_000_000;
/// Bytes of content the extractor may decompress for one call, forms counted each time drawn
/// (it inflates them anew each time): a text page takes kilobytes, a dense drawing megabytes.
pub(crate) const MAX_CONTENT_BYTES: u64 = 64 * 1024 * 1024;

/// Why a page is refused, in the words the model reads after the file's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A form draws itself, directly or through others.
    Cycle { page: u32 },
    /// Forms nest deeper than [`MAX_FORM_DEPTH`].
    TooDeep { page: u32 },
    /// More than [`MAX_OPERATIONS`] operators, forms expanded.
    TooManyOperations { page: u32 },
    /// More than [`MAX_CONTENT_BYTES`] decompressed, forms expanded.
    TooLarge { page: u32 },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Cycle { page } => write!(f, "a form on page {page} draws itself"),
            Self::TooDeep { page } => write!(
                f,
                "the forms on page {page} nest more than {MAX_FORM_DEPTH} deep"
            ),
            Self::TooManyOperations { page } => write!(
                f,
                "page {page} would take more than {MAX_OPERATIONS} drawing operations"
            ),
            Self::TooLarge { page } => write!(
                f,
                "page {page} would decompress to more than {}",
                size_text(MAX_CONTENT_BYTES)
            ),
        }
    }
}

/// What one stream costs when drawn once, everything it draws included.
#[derive(Debug, Clone, Copy, Default)]
struct Cost {
    operations: u64,
    bytes: u64,
}

impl Cost {
    fn add(self, other: Cost) -> Cost {
        Cost {
            operations: self.operations.saturating_add(other.operations),
            bytes: self.bytes.saturating_add(other.bytes),
        }
    }
}

/// The pages of one call, checked in the order they are extracted; the limits hold for all of
/// them together, since they are extracted within one call's time.
pub(crate) struct PageCheck<'a> {
    doc: &'a Document,
    spent: Cost,
    /// A stream's cost, by the stream and the resources its names resolve in.
    known: HashMap<(ObjectId, usize), Cost>,
}

impl<'a> PageCheck<'a> {
    pub(crate) fn new(doc: &'a Document) -> Self {
        Self {
            doc,
            spent: Cost::default(),
            known: HashMap::new(),
        }
    }

    /// Checks page `number` (whose object is `page_id`) and counts it against the call.
    pub(crate) fn check(&mut self, number: u32, page_id: ObjectId) -> Result<(), Refusal> {
        let empty = Dictionary::new();
        let resources = inherited_resources(self.doc, page_id).unwrap_or(&empty);
        let mut walk = Walk {
            doc: self.doc,
            page: number,
            drawing: Vec::new(),
            known: &mut self.known,
            spent: self.spent,
        };
        // A stream listed twice in /Contents is decompressed twice.
        for id in self.doc.get_page_contents(page_id) {
            let Ok(stream) = self.doc.get_object(id).and_then(Object::as_stream) else {
                continue;
            };
            let cost = walk.expand(Some(id), stream, resources, 0)?;
            walk.spend(cost)?;
        }
        self.spent = walk.spent;
        Ok(())
    }
}

struct Walk<'a, 'k> {
    doc: &'a Document,
    page: u32,
    /// The forms being expanded, outermost first: one met again is a cycle.
    drawing: Vec<ObjectId>,
    known: &'k mut HashMap<(ObjectId, usize), Cost>,
    /// The call's cost so far; each stream's cost is checked against what is left.
    spent: Cost,
}

impl<'a> Walk<'a, '_> {
    fn spend(&mut self, cost: Cost) -> Result<(), Refusal> {
        self.spent = self.spent.add(cost);
        self.within(self.spent)
    }

    fn within(&self, cost: Cost) -> Result<(), Refusal> {
        let page = self.page;
        if cost.operations > MAX_OPERATIONS {
            return Err(Refusal::TooManyOperations { page });
        }
        if cost.bytes > MAX_CONTENT_BYTES {
            return Err(Refusal::TooLarge { page });
        }
        Ok(())
    }

    /// The cost of drawing `stream` once with `resources`, at nesting `depth`.
    fn expand(
        &mut self,
        id: Option<ObjectId>,
        stream: &'a Stream,
        resources: &'a Dictionary,
        depth: usize,
    ) -> Result<Cost, Refusal> {
        let page = self.page;
        if id.is_some_and(|id| self.drawing.contains(&id)) {
            return Err(Refusal::Cycle { page });
        }
        if depth > MAX_FORM_DEPTH {
            return Err(Refusal::TooDeep { page });
        }
        // Identity of the resources: names inside a form without its own resolve in its
        // caller's, so the same form may cost differently under different callers.
        let key = id.map(|id| (id, std::ptr::from_ref(resources) as usize));
        if let Some(cost) = key.and_then(|key| self.known.get(&key)) {
            return Ok(*cost);
        }
        let left = MAX_CONTENT_BYTES.saturating_sub(self.spent.bytes);
        let content = contents(stream, left).ok_or(Refusal::TooLarge { page })?;
        let scan = scan(&content);
        drop(content);
        let mut cost = Cost {
            operations: scan.operations,
            bytes: scan.bytes,
        };
        self.within(self.spent.add(cost))?;
        if let Some(id) = id {
            self.drawing.push(id);
        }
        for name in &scan.drawn {
            let Some((child_id, child)) = xobject(self.doc, resources, name) else {
                continue;
            };
            let child_resources = own_resources(self.doc, &child.dict).unwrap_or(resources);
            let drawn = self.expand(child_id, child, child_resources, depth + 1)?;
            cost = cost.add(drawn);
            self.within(self.spent.add(cost))?;
        }
        if id.is_some() {
            self.drawing.pop();
        }
        if let Some(key) = key {
            self.known.insert(key, cost);
        }
        Ok(cost)
    }
}

/// The XObject `name` of `resources`, as the extractor finds it.
fn xobject<'a>(
    doc: &'a Document,
    resources: &'a Dictionary,
    name: &[u8],
) -> Option<(Option<ObjectId>, &'a Stream)> {
    let (_, xobjects) = doc.dereference(resources.get(b"XObject").ok()?).ok()?;
    let (id, object) = doc
        .dereference(xobjects.as_dict().ok()?.get(name).ok()?)
        .ok()?;
    Some((id, object.as_stream().ok()?))
}

fn own_resources<'a>(doc: &'a Document, dict: &'a Dictionary) -> Option<&'a Dictionary> {
    let (_, resources) = doc.dereference(dict.get(b"Resources").ok()?).ok()?;
    resources.as_dict().ok()
}

/// A page's resources, from it or the nearest ancestor that has them.
fn inherited_resources(doc: &Document, page_id: ObjectId) -> Option<&Dictionary> {
    let mut node = doc.get_object(page_id).ok()?.as_dict().ok()?;
    // A page tree is shallow; a /Parent loop must not keep the walk going.
    for _ in 0..64 {
        if let Some(resources) = own_resources(doc, node) {
            return Some(resources);
        }
        let (_, parent) = doc.dereference(node.get(b"Parent").ok()?).ok()?;
        node = parent.as_dict().ok()?;
    }
    None
}

/// The stream's content as the extractor will see it, or `None` when it decompresses to more
/// than `cap` bytes. Each filter of a chain is undone in turn under the same cap, the way the
/// PDF library does it (a filter it does not know leaves the stream as stored).
fn contents(stream: &Stream, cap: u64) -> Option<Vec<u8>> {
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
struct Scan {
    /// Operators, `Do` included (an operand-like keyword such as `true` counts too: the count
    /// only has to be at least the real one).
    operations: u64,
    bytes: u64,
    /// The names drawn with `Do`, in order, repeated as often as drawn.
    drawn: Vec<Vec<u8>>,
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
fn scan(data: &[u8]) -> Scan {
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
