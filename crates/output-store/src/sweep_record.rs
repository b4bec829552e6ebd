//! The managed directory's record of its last sweep, shared by every process that spills into
//! it: when the sweep ran and how many bytes the directory has held since.
//!
//! Without it each process would list and inspect the whole directory at its first spill, and a
//! one-shot CLI call (a new process per tool call) would pay for a directory of thousands of
//! outputs on every call. With it, a spill updates one small file; the full sweep runs once per
//! interval across all processes, or when the recorded size passes the quota.
//!
//! The record is an optimisation, never an authority: a missing, unreadable, malformed or
//! future-dated record means "sweep now". It is updated in place under an exclusive lock on
//! the file, so concurrent spills (threads or processes) add their bytes one after another and
//! a reader never sees half a record; a lock held longer than a spill would (a command that
//! took it and sleeps) is not waited for, and the record is left alone. In place rather than
//! by writing a new file and renaming it over the old one: on ext4 each such replacement
//! allocated an inode, freed one and flushed the new file, a few hundred microseconds on every
//! spill. It is opened relative to the directory without following links; a link (symbolic or
//! hard) or anything but a small regular file under its name is removed and replaced, never
//! written through.

use std::fs::{File, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant, SystemTime};

use rustix::fs::{AtFlags, Mode, OFlags};

/// The record's file name; not a managed name, so sweeps and listings never consider it.
const NAME: &str = ".sweep";

/// A record is a few dozen bytes; a larger file is not one.
const MAX_LEN: u64 = 64;

/// The last sweep and the bytes recorded since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SweepRecord {
    /// When the last full sweep ran.
    pub(crate) swept_at: SystemTime,
    /// The bytes the directory held after it, plus every spill recorded since.
    pub(crate) bytes: u64,
}

impl SweepRecord {
    /// How long ago the sweep ran; `None` when it claims to lie in the future.
    pub(crate) fn age(&self, now: SystemTime) -> Option<Duration> {
        now.duration_since(self.swept_at).ok()
    }

    /// Fixed width (both numbers padded to the 20 digits of the largest `u64`), so a rewrite
    /// covers the old record exactly.
    fn render(&self) -> String {
        let secs = self
            .swept_at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |age| age.as_secs());
        format!("{secs:020} {:020}\n", self.bytes)
    }

    fn parse(text: &str) -> Option<Self> {
        let (secs, bytes) = text.trim_end().split_once(' ')?;
        Some(Self {
            swept_at: SystemTime::UNIX_EPOCH
                .checked_add(Duration::from_secs(secs.parse().ok()?))?,
            bytes: bytes.parse().ok()?,
        })
    }
}

/// Reads the record in the managed `directory` (`None` when there is no valid one), lets
/// `change` decide the new one, and writes that in place, all under an exclusive lock. A record
/// that cannot be opened or locked is left alone (`change` is not called): the caller then
/// sweeps, as for a missing record.
pub(crate) fn update(
    directory: &OwnedFd,
    change: impl FnOnce(Option<SweepRecord>) -> Option<SweepRecord>,
) {
    let Some(mut file) = open(directory) else {
        return;
    };
    if !lock(&file) {
        return;
    }
    let current = read_from(&mut file);
    if let Some(record) = change(current) {
        let text = record.render();
        let written = file
            .seek(SeekFrom::Start(0))
            .and_then(|_| file.write_all(text.as_bytes()))
            .and_then(|()| file.set_len(text.len() as u64));
        if written.is_err() {
            // A torn record is not a record: the next spill sweeps.
            let _ = file.set_len(0);
        }
    }
    // Closing the file releases the lock.
}

/// Writes `record` in the managed `directory`, whatever was recorded before.
pub(crate) fn write(directory: &OwnedFd, record: SweepRecord) {
    update(directory, |_| Some(record));
}

/// How long an update waits for another's lock on the record before leaving it alone: a spill
/// holds it for microseconds (longer only when its thread is preempted on a loaded machine),
/// and anything holding it longer (a process that took the lock and sleeps) must not stall
/// every spill; the record is only an optimisation.
const LOCK_WAIT: Duration = Duration::from_millis(100);

/// The pause between two tries of a busy lock.
const LOCK_RETRY: Duration = Duration::from_micros(100);

/// Takes the exclusive lock on `file`, waiting at most [`LOCK_WAIT`]; false when it stayed busy.
/// A file system that has no locks (some network and FUSE mounts) gets the update unlocked:
/// racing spills may then lose each other's counts, which the next sweep corrects.
fn lock(file: &File) -> bool {
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) | Err(TryLockError::Error(_)) => return true,
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(LOCK_RETRY);
            }
            Err(TryLockError::WouldBlock) => return false,
        }
    }
}

fn read_from(file: &mut File) -> Option<SweepRecord> {
    let mut text = String::new();
    file.take(MAX_LEN + 1).read_to_string(&mut text).ok()?;
    if text.len() as u64 > MAX_LEN {
        return None;
    }
    SweepRecord::parse(&text)
}

