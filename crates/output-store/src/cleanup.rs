//! Retention, quota and removal of managed outputs.
//!
//! Invariants: only regular files whose names the store itself creates (`tool_<id>`) are ever
//! considered; anything else in the directory (other files, directories, symbolic links, even
//! links named like managed files) is left alone, and nothing is followed. A file that cannot
//! be removed stays and is counted in the report; a file that vanished meanwhile is not.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::StoreError;
use crate::reference::OutputRef;
use crate::spill::dir_exists;

/// What a cleanup did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CleanupReport {
    /// Managed outputs removed because they were older than the retention.
    pub expired: usize,
    /// Managed outputs removed, oldest first, to bring the directory within its quota.
    pub evicted: usize,
    /// Managed outputs removed because their session was removed.
    pub removed: usize,
    /// Bytes freed by the removals.
    pub freed_bytes: u64,
    /// Managed outputs left in place.
    pub kept: usize,
    /// Their total size.
    pub kept_bytes: u64,
    /// Managed outputs that could not be removed (they are also counted in `kept`).
    pub failed: usize,
}

#[derive(Debug)]
struct Entry {
    path: PathBuf,
    reference: OutputRef,
    modified: SystemTime,
    len: u64,
}

/// The managed files in `dir` (empty when it does not exist).
fn managed_files(dir: &Path) -> Result<Vec<Entry>, StoreError> {
    if !dir_exists(dir)? {
        return Ok(Vec::new());
    }
    let listing = fs::read_dir(dir).map_err(|source| StoreError::Cleanup {
        path: dir.to_owned(),
        source,
    })?;
    let mut entries = Vec::new();
    for entry in listing {
        // An entry that disappears or cannot be inspected is not ours to judge.
        let Ok(entry) = entry else { continue };
        let Some(reference) = entry
            .file_name()
            .to_str()
            .and_then(OutputRef::from_file_name)
        else {
            continue;
        };
        // Like `symlink_metadata`, it follows no link; looked up in the open directory, so a
        // sweep of thousands of outputs does not resolve the whole path of each.
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let path = entry.path();
        if !meta.file_type().is_file() {
            continue;
        }
        entries.push(Entry {
            path,
            reference,
            // A missing modification time counts as the epoch, as in the reference.
            modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            len: meta.len(),
        });
    }
    Ok(entries)
}

enum Removal {
    Removed,
    Gone,
    Failed,
}

fn remove(entry: &Entry) -> Removal {
    match fs::remove_file(&entry.path) {
        Ok(()) => Removal::Removed,
        Err(err) if err.kind() == io::ErrorKind::NotFound => Removal::Gone,
        Err(_) => Removal::Failed,
    }
}

/// Removes outputs older than `retention` (relative to `now`), then evicts the oldest until the
/// rest fits in `quota`. `protect` (the output just written) is never evicted.
pub(crate) fn sweep(
    dir: &Path,
    now: SystemTime,
    retention: Duration,
    quota: u64,
    protect: Option<&OutputRef>,
) -> Result<CleanupReport, StoreError> {
    let mut report = CleanupReport::default();
    let cutoff = now.checked_sub(retention);
    let mut kept = Vec::new();
    for entry in managed_files(dir)? {
        let expired = cutoff.is_some_and(|cutoff| entry.modified < cutoff)
            && protect != Some(&entry.reference);
        if !expired {
            kept.push(entry);
            continue;
        }
        match remove(&entry) {
            Removal::Removed => {
                report.expired += 1;
                report.freed_bytes += entry.len;
            }
            Removal::Gone => {}
            Removal::Failed => {
                report.failed += 1;
                kept.push(entry);
            }
        }
    }
    let mut total: u64 = kept.iter().map(|entry| entry.len).sum();
    if total > quota {
        kept.sort_by(|a, b| a.modified.cmp(&b.modified).then(a.path.cmp(&b.path)));
        let mut survivors = Vec::with_capacity(kept.len());
        for entry in kept {
            if total <= quota || protect == Some(&entry.reference) {
                survivors.push(entry);
                continue;
            }
            match remove(&entry) {
                Removal::Removed => {
                    report.evicted += 1;
                    report.freed_bytes += entry.len;
                    total -= entry.len;
                }
                Removal::Gone => total -= entry.len,
                Removal::Failed => {
                    report.failed += 1;
                    survivors.push(entry);
                }
            }
        }
        kept = survivors;
    }
    report.kept = kept.len();
    report.kept_bytes = kept.iter().map(|entry| entry.len).sum();
    Ok(report)
}

