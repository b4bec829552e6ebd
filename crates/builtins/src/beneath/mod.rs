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
//! - `walked.rs` (search) serves glob and grep, which walk by name and follow links inside
//!   their boundary: each directory a walk reaches is opened once and checked to lie under the
//!   boundary (exactly, or by its descriptor's real path), and files are opened or looked up
//!   relative to it.
//!
//! Temporary files: a write fills an anonymous `O_TMPFILE` file (no name, so a process killed
//! while writing leaves nothing behind) and links it into place under a temp name renamed over
//! the target (`linkat` cannot replace a file, `rename` can, atomically); a new file is linked
//! straight to its name. Where the filesystem has no `O_TMPFILE`, the temp file is named from
//! the start. Temp files are named `.tackle-<pid>-*.tmp` (`temp::is_temp_name`) and locked while
//! they exist; a write first sweeps its directory (at most once a minute per directory, see
//! `mutation.rs`) of stale ones (unlocked, and their writer gone or older than a minute), left
//! by a kill in the microseconds between link and rename or during a named write. Search never
//! lists these names.

mod temp;
mod unchanged;
#[cfg(feature = "search")]
mod walked;

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

#[cfg(feature = "search")]
pub(crate) use temp::is_temp_name;
pub(crate) use unchanged::{Identity, Unchanged, is_changed};
#[cfg(feature = "search")]
pub(crate) use walked::Checked;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
