//! Temporary files of writes: anonymous where the filesystem allows, named and locked
//! otherwise, and swept when their writer died (see the module docs of `beneath`).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::Directory;
use super::unchanged::{Unchanged, catch_up};

/// What names a temporary file starts and ends with.
const TEMP_PREFIX: &str = ".tackle-";
const TEMP_SUFFIX: &str = ".tmp";
/// A named temp file younger than this is never swept: its writer may not have locked it yet.
const SWEEP_AFTER: Duration = Duration::from_secs(60);

/// True for the name of one of our temporary files (search never lists them).
pub(crate) fn is_temp_name(name: &OsStr) -> bool {
    let bytes = name.as_bytes();
    bytes.starts_with(TEMP_PREFIX.as_bytes()) && bytes.ends_with(TEMP_SUFFIX.as_bytes())
}

impl Directory {
    /// Atomically gives `name` the bytes of `parts` (concatenated): written to a temporary file
    /// in this directory, synced, then moved into place. `mode` is kept when given (else
    /// `0666` minus the umask). With `replace: false` an existing `name` is an
    /// [`io::ErrorKind::AlreadyExists`] error and nothing changes. With `sweep`, the
    /// directory is first swept of dead writers' temp files ([`Directory::sweep`]). With
    /// `unchanged`, `name` is replaced only while it is still the file that was read (checked
    /// just before the rename, see `unchanged.rs`); else nothing changes and the error is one
    /// [`is_changed`](super::is_changed) recognizes.
    pub(crate) fn write_file(
        &self,
        name: &OsStr,
        parts: &[&[u8]],
        mode: Option<u32>,
        replace: bool,
        sweep: bool,
        unchanged: Option<&Unchanged<'_>>,
    ) -> io::Result<()> {
        // A writer killed between linking its temp file and renaming it (a window of
        // microseconds), or one without O_TMPFILE, left a temp file here: take it away.
        if sweep {
            self.sweep();
        }
        let placed = match self.anonymous(parts, mode)? {
            Some(temp) => match self.place(&temp, name, replace, unchanged) {
                // No way to link an anonymous file here (no /proc, no privilege).
                Err(err)
                    if matches!(
                        err.kind(),
                        io::ErrorKind::NotFound
                            | io::ErrorKind::PermissionDenied
                            | io::ErrorKind::Unsupported
                    ) =>
                {
                    self.named(name, parts, mode, replace, unchanged)
                }
                placed => placed,
            },
            None => self.named(name, parts, mode, replace, unchanged),
        };
        placed?;
        self.sync();
        Ok(())
    }

    /// An anonymous temp file holding `parts`, or `None` when the filesystem has none.
    fn anonymous(&self, parts: &[&[u8]], mode: Option<u32>) -> io::Result<Option<File>> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            let flags = OFlags::WRONLY | OFlags::TMPFILE | OFlags::CLOEXEC;
            match rustix::fs::openat(&self.fd, ".", flags, Mode::from_raw_mode(0o666)) {
                Ok(fd) => {
                    let mut file = File::from(fd);
                    fill(&mut file, parts, mode)?;
                    // Held while the file has a name, so a sweep never takes it for stale.
                    file.lock()?;
                    Ok(Some(file))
                }
                Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL | Errno::NOENT) => Ok(None),
                Err(err) => Err(err.into()),
            }
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            let _ = (parts, mode);
            Ok(None)
        }
    }

    /// Links the anonymous `temp` in as `name`.
    #[cfg_attr(
        not(any(target_os = "linux", target_os = "android")),
        expect(unused_variables, clippy::unused_self)
    )]
    fn place(
        &self,
        temp: &File,
        name: &OsStr,
        replace: bool,
        unchanged: Option<&Unchanged<'_>>,
    ) -> io::Result<()> {
        // Where nothing is there yet, the file is linked straight to its name: no temp name.
        // (A file that must be unchanged must be there.)
        if unchanged.is_none() {
            match link_anonymous(temp, &self.fd, name) {
                Err(err) if replace && err.kind() == io::ErrorKind::AlreadyExists => {}
                other => return other,
            }
        }
        let temp_name = loop {
            let candidate = temp_name();
            match link_anonymous(temp, &self.fd, &candidate) {
                Ok(()) => break candidate,
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(err),
            }
        };
        self.rename_over_unchanged(&temp_name, name, unchanged, temp)
    }

    /// The fallback without `O_TMPFILE`: a named temp file, locked while it exists.
    fn named(
        &self,
        name: &OsStr,
        parts: &[&[u8]],
        mode: Option<u32>,
        replace: bool,
        unchanged: Option<&Unchanged<'_>>,
    ) -> io::Result<()> {
        let (temp_name, mut file) = loop {
            let candidate = temp_name();
            let flags =
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            match rustix::fs::openat(&self.fd, &candidate, flags, Mode::from_raw_mode(0o666)) {
                Ok(fd) => break (candidate, File::from(fd)),
                Err(Errno::EXIST) => {}
                Err(err) => return Err(err.into()),
            }
        };
        let filled = file.lock().and_then(|()| fill(&mut file, parts, mode));
        let placed = filled.and_then(|()| {
            if replace {
                self.rename_over_unchanged(&temp_name, name, unchanged, &file)
            } else {
                // A hard link fails on an existing name; the temp name is removed either way.
                let linked =
                    rustix::fs::linkat(&self.fd, &temp_name, &self.fd, name, AtFlags::empty())
                        .map_err(io::Error::from);
                let _ = rustix::fs::unlinkat(&self.fd, &temp_name, AtFlags::empty());
                linked
            }
        });
        if placed.is_err() {
            let _ = rustix::fs::unlinkat(&self.fd, &temp_name, AtFlags::empty());
        }
        placed
    }

    /// Renames `temp_name` (the file `temp`) over `name`, when `unchanged` is given only while
    /// `name` is still the file that was read, and then appends to `temp` what reached the
    /// replaced file meanwhile; the temp name is removed either way.
    fn rename_over_unchanged(
        &self,
        temp_name: &OsStr,
        name: &OsStr,
        unchanged: Option<&Unchanged<'_>>,
        temp: &File,
    ) -> io::Result<()> {
        let Some(unchanged) = unchanged else {
            return self.rename_over(temp_name, name);
        };
        let checked = self
            .check_unchanged(name, unchanged)
            .and_then(|(status, old)| self.still(name, status).map(|()| (status, old)));
        match checked {
            Ok((status, old)) => {
                self.rename_over(temp_name, name)?;
                catch_up(&old, status, temp);
                Ok(())
            }
            Err(err) => {
                let _ = rustix::fs::unlinkat(&self.fd, temp_name, AtFlags::empty());
                Err(err)
            }
        }
    }

    fn rename_over(&self, temp_name: &OsStr, name: &OsStr) -> io::Result<()> {
        rustix::fs::renameat(&self.fd, temp_name, &self.fd, name).map_err(|err| {
            let _ = rustix::fs::unlinkat(&self.fd, temp_name, AtFlags::empty());
            io::Error::from(err)
        })
    }

    /// Removes the temp files of writers that died: named like ours, not locked by a live
    /// writer, and either made by a process that no longer exists or older than
    /// [`SWEEP_AFTER`]. Best effort.
    pub(crate) fn sweep(&self) {
        let Ok(names) = self.names() else {
            return;
        };
        for name in names.iter().filter(|name| is_temp_name(name)) {
            let Ok(file) = self.open_file(name) else {
                continue;
            };
            let Ok(meta) = file.metadata() else {
                continue;
            };
            let old = meta
                .modified()
                .ok()
                .and_then(|at| at.elapsed().ok())
                .is_some_and(|age| age >= SWEEP_AFTER);
            let orphan = old || writer(name).is_some_and(|pid| !alive(pid));
            if meta.is_file() && orphan && file.try_lock().is_ok() {
                let _ = rustix::fs::unlinkat(&self.fd, name.as_os_str(), AtFlags::empty());
            }
        }
    }
}

