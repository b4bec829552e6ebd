//! PDFs: their text, page by page (`offset` and `limit` count pages), and the file itself when
//! the host asks for it.
//!
//! The extractor is third-party code that may panic on a malformed file; a panic is caught
//! and becomes a message the model reads, never a crash of the host.

use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

use pdf_extract::{Document, PlainTextOutput, output_doc_page};
use tackle_output_store::MAX_INLINE_MEDIA_BYTES;
use tackle_tool_core::{Content, Rendered, ToolError};

use super::super::render::page_lines;
use super::super::{PdfOutput, ReadOutput};
use super::{ReadOptions, Span, size_text};

/// Why a PDF's text cannot be read.
enum Unreadable {
    Encrypted,
    Broken(String),
}

/// One page's text, or why it has none.
struct PageText {
    number: u64,
    text: Result<String, String>,
}

pub(super) fn read(
    options: &ReadOptions,
    resource: &str,
    data: Vec<u8>,
    span: Span,
) -> Result<Rendered<ReadOutput>, ToolError> {
    let doc = load(&data).map_err(|why| match why {
        Unreadable::Encrypted => ToolError::failure(format!(
            "PDF is encrypted: {resource}. It needs a password, so its text cannot be read."
        )),
        Unreadable::Broken(reason) => {
            ToolError::failure(format!("PDF could not be read: {resource} ({reason})"))
        }
    })?;
    let pages: Vec<u32> = doc.get_pages().keys().copied().collect();
    let total = pages.len() as u64;
    if span.offset > total.max(1) {
        return Err(ToolError::failure(format!(
            "Offset {} is out of range for this file ({total} pages)",
            span.offset
        )));
    }
    let max_lines = page_lines(&span.budget);
    let (mut lines, mut bytes) = (0usize, 0usize);
    let mut shown: Vec<PageText> = Vec::new();
    let first = usize::try_from(span.offset - 1).unwrap_or(usize::MAX);
    for (index, number) in pages.iter().enumerate().skip(first) {
        if shown.len() as u64 >= span.limit {
            break;
        }
        let text = page_text(&doc, *number);
        let (page_lines, page_bytes) = match &text {
            Ok(text) => (text.lines().count(), text.len()),
            Err(_) => (0, 0),
        };
        // The first page is always shown: settle's bound keeps what does not fit.
        if !shown.is_empty()
            && (lines + page_lines > max_lines || bytes + page_bytes > span.budget.max_bytes)
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
