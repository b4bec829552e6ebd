//! What a successful patch reports: the structured output (one entry per file with status,
//! counts and a unified diff made with `similar`) and the model text.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::Serialize;

use super::diff::diff;
use super::plan::FileChange;

/// The structured output of `apply_patch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ApplyPatchOutput {
    /// Every file the patch touched, in the order the patch first names it. A moved file is one
    /// entry, under its destination.
    pub files: Vec<PatchedFile>,
    /// True when the diff texts were dropped because the output would exceed the byte limit of
    /// tool output; the counts are kept.
    pub compacted: bool,
}

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatchedFile {
    /// The file as permission sees it: relative to the Location, or absolute outside it.
    pub file: String,
    /// The real path that was changed.
    pub target: String,
    /// What happened to the file.
    pub status: PatchStatus,
    /// For a move: the file it was moved from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Lines added.
    pub additions: usize,
    /// Lines removed.
    pub deletions: usize,
    /// Changes of the patch that were already in place (a replayed patch).
    pub already_applied: usize,
    /// The unified diff; absent when the output was compacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PatchStatus {
    /// Created.
    Added,
    /// Changed in place.
    Modified,
    /// Removed.
    Deleted,
    /// Moved (and perhaps changed).
    Moved,
    /// Left as it was: its changes were already applied, or cancelled each other out.
    Unchanged,
}

/// The output for `changes`, with diffs dropped when it would exceed `max_bytes` as JSON.
pub(crate) fn output(changes: &[FileChange], max_bytes: usize) -> ApplyPatchOutput {
    let mut files: Vec<PatchedFile> = changes
        .iter()
        .filter(|change| !folded_into_move(change, changes))
        .map(|change| file_diff(change, changes))
        .collect();
    let size = serde_json::to_vec(&files).map_or(usize::MAX, |json| json.len());
    let compacted = size > max_bytes;
    if compacted {
        for file in &mut files {
            file.patch = None;
        }
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

fn file_diff(change: &FileChange, all: &[FileChange]) -> PatchedFile {
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
        _ if from.is_some() && after.is_some() => PatchStatus::Moved,
        (false, true) => PatchStatus::Added,
        (true, false) => PatchStatus::Deleted,
        _ if change.writes() => PatchStatus::Modified,
        _ => PatchStatus::Unchanged,
    };
    let old_name = from.as_deref().unwrap_or(&change.target.resource);
    let diff = diff(
        old_name,
        &change.target.resource,
        before,
        after,
        change.windows.as_deref(),
    );
    PatchedFile {
        file: change.target.resource.clone(),
        target: change.target.path.to_string_lossy().into_owned(),
        status,
        from,
        additions: diff.additions,
        deletions: diff.deletions,
        already_applied: change.already_applied,
        patch: Some(diff.patch),
    }
}

/// The text the model reads after a successful patch.
pub(crate) fn model_text(output: &ApplyPatchOutput) -> String {
    let changed: Vec<&PatchedFile> = output
        .files
        .iter()
        .filter(|f| f.status != PatchStatus::Unchanged)
        .collect();
    let unchanged: Vec<&PatchedFile> = output
        .files
        .iter()
        .filter(|f| f.status == PatchStatus::Unchanged)
        .collect();
    let mut text = String::new();
    if changed.is_empty() {
        text.push_str("Success. No files were changed: the patch is already applied.\n");
    } else {
        text.push_str("Success. Updated the following files:\n");
        for file in &changed {
            let letter = match file.status {
                PatchStatus::Added => 'A',
                PatchStatus::Deleted => 'D',
                _ => 'M',
            };
            let _ = write!(text, "{letter} {}", file.file);
            if file.already_applied > 0 {
                let _ = write!(text, " ({} already applied)", changes(file.already_applied));
            }
            text.push('\n');
        }
    }
    if !unchanged.is_empty() {
        if !changed.is_empty() {
            text.push_str("Left unchanged:\n");
        }
        for file in &unchanged {
            let why = if file.already_applied > 0 {
                format!("{} already applied", changes(file.already_applied))
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