/// Writes `parts`, sets `mode` when given, and syncs.
fn fill(file: &mut File, parts: &[&[u8]], mode: Option<u32>) -> io::Result<()> {
    for part in parts {
        file.write_all(part)?;
    }
    if let Some(mode) = mode {
        rustix::fs::fchmod(&*file, Mode::from_raw_mode(mode & 0o7777))?;
    }
    file.sync_all()
}

/// Gives the anonymous `temp` the name `name` in `dir` (fails if `name` exists).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn link_anonymous(temp: &File, dir: &OwnedFd, name: &OsStr) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // Through /proc this needs no privilege; AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH.
    let proc = format!("/proc/self/fd/{}", temp.as_raw_fd());
    match rustix::fs::linkat(
        rustix::fs::CWD,
        proc.as_str(),
        dir,
        name,
        AtFlags::SYMLINK_FOLLOW,
    ) {
        Ok(()) => Ok(()),
        Err(Errno::NOENT) => {
            rustix::fs::linkat(temp, "", dir, name, AtFlags::EMPTY_PATH).map_err(Into::into)
        }
        Err(err) => Err(err.into()),
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn link_anonymous(_temp: &File, _dir: &OwnedFd, _name: &OsStr) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// The process id a temp name records (see [`temp_name`]).
fn writer(name: &OsStr) -> Option<i32> {
    let rest = name.to_str()?.strip_prefix(TEMP_PREFIX)?;
    i32::from_str_radix(rest.split('-').next()?, 16).ok()
}

/// Whether process `pid` exists (a process of another user counts as existing).
fn alive(pid: i32) -> bool {
    match rustix::process::Pid::from_raw(pid) {
        Some(pid) => rustix::process::test_kill_process(pid) != Err(Errno::SRCH),
        None => true,
    }
}

/// A fresh temp name: unique within the process, and unlikely to collide across processes
/// (a collision is retried).
fn temp_name() -> OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    OsString::from(format!(
        "{TEMP_PREFIX}{:x}-{count:x}-{nanos:x}{TEMP_SUFFIX}",
        std::process::id()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_sweeps_temp_files_of_dead_writers_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        // No process has this id (above any pid_max); ours is alive.
        let dead = root.join(".tackle-7ffffff0-0-0.tmp");
        let live = root.join(format!(".tackle-{:x}-0-0.tmp", std::process::id()));
        for path in [&dead, &live] {
            std::fs::write(path, "partial").unwrap();
        }
        let opened = Directory::open(&root).unwrap();
        opened
            .write_file(OsStr::new("f.txt"), &[b"new"], None, true, true, None)
            .unwrap();
        assert!(!dead.exists(), "a dead writer's temp file stays");
        assert!(live.exists(), "a live writer's temp file was taken");
        assert_eq!(std::fs::read(root.join("f.txt")).unwrap(), b"new");
    }

    #[test]
    fn temp_names_are_recognised() {
        assert!(is_temp_name(&temp_name()));
        assert!(!is_temp_name(OsStr::new(".tackle-x")));
        assert!(!is_temp_name(OsStr::new("a.tmp")));
    }
}
