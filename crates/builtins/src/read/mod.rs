//! The `read` leaf: a page of a text file, a directory listing, or a page of a managed output
//! (the reference's read, with the legacy V1 model text); with the `media` feature also an
//! image the model can take, a PDF's text by pages and a notebook's cells (`media`).
//!
//! Order: resolve → `external_directory` → `read` → only then stat or open anything. A
//! `tool-output://` reference is served by the output store without a permission prompt, to the
//! session that produced it only.
//! Memory is proportional to the page, never to the file, except for media, read whole up to
//! [`MAX_MEDIA_BYTES`].

mod file;
mod listing;
#[cfg(feature = "media")]
mod media;
mod output;
mod page;
mod render;

use crate::limits::MAX_PATH_CHARS;
use std::num::NonZeroU64;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_output_store::{OutputRef, Page, PageLimits, PagingHint};
use tackle_tool_core::{
    Budget, Context, Defect, Execute, MAX_LINES, Rendered, Tool, ToolError, ToolFailure,
};

#[cfg(feature = "media")]
pub use crate::read_options::{
    DECODE_TIMEOUT, ImageBound, MIN_IMAGE_BYTES, MediaWorker, ReadOptions,
};
#[cfg(feature = "media")]
#[doc(hidden)]
pub use media::extract_pdf_text;
#[cfg(feature = "media")]
pub use media::media_worker_main;
pub use output::{
    Entry, ImageOutput, ImageSize, ListPageOutput, NotebookOutput, PdfOutput, ReadOutput,
    TextPageOutput,
};

use crate::authorize::{authorize, prefixed_denial};
use crate::beneath::Directory;
use crate::blocking::blocking;
use crate::location::{EntryKind, Kind, Resolved};
use crate::services::LocationServices;
use file::{FileRead, ReadFailure, read_file};
use page::PageBudget;
use render::{Hint, page_lines};

/// Lines (or entries) a page has at most: the default line budget (a page's own frame takes a
/// few of them, so that a page fits a result whole, frame included).
pub const MAX_READ_LINES: u64 = MAX_LINES as u64;
/// The largest image, PDF or notebook read (reference `MAX_MEDIA_INGEST_BYTES`). What reaches
/// the model is smaller: an image is scaled down to its bound, and nothing attached exceeds
/// what the output store carries inline.
pub const MAX_MEDIA_BYTES: u64 = 20 * 1024 * 1024;

const DESCRIPTION: &str = "Read a file or directory from the local filesystem. \
The path may be relative to the working directory or absolute; a tool-output:// reference \
from an earlier truncated result can be read the same way. Text is returned as numbered lines \
(\"12: text\"); the number and the \": \" after it are not part of the file. By default up to \
2000 lines are returned from the start; use offset (1-based line) and limit to page through \
large files, as the hint at the end of each page says. Lines longer than 2000 characters are \
cut; a line of a tool-output:// reference too long for one page is continued with column \
(1-based character), as the hint says. Directories list their entries, directories first with a trailing /. \
Images (PNG, JPEG, GIF, WebP, BMP, TIFF) are returned as attachments, scaled down when large; \
PDF files as their text, page by page, and Jupyter notebooks (.ipynb) as numbered cells with \
their outputs: for both, offset and limit count pages or cells. Other binary files cannot be \
read.";

/// The input of `read`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadInput {
    /// The file or directory to read (relative or absolute), or a tool-output:// reference.
    #[schemars(extend("x-aliases" = ["filePath", "file_path"]))]
    #[schemars(length(max = MAX_PATH_CHARS))]
    pub path: String,
    /// The line (or directory entry, PDF page, notebook cell) to start from, 1-based (0 reads
    /// from the start too, as the reference CLI does).
    pub offset: Option<u64>,
    /// The number of lines (or entries, pages, cells) to read; at most 2000, the default (more
    /// is read as 2000).
    pub limit: Option<NonZeroU64>,
    /// The character of line `offset` to start from (1-based), to continue a long line as a hint says.
    pub column: Option<u64>,
}

/// How a host tells its output store that `read` pages managed outputs: markers then name
/// `read` (registered under that name) and its page size within `budget`.
pub fn paging_hint(budget: &Budget) -> PagingHint {
    PagingHint::new("read", page_lines(budget))
}

/// The `read` tool for the Location of `services`.
pub(crate) fn tool(services: &LocationServices) -> Option<Tool> {
    Some(
        Tool::typed(
            DESCRIPTION,
            Read {
                services: services.clone(),
            },
        )
        .rendered()
        .build(),
    )
}

