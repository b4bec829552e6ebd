//! What a successful patch reports: the structured output (one entry per file with status,
//! counts and a unified diff made with `similar`) and the model text.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::Serialize;

use super::plan::FileChange;
use crate::diff::{DiffStatus, FileDiff, unified};
use crate::text::lossy;

/// The structured output of `apply_patch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ApplyPatchOutput {
    /// Every file the patch touched, in the order the patch first names it. A moved file is one
    /// entry, under its destination.
    pub files: Vec<FileDiff>,
    /// True when the diff texts were dropped because the output would exceed the byte limit of
    /// tool output; the counts are kept.
    pub compacted: bool,
}

/// The output for `changes`, with diffs dropped when it would exceed `max_bytes` as JSON.
pub(crate) fn output(changes: &[FileChange], max_bytes: usize) -> ApplyPatchOutput {
    let mut files: Vec<FileDiff> = changes
        .iter()
        .filter(|change| !folded_into_move(change, changes))
        .map(|change| file_diff(change, changes))
        .collect();
    let size = serde_json::to_vec(&files).map_or(usize::MAX, |json| json.len());
    let compacted = size > max_bytes;
    if compacted {
        files = files.into_iter().map(FileDiff::compact).collect();
    }
    ApplyPatchOutput { files, compacted }
}

/// The source of a move is reported with its destination.
fn folded_into_move(change: &FileChange, all: &[FileChange]) -> bool {
    change.after.is_none()
        && all.iter().any(|other| {
            other.after.is_some()
                && other
                    .moved_from
                    .as_ref()
                    .is_some_and(|from| from.path == change.target.path)
        })
}

fn file_diff(change: &FileChange, all: &[FileChange]) -> FileDiff {
    let source = change.moved_from.as_ref().and_then(|from| {
        all.iter()
            .find(|c| c.target.path == from.path)
            .map(|c| (from.resource.clone(), c.before.as_deref()))
    });
    let (before, from) = match &source {
        Some((resource, before)) => (*before, Some(resource.clone())),
        None => (change.before.as_deref(), None),
    };
    let after = change.after.as_deref();
    let status = match (before.is_some(), after.is_some()) {
        _ if from.is_some() && after.is_some() => DiffStatus::Moved,
        (false, true) => DiffStatus::Added,
        (true, false) => DiffStatus::Deleted,
        _ if change.writes() => DiffStatus::Modified,
        _ => DiffStatus::Unchanged,
    };
    let old_name = from.as_deref().unwrap_or(&change.target.resource);
    // Updated and added files are UTF-8 (borrowed here); only a deleted file may not be.
    let (before, after) = (
        lossy(before.unwrap_or_default()),
        lossy(after.unwrap_or_default()),
    );
    let diff = unified(
        old_name,
        &change.target.resource,
        &before,
        &after,
        change.windows.as_deref(),
    );
    FileDiff {
        target: Some(change.target.path.to_string_lossy().into_owned()),
        from,
        already_applied: Some(change.already_applied),
        ..FileDiff::from_diff(&change.target.resource, status, diff)
    }
}

/// The text the model reads after a successful patch.
pub(crate) fn model_text(output: &ApplyPatchOutput) -> String {
    let changed: Vec<&FileDiff> = output
        .files
        .iter()
        .filter(|f| f.status != DiffStatus::Unchanged)
        .collect();
    let unchanged: Vec<&FileDiff> = output
        .files
        .iter()
        .filter(|f| f.status == DiffStatus::Unchanged)
        .collect();
    let mut text = String::new();
    if changed.is_empty() {
        text.push_str("Success. No files were changed: the patch is already applied.\n");
    } else {
        text.push_str("Success. Updated the following files:\n");
        for file in &changed {
            let letter = match file.status {
                DiffStatus::Added => 'A',
                DiffStatus::Deleted => 'D',
                _ => 'M',
            };
            let _ = write!(text, "{letter} {}", file.file);
            let already = file.already_applied.unwrap_or_default();
            if already > 0 {
                let _ = write!(text, " ({} already applied)", changes(already));
            }
            text.push('\n');
        }
    }
    if !unchanged.is_empty() {
        if !changed.is_empty() {
            text.push_str("Left unchanged:\n");
        }
        for file in &unchanged {
            let already = file.already_applied.unwrap_or_default();
            let why = if already > 0 {
                format!("{} already applied", changes(already))
            } else {
                "no net change".to_owned()
            };
            let _ = writeln!(text, "  {} ({why})", file.file);
        }
    }
    text.truncate(text.trim_end().len());
    text
}

fn changes(n: usize) -> String {
    if n == 1 {
        "1 change".to_owned()
    } else {
        format!("{n} changes")
    }
}
