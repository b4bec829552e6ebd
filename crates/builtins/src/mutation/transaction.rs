//! [`Transaction`]: exclusive access to one real file, its reads and its atomic changes.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::{ContentHash, Operation, Sweeps, Written};
use crate::beneath::{self, Directory, Identity, Stat, StatKind, Unchanged};
use crate::error::Error;
use crate::location::EntryKind;

/// Exclusive access to one real file for the duration of
/// [`FileMutation::transact`](super::FileMutation::transact).
#[derive(Debug)]
pub struct Transaction {
    target: PathBuf,
    // Held for the advisory cross-process lock; released when the transaction ends.
    _directory_lock: Option<File>,
    sweeps: Sweeps,
    /// The file this transaction first read: a read-modify-write replaces only that file.
    first_read: OnceLock<Identity>,
}

impl Transaction {
    pub(super) fn open(target: PathBuf, sweeps: Sweeps) -> Result<Self, Error> {
        let directory_lock = lock_directory(&target);
        Ok(Self {
            target,
            _directory_lock: directory_lock,
            sweeps,
            first_read: OnceLock::new(),
        })
    }

    /// The real (canonical) file this transaction changes.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The current bytes, or `None` when there is no file.
    pub fn read(&self) -> Result<Option<Vec<u8>>, Error> {
        let Some((mut file, len)) = self.open_existing()? else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        // One allocation of the right size; a file that grows meanwhile still reads whole.
        bytes.reserve_exact(usize::try_from(len).unwrap_or(0));
        file.read_to_end(&mut bytes)
            .map_err(|err| self.io("read", err))?;
        Ok(Some(bytes))
    }

