//! The `write` leaf: create a file or replace all of it (reference WR1–WR4).
//!
//! Order: resolve → `external_directory` → `edit` (write shares edit's action) → write. Parent
//! directories are created; the file keeps exactly one BOM if it or the new content had one;
//! the write is atomic and keeps the file's mode.
//!
//! Memory stays near the content's own size: the text is written as given (the BOM as a
//! separate part), and a previous file above `DIFF_LIMIT` is never held in memory (its lines
//! are counted as it streams by; the counts are then whole-file).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tackle_tool_core::{Content, Context, Execute, SharedAction, Tool, ToolError};

use std::io::{self, Read as _};

use crate::authorize::{authorize, prefixed_denial};
use crate::diff;
use crate::error::Error;
use crate::location::{EntryKind, Kind};
use crate::mutation::{BOM, Operation, Transaction, Written};
use crate::services::LocationServices;
use crate::text;

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
    pub path: String,
    /// The complete new content of the file.
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
            vec![Content::text(format!(
                "{verb} file successfully: {}",
                output.resource
            ))]
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
        let content = input.content;
        let (written, (additions, deletions)) = self
            .services
            .files
            .transact_canonical(&resolved.canonical, move |tx| write_text(tx, &content))
            .await
            .map_err(|err| unable(&err))?;
        Ok(WriteOutput {
            operation: written.operation,
            target: written.target.to_string_lossy().into_owned(),
            resource: resolved.resource,
            existed: written.existed,
            additions,
            deletions,
        })
    }
}

/// What the file held before, as much as the counts need.
enum Before {
    Nothing,
    /// The text without BOM (lossy if not UTF-8).
    Text(String),
    /// Too big to diff: only its line count.
    Lines(usize),
}

/// Writes `content` keeping exactly one BOM if the old file or `content` had one; returns the
/// mutation and (additions, deletions).
fn write_text(tx: &mut Transaction, content: &str) -> Result<(Written, (usize, usize)), Error> {
    let body = content.trim_start_matches('\u{FEFF}');
    let small = body.len() as u64 <= DIFF_LIMIT;
    let (old_bom, before) = match tx.open_existing()? {
        None => (false, Before::Nothing),
        Some((mut file, len)) if small && len <= DIFF_LIMIT => {
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)
                .map_err(|err| Error::io("read", tx.target(), err))?;
            let bom = bytes.starts_with(BOM);
            (bom, Before::Text(text::lossy(&bytes).into_owned()))
        }
        Some((file, _)) => {
            let (bom, lines) =
                streamed_lines(file).map_err(|err| Error::io("read", tx.target(), err))?;
            (bom, Before::Lines(lines))
        }
    };
    let prefix: &[u8] = if old_bom || body.len() != content.len() {
        BOM
    } else {
        b""
    };
    let written = tx.write_parts(&[prefix, body.as_bytes()])?;
    let counts = match before {
        Before::Nothing => (lines(body.as_bytes()), 0),
        Before::Text(before) => diff::counts(&before, body),
        Before::Lines(old) => (lines(body.as_bytes()), old),
    };
    Ok((written, counts))
}

/// Lines as the diff counts them: newline-terminated ones plus an unterminated last one.
fn lines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
        + usize::from(bytes.last().is_some_and(|b| *b != b'\n'))
}

/// (starts with a BOM, lines) of a file read in chunks.
fn streamed_lines(mut file: std::fs::File) -> io::Result<(bool, usize)> {
    let mut buffer = vec![0; 256 * 1024];
    let (mut first, mut count, mut last) = (None, 0, b'\n');
    loop {
        let read = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let chunk = &buffer[..read];
        if first.is_none() {
            first = Some(chunk.starts_with(BOM));
        }
        count += memchr::memchr_iter(b'\n', chunk).count();
        last = chunk[read - 1];
    }
    Ok((first.unwrap_or(false), count + usize::from(last != b'\n')))
}
