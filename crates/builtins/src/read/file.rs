//! Reading one file: sniff it, then page its text or take it whole as media.

use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::page::{PageBudget, PageError, TextPage, page};
use crate::beneath;
use crate::text::encoding::{Decoder, Encoding};
use crate::text::sniff::{SAMPLE_BYTES, Sniffed, sniff};

/// Read buffer for paging: large enough that skipping scans at memory speed.
const READ_BUFFER: usize = 256 * 1024;

/// What a file read produced.
#[derive(Debug)]
pub(crate) enum FileRead {
    /// A page of text.
    Page {
        page: TextPage,
        encoding: Encoding,
        mime: String,
    },
    /// An image, PDF or notebook, whole.
    Media { mime: &'static str, data: Vec<u8> },
}

/// Why a file could not be read.
#[derive(Debug)]
pub(crate) enum ReadFailure {
    Binary,
    MediaTooLarge {
        limit: u64,
    },
    NotUtf8 {
        offset: u64,
        line: u64,
    },
    OffsetOutOfRange {
        offset: u64,
        total: u64,
    },
    Io(io::Error),
    /// Asked to read only what is cheap ([`read_file`]'s `small_text_only`), and it is not.
    NotSmallText,
}

impl From<io::Error> for ReadFailure {
    fn from(err: io::Error) -> Self {
        Self::Io(err)
    }
}

/// Reads the file at `path` (already permitted): media whole up to `media_limit` bytes, text
/// as the page `budget` describes.
///
/// With `small_text_only`, the work is bounded by the sample whatever the file does: a file
/// that is not, by its open descriptor, a UTF-8 text whose whole content fits the sample
/// ([`SAMPLE_BYTES`]), or that grows past it while read, is [`ReadFailure::NotSmallText`]
/// before anything more is read (media, other encodings and long files take the full path).
pub(crate) fn read_file(
    path: &Path,
    budget: PageBudget,
    media_limit: u64,
    small_text_only: bool,
) -> Result<FileRead, ReadFailure> {
    // Exactly the resolved path: a directory swapped for a link meanwhile fails the open.
    let mut file = beneath::open_file(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadFailure::Io(io::Error::other(
            "it is no longer a regular file",
        )));
    }
    if small_text_only && meta.len() >= SAMPLE_BYTES as u64 {
        return Err(ReadFailure::NotSmallText);
    }
    // Sized for the file (one byte more shows the end), so a small file is read in one go.
    let size = usize::try_from(meta.len()).unwrap_or(usize::MAX);
    let mut sample = Vec::with_capacity(SAMPLE_BYTES.min(size.saturating_add(1)));
    (&mut file)
        .take(SAMPLE_BYTES as u64)
        .read_to_end(&mut sample)?;
    let complete = sample.len() < SAMPLE_BYTES;
    match sniff(&sample, complete, path) {
        Sniffed::Media(_) if small_text_only => Err(ReadFailure::NotSmallText),
        Sniffed::Media(mime) => whole(file, sample, mime, media_limit),
        // A notebook too large to render whole is paged as the JSON text it is.
        #[cfg(feature = "media")]
        Sniffed::Text(Encoding::Utf8 { .. })
            if super::media::is_notebook(path) && meta.len() <= media_limit =>
        {
            if small_text_only {
                return Err(ReadFailure::NotSmallText);
            }
            whole(file, sample, super::media::NOTEBOOK_MIME, media_limit)
        }
        Sniffed::Binary => Err(ReadFailure::Binary),
        Sniffed::NotUtf8 { offset } => {
            let line = sample[..offset].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
            Err(ReadFailure::NotUtf8 {
                offset: offset as u64,
                line,
            })
        }
        Sniffed::Text(encoding)
            if small_text_only && !(complete && matches!(encoding, Encoding::Utf8 { .. })) =>
        {
            Err(ReadFailure::NotSmallText)
        }
        Sniffed::Text(encoding) => {
            let skip = encoding.bom().len() as u64;
            let buffer = READ_BUFFER.min(size.saturating_add(1).max(8 * 1024));
            let result = match encoding {
                // The sample already holds the whole file: page it without reading again.
                Encoding::Utf8 { .. } if complete => page(
                    &mut sample.get(encoding.bom().len()..).unwrap_or_default(),
                    budget,
                ),
                Encoding::Utf8 { .. } => {
                    file.seek(SeekFrom::Start(skip))?;
                    page(&mut BufReader::with_capacity(buffer, file), budget)
                }
                _ => {
                    file.seek(SeekFrom::Start(skip))?;
                    page(
                        &mut BufReader::with_capacity(buffer, Decoder::new(file, encoding, skip)),
                        budget,
                    )
                }
            };
            let page = result.map_err(|err| match err {
                PageError::OffsetOutOfRange { offset, total } => {
                    ReadFailure::OffsetOutOfRange { offset, total }
                }
                PageError::NotUtf8 { offset, line } => ReadFailure::NotUtf8 {
                    offset: offset + skip,
                    line,
                },
                PageError::Io(err) => ReadFailure::Io(err),
            })?;
            Ok(FileRead::Page {
                page,
                encoding,
                mime: text_mime(path),
            })
        }
    }
}

