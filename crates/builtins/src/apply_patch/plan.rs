//! Preparing a whole patch in memory before anything is written (reference PA8; step 3 of a call).
//!
//! The hunks run against a virtual view of the files they name, so a later hunk sees what an
//! earlier one did (an update after an add, a move after an update). Nothing here touches the
//! filesystem: the caller reads every named file first (after approval) and commits the
//! resulting [`FileChange`]s.

use std::collections::HashMap;
use std::path::PathBuf;

use super::derive::derive;
use super::parse::{Hunk, HunkKind};
use super::text::FileText;
use crate::diff::Window;
use crate::location::ExternalDirectory;
use crate::steps::Steps;

/// A path a hunk names, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// As permission sees it and the model text shows it.
    pub(crate) resource: String,
    /// The canonical path.
    pub(crate) path: PathBuf,
    /// The `external_directory` permission a path outside the Location needs.
    pub(crate) external: Option<ExternalDirectory>,
}

/// A hunk with its paths resolved.
#[derive(Debug, Clone)]
pub(crate) struct Resolved<'p> {
    pub(crate) hunk: &'p Hunk,
    pub(crate) target: Target,
    pub(crate) move_to: Option<Target>,
}

/// What is at a path before the patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Disk {
    Missing,
    File(Vec<u8>),
    Directory,
    /// A socket, device or FIFO.
    Other,
}

/// One file's net change, in the order the patch first names the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileChange {
    pub(crate) target: Target,
    /// The bytes before the patch (`None`: no file).
    pub(crate) before: Option<Vec<u8>>,
    /// The bytes after the patch (`None`: no file).
    pub(crate) after: Option<Vec<u8>>,
    /// The file was moved here from this one (whose own entry is then a removal).
    pub(crate) moved_from: Option<Target>,
    /// Hunks or chunks that changed this file.
    pub(crate) applied: usize,
    /// Hunks or chunks whose result was already in place.
    pub(crate) already_applied: usize,
    /// Where the lines may differ, when one update hunk made the whole change.
    pub(crate) windows: Option<Vec<Window>>,
}

impl FileChange {
    /// True when the bytes on disk must change.
    pub(crate) fn writes(&self) -> bool {
        self.before != self.after
    }
}

#[derive(Debug)]
struct Entry {
    target: Target,
    before: Disk,
    /// What is there now, once a hunk changed it (`None`: as before; not a copy of it, which for
    /// a large file would be a second copy of its bytes).
    now: Option<Disk>,
    moved_from: Option<usize>,
    applied: usize,
    already_applied: usize,
    /// Hunks that named this path so far.
    hunks: usize,
    windows: Option<Vec<Window>>,
}