/// Removes every output stored for `session_id`.
pub(crate) fn remove_session(dir: &Path, session_id: &str) -> Result<CleanupReport, StoreError> {
    let mut report = CleanupReport::default();
    for entry in managed_files(dir)? {
        if !entry.reference.belongs_to(session_id) {
            report.kept += 1;
            report.kept_bytes += entry.len;
            continue;
        }
        match remove(&entry) {
            Removal::Removed => {
                report.removed += 1;
                report.freed_bytes += entry.len;
            }
            Removal::Gone => {}
            Removal::Failed => {
                report.failed += 1;
                report.kept += 1;
                report.kept_bytes += entry.len;
            }
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::Layout;
    use std::fs::File;

    fn managed(dir: &Path, session: &str, bytes: usize, age: Duration) -> OutputRef {
        let reference = OutputRef::generate(session, Layout::Full).unwrap();
        let file = File::create(dir.join(reference.file_name())).unwrap();
        file.set_len(bytes as u64).unwrap();
        file.set_modified(SystemTime::now() - age).unwrap();
        reference
    }

    const DAY: Duration = Duration::from_secs(86_400);

    #[test]
    fn retention_then_quota_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let old = managed(dir.path(), "s", 10, 8 * DAY);
        let a = managed(dir.path(), "s", 100, 3 * DAY);
        let b = managed(dir.path(), "s", 100, 2 * DAY);
        let c = managed(dir.path(), "s", 100, DAY);
        fs::write(dir.path().join("keep.txt"), "x").unwrap();
        let report = sweep(dir.path(), SystemTime::now(), 7 * DAY, 250, None).unwrap();
        let expected = CleanupReport {
            expired: 1,
            evicted: 1,
            freed_bytes: 110,
            kept: 2,
            kept_bytes: 200,
            ..CleanupReport::default()
        };
        assert_eq!(report, expected);
        let exists = |r: &OutputRef| dir.path().join(r.file_name()).exists();
        assert!(!exists(&old) && !exists(&a) && exists(&b) && exists(&c));
        assert!(dir.path().join("keep.txt").exists());
    }

    #[test]
    fn the_protected_output_survives_even_over_quota() {
        let dir = tempfile::tempdir().unwrap();
        let older = managed(dir.path(), "s", 100, DAY);
        let newest = managed(dir.path(), "s", 300, 9 * DAY);
        let report = sweep(dir.path(), SystemTime::now(), 7 * DAY, 200, Some(&newest)).unwrap();
        assert_eq!((report.expired, report.evicted, report.kept), (0, 1, 1));
        assert!(dir.path().join(newest.file_name()).exists());
        assert!(!dir.path().join(older.file_name()).exists());
    }

    #[test]
    fn sessions_are_removed_by_tag() {
        let dir = tempfile::tempdir().unwrap();
        let mine = managed(dir.path(), "ses_a", 5, DAY);
        let theirs = managed(dir.path(), "ses_b", 7, DAY);
        let report = remove_session(dir.path(), "ses_a").unwrap();
        assert_eq!((report.removed, report.freed_bytes), (1, 5));
        assert_eq!((report.kept, report.kept_bytes), (1, 7));
        assert!(!dir.path().join(mine.file_name()).exists());
        assert!(dir.path().join(theirs.file_name()).exists());
    }

    #[test]
    fn missing_directory_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let report = sweep(&dir.path().join("none"), SystemTime::now(), DAY, 0, None).unwrap();
        assert_eq!(report, CleanupReport::default());
    }
}
