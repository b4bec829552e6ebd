//! The managed directory's record of its last sweep, shared by every process that spills into
//! it: when the sweep ran and how many bytes the directory has held since.
//!
//! Without it each process would list and inspect the whole directory at its first spill, and a
//! one-shot CLI call (a new process per tool call) would pay for a directory of thousands of
//! outputs on every call. With it, a spill reads and rewrites one small file; the full sweep
//! runs once per interval across all processes, or when the recorded size passes the quota.
//!
//! The record is an optimisation, never an authority: a missing, unreadable, malformed or
//! future-dated record means "sweep now". Concurrent spills may lose each other's byte counts;
//! the next sweep measures the directory again. It is opened and replaced relative to the
//! directory without following links, like the managed files.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, Mode, OFlags};

/// The record's file name; not a managed name, so sweeps and listings never consider it.
const NAME: &str = ".sweep";

/// Where a new record is written before it replaces the old one.
const TEMPORARY: &str = ".sweep.new";

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

    fn render(&self) -> String {
        let secs = self
            .swept_at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |age| age.as_secs());
        format!("{secs} {}\n", self.bytes)
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

/// The record in the managed `directory`, if there is a valid one.
pub(crate) fn read(directory: &OwnedFd) -> Option<SweepRecord> {
    // NONBLOCK: a planted FIFO must not hang the spill.
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(directory, NAME, flags, Mode::empty()).ok()?;
    let mut file = std::fs::File::from(fd);
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_LEN {
        return None;
    }
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    SweepRecord::parse(&text)
}

/// Replaces the record in the managed `directory` with `record`; failures are ignored (the
/// next spill sweeps).
pub(crate) fn write(directory: &OwnedFd, record: SweepRecord) {
    // A temporary left by a writer that died is stale; two live writers race harmlessly (one
    // record wins, and either is a valid one).
    let _ = rustix::fs::unlinkat(directory, TEMPORARY, AtFlags::empty());
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(directory, TEMPORARY, flags, Mode::from_raw_mode(0o600)) else {
        return;
    };
    let mut file = std::fs::File::from(fd);
    if file.write_all(record.render().as_bytes()).is_err() {
        let _ = rustix::fs::unlinkat(directory, TEMPORARY, AtFlags::empty());
        return;
    }
    // The rename replaces whatever has the record's name (a link included) without following it.
    let _ = rustix::fs::renameat(directory, TEMPORARY, directory, NAME);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spill::open_dir;

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
    fn a_future_record_has_no_age() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(100);
        assert_eq!(record(40, 0).age(now), Some(Duration::from_secs(60)));
        assert_eq!(record(200, 0).age(now), None);
    }
}
