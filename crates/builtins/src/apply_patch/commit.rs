//! Committing a prepared patch all or nothing (step 4 of a call, see the module docs).
//!
//! Every file is written atomically through [`FileMutation`] (temp file and rename), after
//! checking under its lock that the bytes are still the ones the patch was prepared against.
//! Writes and creations go first (side by side), removals after all of them succeeded, so an
//! interrupted run never loses data a later step needed. When a step fails, every step already done is undone in reverse order
//! from the before-images kept in memory (created files and the directories made for them are
//! removed, rewritten files get their old bytes, removed files come back with their mode). The
//! whole commit runs in its own task: dropping the caller's future does not stop it halfway.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::plan::FileChange;
use crate::beneath::Directory;
use crate::error::Error;
use crate::mutation::{FileMutation, Held};

/// Files written at the same time; each step holds a blocking thread while it syncs.
const PARALLEL_STEPS: usize = 16;

/// Why a commit failed, and whether the tree was restored.
#[derive(Debug)]
pub(crate) struct CommitFailure {
    /// The file whose step failed.
    pub(crate) resource: String,
    pub(crate) reason: String,
    /// Files changed before the failure (all restored unless listed in `not_restored`).
    pub(crate) changed: Vec<String>,
    /// Files whose restoration failed, with why: they keep the patched state.
    pub(crate) not_restored: Vec<(String, String)>,
}

impl CommitFailure {
    /// The model-facing text: what failed and exactly what state the tree is in.
    pub(crate) fn message(&self) -> String {
        let head = format!(
            "Unable to apply patch at {}: {}.",
            self.resource, self.reason
        );
        if self.changed.is_empty() {
            return format!("{head} No files were changed.");
        }
        if self.not_restored.is_empty() {
            return format!(
                "{head} The files already changed were restored ({}); no files were changed.",
                self.changed.join(", ")
            );
        }
        let failed: Vec<String> = self
            .not_restored
            .iter()
            .map(|(file, why)| format!("{file} ({why})"))
            .collect();
        format!(
            "{head} Restoring the files already changed failed for: {}. They keep the patch's content; every other file is as before.",
            failed.join(", ")
        )
    }
}

/// What to do to undo one step.
#[derive(Debug)]
enum Undo {
    /// A created file (and the directories created for it, deepest first).
    Created {
        path: PathBuf,
        written: Vec<u8>,
        directories: Vec<PathBuf>,
    },
    Rewritten {
        path: PathBuf,
        written: Vec<u8>,
        before: Vec<u8>,
    },
    Removed {
        path: PathBuf,
        before: Vec<u8>,
        mode: u32,
    },
}

/// Commits `changes`, or leaves the tree as it was. `held` are the locks of every file the
/// patch names, taken before they were read: no other writer of this process gets in between.
pub(crate) async fn commit(
    mutation: &FileMutation,
    held: &Arc<Held>,
    changes: Vec<FileChange>,
) -> Result<(), CommitFailure> {
    let files = Files {
        mutation: mutation.clone(),
        held: Arc::clone(held),
    };
    let task = tokio::spawn(async move { run(&files, changes).await });
    match task.await {
        Ok(result) => result,
        Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
        Err(join) => Err(CommitFailure {
            resource: "the patch".to_owned(),
            reason: format!("the commit task was stopped: {join}"),
            changed: Vec::new(),
            not_restored: Vec::new(),
        }),
    }
}

async fn run(mutation: &Files, changes: Vec<FileChange>) -> Result<(), CommitFailure> {
    let (removals, writes): (Vec<FileChange>, Vec<FileChange>) = changes
        .into_iter()
        .filter(FileChange::writes)
        .partition(|change| change.after.is_none());
    let mut done: Vec<(String, Undo)> = Vec::new();
    for phase in [writes, removals] {
        let mut failure = None;
        for (resource, result) in concurrently(mutation, phase).await {
            match result {
                Ok(undo) => done.push((resource, undo)),
                Err(err) if failure.is_none() => failure = Some((resource, err)),
                Err(_) => {}
            }
        }
        if let Some((resource, err)) = failure {
            let changed = done.iter().map(|(r, _)| r.clone()).collect();
            let not_restored = rollback(mutation, done).await;
            return Err(CommitFailure {
                resource,
                reason: reason(&err),
                changed,
                not_restored,
            });
        }
    }
    Ok(())
}

/// Runs the steps of one phase side by side (each file's write waits on its own sync, so this
/// is where a many-file patch spends its time) and returns their results in patch order.
async fn concurrently(
    mutation: &Files,
    phase: Vec<FileChange>,
) -> Vec<(String, Result<Undo, Error>)> {
    let limit = Arc::new(Semaphore::new(PARALLEL_STEPS));
    let mut tasks = JoinSet::new();
    let count = phase.len();
    for (index, change) in phase.into_iter().enumerate() {
        let (mutation, limit) = (mutation.clone(), Arc::clone(&limit));
        tasks.spawn(async move {
            let _permit = limit.acquire_owned().await;
            let resource = change.target.resource.clone();
            (index, resource, step(&mutation, change).await)
        });
    }
    let mut results: Vec<Option<(String, Result<Undo, Error>)>> =
        (0..count).map(|_| None).collect();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((index, resource, result)) => results[index] = Some((resource, result)),
            Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
            // Tasks of this set are never aborted; a cancelled runtime ends everything anyway.
            Err(_) => {}
        }
    }
    results.into_iter().flatten().collect()
}

