//! What `read` makes of images, PDFs and Jupyter notebooks (the `media` feature).
//!
//! A model receives only what it can take: an image is decoded first (an undecodable one is an
//! error the model reads, never an attachment that breaks the conversation), turned upright,
//! and resized and re-encoded when it exceeds the host's [`ImageBound`]; a host whose model
//! takes no images gets a text note instead ([`ReadOptions::without_image_input`]). A PDF is
//! its text, page by page; a notebook its cells, numbered, with their outputs.
//!
//! Decoding ([`job`]) runs apart from formatting: in the host's worker process when it names
//! one, else on a thread of its own ([`worker`]); a PDF's pages are measured against
//! [`pdf_limits`] before the extractor sees them, wherever it runs.

mod image;
mod job;
mod notebook;
mod pdf;
mod pdf_limits;
mod pdf_streams;
mod worker;

use std::sync::Arc;

use tackle_tool_core::{Budget, Halt, Rendered, ToolError};
use tokio_util::sync::CancellationToken;

use super::ReadOutput;
use crate::read_options::MediaWorker;
pub(crate) use crate::read_options::{ImageBound, ReadOptions};
use job::{Decoded, Job};
use worker::Failure;
pub use worker::media_worker_main;

/// Text extraction of `data` (a PDF) with every limit of a worker's decode, in-process: the
/// entry of the fuzz target. `None`: the PDF was refused or had no pages.
#[doc(hidden)]
pub fn extract_pdf_text(data: &[u8]) -> Option<String> {
    let pages = pdf::PdfPages {
        offset: 1,
        limit: u64::MAX,
        max_lines: usize::MAX,
        max_bytes: usize::MAX,
    };
    match pdf::extract(data, pages) {
        pdf::PdfText::Pages { pages, .. } => Some(pdf::joined(&pages)),
        _ => None,
    }
}

/// The media type `read` gives a notebook it renders.
pub(crate) const NOTEBOOK_MIME: &str = "application/x-ipynb+json";

/// True when the file at `path` is read as a Jupyter notebook (by its extension).
pub(crate) fn is_notebook(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("ipynb"))
}

/// Where a paged read of a PDF or notebook starts and how much it may take.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    /// The first page or cell, 1-based.
    pub(crate) offset: u64,
    /// Pages or cells at most.
    pub(crate) limit: u64,
    /// Lines and bytes of content the result should stay within.
    pub(crate) budget: Budget,
}

/// Renders the media file `data` (sniffed as `mime`) at `resource` for the model: decoded in
/// `worker` when there is one (else in-process), within the options' decode timeout and until
/// `cancel`.
pub(crate) async fn read(
    options: &ReadOptions,
    worker: Option<&MediaWorker>,
    resource: &str,
    mime: &'static str,
    data: Vec<u8>,
    span: Span,
    cancel: &CancellationToken,
) -> Result<Rendered<ReadOutput>, ToolError> {
    let job = Job::new(options, resource, mime, span);
    let data = Arc::new(data);
    let decoded = worker::run(
        worker,
        job,
        Arc::clone(&data),
        options.decode_timeout(),
        cancel,
    )
    .await;
    let failed = |failure: Failure| -> ToolError {
        if matches!(failure, Failure::Cancelled) {
            return Halt::Cancelled.into();
        }
        let why = failure.why();
        match mime {
            "application/pdf" => pdf::unreadable(resource, &why),
            NOTEBOOK_MIME => ToolError::failure(notebook::unparsable(resource, &why)),
            _ => image::undecodable(resource, &why),
        }
    };
    let mismatched = || {
        failed(Failure::Other(
            "the decoder answered another question".to_owned(),
        ))
    };
    match (mime, decoded.map_err(failed)?) {
        ("application/pdf", Decoded::Pdf(text)) => {
            let data = Arc::try_unwrap(data).unwrap_or_else(|shared| shared.as_ref().clone());
            pdf::render(options, resource, data, span, text)
        }
        (NOTEBOOK_MIME, Decoded::Notebook(page)) => page
            .map(notebook::NotebookPage::render)
            .map_err(ToolError::failure),
        ("application/pdf" | NOTEBOOK_MIME, _) => Err(mismatched()),
        (_, Decoded::Image(prepared)) => image::render(resource, prepared),
        (_, Decoded::Described(described)) => image::render_described(resource, described),
        (_, _) => Err(mismatched()),
    }
}

/// `830 bytes`, `12.5 KiB`, `3.2 MiB`, `27.9 GiB`.
pub(crate) fn size_text(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else if b < KIB * KIB * KIB {
        format!("{:.1} MiB", b / (KIB * KIB))
    } else {
        format!("{:.1} GiB", b / (KIB * KIB * KIB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size_text(830), "830 bytes");
        assert_eq!(size_text(12_800), "12.5 KiB");
        assert_eq!(size_text(5 * 1024 * 1024), "5.0 MiB");
        assert_eq!(size_text(30_000_000_000), "27.9 GiB");
    }
}