/// Applies `hunks` to the files in `disk` (every path the hunks name must be there; their
/// bytes move into the changes, uncopied), counting each chunk applied into `steps`. The error
/// is the model-facing reason, without the "nothing changed" note.
pub(crate) fn plan(
    hunks: &[Resolved<'_>],
    disk: HashMap<PathBuf, Disk>,
    steps: Option<&Steps>,
) -> Result<Vec<FileChange>, String> {
    let mut files = Files {
        entries: Vec::new(),
        index: HashMap::new(),
        disk,
    };
    for resolved in hunks {
        files.apply(resolved)?;
        if let Some(steps) = steps {
            steps.advance(chunks(resolved.hunk), 0);
        }
    }
    if let Some(steps) = steps {
        steps.finish();
    }
    Ok(files.finish())
}

/// The chunks of `hunk` as progress counts them: an added, deleted or only moved file is one.
pub(crate) fn chunks(hunk: &Hunk) -> u64 {
    match &hunk.kind {
        HunkKind::Update { chunks, .. } if !chunks.is_empty() => chunks.len() as u64,
        _ => 1,
    }
}

struct Files {
    entries: Vec<Entry>,
    index: HashMap<PathBuf, usize>,
    disk: HashMap<PathBuf, Disk>,
}

fn unable(resource: &str, why: &str) -> String {
    format!("Unable to apply patch at {resource}: {why}")
}

impl Entry {
    fn now(&self) -> &Disk {
        self.now.as_ref().unwrap_or(&self.before)
    }
}

impl Files {
    fn entry(&mut self, target: &Target) -> usize {
        if let Some(&i) = self.index.get(&target.path) {
            return i;
        }
        // A path the caller did not read is treated as missing; the caller reads every one.
        let before = self.disk.remove(&target.path).unwrap_or(Disk::Missing);
        self.entries.push(Entry {
            target: target.clone(),
            now: None,
            before,
            moved_from: None,
            applied: 0,
            already_applied: 0,
            hunks: 0,
            windows: None,
        });
        self.index
            .insert(target.path.clone(), self.entries.len() - 1);
        self.entries.len() - 1
    }

    fn apply(&mut self, resolved: &Resolved<'_>) -> Result<(), String> {
        let resource = resolved.target.resource.as_str();
        let i = self.entry(&resolved.target);
        let first = self.entries[i].hunks == 0;
        self.entries[i].hunks += 1;
        // Known windows describe the change only while one hunk made all of it.
        self.entries[i].windows = None;
        match &resolved.hunk.kind {
            HunkKind::Add { lines, .. } => {
                let bytes = added_bytes(lines);
                let entry = &mut self.entries[i];
                match entry.now() {
                    Disk::Missing => {
                        entry.now = Some(Disk::File(bytes));
                        entry.applied += 1;
                    }
                    Disk::File(existing) if *existing == bytes => entry.already_applied += 1,
                    Disk::File(_) => {
                        return Err(unable(
                            resource,
                            "the file already exists. Add File never replaces a file; use Update File to change it",
                        ));
                    }
                    other => return Err(unable(resource, not_a_file(other))),
                }
            }
            HunkKind::Delete { .. } => {
                let entry = &mut self.entries[i];
                match entry.now() {
                    Disk::File(_) => {
                        entry.now = Some(Disk::Missing);
                        entry.applied += 1;
                    }
                    Disk::Missing => return Err(unable(resource, "the file does not exist")),
                    Disk::Directory => {
                        return Err(unable(
                            resource,
                            "it is a directory; Delete File removes files only",
                        ));
                    }
                    Disk::Other => return Err(unable(resource, not_a_file(&Disk::Other))),
                }
            }
            HunkKind::Update { chunks, .. } => {
                let Disk::File(bytes) = self.entries[i].now() else {
                    let why = match self.entries[i].now() {
                        Disk::Missing => "the file to update does not exist",
                        other => not_a_file(other),
                    };
                    return Err(unable(resource, why));
                };
                let text = FileText::decode(bytes).map_err(|bad| {
                    unable(
                        resource,
                        &format!(
                            "the file is not valid UTF-8 (first invalid byte at offset {}); apply_patch edits UTF-8 text only",
                            bad.offset
                        ),
                    )
                })?;
                let derived = derive(resource, &text, chunks)?;
                let after = Disk::File(derived.bytes.unwrap_or_else(|| bytes.clone()));
                let moved = resolved
                    .move_to
                    .as_ref()
                    .filter(|to| to.path != resolved.target.path);
                let entry = &mut self.entries[i];
                entry.applied += derived.applied;
                entry.already_applied += derived.already_applied;
                let windows = first.then_some(derived.windows);
                match moved {
                    None => {
                        entry.now = Some(after);
                        entry.windows = windows;
                    }
                    Some(to) => {
                        let dest = self.entry(to);
                        let dest_first = self.entries[dest].hunks == 0;
                        self.entries[dest].hunks += 1;
                        if *self.entries[dest].now() != Disk::Missing {
                            return Err(unable(
                                resource,
                                &format!(
                                    "the move destination {} already exists; Move to never replaces a file",
                                    to.resource
                                ),
                            ));
                        }
                        self.entries[i].now = Some(Disk::Missing);
                        let dest = &mut self.entries[dest];
                        dest.now = Some(after);
                        dest.moved_from = Some(i);
                        dest.applied += 1;
                        dest.windows = windows.filter(|_| dest_first);
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> Vec<FileChange> {
        let bytes = |disk: Disk| match disk {
            Disk::File(bytes) => Some(bytes),
            _ => None,
        };
        let targets: Vec<Target> = self.entries.iter().map(|e| e.target.clone()).collect();
        self.entries
            .into_iter()
            .filter(|e| {
                e.applied + e.already_applied > 0 || e.now.as_ref().is_some_and(|n| *n != e.before)
            })
            .map(|e| FileChange {
                moved_from: e.moved_from.map(|m| targets[m].clone()),
                target: e.target,
                after: bytes(e.now.unwrap_or_else(|| e.before.clone())),
                before: bytes(e.before),
                applied: e.applied,
                already_applied: e.already_applied,
                windows: e.windows,
            })
            .collect()
    }
}

fn not_a_file(disk: &Disk) -> &'static str {
    match disk {
        Disk::Directory => "it is a directory, not a file",
        _ => "it is not a regular file",
    }
}

/// An added file: every line ends with a line break; no lines is an empty file.
fn added_bytes(lines: &[String]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for line in lines {
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
    }
    bytes
}

#[cfg(test)]
mod tests;
