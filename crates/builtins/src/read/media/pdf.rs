//! PDFs: their text, page by page (`offset` and `limit` count pages), and the file itself when
//! the host asks for it.
//!
//! The extractor is third-party code that may panic on a malformed file; a panic is caught
//! and becomes a message the model reads, never a crash of the host. It recurses, inflates
//! and loops without limits of its own, so each page is measured first ([`PageCheck`]).
//! [`extract`] is the decoding (in the worker); [`render`] formats what it found.

use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

use pdf_extract::{Document, ObjectId, PlainTextOutput, output_doc_page};
use serde::{Deserialize, Serialize};
use tackle_output_store::MAX_INLINE_MEDIA_BYTES;
use tackle_tool_core::{Content, Rendered, ToolError};

use super::super::render::page_lines;
use super::super::{PdfOutput, ReadOutput};
use super::pdf_limits::PageCheck;
use super::{ReadOptions, Span, size_text};

/// `PDF could not be read: <resource> (<why>)`: the one form of every reason a PDF's text
/// cannot be had, the extractor's, a limit's or the worker's.
pub(crate) fn unreadable(resource: &str, why: &str) -> ToolError {
    ToolError::failure(format!("PDF could not be read: {resource} ({why})"))
}

/// A PDF's text as extraction found it: what the worker sends back (or the in-process
/// extraction returns), formatted by [`render`].
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum PdfText {
    /// It needs a password.
    Encrypted,
    /// It cannot be read; why, in plain words.
    Broken(String),
    /// The span starts after the last page.
    OutOfRange { total: u64 },
    /// The pages shown, in order, out of `total`.
    Pages { total: u64, pages: Vec<PageText> },
}

/// Which pages to extract: from `offset` (1-based), `limit` at most, and no more once the
/// text passes `max_lines` or `max_bytes` (the first page is always extracted).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct PdfPages {
    pub(crate) offset: u64,
    pub(crate) limit: u64,
    pub(crate) max_lines: usize,
    pub(crate) max_bytes: usize,
}

impl PdfPages {
    pub(crate) fn of(span: Span) -> Self {
        Self {
            offset: span.offset,
            limit: span.limit,
            max_lines: page_lines(&span.budget),
            max_bytes: span.budget.max_bytes,
        }
    }
}

/// One page's text, or why it has none.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct PageText {
    number: u64,
    text: Result<String, String>,
}

/// Extracts the text of the pages `want` asks for; a page whose cost is past a limit of
/// [`pdf_limits`](super::pdf_limits) is never handed to the extractor.
pub(crate) fn extract(data: &[u8], want: PdfPages) -> PdfText {
    let doc = match load(data) {
        Ok(doc) => doc,
        Err(Unreadable::Encrypted) => return PdfText::Encrypted,
        Err(Unreadable::Broken(reason)) => return PdfText::Broken(reason),
    };
    let pages: Vec<(u32, ObjectId)> = doc.get_pages().into_iter().collect();
    let total = pages.len() as u64;
    if want.offset > total.max(1) {
        return PdfText::OutOfRange { total };
    }
    let mut check = PageCheck::new(&doc);
    let (mut lines, mut bytes) = (0usize, 0usize);
    let mut shown: Vec<PageText> = Vec::new();
    let first = usize::try_from(want.offset - 1).unwrap_or(usize::MAX);
    for (index, (number, id)) in pages.iter().enumerate().skip(first) {
        if shown.len() as u64 >= want.limit {
            break;
        }
        if let Err(refusal) = check.check(*number, *id) {
            // The pages before it are shown; the next read starts at it and says why.
            if shown.is_empty() {
                return PdfText::Broken(refusal.to_string());
            }
            break;
        }
        let text = page_text(&doc, *number);
        let (page_lines, page_bytes) = match &text {
            Ok(text) => (text.lines().count(), text.len()),
            Err(_) => (0, 0),
        };
        // The first page is always shown: settle's bound keeps what does not fit.
        if !shown.is_empty()
            && (lines + page_lines > want.max_lines || bytes + page_bytes > want.max_bytes)
        {
            break;
        }
        lines += page_lines;
        bytes += page_bytes;
        shown.push(PageText {
            number: index as u64 + 1,
            text,
        });
    }
    PdfText::Pages {
        total,
        pages: shown,
    }
}

