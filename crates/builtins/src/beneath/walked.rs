//! Checking where a directory walk's paths really lead (glob and grep walk by name, following
//! links inside their boundary, so a directory swapped for a link is only caught on a
//! descriptor).

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};

use super::{exact, open_file};

/// Opens `path` for reading the ordinary way, links followed (a directory walk's path); the
/// caller must then check where it landed with [`opened_under`].
pub(crate) fn open_walked(path: &Path) -> io::Result<File> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    rustix::fs::open(path, flags, Mode::empty())
        .map(File::from)
        .map_err(Into::into)
}

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

fn same_file(a: &File, b: &File) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let (a, b) = (a.metadata()?, b.metadata()?);
    Ok(a.dev() == b.dev() && a.ino() == b.ino())
}

/// The directories of one walk, each opened once and checked to lie under the boundary; a
/// walked file is then opened or looked up relative to its checked directory (never through a
/// link), so one check covers all the files of a directory. A walk yields a directory's files
/// together, so only the last directory is kept.
#[derive(Debug)]
pub(crate) struct Checked<'a> {
    boundary: &'a Path,
    last: Option<(PathBuf, Option<OwnedFd>)>,
}

impl<'a> Checked<'a> {
    /// Checks against the canonical `boundary`.
    pub(crate) fn new(boundary: &'a Path) -> Self {
        Self {
            boundary,
            last: None,
        }
    }

    /// The walked directory `path`, opened, if it lies under the boundary now.
    fn directory(&mut self, path: &Path) -> Option<&OwnedFd> {
        let known = self
            .last
            .as_ref()
            .is_some_and(|(last, _)| last.as_os_str() == path.as_os_str());
        if !known {
            let boundary = self.boundary;
            // Most walked directories are reached without a link: their path is then canonical
            // and opens exactly (one call, no descriptor lookup). A path through a link the
            // walk followed is opened as walked and its descriptor checked.
            let exact = path
                .starts_with(boundary)
                .then(|| exact(path, directory_flags()).ok())
                .flatten();
            let opened = exact.or_else(|| {
                rustix::fs::open(path, directory_flags(), Mode::empty())
                    .ok()
                    .map(File::from)
                    .filter(|file| opened_under(file, path, boundary).unwrap_or(false))
                    .map(OwnedFd::from)
            });
            self.last = Some((path.to_path_buf(), opened));
        }
        self.last.as_ref()?.1.as_ref()
    }

    /// The names in the walked directory `path`, read from a descriptor checked to lie under
    /// the boundary (`None` when it does not, or cannot be read): cheaper than looking up many
    /// files of one directory one by one.
    pub(crate) fn names(&mut self, path: &Path) -> Option<HashSet<OsString>> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let opened = if path.starts_with(self.boundary) {
            exact(path, flags).ok()
        } else {
            None
        };
        let fd = match opened {
            Some(fd) => fd,
            None => {
                let file = File::from(rustix::fs::open(path, flags, Mode::empty()).ok()?);
                if !opened_under(&file, path, self.boundary).unwrap_or(false) {
                    return None;
                }
                OwnedFd::from(file)
            }
        };
        let mut names = HashSet::new();
        for entry in rustix::fs::Dir::new(fd).ok()? {
            names.insert(OsString::from_vec(
                entry.ok()?.file_name().to_bytes().to_vec(),
            ));
        }
        Some(names)
    }

    /// Opens the walked file `path` for reading if it lies under the boundary (`None` when it
    /// does not). `link`: the walk reached it through a symbolic link of its own, which is
    /// followed and the file checked on its own descriptor.
    pub(crate) fn open(&mut self, path: &Path, link: bool) -> Option<io::Result<File>> {
        if link {
            return match open_walked(path) {
                Ok(file) => match opened_under(&file, path, self.boundary) {
                    Ok(true) => Some(Ok(file)),
                    Ok(false) => None,
                    Err(err) => Some(Err(err)),
                },
                Err(err) => Some(Err(err)),
            };
        }
        let (parent, name) = (path.parent()?, path.file_name()?);
        let directory = self.directory(parent)?;
        let flags =
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        Some(
            rustix::fs::openat(directory, name, flags, Mode::empty())
                .map(File::from)
                .map_err(Into::into),
        )
    }

    /// Whether the walked file `path` is, now, a name in a directory under the boundary (or,
    /// reached through its own link, leads under it).
    pub(crate) fn holds(&mut self, path: &Path, link: bool) -> bool {
        if link {
            return leads_under(path, self.boundary);
        }
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return false;
        };
        self.directory(parent).is_some_and(|directory| {
            rustix::fs::statat(directory, name, AtFlags::SYMLINK_NOFOLLOW).is_ok()
        })
    }
}

/// How a walked directory is opened: for lookups only where the system can.
fn directory_flags() -> OFlags {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let access = OFlags::PATH;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let access = OFlags::RDONLY;
    access | OFlags::DIRECTORY | OFlags::CLOEXEC
}
