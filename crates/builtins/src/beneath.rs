//! Opening exactly what was resolved and approved, and nothing else.
//!
//! Resolution ([`crate::location`]) and permission work on canonical paths. Opening such a
//! path again by name would let a racing process swap a directory on it for a symbolic link
//! in between and lead the open elsewhere, out of the Location. So every file tool opens
//! through this module, and acts on descriptors from then on:
//!
//! - [`open_file`] and [`Directory::open`] open a canonical path with no symbolic link allowed
//!   at any step (Linux: `openat2` with `RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`; where
//!   that is unavailable, one `openat(O_NOFOLLOW)` per component from `/`). What opens is the
//!   object at exactly that path at that moment: beneath the Location root for an inside path,
//!   the very path permission approved for an outside one. A link swapped in fails the open
//!   with a clear error instead of being followed.
//! - A [`Directory`] is such an opened directory. Mutations act relative to its descriptor
//!   (anonymous temp file, link, rename, unlink, mkdir), so no name is looked up from the root
//!   twice.
//! - [`opened_under`] checks where an open descriptor really is, for the directory walks of
//!   glob and grep, which follow links inside their boundary by name.
//!
//! Temporary files: a write fills an anonymous `O_TMPFILE` file (no name, so a process killed
//! while writing leaves nothing behind) and links it into place under a temp name renamed over
//! the target (`linkat` cannot replace a file, `rename` can, atomically); a new file is linked
//! straight to its name. Where the filesystem has no `O_TMPFILE`, the temp file is named from
//! the start. Temp files are named `.tackle-<pid>-*.tmp` ([`is_temp_name`]) and locked while
//! they exist; a write first sweeps its directory (at most once a minute per directory, see
//! `mutation.rs`) of stale ones (unlocked, and their writer gone or older than a minute), left
//! by a kill in the microseconds between link and rename or during a named write. Search never
//! lists these names.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

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

/// The error of an open refused because a link appeared where the checked path had none.
#[derive(Debug, thiserror::Error)]
#[error(
    "the path changed after it was checked: a symbolic link appeared in it, and it is not followed"
)]
struct Raced;

/// The error of an open refused because a link appeared where the checked path had none.
pub(crate) fn raced() -> io::Error {
    io::Error::other(Raced)
}

fn raced_or(err: Errno) -> io::Error {
    if err == Errno::LOOP {
        raced()
    } else {
        err.into()
    }
}

/// Opens the regular file or directory at the canonical `path` for reading (non-blocking, so a
/// FIFO swapped in cannot hang the caller; it has no effect on regular files).
pub(crate) fn open_file(path: &Path) -> io::Result<File> {
    exact(path, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY).map(File::from)
}

#[cfg(feature = "search")]
/// Opens `path` for reading the ordinary way, links followed (a directory walk's path); the
/// caller must then check where it landed with [`opened_under`].
pub(crate) fn open_walked(path: &Path) -> io::Result<File> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    rustix::fs::open(path, flags, Mode::empty())
        .map(File::from)
        .map_err(Into::into)
}

/// Opens the canonical `path` with `flags`, no symbolic link followed at any step.
fn exact(path: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let flags = flags | OFlags::CLOEXEC;
    if !path.is_absolute() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not an absolute path",
        ));
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::ResolveFlags;
        let how = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        for _ in 0..8 {
            match rustix::fs::openat2(rustix::fs::CWD, path, flags, Mode::empty(), how) {
                // A concurrent rename can make the kernel ask for a retry.
                Err(Errno::AGAIN | Errno::INTR) => {}
                // No openat2 (old kernel, or a seccomp filter): walk the components instead.
                Err(Errno::NOSYS | Errno::PERM) => break,
                other => return other.map_err(raced_or),
            }
        }
    }
    walk(path, flags)
}

/// The portable form of [`exact`]: one `openat(O_NOFOLLOW)` per component from `/`.
fn walk(path: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let names: Vec<&OsStr> = path
        .components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(Ok(name)),
            Component::RootDir | Component::CurDir => None,
            // A canonical path has no `..`; refuse rather than interpret one.
            Component::ParentDir | Component::Prefix(_) => Some(Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a canonical path",
            ))),
        })
        .collect::<io::Result<_>>()?;
    let search = OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | search_flag();
    let mut dir = rustix::fs::open(
        "/",
        OFlags::DIRECTORY | OFlags::CLOEXEC | search_flag(),
        Mode::empty(),
    )?;
    let Some((last, parents)) = names.split_last() else {
        return rustix::fs::open("/", flags, Mode::empty()).map_err(Into::into);
    };
    // O_NOFOLLOW refuses a link with ELOOP, or with ENOTDIR together with O_DIRECTORY.
    let refused = |dir: &OwnedFd, name: &OsStr, err: Errno| {
        let link = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink);
        if link { raced() } else { err.into() }
    };
    for name in parents {
        dir = rustix::fs::openat(&dir, *name, search, Mode::empty())
            .map_err(|err| refused(&dir, name, err))?;
    }
    rustix::fs::openat(&dir, *last, flags | OFlags::NOFOLLOW, Mode::empty())
        .map_err(|err| refused(&dir, last, err))
}

