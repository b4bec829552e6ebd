//! Replacing (or removing) a file only while it is still the file that was read.
//!
//! edit and apply_patch decide on the bytes they read. A process that appends meanwhile (a log,
//! a build tool, the user's editor) must not lose its bytes to a replacement that never saw
//! them. So at the last moment, once the replacement is written and linked under its temp
//! name, the file under the target name is opened through the same directory descriptor the
//! rename uses and must be the same file (device and inode) holding the same bytes; then its
//! status (device, inode, size, modification and change times) is taken once more by name in
//! that directory and must not have moved since the bytes were checked. The rename follows.
//!
//! A writer that opened the file before the rename and writes after it (an appender between
//! its `open` and its `write`, for tens of microseconds; a program that keeps a log open)
//! writes into the replaced file, which no longer has a name. Right after the rename, bytes
//! that arrived in the replaced file since the check are appended to the new file (where an
//! append after the edit belongs). What remains: bytes written to the replaced file after that
//! catch-up (a writer stalled in that gap, or one that keeps the old file open) are lost.
//! Without the writer's cooperation no rename can close this: a file without a name cannot be
//! linked back.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;

use rustix::fs::{AtFlags, FileType, OFlags, Stat};
use rustix::io::Errno;

use super::Directory;

/// The file a replacement may replace: the one that was read, with the bytes that were read.
pub(crate) struct Unchanged<'a> {
    /// The file that was read.
    pub(crate) identity: Identity,
    /// True for the bytes that were read.
    pub(crate) same: &'a dyn Fn(&[u8]) -> bool,
}

/// Which file: its device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Identity {
    device: u64,
    inode: u64,
}

impl Identity {
    /// The identity of an opened file's metadata.
    pub(crate) fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            device: meta.dev(),
            inode: meta.ino(),
        }
    }
}

/// The error of a replacement refused because the file changed after it was read.
#[derive(Debug, thiserror::Error)]
#[error("the file changed on disk since it was read")]
struct Changed;

fn changed() -> io::Error {
    io::Error::other(Changed)
}

/// True for the error of a replacement refused because the file changed after it was read.
pub(crate) fn is_changed(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|inner| inner.is::<Changed>())
}

/// What a file's status says of its content and identity: device, inode, size, and the
/// modification and change times (seconds and nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Status([i128; 7]);

impl Status {
    #[allow(
        clippy::useless_conversion,
        reason = "the field types differ between systems"
    )]
    fn of(stat: &Stat) -> Self {
        Self([
            i128::from(stat.st_dev),
            i128::from(stat.st_ino),
            i128::from(stat.st_size),
            i128::from(stat.st_mtime),
            i128::from(stat.st_mtime_nsec),
            i128::from(stat.st_ctime),
            i128::from(stat.st_ctime_nsec),
        ])
    }

    fn len(&self) -> u64 {
        u64::try_from(self.0[2]).unwrap_or(0)
    }

    fn identity(&self) -> Identity {
        #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
        Identity {
            device: self.0[0] as u64,
            inode: self.0[1] as u64,
        }
    }
}

impl Directory {
    /// Checks that `name` is still the file `unchanged` describes and returns its status, for
    /// [`Directory::still`] to compare just before acting, and the file, opened.
    pub(super) fn check_unchanged(
        &self,
        name: &OsStr,
        unchanged: &Unchanged<'_>,
    ) -> io::Result<(Status, File)> {
        let mut file = match self.open_file(name) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(changed()),
            Err(err) => return Err(err),
        };
        let stat = rustix::fs::fstat(&file)?;
        let status = Status::of(&stat);
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile
            || status.identity() != unchanged.identity
        {
            return Err(changed());
        }
        let mut bytes = Vec::new();
        bytes.reserve_exact(usize::try_from(stat.st_size).unwrap_or(0));
        file.read_to_end(&mut bytes)?;
        // Bytes appended while reading show as more than the status said.
        if i128::try_from(bytes.len()).ok() != Some(status.0[2]) || !(unchanged.same)(&bytes) {
            return Err(changed());
        }
        Ok((status, file))
    }

    /// The last check before acting on `name`: its status is still `status`.
    pub(super) fn still(&self, name: &OsStr, status: Status) -> io::Result<()> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(now) if Status::of(&now) == status => Ok(()),
            Ok(_) | Err(Errno::NOENT) => Err(changed()),
            Err(err) => Err(err.into()),
        }
    }

    /// [`Directory::remove_file`] of the file `unchanged` describes; if `name` changed since it
    /// was read, nothing is removed (the same residual window as a replacement).
    #[cfg(feature = "apply-patch")]
    pub(crate) fn remove_unchanged(
        &self,
        name: &OsStr,
        unchanged: &Unchanged<'_>,
    ) -> io::Result<()> {
        let (status, _file) = self.check_unchanged(name, unchanged)?;
        self.still(name, status)?;
        self.remove_file(name)
    }
}

/// Appends to `new` what was written to `old` (the replaced file) after it was checked at
/// `status`: a writer that had it open wrote there after the rename. Best effort: the
/// replacement is in place whatever happens here.
pub(super) fn catch_up(old: &File, status: Status, new: &File) {
    let Ok(now) = rustix::fs::fstat(old) else {
        return;
    };
    let from = status.len();
    let Some(missed) = u64::try_from(now.st_size)
        .ok()
        .and_then(|n| n.checked_sub(from))
    else {
        return;
    };
    if missed == 0 {
        return;
    }
    let mut bytes = vec![0; usize::try_from(missed).unwrap_or(0)];
    if old.read_exact_at(&mut bytes, from).is_err() {
        return;
    }
    // Appended atomically after whatever reached the new file by name meanwhile.
    let appending = rustix::fs::fcntl_getfl(new)
        .and_then(|flags| rustix::fs::fcntl_setfl(new, flags | OFlags::APPEND));
    if appending.is_ok() {
        let mut new = new;
        if new.write_all(&bytes).is_ok() {
            let _ = new.sync_all();
        }
    }
}
