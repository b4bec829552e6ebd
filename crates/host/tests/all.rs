//! Integration tests of the host library: real files in temp directories, an injected
//! environment (the process's is never read or changed).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on broken setup

mod audit;
mod config;
mod errors;
mod host;
mod mcp;
mod plugins;
mod protected;
mod sessions;

use std::path::{Path, PathBuf};

use serde_json::Value;
use tackle_host::{Config, Environment, Sources};

/// A user's home, a repository with a Location below its root, and a data directory.
pub(crate) struct Fixture {
    pub(crate) home: tempfile::TempDir,
    pub(crate) repo: tempfile::TempDir,
    pub(crate) data: tempfile::TempDir,
    pub(crate) vars: Vec<(String, String)>,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join(".git")).unwrap();
        std::fs::create_dir_all(repo.path().join("app")).unwrap();
        Self {
            home: tempfile::tempdir().unwrap(),
            repo,
            data: tempfile::tempdir().unwrap(),
            vars: Vec::new(),
        }
    }

    /// The Location: `<repo>/app`, canonical.
    pub(crate) fn location(&self) -> PathBuf {
        std::fs::canonicalize(self.repo.path().join("app")).unwrap()
    }

    pub(crate) fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.repo.path()).unwrap()
    }

    /// Writes `text` to `path` (relative to the repository root), creating directories.
    pub(crate) fn write(&self, path: &str, text: &str) -> PathBuf {
        let path = self.root().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Writes the user's `~/.config/tackle/tackle.json`.
    pub(crate) fn write_user(&self, text: &str) -> PathBuf {
        let path = self.home.path().join(".config/tackle/tackle.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    pub(crate) fn var(&mut self, key: &str, value: &str) {
        self.vars.push((key.to_owned(), value.to_owned()));
    }

    pub(crate) fn env(&self) -> Environment {
        let mut vars = vec![("HOME".to_owned(), self.home.path().display().to_string())];
        vars.extend(self.vars.iter().cloned());
        Environment::from_vars(vars)
    }

    pub(crate) fn sources(&self, file: Option<&Path>, flags: &[(&str, Value)]) -> Sources {
        Sources {
            location: self.location(),
            data_dir: Some(self.data.path().to_owned()),
            file: file.map(Path::to_owned),
            env: self.env(),
            flags: flags
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        }
    }

    pub(crate) fn load(&self) -> Result<Config, tackle_host::HostError> {
        Config::load(&self.sources(None, &[]))
    }

    /// Trusts every project file as it is now.
    pub(crate) fn trust(&self) {
        let store = tackle_host::TrustStore::new(self.data.path());
        let entries = tackle_host::config::project_files(&self.location())
            .unwrap()
            .into_iter()
            .map(|file| tackle_host::trust::Entry {
                sha256: tackle_host::trust::sha256_hex(file.text.as_bytes()),
                path: file.path,
            })
            .collect();
        store.trust(entries).unwrap();
    }

    /// `text` with the temp directories named.
    pub(crate) fn redact(&self, text: &str) -> String {
        text.replace(&self.root().display().to_string(), "[repo]")
            .replace(&self.home.path().display().to_string(), "[home]")
            .replace(&self.data.path().display().to_string(), "[data]")
    }
}