/// The text of `pages`, one after the other (the fuzz target's view of an extraction).
pub(crate) fn joined(pages: &[PageText]) -> String {
    pages
        .iter()
        .filter_map(|page| page.text.as_ref().ok())
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Why a PDF's text cannot be read.
enum Unreadable {
    Encrypted,
    Broken(String),
}

/// The model's text of `extracted`, read from the PDF file `data` at `resource`.
pub(super) fn render(
    options: &ReadOptions,
    resource: &str,
    data: Vec<u8>,
    span: Span,
    extracted: PdfText,
) -> Result<Rendered<ReadOutput>, ToolError> {
    let (total, shown) = match extracted {
        PdfText::Encrypted => {
            return Err(ToolError::failure(format!(
                "PDF is encrypted: {resource}. It needs a password, so its text cannot be read."
            )));
        }
        PdfText::Broken(reason) => return Err(unreadable(resource, &reason)),
        PdfText::OutOfRange { total } => {
            return Err(ToolError::failure(format!(
                "Offset {} is out of range for this file ({total} pages)",
                span.offset
            )));
        }
        PdfText::Pages { total, pages } => (total, pages),
    };
    let last = shown.last().map_or(span.offset, |page| page.number);
    let next = (last < total).then_some(last + 1);
    let has_text = shown
        .iter()
        .any(|page| page.text.as_ref().is_ok_and(|text| !text.is_empty()));

    let mut out = format!("<path>{resource}</path>\n<type>pdf</type>\n<content>\n");
    for page in &shown {
        let _ = writeln!(out, "[Page {} of {total}]", page.number);
        match &page.text {
            Ok(text) if text.is_empty() => out.push_str("(No text on this page.)\n"),
            Ok(text) => {
                out.push_str(text);
                out.push('\n');
            }
            Err(reason) => {
                let _ = writeln!(out, "(The text of this page could not be read: {reason})");
            }
        }
        out.push('\n');
    }
    match next {
        Some(next) if last == span.offset => {
            let _ = write!(
                out,
                "(Showing page {last} of {total}. Use offset={next} to continue.)"
            );
        }
        Some(next) => {
            let _ = write!(
                out,
                "(Showing pages {}-{last} of {total}. Use offset={next} to continue.)",
                span.offset
            );
        }
        None => {
            let _ = write!(out, "(End of PDF - total {total} pages)");
        }
    }
    if !has_text {
        out.push_str(
            "\n(No text could be extracted from these pages: they are probably scanned images, \
             which read cannot turn into text.)",
        );
    }
    let attach = options.pdf_attachment() && span.offset == 1;
    let attached = attach && data.len() <= MAX_INLINE_MEDIA_BYTES;
    if attach && !attached {
        let _ = write!(
            out,
            "\n(The PDF is not attached: it is larger than the {} an attachment may have.)",
            size_text(MAX_INLINE_MEDIA_BYTES as u64)
        );
    }
    out.push_str("\n</content>");
    let output = ReadOutput::Pdf(PdfOutput {
        path: resource.to_owned(),
        offset: span.offset,
        pages: shown.len(),
        total_pages: total,
        truncated: next.is_some(),
        next,
        has_text,
        attached,
    });
    let mut content = vec![Content::text(out)];
    if attached {
        content.push(Content::File {
            mime: "application/pdf".to_owned(),
            data,
            name: Some(resource.to_owned()),
        });
    }
    Ok(Rendered::new(output, content))
}

fn load(data: &[u8]) -> Result<Document, Unreadable> {
    let loaded = catch_unwind(|| Document::load_mem(data))
        .map_err(|_| Unreadable::Broken("the PDF parser failed on it".to_owned()))?;
    let mut doc = match loaded {
        Ok(doc) => doc,
        Err(err) if is_password_error(&err) => return Err(Unreadable::Encrypted),
        Err(err) => return Err(Unreadable::Broken(err.to_string())),
    };
    // Encrypted with an empty user password (common: "no copying" flags) still opens.
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Err(Unreadable::Encrypted);
    }
    Ok(doc)
}

fn is_password_error(err: &pdf_extract::Error) -> bool {
    matches!(err, pdf_extract::Error::Decryption(_))
        || err.to_string().to_ascii_lowercase().contains("password")
}

/// Page `number`'s text, its lines trimmed at the end and runs of blank lines made one.
fn page_text(doc: &Document, number: u32) -> Result<String, String> {
    let extracted = catch_unwind(AssertUnwindSafe(|| {
        let mut raw = String::new();
        output_doc_page(doc, &mut PlainTextOutput::new(&mut raw), number).map(|()| raw)
    }))
    .map_err(|_| "the PDF text extractor failed on it".to_owned())?
    .map_err(|err| err.to_string())?;
    let mut text = String::with_capacity(extracted.len());
    let mut blank = true;
    for line in extracted.lines().map(str::trim_end) {
        if line.is_empty() {
            if !blank {
                text.push('\n');
            }
            blank = true;
            continue;
        }
        text.push_str(line);
        text.push('\n');
        blank = false;
    }
    Ok(text.trim_end().to_owned())
}
