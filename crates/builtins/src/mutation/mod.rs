//! Safe file mutation (reference FM1–FM5): atomic, serialized per path, uninterruptible.
//!
//! Invariants:
//! - Every write is atomic: an anonymous temporary file in the target's own directory is
//!   written, synced and moved over the target, so a reader (or a crash) sees the old or the new
//!   bytes, never a mix, and a killed writer leaves no temporary file behind
//!   (`beneath`). The target's permission bits are kept; a new file gets `0666` minus
//!   the umask.
//! - A symlinked target is written through to its real file; the link is never replaced.
//! - The real path is resolved once; from then on it is opened exactly (no symbolic link
//!   followed at any step) and changed through its opened parent directory, so a directory
//!   swapped for a link meanwhile fails the operation instead of redirecting it.
//! - Operations on one canonical path are serialized within the process (and, best effort,
//!   across processes by an advisory lock on the parent directory), and run on a blocking thread
//!   that finishes even when the awaiting future is dropped. A caller may hold the locks of
//!   several files across a read-modify-write (`FileMutation::lock_all`, apply_patch).
//! - Staleness is decided by content ([`ContentHash`] of the bytes), never by timestamps. A
//!   read-modify-write (edit, apply_patch) replaces the file only while it is still the file
//!   its transaction first read, with the bytes it decided on: checked through the opened
//!   parent directory just before the rename, so an append by another process meanwhile fails
//!   the write ([`Error::StaleContent`]) instead of being lost. A write that lands between
//!   that last check and the rename (microseconds) is still lost; see `beneath/unchanged.rs`.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use tokio::sync::OwnedMutexGuard;

use crate::blocking::blocking;
use crate::error::Error;
use crate::location::real_path;
use crate::text;

pub use crate::text::BOM;
pub use transaction::Transaction;

mod transaction;

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
    sweeps: Sweeps,
}

/// How often a write sweeps its directory of dead writers' temp files (per [`FileMutation`]):
/// a sweep lists the directory, so a patch of thousands of files in one directory must not
/// list it for every file.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// When each directory was last swept.
#[derive(Debug, Clone, Default)]
struct Sweeps(Arc<Mutex<HashMap<PathBuf, Instant>>>);

impl Sweeps {
    /// Whether `directory` is due for a sweep; if so, it counts as swept now.
    fn due(&self, directory: &Path) -> bool {
        let mut swept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        if swept
            .get(directory)
            .is_some_and(|at| now.duration_since(*at) < SWEEP_EVERY)
        {
            return false;
        }
        swept.retain(|_, at| now.duration_since(*at) < SWEEP_EVERY);
        swept.insert(directory.to_path_buf(), now);
        true
    }
}

impl FileMutation {
    /// A service with an empty lock table. Share one per process (clones share the table).
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `work` with exclusive access to `target` on a blocking thread and returns its
    /// result. `target` is resolved to its real path once; the transaction then works on
    /// exactly that path. Once the lock is held the work runs to completion, even if this
    /// future is dropped. Needs a tokio runtime.
    pub async fn transact<T, E, F>(&self, target: &Path, work: F) -> Result<T, E>
    where
        F: FnOnce(&mut Transaction) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<Error> + Send + 'static,
    {
        let real = real_path(target).map_err(Error::from)?.canonical;
        self.transact_canonical(&real, work).await
    }

    /// [`FileMutation::transact`] on a path already resolved and approved (a leaf's
    /// `Resolved::canonical`): it is not resolved again, so what is changed is exactly what
    /// permission saw, or nothing.
    pub(crate) async fn transact_canonical<T, E, F>(&self, real: &Path, work: F) -> Result<T, E>
    where
        F: FnOnce(&mut Transaction) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<Error> + Send + 'static,
    {
        let guard = self.lock_for(real).lock_owned().await;
        run(
            real.to_path_buf(),
            Guard::Own(guard),
            self.sweeps.clone(),
            work,
        )
        .await
    }

    #[cfg(feature = "apply-patch")]
    /// Takes the locks of every path in `paths` (canonical), in path order so that two callers
    /// never wait on each other, and keeps them until the returned value is dropped. Meanwhile
    /// [`FileMutation::transact_held`] works on those files without locking again, and every
    /// other transaction on them waits.
    pub(crate) async fn lock_all(&self, paths: impl IntoIterator<Item = PathBuf>) -> Arc<Held> {
        let mut paths: Vec<PathBuf> = paths.into_iter().collect();
        paths.sort();
        paths.dedup();
        let mut guards = Vec::with_capacity(paths.len());
        for path in &paths {
            guards.push(self.lock_for(path).lock_owned().await);
        }
        Arc::new(Held {
            paths,
            _guards: guards,
        })
    }

    #[cfg(feature = "apply-patch")]
    /// [`FileMutation::transact_canonical`] under locks already `held` (if `real` is one of
    /// them; otherwise its own lock is taken as usual).
    pub(crate) async fn transact_held<T, E, F>(
        &self,
        held: &Arc<Held>,
        real: &Path,
        work: F,
    ) -> Result<T, E>
    where
        F: FnOnce(&mut Transaction) -> Result<T, E> + Send + 'static,
        T: Send + 'static,
        E: From<Error> + Send + 'static,
    {
        if held
            .paths
            .binary_search_by(|p| p.as_path().cmp(real))
            .is_ok()
        {
            let guard = Guard::Held(Arc::clone(held));
            run(real.to_path_buf(), guard, self.sweeps.clone(), work).await
        } else {
            self.transact_canonical(real, work).await
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
            let prefix: &[u8] = if bom { BOM } else { b"" };
            let written = tx.write_parts(&[prefix, stripped.as_bytes()])?;
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

/// The in-process locks of several files, held together ([`FileMutation::lock_all`]).
#[cfg(feature = "apply-patch")]
#[derive(Debug)]
pub(crate) struct Held {
    /// Sorted, distinct.
    paths: Vec<PathBuf>,
    _guards: Vec<OwnedMutexGuard<()>>,
}

/// How a transaction holds its file's in-process lock.
#[derive(Debug)]
enum Guard {
    Own(#[expect(dead_code, reason = "held, never read")] OwnedMutexGuard<()>),
    #[cfg(feature = "apply-patch")]
    Held(#[expect(dead_code, reason = "held, never read")] Arc<Held>),
}

/// Runs `work` on a blocking thread with the lock `guard` kept until it finishes.
async fn run<T, E, F>(real: PathBuf, guard: Guard, sweeps: Sweeps, work: F) -> Result<T, E>
where
    F: FnOnce(&mut Transaction) -> Result<T, E> + Send + 'static,
    T: Send + 'static,
    E: From<Error> + Send + 'static,
{
    let shown = real.clone();
    let job = blocking(move || {
        let _guard = guard;
        let mut transaction = Transaction::open(real, sweeps)?;
        work(&mut transaction)
    });
    match job.await {
        Ok(result) => result,
        Err(stopped) => {
            Err(Error::io("finish a write to", shown, io::Error::other(stopped)).into())
        }
    }
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