/// The record's file, opened for reading and writing; created when missing, and replaced when
/// its name holds anything but a small regular file with no other name.
fn open(directory: &OwnedFd) -> Option<File> {
    // NONBLOCK: a planted FIFO must not hang the spill.
    let flags =
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let mode = Mode::from_raw_mode(0o600);
    if let Ok(fd) = rustix::fs::openat(directory, NAME, flags, mode) {
        let file = File::from(fd);
        if file
            .metadata()
            .is_ok_and(|meta| meta.is_file() && meta.nlink() == 1 && meta.len() <= MAX_LEN)
        {
            return Some(file);
        }
    }
    // A link, a FIFO, another name of some other file, an oversized file: not ours to write.
    let _ = rustix::fs::unlinkat(directory, NAME, AtFlags::empty());
    let fd = rustix::fs::openat(directory, NAME, flags | OFlags::EXCL, mode).ok()?;
    Some(File::from(fd))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spill::open_dir;

    /// The record in the managed `directory`, if there is a valid one.
    fn read(directory: &OwnedFd) -> Option<SweepRecord> {
        let mut found = None;
        update(directory, |record| {
            found = record;
            None
        });
        found
    }

    fn record(secs: u64, bytes: u64) -> SweepRecord {
        SweepRecord {
            swept_at: SystemTime::UNIX_EPOCH + Duration::from_secs(secs),
            bytes,
        }
    }

    #[test]
    fn a_record_is_written_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(&open_dir(dir.path()).unwrap()), None);
        write(&open_dir(dir.path()).unwrap(), record(1_700_000_000, 42));
        assert_eq!(
            read(&open_dir(dir.path()).unwrap()),
            Some(record(1_700_000_000, 42))
        );
        write(&open_dir(dir.path()).unwrap(), record(1_700_000_100, 7));
        assert_eq!(
            read(&open_dir(dir.path()).unwrap()),
            Some(record(1_700_000_100, 7))
        );
    }

    #[test]
    fn malformed_oversized_and_linked_records_are_not_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(NAME);
        for text in ["", "12", "a b", "1 -2", "1 2 3"] {
            std::fs::write(&path, text).unwrap();
            assert_eq!(read(&open_dir(dir.path()).unwrap()), None, "{text:?}");
        }
        std::fs::write(&path, format!("1 {}", "0".repeat(100))).unwrap();
        assert_eq!(read(&open_dir(dir.path()).unwrap()), None);
        std::fs::remove_file(&path).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "1700000000 5\n").unwrap();
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        assert_eq!(read(&open_dir(dir.path()).unwrap()), None);
        // Writing replaces the link itself; the file it pointed to is untouched.
        write(&open_dir(dir.path()).unwrap(), record(1_700_000_000, 9));
        assert_eq!(
            std::fs::read_to_string(&elsewhere).unwrap(),
            "1700000000 5\n"
        );
        assert_eq!(
            read(&open_dir(dir.path()).unwrap()),
            Some(record(1_700_000_000, 9))
        );
    }

    #[test]
    fn another_name_of_some_file_is_replaced_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("theirs");
        std::fs::write(&theirs, "1700000000 5\n").unwrap();
        std::fs::hard_link(&theirs, dir.path().join(NAME)).unwrap();
        write(&open_dir(dir.path()).unwrap(), record(1_700_000_000, 9));
        assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "1700000000 5\n");
        assert_eq!(
            read(&open_dir(dir.path()).unwrap()),
            Some(record(1_700_000_000, 9))
        );
    }

    #[test]
    fn a_record_is_rewritten_in_place_and_concurrent_updates_all_count() {
        let dir = tempfile::tempdir().unwrap();
        write(&open_dir(dir.path()).unwrap(), record(1_700_000_000, 0));
        let inode = std::fs::metadata(dir.path().join(NAME)).unwrap().ino();
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..50 {
                        update(&open_dir(dir.path()).unwrap(), |record| {
                            record.map(|record| SweepRecord {
                                bytes: record.bytes + 1,
                                ..record
                            })
                        });
                    }
                });
            }
        });
        assert_eq!(
            read(&open_dir(dir.path()).unwrap()),
            Some(record(1_700_000_000, 200))
        );
        // No new file replaced it (which on ext4 costs an inode allocation per spill).
        assert_eq!(
            std::fs::metadata(dir.path().join(NAME)).unwrap().ino(),
            inode
        );
    }

    #[test]
    fn a_record_locked_by_someone_else_is_left_alone_without_waiting_for_them() {
        let dir = tempfile::tempdir().unwrap();
        write(&open_dir(dir.path()).unwrap(), record(1_700_000_000, 1));
        // Another process's lock, held for as long as it likes.
        let holder = File::open(dir.path().join(NAME)).unwrap();
        holder.lock().unwrap();
        let start = Instant::now();
        let mut asked = false;
        update(&open_dir(dir.path()).unwrap(), |_| {
            asked = true;
            Some(record(1_700_000_000, 2))
        });
        assert!(!asked);
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "{:?}",
            start.elapsed()
        );
        drop(holder);
        assert_eq!(
            read(&open_dir(dir.path()).unwrap()),
            Some(record(1_700_000_000, 1))
        );
    }

    #[test]
    fn a_future_record_has_no_age() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(100);
        assert_eq!(record(40, 0).age(now), Some(Duration::from_secs(60)));
        assert_eq!(record(200, 0).age(now), None);
    }
}
