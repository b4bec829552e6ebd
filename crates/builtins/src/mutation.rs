//! Safe file mutation (reference FM1–FM5): atomic, serialized per path, uninterruptible.
//!
//! Invariants:
//! - Every write is atomic: a temporary file in the target's own directory is written, synced
//!   and renamed over the target, so a reader (or a crash) sees the old or the new bytes, never a
//!   mix. The target's permission bits are kept; a new file gets `0666` minus the umask.
//! - A symlinked target is written through to its real file; the link is never replaced.
//! - Operations on one canonical path are serialized within the process (and, best effort,
//!   across processes by an advisory lock on the parent directory), and run on a blocking thread
//!   that finishes even when the awaiting future is dropped.
//! - Staleness is decided by content ([`ContentHash`] of the bytes), never by timestamps.

use std::collections::HashMap;
use std::fs::{self, File, Permissions};
use std::hash::{DefaultHasher, Hasher};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use crate::blocking::blocking;
use crate::error::Error;
use crate::location::{EntryKind, real_path};
use crate::text;

pub use crate::text::BOM;

/// A content fingerprint: length plus a 64-bit hash of the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentHash {
    len: u64,
    hash: u64,
}

impl ContentHash {
    /// The fingerprint of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        let mut hasher = DefaultHasher::new();
        hasher.write(bytes);
        Self {
            len: bytes.len() as u64,
            hash: hasher.finish(),
        }
    }
}

/// What a mutation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// The file was written.
    Write,
    /// The file was removed.
    Remove,
}

/// The outcome of one mutation (FM1, FM2, FM4, FM5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// What was done.
    pub operation: Operation,
    /// The real file that was changed.
    pub target: PathBuf,
    /// Whether the file existed before.
    pub existed: bool,
}

/// The outcome of [`FileMutation::write_text_preserving_bom`] (FM3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextWritten {
    /// The mutation itself.
    pub written: Written,
    /// The previous text without BOM (`""` for a new file; lossy if it was not UTF-8).
    pub before: String,
    /// The new text without BOM.
    pub after: String,
}

/// The file mutation service of one process: a per-path lock table shared by its clones.
#[derive(Debug, Clone, Default)]
pub struct FileMutation {
    locks: Arc<Mutex<HashMap<PathBuf, Weak<tokio::sync::Mutex<()>>>>>,
}

impl FileMutation {
    /// A service with an empty lock table. Share one per process (clones share the table).
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `work` with exclusive access to `target` on a blocking thread and returns its
    /// result. Once the lock is held the work runs to completion, even if this future is
    /// dropped. Needs a tokio runtime.
    pub async fn transact<T, E, F>(&self, target: &Path, work: F) -> Result<T, E>
    where
        F: FnOnce(&mut Transaction) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<Error> + Send + 'static,
    {
        let real = real_path(target).map_err(Error::from)?.canonical;
        let lock = self.lock_for(&real);
        let guard = lock.lock_owned().await;
        let job = blocking(move || {
            let _guard = guard;
            let mut transaction = Transaction::open(real)?;
            work(&mut transaction)
        });
        match job.await {
            Ok(result) => result,
            Err(stopped) => {
                Err(Error::io("finish a write to", target, io::Error::other(stopped)).into())
            }
        }
    }

    /// Creates `target` with `bytes`; fails with [`Error::TargetExists`] if it exists (FM1).
    pub async fn create(&self, target: &Path, bytes: Vec<u8>) -> Result<Written, Error> {
        self.transact(target, move |tx| tx.create(&bytes)).await
    }

    /// Writes `bytes` to `target`, creating parent directories (FM2).
    pub async fn write(&self, target: &Path, bytes: Vec<u8>) -> Result<Written, Error> {
        self.transact(target, move |tx| tx.write(&bytes)).await
    }