/// The whole file, whose first bytes are `sample`, as media of type `mime`.
fn whole(
    mut file: std::fs::File,
    sample: Vec<u8>,
    mime: &'static str,
    media_limit: u64,
) -> Result<FileRead, ReadFailure> {
    let size = file.metadata()?.len();
    if size > media_limit {
        return Err(ReadFailure::MediaTooLarge { limit: media_limit });
    }
    let mut data = sample;
    // `take` guards against a file that grows while it is read.
    (&mut file)
        .take(media_limit + 1 - data.len() as u64)
        .read_to_end(&mut data)?;
    if data.len() as u64 > media_limit {
        return Err(ReadFailure::MediaTooLarge { limit: media_limit });
    }
    Ok(FileRead::Media { mime, data })
}

/// The media type of a text file from its extension; `text/plain` unless that names a text
/// format (`.ts` would otherwise be a video).
fn text_mime(path: &Path) -> String {
    let guess = mime_guess::from_path(path).first();
    match guess {
        Some(mime)
            if mime.type_() == mime_guess::mime::TEXT
                || ["json", "xml", "javascript", "yaml", "toml"]
                    .iter()
                    .any(|suffix| mime.subtype().as_str().ends_with(suffix)) =>
        {
            mime.essence_str().to_owned()
        }
        _ => "text/plain".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget() -> PageBudget {
        PageBudget {
            offset: 1,
            max_lines: 2000,
            max_bytes: 50 * 1024,
        }
    }

    fn small_text(bytes: &[u8]) -> Result<FileRead, ReadFailure> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, bytes).unwrap();
        let path = std::fs::canonicalize(&path).unwrap();
        read_file(&path, budget(), 1 << 20, true)
    }

    #[test]
    fn a_small_utf8_file_is_read_whole_when_only_small_text_is_asked() {
        let read = small_text(b"one\ntwo\n").unwrap();
        let FileRead::Page { page, .. } = read else {
            panic!("not a page: {read:?}");
        };
        assert_eq!(page.lines, ["one", "two"]);
    }

    #[test]
    fn anything_but_a_small_utf8_text_is_left_for_the_full_read() {
        let long = vec![b'x'; SAMPLE_BYTES];
        let utf16 = [0xFF, 0xFE, b'h', 0, b'i', 0];
        // Media is only sniffed as such with its feature; without it these bytes are binary.
        #[cfg(feature = "media")]
        let png: &[u8] = &[
            0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1A, b'\n', 0, 0, 0, 0,
        ];
        #[cfg(not(feature = "media"))]
        let png: &[u8] = &[];
        for bytes in [&long[..], &utf16[..], png]
            .into_iter()
            .filter(|b| !b.is_empty())
        {
            assert!(
                matches!(small_text(bytes), Err(ReadFailure::NotSmallText)),
                "{:?}",
                &bytes[..bytes.len().min(8)]
            );
        }
    }

    #[test]
    fn errors_of_a_small_file_are_found_without_the_full_read() {
        assert!(matches!(
            small_text(b"ok\n\0\0\0\x01\x02"),
            Err(ReadFailure::Binary)
        ));
    }
}
