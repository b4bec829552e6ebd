//! What `read` makes of images, PDFs and Jupyter notebooks (the `media` feature).
//!
//! A model receives only what it can take: an image is decoded first (an undecodable one is an
//! error the model reads, never an attachment that breaks the conversation), turned upright,
//! and resized and re-encoded when it exceeds the host's [`ImageBound`]; a host whose model
//! takes no images gets a text note instead ([`ReadOptions::without_image_input`]). A PDF is
//! its text, page by page; a notebook its cells, numbered, with their outputs.

mod image;
mod notebook;
mod pdf;

use tackle_tool_core::{Budget, Rendered, ToolError};

use super::ReadOutput;
use crate::location::Resolved;
pub(crate) use crate::read_options::{ImageBound, ReadOptions};

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

/// Renders the media file `data` (sniffed as `mime`) at `resolved` for the model.
pub(crate) fn read(
    options: &ReadOptions,
    resolved: &Resolved,
    mime: &'static str,
    data: Vec<u8>,
    span: Span,
) -> Result<Rendered<ReadOutput>, ToolError> {
    let resource = &resolved.resource;
    match mime {
        "application/pdf" => pdf::read(options, resource, data, span),
        NOTEBOOK_MIME => notebook::read(options, resource, &data, span),
        _ => image::read(options, resource, data),
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
