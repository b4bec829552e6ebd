//! What a file is, decided from its first bytes: media, binary, or text in some encoding. read
//! decides with it what to show; edit and write with it which encoding an existing file keeps,
//! so the three always agree.
//!
//! Content decides, the extension only adds known binary formats: `pixel.bin` holding PNG
//! bytes is an image, `notes.dat` holding text is still binary (reference RD5).

use std::path::Path;

use super::encoding::{self, Encoding};

/// Bytes sniffed at the start of a file.
pub(crate) const SAMPLE_BYTES: usize = 64 * 1024;

/// Extensions that are binary whatever their content (reference RD5).
const BINARY_EXTENSIONS: &[&str] = &[
    "zip", "tar", "gz", "exe", "dll", "so", "class", "jar", "war", "7z", "doc", "docx", "xls",
    "xlsx", "ppt", "pptx", "odt", "ods", "odp", "bin", "dat", "obj", "o", "a", "lib", "wasm",
    "pyc", "pyo",
];

/// The verdict on a file's first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sniffed {
    /// An image or PDF, returned as an attachment with this media type.
    #[cfg_attr(not(feature = "media"), allow(dead_code))]
    Media(&'static str),
    /// Not text.
    Binary,
    /// Text in this encoding.
    Text(Encoding),
    /// Neither valid UTF-8 nor Latin-1-shaped: the first invalid byte is at this offset.
    NotUtf8 { offset: usize },
}

/// Sniffs `sample`, the first bytes of the file at `path`; `complete` when it is the whole file.
pub(crate) fn sniff(sample: &[u8], complete: bool, path: &Path) -> Sniffed {
    #[cfg(feature = "media")]
    if let Some(mime) = media(sample) {
        return Sniffed::Media(mime);
    }
    let detected = encoding::detect(sample, complete);
    // UTF-16 text is full of NUL bytes: its BOM decides before the binary checks.
    if let Ok(utf16 @ (Encoding::Utf16Le | Encoding::Utf16Be)) = detected {
        return Sniffed::Text(utf16);
    }
    let extension = path
        .extension()
        .and_then(|ext| ext.to_str())
        .map(str::to_ascii_lowercase);
    if extension
        .as_deref()
        .is_some_and(|ext| BINARY_EXTENSIONS.contains(&ext))
    {
        return Sniffed::Binary;
    }
    if looks_binary(sample) {
        return Sniffed::Binary;
    }
    match detected {
        Ok(encoding) => Sniffed::Text(encoding),
        Err(offset) => Sniffed::NotUtf8 { offset },
    }
}

/// A format's test of a file's first bytes.
#[cfg(feature = "media")]
type Magic = fn(&[u8]) -> bool;

/// The images and PDF that read shows: each format's test of a file's first bytes, and its
/// media type.
#[cfg(feature = "media")]
const SHOWN: [(Magic, &str); 7] = [
    (infer::image::is_png, "image/png"),
    (infer::image::is_jpeg, "image/jpeg"),
    (infer::image::is_gif, "image/gif"),
    (infer::image::is_webp, "image/webp"),
    (infer::image::is_bmp, "image/bmp"),
    (infer::image::is_tiff, "image/tiff"),
    (pdf_header, "application/pdf"),
];

/// The media type of `sample` when it is an image or PDF that read shows.
///
/// `infer::get` tries every format it knows (a PDF header is searched for in the first KiB),
/// in its own order; it is asked only when one of the formats shown matches, and then its
/// answer decides, so a file that an earlier format claims stays what it was.
#[cfg(feature = "media")]
fn media(sample: &[u8]) -> Option<&'static str> {
    if !SHOWN.iter().any(|(matches, _)| matches(sample)) {
        return None;
    }
    shown_media(infer::get(sample)?.mime_type())
}

/// `infer::archive::is_pdf`'s test (a `%PDF` header anywhere in the first KiB, as PDF readers
/// accept), searched with memchr rather than compared window by window.
#[cfg(feature = "media")]
fn pdf_header(sample: &[u8]) -> bool {
    memchr::memmem::find(&sample[..sample.len().min(1024)], b"%PDF").is_some()
}

/// `mime` when read shows files of that type.
#[cfg(feature = "media")]
fn shown_media(mime: &str) -> Option<&'static str> {
    SHOWN
        .iter()
        .map(|&(_, shown)| shown)
        .find(|shown| *shown == mime)
}

/// The encoding edit and write keep for an existing file whose bytes start with `head` (the
/// whole file, or at least its first [`SAMPLE_BYTES`]): the one read pages it in, or, for what
/// read shows no text of (binary, media, not UTF-8), UTF-8 with the BOM it has, which whoever
/// needs its text then checks.
pub(crate) fn file_encoding(head: &[u8], path: &Path) -> Encoding {
    let sample = &head[..head.len().min(SAMPLE_BYTES)];
    match sniff(sample, sample.len() < SAMPLE_BYTES, path) {
        Sniffed::Text(encoding) => encoding,
        Sniffed::Media(_) | Sniffed::Binary | Sniffed::NotUtf8 { .. } => Encoding::Utf8 {
            bom: if sample.starts_with(super::BOM) {
                super::BOM.len()
            } else {
                0
            },
        },
    }
}