struct Read {
    services: LocationServices,
}

impl Execute for Read {
    type Input = ReadInput;
    type Output = Rendered<ReadOutput>;

    async fn execute(
        &self,
        input: ReadInput,
        ctx: &Context,
    ) -> Result<Rendered<ReadOutput>, ToolError> {
        let limit = match input.limit {
            Some(limit) => limit.get().min(MAX_READ_LINES),
            None => MAX_READ_LINES,
        };
        // `offset: 0` reads from the start, as the reference's CLI does; so does `column: 0`.
        let offset = input.offset.unwrap_or(1).max(1);
        let column = input.column.unwrap_or(1).max(1);
        if let Some(reference) = OutputRef::parse(input.path.trim()) {
            // Only the session that produced an output reads it; to another session it does
            // not exist, in the same words as a missing one.
            reference
                .check_session(&ctx.session_id)
                .map_err(|err| ToolError::failure(format!("Unable to read {reference}: {err}")))?;
            let at = (offset, column);
            return self.managed(reference, at, limit, ctx.budget).await;
        }
        if column > 1 {
            return Err(ToolError::failure(
                "column applies to tool-output:// references only: lines of a file longer than \
                 2000 characters are cut",
            ));
        }
        let resolved = self
            .services
            .location
            .resolve(&input.path, Kind::Directory)
            .map_err(|err| ToolError::failure(unable(&input.path, &err)))?;
        authorize(&self.services.permission, ctx, &resolved, "read")
            .await
            .map_err(|err| prefixed_denial(&format!("Unable to read {}", input.path), err))?;
        // A small UTF-8 file is read here: bounded by the sample, it costs less than handing
        // it to the blocking pool and back (two thread wake-ups), and no more than the path
        // resolution above. Anything else goes to the pool.
        if resolved.kind == Some(EntryKind::File) {
            let here = read_text_or_media(&resolved, offset, limit, &ctx.budget, true)?;
            if let Some(Step::Done(rendered)) = here {
                return Ok(rendered);
            }
        }
        let services = self.services.clone();
        let budget = ctx.budget;
        let file = resolved.clone();
        let step =
            blocking(move || read_resolved(&services, &file, offset, limit, &budget)).await??;
        match step {
            Step::Done(rendered) => Ok(rendered),
            Step::Media { mime, data } => {
                let span = (offset, limit);
                read_media(&self.services, &resolved, mime, data, span, ctx).await
            }
        }
    }
}

