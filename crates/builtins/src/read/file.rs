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
    MediaTooLarge { limit: u64 },
    NotUtf8 { offset: u64, line: u64 },
    OffsetOutOfRange { offset: u64, total: u64 },
    Io(io::Error),
}

impl From<io::Error> for ReadFailure {
    fn from(err: io::Error) -> Self {
        Self::Io(err)
    }
}

/// Reads the file at `path` (already permitted): media whole up to `media_limit` bytes, text
/// as the page `budget` describes.
pub(crate) fn read_file(
    path: &Path,
    budget: PageBudget,
    media_limit: u64,
) -> Result<FileRead, ReadFailure> {
    // Exactly the resolved path: a directory swapped for a link meanwhile fails the open.
    let mut file = beneath::open_file(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadFailure::Io(io::Error::other(
            "it is no longer a regular file",
        )));
    }
    // Sized for the file (one byte more shows the end), so a small file is read in one go.
    let size = usize::try_from(meta.len()).unwrap_or(usize::MAX);
    let mut sample = Vec::with_capacity(SAMPLE_BYTES.min(size.saturating_add(1)));
    (&mut file)
        .take(SAMPLE_BYTES as u64)
        .read_to_end(&mut sample)?;
    let complete = sample.len() < SAMPLE_BYTES;
    match sniff(&sample, complete, path) {
        Sniffed::Media(mime) => whole(file, sample, mime, media_limit),
        // A notebook too large to render whole is paged as the JSON text it is.
        #[cfg(feature = "media")]
        Sniffed::Text(Encoding::Utf8 { .. })
            if super::media::is_notebook(path) && meta.len() <= media_limit =>
        {
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
