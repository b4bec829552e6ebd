//! The `write` leaf: create a file or replace all of it (reference WR1–WR4).
//!
//! Order: resolve → `external_directory` → `edit` (write shares edit's action) → write. Parent
//! directories are created; the write is atomic and keeps the file's mode. An existing file in
//! UTF-16 or Windows-1252 (read's rule decides) keeps that encoding and its BOM, and a character
//! the encoding cannot hold fails the call with nothing written; otherwise the file is UTF-8 and
//! keeps exactly one BOM if it or the new content had one.
//!
//! Memory stays near the content's own size: UTF-8 text is written as given (the BOM as a
//! separate part; another encoding needs its one encoded copy), and a previous file above `DIFF_LIMIT` is never held in memory (its lines
//! are counted as it streams by; the counts are then whole-file).

use crate::limits::{MAX_CONTENT_CHARS, MAX_PATH_CHARS};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tackle_tool_core::{Content, Context, Execute, SharedAction, Tool, ToolError};

use std::fmt;
use std::io::{self, Read as _};
use std::path::Path;

use crate::authorize::{authorize, prefixed_denial};
use crate::diff;
use crate::error::Error;
use crate::location::{EntryKind, Kind};
use crate::mutation::{BOM, Operation, Transaction, Written};
use crate::services::LocationServices;
use crate::text::encoding::{self, Encoding, Unencodable};
use crate::text::sniff::{SAMPLE_BYTES, file_encoding};
use crate::text::{self, FileText};

/// Old and new texts up to this size are diffed line by line for the counts; above it the
/// counts are whole-file (every old line removed, every new line added).
pub(crate) const DIFF_LIMIT: u64 = 8 << 20;

const DESCRIPTION: &str = "Write a file: create it, or replace its whole content. Parent \
directories are created. The path may be relative to the working directory or absolute. To \
change part of an existing file, use edit instead; read a file before overwriting it.";

/// The input of `write`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteInput {
    /// The file to write (relative to the working directory, or absolute).
    #[schemars(extend("x-aliases" = ["filePath", "file_path"]))]
    #[schemars(length(max = MAX_PATH_CHARS))]
    pub path: String,
    /// The complete new content of the file.
    #[schemars(length(max = MAX_CONTENT_CHARS))]
    pub content: String,
}

/// What `write` returns (the structured output).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteOutput {
    /// Always `write`.
    pub operation: Operation,
    /// The real file written (absolute, symlinks resolved).
    pub target: String,
    /// The file's resource (relative to the working directory, or absolute outside it).
    pub resource: String,
    /// Whether the file existed before.
    pub existed: bool,
    /// Lines added compared with the previous content.
    pub additions: usize,
    /// Lines removed compared with the previous content.
    pub deletions: usize,
    /// The file's encoding when it is not UTF-8 (an existing file keeps its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// The `write` tool for the Location of `services` (its permission action is `edit`).
pub(crate) fn tool(services: &LocationServices) -> Option<Tool> {
    Some(
        Tool::typed(
            DESCRIPTION,
            Write {
                services: services.clone(),
            },
        )
        .model_output(|output: &WriteOutput| {
            let verb = if output.existed { "Wrote" } else { "Created" };
            let mut text = format!("{verb} file successfully: {}", output.resource);
            if let Some(encoding) = &output.encoding {
                text.push_str(" (kept its encoding, ");
                text.push_str(encoding);
                text.push(')');
            }
            vec![Content::text(text)]
        })
        .build()
        .with_action(SharedAction::Edit),
    )
}

struct Write {
    services: LocationServices,
}

impl Execute for Write {
    type Input = WriteInput;
    type Output = WriteOutput;

    async fn execute(&self, input: WriteInput, ctx: &Context) -> Result<WriteOutput, ToolError> {
        let prefix = format!("Unable to write {}", input.path);
        let unable =
            |detail: &dyn std::fmt::Display| ToolError::failure(format!("{prefix}: {detail}"));
        let resolved = self
            .services
            .location
            .resolve(&input.path, Kind::File)
            .map_err(|err| unable(&err))?;
        if resolved.kind == Some(EntryKind::Directory) {
            return Err(unable(&"it is a directory"));
        }
        authorize(&self.services.permission, ctx, &resolved, "edit")
            .await
            .map_err(|err| prefixed_denial(&prefix, err))?;
        let (resource, content) = (resolved.resource.clone(), input.content);
        let (written, encoding, (additions, deletions)) = self
            .services
            .files
            .transact_canonical(&resolved.canonical, move |tx| {
                write_text(tx, Path::new(&resource), &content)
            })
            .await
            .map_err(|err| unable(&err))?;
        Ok(WriteOutput {
            operation: written.operation,
            target: written.target.to_string_lossy().into_owned(),
            resource: resolved.resource,
            existed: written.existed,
            additions,
            deletions,
            encoding: encoding.label().map(str::to_owned),
        })
    }
}

/// Why write wrote nothing.
#[derive(Debug)]
enum WriteFailure {
    Mutation(Error),
    Unencodable(Unencodable),
}

impl From<Error> for WriteFailure {
    fn from(err: Error) -> Self {
        Self::Mutation(err)
    }
}

impl fmt::Display for WriteFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Mutation(err) => err.fmt(f),
            Self::Unencodable(unencodable) => write!(f, "{unencodable}."),
        }
    }
}

/// What the file held before, as much as the counts need.
enum Before {
    Nothing,
    /// The text without BOM (lossy if it is not text in its encoding).
    Text(String),
    /// Too big to diff: only its line count.
    Lines(usize),
}

