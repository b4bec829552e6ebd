//! The `write` leaf: create a file or replace all of it (reference WR1–WR4).
//!
//! Order: resolve → `external_directory` → `edit` (write shares edit's action) → write. Parent
//! directories are created; the file keeps exactly one BOM if it or the new content had one;
//! the write is atomic and keeps the file's mode.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tackle_tool_core::{Content, Context, Execute, SharedAction, Tool, ToolError};

use crate::authorize::{authorize, prefixed_denial};
use crate::diff::{DiffStatus, FileDiff};
use crate::location::{EntryKind, Kind};
use crate::mutation::Operation;
use crate::services::LocationServices;

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
        let written = self
            .services
            .files
            .write_text_preserving_bom(&resolved.canonical, input.content)
            .await
            .map_err(|err| unable(&err))?;
        let status = if written.written.existed {
            DiffStatus::Modified
        } else {
            DiffStatus::Added
        };
        let diff = FileDiff::new(&resolved.resource, status, &written.before, &written.after);
        Ok(WriteOutput {
            operation: written.written.operation,
            target: written.written.target.to_string_lossy().into_owned(),
            resource: resolved.resource,
            existed: written.written.existed,
            additions: diff.additions,
            deletions: diff.deletions,
        })
    }
}