    /// The existing regular file, opened for reading at exactly the target path, and its size;
    /// `None` when there is none.
    pub(crate) fn open_existing(&self) -> Result<Option<(File, u64)>, Error> {
        let file = match beneath::open_file(&self.target) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(self.io("open", err)),
        };
        let meta = file.metadata().map_err(|err| self.io("stat", err))?;
        match EntryKind::of(meta.file_type()) {
            EntryKind::Directory => Err(Error::IsDirectory {
                path: self.target.clone(),
            }),
            EntryKind::Other => Err(Error::NotAFile {
                path: self.target.clone(),
            }),
            EntryKind::File => {
                // Only the first read counts: set once, later reads leave it.
                let _ = self.first_read.set(Identity::of(&meta));
                Ok(Some((file, meta.len())))
            }
        }
    }

    /// Atomically replaces the file with `bytes` (creating it and its parents if needed).
    pub fn write(&mut self, bytes: &[u8]) -> Result<Written, Error> {
        self.write_parts(&[bytes])
    }

    /// [`Transaction::write`] of the concatenation of `parts`, which is never built in memory.
    pub(crate) fn write_parts(&mut self, parts: &[&[u8]]) -> Result<Written, Error> {
        self.replace(parts, None)
    }

    /// Writes `parts` over the file, with `unchanged` only while it is still that file.
    fn replace(
        &mut self,
        parts: &[&[u8]],
        unchanged: Option<&Unchanged<'_>>,
    ) -> Result<Written, Error> {
        let (directory, name) = self.parent(unchanged.is_none())?;
        let existing = self.writable(directory.stat(name).map_err(|err| self.io("stat", err))?)?;
        let existed = existing.is_some();
        let mode = existing.map(|stat| stat.mode);
        directory
            .write_file(name, parts, mode, true, self.sweep_due(), unchanged)
            .map_err(|err| self.changed_or("write", err))?;
        Ok(self.written(Operation::Write, existed))
    }

    /// What this transaction's first read saw, for a write or removal that must find it
    /// unchanged: the file is read now if it was not yet.
    fn first_read(&self) -> Result<Identity, Error> {
        if self.first_read.get().is_none() {
            self.open_existing()?;
        }
        self.first_read
            .get()
            .copied()
            .ok_or_else(|| Error::StaleContent {
                path: self.target.clone(),
            })
    }

    /// [`StaleContent`](Error::StaleContent) for a refusal because the file changed, else the
    /// I/O error of `op`.
    fn changed_or(&self, op: &'static str, err: io::Error) -> Error {
        if beneath::is_changed(&err) {
            Error::StaleContent {
                path: self.target.clone(),
            }
        } else {
            self.io(op, err)
        }
    }

    /// Like [`Transaction::write`], but fails with [`Error::TargetExists`] if the file exists;
    /// the check and the creation are one atomic step.
    pub fn create(&mut self, bytes: &[u8]) -> Result<Written, Error> {
        let (directory, name) = self.parent(true)?;
        match directory.write_file(name, &[bytes], None, false, self.sweep_due(), None) {
            Ok(()) => Ok(self.written(Operation::Write, false)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Err(Error::TargetExists {
                path: self.target.clone(),
            }),
            Err(err) => Err(self.io("create", err)),
        }
    }

    /// Writes only if the file is still the one this transaction first read and its bytes
    /// still hash to `expected`, checked just before the replacement is renamed into place;
    /// else [`Error::StaleContent`] and nothing changes.
    pub fn write_if_unchanged(
        &mut self,
        expected: ContentHash,
        bytes: &[u8],
    ) -> Result<Written, Error> {
        let same = move |current: &[u8]| ContentHash::of(current) == expected;
        self.write_if(&same, bytes)
    }

    /// Writes `bytes` only if the file is still the one this transaction first read and holds
    /// bytes for which `same` is true (checked as in [`Transaction::write_if_unchanged`]).
    pub(crate) fn write_if(
        &mut self,
        same: &dyn Fn(&[u8]) -> bool,
        bytes: &[u8],
    ) -> Result<Written, Error> {
        let unchanged = Unchanged {
            identity: self.first_read()?,
            same,
        };
        self.replace(&[bytes], Some(&unchanged))
    }

    #[cfg(feature = "apply-patch")]
    /// Removes the file only if it is still the one this transaction first read and holds
    /// bytes for which `same` is true; else [`Error::StaleContent`] and nothing changes.
    pub(crate) fn remove_if(&mut self, same: &dyn Fn(&[u8]) -> bool) -> Result<Written, Error> {
        let unchanged = Unchanged {
            identity: self.first_read()?,
            same,
        };
        let (directory, name) = self.parent(false)?;
        directory
            .remove_unchanged(name, &unchanged)
            .map_err(|err| self.changed_or("remove", err))?;
        Ok(self.written(Operation::Remove, true))
    }

    /// Removes the file; `existed: false` when there was none.
    pub fn remove(&mut self) -> Result<Written, Error> {
        let (directory, name) = match self.parent(false) {
            Ok(found) => found,
            Err(Error::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                return Ok(self.written(Operation::Remove, false));
            }
            Err(err) => return Err(err),
        };
        match directory.stat(name).map_err(|err| self.io("stat", err))? {
            None => Ok(self.written(Operation::Remove, false)),
            Some(Stat {
                kind: StatKind::Directory,
                ..
            }) => Err(Error::IsDirectory {
                path: self.target.clone(),
            }),
            Some(_) => {
                directory
                    .remove_file(name)
                    .map_err(|err| self.io("remove", err))?;
                Ok(self.written(Operation::Remove, true))
            }
        }
    }

    #[cfg(feature = "apply-patch")]
    /// The permission bits of the existing file (for a restore), or `None` when there is none.
    pub(crate) fn mode(&self) -> Result<Option<u32>, Error> {
        let (directory, name) = match self.parent(false) {
            Ok(found) => found,
            Err(Error::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                return Ok(None);
            }
            Err(err) => return Err(err),
        };
        let stat = directory.stat(name).map_err(|err| self.io("stat", err))?;
        Ok(stat.map(|stat| stat.mode))
    }

    #[cfg(feature = "apply-patch")]
    /// Restores a removed file: creates it with `bytes` and exactly `mode`.
    pub(crate) fn restore(&mut self, bytes: &[u8], mode: u32) -> Result<Written, Error> {
        let (directory, name) = self.parent(true)?;
        match directory.write_file(name, &[bytes], Some(mode), false, self.sweep_due(), None) {
            Ok(()) => Ok(self.written(Operation::Write, false)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Err(Error::TargetExists {
                path: self.target.clone(),
            }),
            Err(err) => Err(self.io("create", err)),
        }
    }

    fn written(&self, operation: Operation, existed: bool) -> Written {
        Written {
            operation,
            target: self.target.clone(),
            existed,
        }
    }

    /// Whether this write should first sweep its directory of dead writers' temp files.
    fn sweep_due(&self) -> bool {
        self.target
            .parent()
            .is_some_and(|directory| self.sweeps.due(directory))
    }

    fn io(&self, op: &'static str, err: io::Error) -> Error {
        Error::io(op, &self.target, err)
    }

    /// The target's parent directory, opened exactly (created with its missing ancestors when
    /// `create`), and the target's name in it.
    fn parent(&self, create: bool) -> Result<(Directory, &OsStr), Error> {
        let (Some(parent), Some(name)) = (self.target.parent(), self.target.file_name()) else {
            return Err(Error::IsDirectory {
                path: self.target.clone(),
            });
        };
        let opened = if create {
            Directory::create_all(parent).map(|(directory, _)| directory)
        } else {
            Directory::open(parent)
        };
        let directory = opened.map_err(|err| Error::io("open directory", parent, err))?;
        Ok((directory, name))
    }

    /// An existing regular, writable target's status; `None` when there is none.
    fn writable(&self, stat: Option<Stat>) -> Result<Option<Stat>, Error> {
        let Some(stat) = stat else {
            return Ok(None);
        };
        match stat.kind {
            StatKind::Directory => Err(Error::IsDirectory {
                path: self.target.clone(),
            }),
            // The real path named a file when it was resolved; a link there now was swapped in.
            StatKind::Symlink => Err(self.io("open", beneath::raced())),
            StatKind::Other => Err(Error::NotAFile {
                path: self.target.clone(),
            }),
            StatKind::File if stat.mode & 0o222 == 0 => Err(Error::ReadOnly {
                path: self.target.clone(),
            }),
            StatKind::File => Ok(Some(stat)),
        }
    }
}

/// An advisory lock on the nearest existing ancestor directory, so that another process using
/// this crate waits its turn. Best effort: where it cannot be taken, in-process locking remains.
fn lock_directory(target: &Path) -> Option<File> {
    target
        .ancestors()
        .skip(1)
        .find_map(|dir| Directory::open(dir).ok())?
        .lock()
}
