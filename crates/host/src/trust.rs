//! Which project configuration files the user trusts: `<data dir>/trust.json`.
//!
//! A repository's `tackle.json` is written by whoever wrote the repository. Until the user
//! trusts it, its rules can only tighten the user's ([`tackle_permission::Ruleset::restrict`]).
//! `tackle trust` records each configuration file of a project with the SHA-256 of its content;
//! a file whose content no longer has that hash is untrusted again. The record is JSON
//! (`{"version": 1, "files": [{"path": ..., "sha256": ...}]}`), rewritten atomically (a
//! temporary file in the same directory, synced, renamed) under an exclusive lock on
//! `trust.json.lock` after re-reading it, so two processes lose nothing; a file that cannot be
//! parsed is an error and is never overwritten. The data directory is protected from tool
//! writes (the [`Host`](crate::Host) adds it to the protected resources), so a model cannot
//! trust a file for the user.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::error::HostError;

const VERSION: u32 = 1;

/// The trust records under one data directory.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

/// One trusted file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The file, absolute (its Location is canonical).
    pub path: PathBuf,
    /// Lowercase hex SHA-256 of its content when it was trusted.
    pub sha256: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileFormat {
    version: u32,
    files: Vec<Entry>,
}

/// Whether a configuration file with some content is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Recorded with this content.
    Trusted,
    /// Never recorded (or untrusted since).
    Untrusted,
    /// Recorded, but the content changed since.
    Changed,
}

impl TrustStore {
    /// The records under `data_dir`.
    pub fn new(data_dir: &Path) -> Self {
        Self {
            path: data_dir.join("trust.json"),
        }
    }

    /// Every trusted file, in the order trusted.
    pub fn entries(&self) -> Result<Vec<Entry>, HostError> {
        Ok(read(&self.path)?.files)
    }

    /// Whether `file` with `content` is trusted.
    pub fn status(&self, file: &Path, content: &[u8]) -> Result<Trust, HostError> {
        let entries = self.entries()?;
        let Some(entry) = entries.iter().find(|e| e.path == file) else {
            return Ok(Trust::Untrusted);
        };
        Ok(if entry.sha256 == sha256_hex(content) {
            Trust::Trusted
        } else {
            Trust::Changed
        })
    }

    /// Records `entries`, replacing earlier records of the same paths.
    pub fn trust(&self, entries: Vec<Entry>) -> Result<(), HostError> {
        self.update(|files| {
            files.retain(|old| !entries.iter().any(|new| new.path == old.path));
            files.extend(entries);
        })
        .map(drop)
    }

    /// Removes the records `remove` selects and returns them.
    pub fn untrust(&self, remove: impl Fn(&Entry) -> bool) -> Result<Vec<Entry>, HostError> {
        let mut removed = Vec::new();
        self.update(|files| {
            let (gone, kept): (Vec<Entry>, Vec<Entry>) =
                std::mem::take(files).into_iter().partition(&remove);
            *files = kept;
            removed = gone;
        })?;
        Ok(removed)
    }

    /// Re-reads the file under the lock, applies `change` and writes it back atomically.
    fn update(&self, change: impl FnOnce(&mut Vec<Entry>)) -> Result<(), HostError> {
        let error = |err: io::Error| self.error(err.to_string());
        let dir = self.path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(error)?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(lock_path(&self.path))
            .map_err(error)?;
        lock.lock().map_err(error)?;
        let mut file = read(&self.path)?;
        change(&mut file.files);
        file.version = VERSION;
        let mut text =
            serde_json::to_string_pretty(&file).map_err(|e| self.error(e.to_string()))?;
        text.push('\n');
        let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(error)?;
        temp.write_all(text.as_bytes()).map_err(error)?;
        temp.as_file().sync_all().map_err(error)?;
        temp.persist(&self.path).map_err(|e| error(e.error))?;
        // The rename is durable once the directory is synced (best effort where unsupported).
        if let Ok(dir) = File::open(dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    fn error(&self, message: String) -> HostError {
        HostError::Trust {
            path: self.path.clone(),
            message,
        }
    }
}

fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

fn read(path: &Path) -> Result<FileFormat, HostError> {
    let error = |message: String| HostError::Trust {
        path: path.to_owned(),
        message,
    };
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(FileFormat::default()),
        Err(err) => return Err(error(err.to_string())),
    };
    let file: FileFormat = serde_json::from_str(&text).map_err(|e| error(e.to_string()))?;
    if file.version != VERSION {
        return Err(error(format!(
            "unsupported version {} (expected {VERSION})",
            file.version
        )));
    }
    Ok(file)
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_known_input() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn trusted_changed_untrusted_and_untrust() {
        let data = tempfile::tempdir().unwrap();
        let store = TrustStore::new(data.path());
        let file = Path::new("/repo/tackle.json");
        assert_eq!(store.status(file, b"{}").unwrap(), Trust::Untrusted);
        store
            .trust(vec![Entry {
                path: file.to_owned(),
                sha256: sha256_hex(b"{}"),
            }])
            .unwrap();
        assert_eq!(store.status(file, b"{}").unwrap(), Trust::Trusted);
        assert_eq!(store.status(file, b"{ }").unwrap(), Trust::Changed);
        // Trusting again replaces the record.
        store
            .trust(vec![Entry {
                path: file.to_owned(),
                sha256: sha256_hex(b"{ }"),
            }])
            .unwrap();
        assert_eq!(store.entries().unwrap().len(), 1);
        assert_eq!(store.status(file, b"{ }").unwrap(), Trust::Trusted);
        let removed = store.untrust(|e| e.path == file).unwrap();
        assert_eq!(removed.len(), 1);
        assert_eq!(store.status(file, b"{ }").unwrap(), Trust::Untrusted);
    }

    #[test]
    fn a_malformed_record_is_an_error_and_is_kept() {
        let data = tempfile::tempdir().unwrap();
        let path = data.path().join("trust.json");
        fs::write(&path, "not json").unwrap();
        let store = TrustStore::new(data.path());
        assert!(store.status(Path::new("/x"), b"").is_err());
        assert!(store.trust(vec![]).is_err());
        assert_eq!(fs::read_to_string(&path).unwrap(), "not json");
    }
}