/// Directories only traversed are opened for search, not reading, where the system can.
fn search_flag() -> OFlags {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        OFlags::PATH
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        OFlags::RDONLY
    }
}

#[cfg(feature = "search")]
/// Where the open `file` really is now, when the system can tell (`/proc/self/fd`).
pub(crate) fn real_path_of(file: &impl std::os::fd::AsFd) -> Option<PathBuf> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::fd::AsRawFd;
        let link = format!("/proc/self/fd/{}", file.as_fd().as_raw_fd());
        std::fs::read_link(link).ok()
    }
    #[cfg(target_vendor = "apple")]
    {
        rustix::fs::getpath(file)
            .ok()
            .map(|path| PathBuf::from(OsString::from_vec(path.into_bytes())))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
    {
        let _ = file;
        None
    }
}

#[cfg(feature = "search")]
/// Whether the open `file` (opened through `path`, which may pass links) lies under the
/// canonical `boundary`. Where the descriptor's path cannot be read, `path` is canonicalized
/// and the object found there must be the one open (same device and inode).
pub(crate) fn opened_under(file: &File, path: &Path, boundary: &Path) -> io::Result<bool> {
    if let Some(real) = real_path_of(file) {
        return Ok(real.starts_with(boundary));
    }
    let real = std::fs::canonicalize(path)?;
    if !real.starts_with(boundary) {
        return Ok(false);
    }
    let there = open_file(&real)?;
    same_file(&there, file)
}

#[cfg(feature = "search")]
/// Whether `path` (a walked path, which may pass links) leads to something under the canonical
/// `boundary` now. Resolving it in user space (`canonicalize`) would itself race a swap, so
/// the path is opened (without reading) and the descriptor asked where it is.
pub(crate) fn leads_under(path: &Path, boundary: &Path) -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let flags = OFlags::PATH | OFlags::CLOEXEC;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    rustix::fs::open(path, flags, Mode::empty())
        .ok()
        .map(File::from)
        .is_some_and(|file| opened_under(&file, path, boundary).unwrap_or(false))
}

#[cfg(feature = "search")]
fn same_file(a: &File, b: &File) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let (a, b) = (a.metadata()?, b.metadata()?);
    Ok(a.dev() == b.dev() && a.ino() == b.ino())
}

/// What is at a name in a [`Directory`], without following a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub(crate) kind: StatKind,
    /// The permission bits (`0o7777`).
    pub(crate) mode: u32,
}

/// The type of a directory entry, links not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatKind {
    File,
    Directory,
    Symlink,
    Other,
}

/// A directory opened at its exact canonical path; everything below acts on its descriptor.
#[derive(Debug)]
pub(crate) struct Directory {
    fd: OwnedFd,
}