/// One file's commit, checked against the bytes the patch was prepared from.
async fn step(mutation: &Files, change: FileChange) -> Result<Undo, Error> {
    let path = change.target.path.clone();
    match (change.before, change.after) {
        (None, Some(after)) => {
            let directories = missing_directories(&path);
            mutation
                .transact(&path, move |tx| {
                    tx.create(&after)?;
                    Ok::<_, Error>(Undo::Created {
                        path: tx.target().to_path_buf(),
                        written: after,
                        directories,
                    })
                })
                .await
        }
        (Some(before), Some(after)) => {
            mutation
                .transact(&path, move |tx| {
                    tx.write_if(&|current| current == before.as_slice(), &after)?;
                    Ok::<_, Error>(Undo::Rewritten {
                        path: tx.target().to_path_buf(),
                        written: after,
                        before,
                    })
                })
                .await
        }
        (Some(before), None) => {
            mutation
                .transact(&path, move |tx| {
                    let mode = tx.mode()?.unwrap_or(0o644);
                    tx.remove_if(&|current| current == before.as_slice())?;
                    Ok::<_, Error>(Undo::Removed {
                        path: tx.target().to_path_buf(),
                        before,
                        mode,
                    })
                })
                .await
        }
        (None, None) => Err(Error::io(
            "commit",
            path,
            std::io::Error::other("nothing to write"),
        )),
    }
}

/// The file mutation service with the patch's held locks.
#[derive(Debug, Clone)]
struct Files {
    mutation: FileMutation,
    held: Arc<Held>,
}

impl Files {
    async fn transact<T, F>(&self, path: &Path, work: F) -> Result<T, Error>
    where
        F: FnOnce(&mut crate::mutation::Transaction) -> Result<T, Error> + Send + 'static,
        T: Send + 'static,
    {
        self.mutation.transact_held(&self.held, path, work).await
    }
}

/// Removes the directory at the canonical `path` if it is empty, through its opened parent.
fn remove_empty_dir(path: &Path) -> std::io::Result<()> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::ErrorKind::InvalidInput.into());
    };
    Directory::open(parent)?.remove_dir(name)
}

/// The ancestors of `path` that do not exist yet, deepest first.
fn missing_directories(path: &Path) -> Vec<PathBuf> {
    path.ancestors()
        .skip(1)
        .take_while(|dir| fs::symlink_metadata(dir).is_err())
        .map(Path::to_path_buf)
        .collect()
}

/// Undoes `done` in reverse; returns the files that could not be restored.
async fn rollback(mutation: &Files, done: Vec<(String, Undo)>) -> Vec<(String, String)> {
    let mut failed = Vec::new();
    for (resource, undo) in done.into_iter().rev() {
        if let Err(err) = undo_one(mutation, undo).await {
            failed.push((resource, reason(&err)));
        }
    }
    failed.reverse();
    failed
}

async fn undo_one(mutation: &Files, undo: Undo) -> Result<(), Error> {
    match undo {
        Undo::Created {
            path,
            written,
            directories,
        } => {
            mutation
                .transact(&path, move |tx| {
                    tx.remove_if(&|current| current == written.as_slice())?;
                    Ok::<_, Error>(())
                })
                .await?;
            // Only directories this patch made and that are empty again; a non-empty one holds
            // something another writer put there meanwhile and stays.
            for directory in directories {
                if remove_empty_dir(&directory).is_err() {
                    break;
                }
            }
            Ok(())
        }
        Undo::Rewritten {
            path,
            written,
            before,
        } => {
            mutation
                .transact(&path, move |tx| {
                    tx.write_if(&|current| current == written.as_slice(), &before)?;
                    Ok::<_, Error>(())
                })
                .await
        }
        Undo::Removed { path, before, mode } => {
            mutation
                .transact(&path, move |tx| {
                    tx.restore(&before, mode)?;
                    Ok::<_, Error>(())
                })
                .await
        }
    }
}

/// A failure reason without the path (the message names the file already).
fn reason(err: &Error) -> String {
    match err {
        Error::StaleContent { .. } => {
            "the file changed on disk after the patch was prepared; read it again and retry"
                .to_owned()
        }
        Error::TargetExists { .. } => "the file was created by someone else meanwhile".to_owned(),
        Error::ReadOnly { .. } => "the file is read-only".to_owned(),
        Error::IsDirectory { .. } => "it is a directory".to_owned(),
        Error::NotAFile { .. } => "it is not a regular file".to_owned(),
        Error::Io { op, source, .. } => format!("cannot {op} it: {source}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