/// Writes `content` to the file at `path` (its resource, for read's rule on its encoding): in
/// the existing file's encoding when that is UTF-16 or Windows-1252, else as UTF-8 keeping
/// exactly one BOM if the old file or `content` had one. Returns the mutation, the encoding
/// written and (additions, deletions).
fn write_text(
    tx: &mut Transaction,
    path: &Path,
    content: &str,
) -> Result<(Written, Encoding, (usize, usize)), WriteFailure> {
    let body = content.trim_start_matches('\u{FEFF}');
    let small = body.len() as u64 <= DIFF_LIMIT;
    let (old, before) = match tx.open_existing()? {
        None => (Encoding::Utf8 { bom: 0 }, Before::Nothing),
        Some((mut file, len)) if small && len <= DIFF_LIMIT => {
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)
                .map_err(|err| Error::io("read", tx.target(), err))?;
            let (encoding, text) = match text::read_text(&bytes, path) {
                Ok(FileText { encoding, body }) => (encoding, body.into_owned()),
                Err(_) => (
                    file_encoding(&bytes, path),
                    text::lossy(&bytes).into_owned(),
                ),
            };
            (encoding, Before::Text(text))
        }
        Some((file, _)) => {
            let (encoding, lines) =
                streamed_lines(file, path).map_err(|err| Error::io("read", tx.target(), err))?;
            (encoding, Before::Lines(lines))
        }
    };
    let (written, encoding) = match old {
        Encoding::Utf8 { bom } => {
            let prefix: &[u8] = if bom > 0 || body.len() != content.len() {
                BOM
            } else {
                b""
            };
            (tx.write_parts(&[prefix, body.as_bytes()])?, old)
        }
        other => {
            let bytes = encoding::encode(body, other).map_err(WriteFailure::Unencodable)?;
            (tx.write(&bytes)?, other)
        }
    };
    let counts = match before {
        Before::Nothing => (lines(body.as_bytes()), 0),
        Before::Text(before) => diff::counts(&before, body),
        Before::Lines(old) => (lines(body.as_bytes()), old),
    };
    Ok((written, encoding, counts))
}

/// Lines as the diff counts them: newline-terminated ones plus an unterminated last one.
fn lines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
        + usize::from(bytes.last().is_some_and(|b| *b != b'\n'))
}

/// (encoding, lines) of a file read in chunks: the encoding by read's rule from its first
/// bytes, the lines after the BOM as [`lines`] counts them (in UTF-16, line feed code units).
fn streamed_lines(mut file: std::fs::File, path: &Path) -> io::Result<(Encoding, usize)> {
    let mut sample = Vec::new();
    (&mut file)
        .take(SAMPLE_BYTES as u64)
        .read_to_end(&mut sample)?;
    let encoding = file_encoding(&sample, path);
    let mut counter = LineCounter::new(encoding);
    counter.feed(sample.get(encoding.bom().len()..).unwrap_or_default());
    let mut buffer = vec![0; 256 * 1024];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => counter.feed(&buffer[..read]),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok((encoding, counter.lines()))
}

/// Counts line feeds in a stream of bytes in one encoding: bytes, or UTF-16 code units.
struct LineCounter {
    /// The line feed as a UTF-16 code unit's bytes, in file order; `None` for bytes.
    unit: Option<[u8; 2]>,
    /// A code unit's first byte waiting for its second.
    half: Option<u8>,
    /// The last unit (or byte) seen was a line feed.
    ended: bool,
    any: bool,
    count: usize,
}

impl LineCounter {
    fn new(encoding: Encoding) -> Self {
        let unit = match encoding {
            Encoding::Utf16Le => Some(*b"\n\0"),
            Encoding::Utf16Be => Some(*b"\0\n"),
            Encoding::Utf8 { .. } | Encoding::Windows1252 => None,
        };
        Self {
            unit,
            half: None,
            ended: true,
            any: false,
            count: 0,
        }
    }

    fn feed(&mut self, mut chunk: &[u8]) {
        let Some(lf) = self.unit else {
            if let Some(&last) = chunk.last() {
                self.count += memchr::memchr_iter(b'\n', chunk).count();
                self.ended = last == b'\n';
                self.any = true;
            }
            return;
        };
        if let (Some(first), Some((&second, rest))) = (self.half, chunk.split_first()) {
            self.unit_seen([first, second] == lf);
            self.half = None;
            chunk = rest;
        }
        let mut units = chunk.chunks_exact(2);
        for unit in &mut units {
            self.unit_seen(unit == lf);
        }
        if let [odd] = units.remainder() {
            self.half = Some(*odd);
        }
    }

    fn unit_seen(&mut self, line_feed: bool) {
        self.count += usize::from(line_feed);
        self.ended = line_feed;
        self.any = true;
    }

    /// Terminated lines plus an unterminated last one.
    fn lines(&self) -> usize {
        self.count + usize::from(self.any && !self.ended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_counts_of_streamed_files_follow_the_encoding() {
        let text = "a\nb\u{10A}\n\u{A0A}c";
        let utf16: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        // Split at every point, odd ones inside a code unit included.
        for at in 0..=utf16.len() {
            let mut counter = LineCounter::new(Encoding::Utf16Le);
            counter.feed(&utf16[..at]);
            counter.feed(&utf16[at..]);
            assert_eq!(counter.lines(), 3, "split at {at}");
        }
        let mut counter = LineCounter::new(Encoding::Windows1252);
        counter.feed(b"a\n\xE9\n");
        assert_eq!(counter.lines(), 2);
        assert_eq!(LineCounter::new(Encoding::Utf16Be).lines(), 0);
    }
}