    /// Writes `text` keeping exactly one UTF-8 BOM if the old file or `text` had one (FM3).
    pub async fn write_text_preserving_bom(
        &self,
        target: &Path,
        text: String,
    ) -> Result<TextWritten, Error> {
        self.transact(target, move |tx| {
            let old = tx.read()?;
            let stripped = text.trim_start_matches('\u{FEFF}');
            let old_bom = old.as_deref().is_some_and(|old| old.starts_with(BOM));
            let bom = old_bom || stripped.len() != text.len();
            let mut bytes = Vec::with_capacity(stripped.len() + BOM.len());
            if bom {
                bytes.extend_from_slice(BOM);
            }
            bytes.extend_from_slice(stripped.as_bytes());
            let written = tx.write(&bytes)?;
            let before = match &old {
                Some(old) => text::lossy(old).into_owned(),
                None => String::new(),
            };
            Ok(TextWritten {
                written,
                before,
                after: stripped.to_owned(),
            })
        })
        .await
    }

    /// Writes `bytes` only if the file's current content still hashes to `expected` (FM4).
    pub async fn write_if_unchanged(
        &self,
        target: &Path,
        expected: ContentHash,
        bytes: Vec<u8>,
    ) -> Result<Written, Error> {
        self.transact(target, move |tx| tx.write_if_unchanged(expected, &bytes))
            .await
    }

    /// Removes `target`; a missing file is `existed: false`, not an error (FM5).
    pub async fn remove(&self, target: &Path) -> Result<Written, Error> {
        self.transact(target, Transaction::remove).await
    }

    /// Reads `target` in turn with the writers (`None` when it does not exist).
    pub async fn read(&self, target: &Path) -> Result<Option<Vec<u8>>, Error> {
        self.transact(target, |tx| tx.read()).await
    }

    fn lock_for(&self, path: &Path) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(lock) = locks.get(path).and_then(Weak::upgrade) {
            return lock;
        }
        // Drop entries no one holds any more, so the table stays as small as the live set.
        locks.retain(|_, lock| lock.strong_count() > 0);
        let lock = Arc::new(tokio::sync::Mutex::new(()));
        locks.insert(path.to_path_buf(), Arc::downgrade(&lock));
        lock
    }
}

/// Exclusive access to one real file for the duration of [`FileMutation::transact`].
#[derive(Debug)]
pub struct Transaction {
    target: PathBuf,
    // Held for the advisory cross-process lock; released when the transaction ends.
    _directory_lock: Option<File>,
}

impl Transaction {
    fn open(target: PathBuf) -> Result<Self, Error> {
        let directory_lock = lock_directory(&target);
        Ok(Self {
            target,
            _directory_lock: directory_lock,
        })
    }

    /// The real (canonical) file this transaction changes.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The current bytes, or `None` when there is no file.
    pub fn read(&self) -> Result<Option<Vec<u8>>, Error> {
        match self.kind()? {
            None => Ok(None),
            Some(EntryKind::File) => fs::read(&self.target)
                .map(Some)
                .map_err(|err| Error::io("read", &self.target, err)),
            Some(EntryKind::Directory) => Err(Error::IsDirectory {
                path: self.target.clone(),
            }),
            Some(EntryKind::Other) => Err(Error::NotAFile {
                path: self.target.clone(),
            }),
        }
    }

    /// Atomically replaces the file with `bytes` (creating it and its parents if needed).
    pub fn write(&mut self, bytes: &[u8]) -> Result<Written, Error> {
        let existing = self.writable_metadata()?;
        let existed = existing.is_some();
        write_atomic(&self.target, bytes, existing.map(|meta| meta.permissions()))?;
        Ok(self.written(Operation::Write, existed))
    }

    /// Like [`Transaction::write`], but fails with [`Error::TargetExists`] if the file exists.
    pub fn create(&mut self, bytes: &[u8]) -> Result<Written, Error> {
        if self.kind()?.is_some() {
            return Err(Error::TargetExists {
                path: self.target.clone(),
            });
        }
        self.write(bytes)
    }

    /// Writes only if the current bytes still hash to `expected`; else [`Error::StaleContent`].
    pub fn write_if_unchanged(
        &mut self,
        expected: ContentHash,
        bytes: &[u8],
    ) -> Result<Written, Error> {
        let current = self.read()?.ok_or_else(|| Error::StaleContent {
            path: self.target.clone(),
        })?;
        if ContentHash::of(&current) != expected {
            return Err(Error::StaleContent {
                path: self.target.clone(),
            });
        }
        self.write(bytes)
    }