/// What reading a file gave: a result, or media still to decode (off the blocking pool: the
/// decode has a deadline and may be cancelled).
enum Step {
    Done(Rendered<ReadOutput>),
    Media { mime: &'static str, data: Vec<u8> },
}

impl Read {
    async fn managed(
        &self,
        reference: OutputRef,
        (offset, column): (u64, u64),
        limit: u64,
        budget: Budget,
    ) -> Result<Rendered<ReadOutput>, ToolError> {
        let store = self.services.store.clone();
        blocking(move || {
            let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
            // The page's frame is taken from the budget first; each line counts with the
            // widest number the page can show, its `: ` and its newline.
            let room = render::line_room(&reference.to_string(), &budget);
            let last = offset.saturating_add(room.max_lines as u64);
            let overhead = render::numbered_len(last, "");
            let limits = PageLimits::new(
                to_usize(limit).min(room.max_lines),
                room.max_bytes,
                overhead,
            );
            let page = store
                .read_page_at(&reference, to_usize(offset), to_usize(column), limits)
                .map_err(|err| ToolError::failure(format!("Unable to read {reference}: {err}")))?;
            Ok(managed_page(&reference, &page))
        })
        .await?
    }
}

fn unable(path: &str, err: &dyn std::fmt::Display) -> String {
    format!("Unable to read {path}: {err}")
}

fn read_resolved(
    services: &LocationServices,
    resolved: &Resolved,
    offset: u64,
    limit: u64,
    budget: &Budget,
) -> Result<Step, ToolError> {
    let resource = &resolved.resource;
    match resolved.kind {
        None => Err(ToolError::failure(not_found(resolved))),
        Some(EntryKind::Other) => Err(ToolError::failure(format!(
            "Path is not a file or directory: {resource}"
        ))),
        Some(EntryKind::Directory) => {
            let scope = if resolved.is_external() {
                resolved.canonical.as_path()
            } else {
                services.location.root()
            };
            let room = render::entry_room(resource, budget);
            let limit = usize::try_from(limit)
                .unwrap_or(usize::MAX)
                .min(room.max_lines);
            let listing = listing::list(&resolved.canonical, scope, offset, limit, room.max_bytes)
                .map_err(|err| ToolError::failure(unable(&resolved.input, &err)))?;
            let text = render::list_page(
                resource,
                &listing.entries,
                listing.offset,
                listing.total,
                listing.next,
            );
            Ok(Step::Done(Rendered::text(
                ReadOutput::ListPage(ListPageOutput {
                    path: resource.clone(),
                    entries: listing.entries,
                    offset: listing.offset,
                    total: listing.total,
                    truncated: listing.next.is_some(),
                    next: listing.next,
                }),
                text,
            )))
        }
        Some(EntryKind::File) => read_text_or_media(resolved, offset, limit, budget, false)?
            .ok_or_else(|| {
                Defect::new("a full read stopped as if it were limited to small text").into()
            }),
    }
}

/// The page or media of the file; with `small_text_only`, `None` when it is not a small UTF-8
/// text (see [`read_file`]).
fn read_text_or_media(
    resolved: &Resolved,
    offset: u64,
    limit: u64,
    budget: &Budget,
    small_text_only: bool,
) -> Result<Option<Step>, ToolError> {
    let resource = &resolved.resource;
    // The page's frame is taken from the budget before its lines are.
    let room = render::line_room(resource, budget);
    let page_budget = PageBudget {
        offset,
        max_lines: usize::try_from(limit)
            .unwrap_or(usize::MAX)
            .min(room.max_lines),
        max_bytes: room.max_bytes,
    };
    let read = match read_file(
        &resolved.canonical,
        page_budget,
        MAX_MEDIA_BYTES,
        small_text_only,
    ) {
        Err(ReadFailure::NotSmallText) => return Ok(None),
        read => read,
    };
    let read = read.map_err(|failure| {
        ToolError::Failure(ToolFailure::new(match failure {
            ReadFailure::Binary => format!("Cannot read binary file: {resource}"),
            ReadFailure::MediaTooLarge { limit } => {
                format!("Media exceeds {limit} byte ingestion limit: {resource}")
            }
            ReadFailure::NotUtf8 { offset, line } => format!(
                "File is not valid UTF-8: {resource} (first invalid byte at byte offset {offset}, \
                 line {line}). It may use a legacy encoding such as GBK, Shift-JIS or \
                 Windows-1251; read understands UTF-8, UTF-16 with a byte order mark and Latin-1."
            ),
            ReadFailure::OffsetOutOfRange { offset, total } => {
                format!("Offset {offset} is out of range for this file ({total} lines)")
            }
            ReadFailure::Io(err) => unable(&resolved.input, &err),
            ReadFailure::NotSmallText => unable(&resolved.input, &"the read stopped early"),
        }))
    })?;
    match read {
        FileRead::Media { mime, data } => Ok(Some(Step::Media { mime, data })),
        FileRead::Page {
            page,
            encoding,
            mime,
        } => {
            let last = page.offset + page.lines.len() as u64 - u64::from(!page.lines.is_empty());
            let hint = match page.next {
                Some(next) if page.capped => Hint::Capped {
                    first: page.offset,
                    last,
                    next,
                    kib: budget.max_bytes / 1024,
                },
                Some(next) => Hint::More {
                    first: page.offset,
                    last,
                    total: page.total_lines,
                    next,
                },
                None => Hint::End {
                    total: page.total_lines,
                    what: "file",
                },
            };
            let notes: Vec<String> = encoding
                .label()
                .map(render::encoding_note)
                .into_iter()
                .collect();
            let text = render::text_page(resource, page.offset, page.lines.iter(), hint, &notes);
            Ok(Some(Step::Done(Rendered::text(
                ReadOutput::TextPage(TextPageOutput {
                    path: resource.clone(),
                    mime,
                    encoding: encoding.label().unwrap_or("UTF-8").to_owned(),
                    offset: page.offset,
                    column: 1,
                    lines: page.lines.len(),
                    total_lines: page.total_lines,
                    truncated: page.next.is_some(),
                    next: page.next,
                    next_column: None,
                    clamped_lines: page.clamped,
                }),
                text,
            ))))
        }
    }
}

/// Bytes a PDF's or notebook's page takes for its tags, hint and notes, besides its path: the
/// longest (a PDF page set with no text that is not attached, its numbers of 20 digits) is
/// about 410.
#[cfg(feature = "media")]
const MEDIA_FRAME_BYTES: usize = 512;

/// An image, PDF or notebook (only sniffed as such with the `media` feature).
#[cfg(feature = "media")]
async fn read_media(
    services: &LocationServices,
    resolved: &Resolved,
    mime: &'static str,
    data: Vec<u8>,
    (offset, limit): (u64, u64),
    ctx: &Context,
) -> Result<Rendered<ReadOutput>, ToolError> {
    // A PDF's or notebook's page counts its text against the budget (and its lines against
    // what `page_lines` leaves); its tags, hint and notes are taken from the bytes first.
    // Per-page markers are not: a page set that goes over is saved and previewed by settle.
    let frame = resolved.resource.len() + MEDIA_FRAME_BYTES;
    let span = media::Span {
        offset,
        limit,
        budget: Budget::new(
            ctx.budget.max_lines,
            ctx.budget.max_bytes.saturating_sub(frame).max(1),
        ),
    };
    let worker = services.media_worker.as_deref();
    let resource = &resolved.resource;
    media::read(
        &services.read,
        worker,
        resource,
        mime,
        data,
        span,
        &ctx.cancel,
    )
    .await
}

#[cfg(not(feature = "media"))]
async fn read_media(
    _: &LocationServices,
    resolved: &Resolved,
    _: &'static str,
    _: Vec<u8>,
    _: (u64, u64),
    _: &Context,
) -> Result<Rendered<ReadOutput>, ToolError> {
    Err(ToolError::failure(format!(
        "Cannot read binary file: {}",
        resolved.resource
    )))
}

fn managed_page(reference: &OutputRef, page: &Page) -> Rendered<ReadOutput> {
    let offset = page.offset as u64;
    let last = offset + page.lines.len() as u64 - u64::from(!page.lines.is_empty());
    let hint = match (page.next, page.next_column) {
        (Some(next), Some(column)) => Hint::Cut {
            first: offset,
            last: next as u64,
            total: page.total_lines as u64,
            column: column as u64,
        },
        (Some(next), None) => Hint::More {
            first: offset,
            last,
            total: page.total_lines as u64,
            next: next as u64,
        },
        (None, _) => Hint::End {
            total: page.total_lines as u64,
            what: "output",
        },
    };
    let mut notes = Vec::new();
    if let Some(dropped) = page.dropped {
        notes.push(render::dropped_note(dropped.first_line, dropped.last_line));
    }
    let path = reference.to_string();
    let text = render::text_page(
        &path,
        offset,
        page.lines.iter().map(String::as_str),
        hint,
        &notes,
    );
    let output = TextPageOutput {
        path,
        mime: "text/plain".to_owned(),
        encoding: "UTF-8".to_owned(),
        offset,
        column: page.column as u64,
        lines: page.lines.len(),
        total_lines: page.total_lines as u64,
        truncated: page.truncated,
        next: page.next.map(|next| next as u64),
        next_column: page.next_column.map(|column| column as u64),
        clamped_lines: page.clamped_lines,
    };
    Rendered::text(ReadOutput::TextPage(output), text)
}

/// `File not found: <resource>`, with up to 3 siblings whose names contain the missing name
/// (or are contained in it), case-insensitively (the reference CLI's "Did you mean").
fn not_found(resolved: &Resolved) -> String {
    let resource = &resolved.resource;
    let mut message = format!("File not found: {resource}");
    let (Some(parent), Some(base)) = (resolved.canonical.parent(), resolved.canonical.file_name())
    else {
        return message;
    };
    let base = base.to_string_lossy().to_lowercase();
    let Ok(entries) = Directory::open(parent).and_then(|dir| dir.names()) else {
        return message;
    };
    let mut names: Vec<String> = entries
        .iter()
        .map(|name| name.to_string_lossy().into_owned())
        .filter(|name| {
            let lower = name.to_lowercase();
            lower.contains(&base) || base.contains(&lower)
        })
        .collect();
    names.sort();
    names.truncate(3);
    if names.is_empty() {
        return message;
    }
    let prefix = match resource.rsplit_once('/') {
        Some(("", _)) => "/".to_owned(),
        Some((dir, _)) => format!("{dir}/"),
        None => String::new(),
    };
    message.push_str("\n\nDid you mean one of these?\n");
    let shown: Vec<String> = names.iter().map(|name| format!("{prefix}{name}")).collect();
    message.push_str(&shown.join("\n"));
    message
}