impl Directory {
    /// Opens the directory at the canonical `path`.
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        let fd = exact(path, OFlags::RDONLY | OFlags::DIRECTORY)?;
        Ok(Self { fd })
    }

    /// Opens the directory at the canonical `path`, creating it and its missing ancestors
    /// (each made and opened relative to its opened parent). Returns the directories created,
    /// deepest first.
    pub(crate) fn create_all(path: &Path) -> io::Result<(Self, Vec<PathBuf>)> {
        match Self::open(path) {
            Ok(dir) => return Ok((dir, Vec::new())),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(io::ErrorKind::NotFound.into());
        };
        let (parent, mut created) = Self::create_all(parent)?;
        let made = match rustix::fs::mkdirat(&parent.fd, name, Mode::from_raw_mode(0o777)) {
            Ok(()) => true,
            Err(Errno::EXIST) => false,
            Err(err) => return Err(err.into()),
        };
        let fd = rustix::fs::openat(
            &parent.fd,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(raced_or)?;
        if made {
            created.insert(0, path.to_path_buf());
        }
        Ok((Self { fd }, created))
    }

    /// What `name` is, without following a link; `None` when nothing is there.
    pub(crate) fn stat(&self, name: &OsStr) -> io::Result<Option<Stat>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => {
                let kind = match FileType::from_raw_mode(stat.st_mode) {
                    FileType::RegularFile => StatKind::File,
                    FileType::Directory => StatKind::Directory,
                    FileType::Symlink => StatKind::Symlink,
                    _ => StatKind::Other,
                };
                #[cfg_attr(
                    any(target_os = "linux", target_os = "android"),
                    expect(clippy::useless_conversion, reason = "a u16 on other systems")
                )]
                let mode = u32::from(stat.st_mode) & 0o7777;
                Ok(Some(Stat { kind, mode }))
            }
            Err(Errno::NOENT) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// Opens `name` (never a link) for reading.
    pub(crate) fn open_file(&self, name: &OsStr) -> io::Result<File> {
        rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map(File::from)
        .map_err(raced_or)
    }

    /// The names in the directory (without `.` and `..`).
    pub(crate) fn names(&self) -> io::Result<Vec<OsString>> {
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.fd)? {
            let name = entry?.file_name().to_bytes().to_vec();
            if name != b"." && name != b".." {
                names.push(OsString::from_vec(name));
            }
        }
        Ok(names)
    }

    /// An advisory lock on the directory, so that another process using this crate waits its
    /// turn; `None` where it cannot be taken.
    pub(crate) fn lock(&self) -> Option<File> {
        let fd = rustix::fs::openat(
            &self.fd,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
        let file = File::from(fd);
        file.lock().ok()?;
        Some(file)
    }

    /// Atomically gives `name` the bytes of `parts` (concatenated): written to a temporary file
    /// in this directory, synced, then moved into place. `mode` is kept when given (else
    /// `0666` minus the umask). With `replace: false` an existing `name` is an
    /// [`io::ErrorKind::AlreadyExists`] error and nothing changes. With `sweep`, the
    /// directory is first swept of dead writers' temp files ([`Directory::sweep`]).
    pub(crate) fn write_file(
        &self,
        name: &OsStr,
        parts: &[&[u8]],
        mode: Option<u32>,
        replace: bool,
        sweep: bool,
    ) -> io::Result<()> {
        // A writer killed between linking its temp file and renaming it (a window of
        // microseconds), or one without O_TMPFILE, left a temp file here: take it away.
        if sweep {
            self.sweep();
        }
        let placed = match self.anonymous(parts, mode)? {
            Some(temp) => match self.place(&temp, name, replace) {
                // No way to link an anonymous file here (no /proc, no privilege).
                Err(err)
                    if matches!(
                        err.kind(),
                        io::ErrorKind::NotFound
                            | io::ErrorKind::PermissionDenied
                            | io::ErrorKind::Unsupported
                    ) =>
                {
                    self.named(name, parts, mode, replace)
                }
                placed => placed,
            },
            None => self.named(name, parts, mode, replace),
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
    fn place(&self, temp: &File, name: &OsStr, replace: bool) -> io::Result<()> {
        // Where nothing is there yet, the file is linked straight to its name: no temp name.
        match link_anonymous(temp, &self.fd, name) {
            Err(err) if replace && err.kind() == io::ErrorKind::AlreadyExists => {}
            other => return other,
        }
        let temp_name = loop {
            let candidate = temp_name();
            match link_anonymous(temp, &self.fd, &candidate) {
                Ok(()) => break candidate,
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(err),
            }
        };
        self.rename_over(&temp_name, name)
    }

    /// The fallback without `O_TMPFILE`: a named temp file, locked while it exists.
    fn named(
        &self,
        name: &OsStr,
        parts: &[&[u8]],
        mode: Option<u32>,
        replace: bool,
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
                self.rename_over(&temp_name, name)
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

    /// Removes the file (or link) `name`.
    pub(crate) fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?;
        self.sync();
        Ok(())
    }

    #[cfg(feature = "apply-patch")]
    /// Removes the empty directory `name`.
    pub(crate) fn remove_dir(&self, name: &OsStr) -> io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR).map_err(Into::into)
    }

    /// Makes renames and removals in the directory durable; best effort (some filesystems
    /// refuse to sync a directory).
    pub(crate) fn sync(&self) {
        let _ = rustix::fs::fsync(&self.fd);
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
            .write_file(OsStr::new("f.txt"), &[b"new"], None, true, true)
            .unwrap();
        assert!(!dead.exists(), "a dead writer's temp file stays");
        assert!(live.exists(), "a live writer's temp file was taken");
        assert_eq!(std::fs::read(root.join("f.txt")).unwrap(), b"new");
    }

    #[test]
    fn links_in_a_checked_path_are_refused_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::fs::write(root.join("real/f"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        assert!(open_file(&root.join("real/f")).is_ok());
        let err = open_file(&root.join("link/f")).unwrap_err();
        assert!(
            err.to_string().contains("a symbolic link appeared"),
            "{err}"
        );
        let err = walk(&root.join("link/f"), OFlags::RDONLY).unwrap_err();
        assert!(
            err.to_string().contains("a symbolic link appeared"),
            "{err}"
        );
        assert!(walk(&root.join("real/f"), OFlags::RDONLY).is_ok());
    }

    #[test]
    fn temp_names_are_recognised() {
        assert!(is_temp_name(&temp_name()));
        assert!(!is_temp_name(OsStr::new(".tackle-x")));
        assert!(!is_temp_name(OsStr::new("a.tmp")));
    }
}