    /// Removes the file; `existed: false` when there was none.
    pub fn remove(&mut self) -> Result<Written, Error> {
        match self.kind()? {
            None => Ok(self.written(Operation::Remove, false)),
            Some(EntryKind::Directory) => Err(Error::IsDirectory {
                path: self.target.clone(),
            }),
            Some(_) => {
                fs::remove_file(&self.target)
                    .map_err(|err| Error::io("remove", &self.target, err))?;
                sync_directory(&self.target);
                Ok(self.written(Operation::Remove, true))
            }
        }
    }

    fn written(&self, operation: Operation, existed: bool) -> Written {
        Written {
            operation,
            target: self.target.clone(),
            existed,
        }
    }

    fn kind(&self) -> Result<Option<EntryKind>, Error> {
        match fs::metadata(&self.target) {
            Ok(meta) if meta.is_dir() => Ok(Some(EntryKind::Directory)),
            Ok(meta) if meta.is_file() => Ok(Some(EntryKind::File)),
            Ok(_) => Ok(Some(EntryKind::Other)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(Error::io("stat", &self.target, err)),
        }
    }

    /// The metadata of an existing regular, writable target; `None` when it does not exist.
    fn writable_metadata(&self) -> Result<Option<fs::Metadata>, Error> {
        match self.kind()? {
            None => Ok(None),
            Some(EntryKind::Directory) => Err(Error::IsDirectory {
                path: self.target.clone(),
            }),
            Some(EntryKind::Other) => Err(Error::NotAFile {
                path: self.target.clone(),
            }),
            Some(EntryKind::File) => {
                let meta = fs::metadata(&self.target)
                    .map_err(|err| Error::io("stat", &self.target, err))?;
                if meta.permissions().mode() & 0o222 == 0 {
                    return Err(Error::ReadOnly {
                        path: self.target.clone(),
                    });
                }
                Ok(Some(meta))
            }
        }
    }
}

/// Temp file in the target's directory -> write -> keep the mode -> fsync -> rename -> fsync dir.
fn write_atomic(target: &Path, bytes: &[u8], keep: Option<Permissions>) -> Result<(), Error> {
    let directory = target.parent().unwrap_or(Path::new("/"));
    fs::create_dir_all(directory).map_err(|err| Error::io("create directory", directory, err))?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(".tackle-").suffix(".tmp");
    if keep.is_none() {
        // The mode given to open(2) is reduced by the umask, as for any newly created file.
        builder.permissions(Permissions::from_mode(0o666));
    }
    let mut temp = builder
        .tempfile_in(directory)
        .map_err(|err| Error::io("create a temporary file in", directory, err))?;
    temp.write_all(bytes)
        .map_err(|err| Error::io("write", temp.path().to_path_buf(), err))?;
    if let Some(permissions) = keep {
        temp.as_file()
            .set_permissions(permissions)
            .map_err(|err| Error::io("set permissions of", target, err))?;
    }
    temp.as_file()
        .sync_all()
        .map_err(|err| Error::io("sync", target, err))?;
    temp.persist(target)
        .map_err(|err| Error::io("rename onto", target, err.error))?;
    sync_directory(target);
    Ok(())
}

/// Makes the rename durable; best effort (some filesystems refuse to sync a directory).
fn sync_directory(target: &Path) {
    if let Some(directory) = target.parent()
        && let Ok(handle) = File::open(directory)
    {
        let _ = handle.sync_all();
    }
}

/// An advisory lock on the nearest existing ancestor directory, so that another process using
/// this crate waits its turn. Best effort: where it cannot be taken, in-process locking remains.
fn lock_directory(target: &Path) -> Option<File> {
    let directory = target.ancestors().skip(1).find(|dir| dir.is_dir())?;
    let handle = File::open(directory).ok()?;
    handle.lock().ok()?;
    Some(handle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_tells_contents_apart() {
        assert_eq!(ContentHash::of(b"abc"), ContentHash::of(b"abc"));
        assert_ne!(ContentHash::of(b"abc"), ContentHash::of(b"abd"));
        assert_ne!(ContentHash::of(b""), ContentHash::of(b"\0"));
    }
}