/// A NUL byte, or more than 30% control bytes (below TAB, or 14..=31), means binary; so does a
/// known binary signature next to any control byte (text never has one).
fn looks_binary(sample: &[u8]) -> bool {
    if sample.is_empty() {
        return false;
    }
    if sample.contains(&0) {
        return true;
    }
    let control = sample
        .iter()
        .filter(|&&b| b < 9 || (14..=31).contains(&b))
        .count();
    if control * 10 > sample.len() * 3 {
        return true;
    }
    control > 0
        && infer::get(sample).is_some_and(|kind| kind.matcher_type() != infer::MatcherType::Text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "media")]
    proptest::proptest! {
        /// Asking `infer` only when a shown format matches changes no verdict: the same as
        /// asking it of every sample. Samples start with each shown format's magic bytes, or
        /// with a look-alike (a TIFF header that is a Canon raw, `%PDF` further in).
        #[test]
        fn media_is_what_infer_says_of_every_sample(
            prefix in proptest::sample::select(vec![
                &b""[..], b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF89a", b"RIFF\0\0\0\0WEBPVP8 ",
                b"BM", b"II*\0", b"MM\0*", b"II*\0\x10\0\0\0CR\x02\0", b"%PDF-1.7", b"PK\x03\x04",
                b"\x7fELF", b"#!/bin/sh\n",
            ]),
            rest in proptest::collection::vec(proptest::num::u8::ANY, 0..1100),
            pdf_at in proptest::option::of(0usize..1100),
        ) {
            let mut sample = prefix.to_vec();
            sample.extend_from_slice(&rest);
            if let Some(at) = pdf_at {
                let at = at.min(sample.len());
                sample.splice(at..at, b"%PDF".iter().copied());
            }
            proptest::prop_assert_eq!(pdf_header(&sample), infer::archive::is_pdf(&sample));
            let asked_always = infer::get(&sample).and_then(|kind| shown_media(kind.mime_type()));
            proptest::prop_assert_eq!(media(&sample), asked_always);
        }
    }

    fn of(bytes: &[u8], name: &str) -> Sniffed {
        sniff(bytes, true, Path::new(name))
    }

    #[test]
    #[cfg(feature = "media")]
    fn media_by_magic() {
        assert_eq!(
            of(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "pixel.bin"),
            Sniffed::Media("image/png")
        );
        assert_eq!(
            of(b"\xFF\xD8\xFF\xE0\0\x10JFIF", "a.jpg"),
            Sniffed::Media("image/jpeg")
        );
        assert_eq!(of(b"GIF89a\x01\0\x01\0", "a"), Sniffed::Media("image/gif"));
        assert_eq!(
            of(b"RIFF\x24\0\0\0WEBPVP8 ", "a"),
            Sniffed::Media("image/webp")
        );
        assert_eq!(
            of(b"%PDF-1.7\n", "a.pdf"),
            Sniffed::Media("application/pdf")
        );
    }

    #[test]
    fn binary_by_content_or_extension() {
        assert_eq!(of(b"text\0more", "a.txt"), Sniffed::Binary);
        assert_eq!(of(b"plain text", "archive.dat"), Sniffed::Binary);
        assert_eq!(of(b"\x01\x02\x03\x04abc", "a"), Sniffed::Binary);
        assert_eq!(of(b"PK\x03\x04\x14\0", "a"), Sniffed::Binary);
        assert_eq!(of(b"", "empty"), Sniffed::Text(Encoding::Utf8 { bom: 0 }));
    }

    #[test]
    fn encodings() {
        assert_eq!(
            of("h\u{e9}llo\n".as_bytes(), "a"),
            Sniffed::Text(Encoding::Utf8 { bom: 0 })
        );
        assert_eq!(
            of(b"\xEF\xBB\xBFx", "a"),
            Sniffed::Text(Encoding::Utf8 { bom: 3 })
        );
        assert_eq!(of(b"\xFF\xFEh\0i\0", "a"), Sniffed::Text(Encoding::Utf16Le));
        assert_eq!(of(b"\xFE\xFF\0h\0i", "a"), Sniffed::Text(Encoding::Utf16Be));
        assert_eq!(
            of(b"caf\xE9 cr\xE8me\n", "a"),
            Sniffed::Text(Encoding::Windows1252)
        );
        assert_eq!(
            of(b"ab\xC4\xE3\xBA\xC3\xCA\xC0\xBD\xE7", "a"),
            Sniffed::NotUtf8 { offset: 2 }
        );
        // A sample cut inside a character is not an error.
        assert_eq!(
            sniff("a\u{e9}".as_bytes().split_at(2).0, false, Path::new("a")),
            Sniffed::Text(Encoding::Utf8 { bom: 0 })
        );
    }
}
