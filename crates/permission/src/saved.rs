//! Saved approvals: the `{action, resource}` allows an "always" reply persists per project.
//!
//! The file is JSON (`{"version": 1, "project": ..., "approvals": [{action, resource}]}`),
//! rewritten atomically (a temporary file in the same directory, synced, then renamed over the
//! old one) while holding an exclusive lock on `<file>.lock`, after re-reading the file, so two
//! processes adding approvals at the same time lose neither. A file that cannot be parsed is
//! an error and is never overwritten.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};

use crate::error::PermissionError;
use crate::rule::{Effect, Rule, RuleOrigin, Ruleset};

const VERSION: u32 = 1;

/// The approvals saved for one project, in memory and (unless [`in_memory`](Self::in_memory))
/// in a file. Clones share the same approvals.
#[derive(Debug, Clone)]
pub struct SavedApprovals {
    path: Option<Arc<PathBuf>>,
    /// Held only to read or swap the rules, never across file work, so checks never wait
    /// for a save.
    state: Arc<Mutex<State>>,
    /// Serializes this process's read-modify-write of the file (other processes are kept out
    /// by the file lock).
    writer: Arc<Mutex<()>>,
}

#[derive(Debug, Default)]
struct State {
    project: Option<String>,
    rules: Ruleset,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileFormat {
    version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    project: Option<String>,
    approvals: Vec<Approval>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Approval {
    action: String,
    resource: String,
}

impl SavedApprovals {
    /// Approvals that last as long as this value (and its clones); nothing is written.
    pub fn in_memory() -> Self {
        Self {
            path: None,
            state: Arc::default(),
            writer: Arc::default(),
        }
    }

    /// The approvals kept in `path`. A missing file is an empty list (created on the first
    /// save, with its directory); an unreadable or malformed one is an error.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, PermissionError> {
        let path = path.into();
        let file = read_file(&path)?;
        let saved = Self {
            state: Arc::new(Mutex::new(State {
                project: file.project.clone(),
                rules: ruleset(&file.approvals, &path),
            })),
            path: Some(Arc::new(path)),
            writer: Arc::default(),
        };
        Ok(saved)
    }

    /// The approvals of the project at `project` (the host passes its canonical path), kept
    /// under `data_dir` in `permission/<name>-<hash>.json`.
    pub fn for_project(data_dir: &Path, project: &Path) -> Result<Self, PermissionError> {
        let path = data_dir.join("permission").join(file_name(project));
        let saved = Self::open(path)?;
        saved.lock().project = Some(project.display().to_string());
        Ok(saved)
    }

    /// The approvals file, unless in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref().map(PathBuf::as_path)
    }

    /// The saved approvals, as allow rules in the order they were saved.
    pub fn list(&self) -> Vec<Rule> {
        self.lock().rules.rules().to_vec()
    }

    /// The saved approvals as a ruleset (every rule allows).
    pub fn ruleset(&self) -> Ruleset {
        self.lock().rules.clone()
    }

    /// True when a saved approval covers `action` on `resource`.
    pub fn allows(&self, action: &str, resource: &str) -> bool {
        self.lock().rules.deciding(action, resource).is_some()
    }

    /// The saved approval covering `action` on `resource` (the last one saved), if any.
    pub(crate) fn deciding(&self, action: &str, resource: &str) -> Option<(Rule, RuleOrigin)> {
        let state = self.lock();
        let index = state.rules.deciding(action, resource)?;
        let origin = state.rules.origin(index)?.clone();
        Some((state.rules.rules()[index].clone(), origin))
    }

    /// Saves an approval of `action` for each of `resources` (wildcards). Already saved pairs
    /// are not repeated. On error nothing changes, in memory or on disk.
    pub fn add(&self, action: &str, resources: &[String]) -> Result<(), PermissionError> {
        self.update(|approvals| {
            let before = approvals.len();
            for resource in resources {
                let approval = Approval {
                    action: action.to_owned(),
                    resource: resource.clone(),
                };
                if !approvals.contains(&approval) {
                    approvals.push(approval);
                }
            }
            approvals.len() - before
        })
        .map(drop)
    }

    /// Removes the approval of exactly `action` on `resource` (compared as written, not as
    /// wildcards); false when there was none.
    pub fn revoke(&self, action: &str, resource: &str) -> Result<bool, PermissionError> {
        self.update(|approvals| {
            let before = approvals.len();
            approvals.retain(|a| !(a.action == action && a.resource == resource));
            before - approvals.len()
        })
        .map(|removed| removed > 0)
    }

    /// Removes every approval; returns how many there were.
    pub fn clear(&self) -> Result<usize, PermissionError> {
        self.update(|approvals| {
            let count = approvals.len();
            approvals.clear();
            count
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Applies `change` to the current list (re-read from disk under the file lock), writes
    /// the result when `change` reports a change, then replaces the in-memory list.
    fn update(
        &self,
        change: impl FnOnce(&mut Vec<Approval>) -> usize,
    ) -> Result<usize, PermissionError> {
        let Some(path) = self.path.as_deref() else {
            let mut state = self.lock();
            let mut approvals = approvals_of(&state.rules);
            let changed = change(&mut approvals);
            state.rules = ruleset_in_memory(&approvals);
            return Ok(changed);
        };
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let saved_err = |err: io::Error| PermissionError::Saved {
            path: path.clone(),
            message: err.to_string(),
        };
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(saved_err)?;
        }
        let lock = lock_file(path).map_err(saved_err)?;
        let mut file = read_file(path)?;
        if file.project.is_none() {
            file.project.clone_from(&self.lock().project);
        }
        let changed = change(&mut file.approvals);
        if changed > 0 {
            write_file(path, &file).map_err(saved_err)?;
        }
        drop(lock);
        self.lock().rules = ruleset(&file.approvals, path);
        Ok(changed)
    }
}

fn approvals_of(rules: &Ruleset) -> Vec<Approval> {
    rules
        .rules()
        .iter()
        .map(|rule| Approval {
            action: rule.action.clone(),
            resource: rule.resource.clone(),
        })
        .collect()
}

fn ruleset_with(approvals: &[Approval], file: Option<&Path>) -> Ruleset {
    Ruleset::with_origins(approvals.iter().map(|a| {
        (
            Rule::new(a.action.clone(), a.resource.clone(), Effect::Allow),
            RuleOrigin::Saved {
                file: file.map(Path::to_path_buf),
            },
        )
    }))
}

fn ruleset(approvals: &[Approval], path: &Path) -> Ruleset {
    ruleset_with(approvals, Some(path))
}

fn ruleset_in_memory(approvals: &[Approval]) -> Ruleset {
    ruleset_with(approvals, None)
}

fn read_file(path: &Path) -> Result<FileFormat, PermissionError> {
    let invalid = |message: String| PermissionError::Saved {
        path: path.to_owned(),
        message,
    };
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Ok(FileFormat {
                version: VERSION,
                ..FileFormat::default()
            });
        }
        Err(err) => return Err(invalid(err.to_string())),
    };
    let file: FileFormat = serde_json::from_str(&text)
        .map_err(|err| invalid(format!("not a valid approvals file: {err}")))?;
    if file.version != VERSION {
        return Err(invalid(format!(
            "unsupported version {} (this tackle reads version {VERSION})",
            file.version
        )));
    }
    if let Some(bad) = file
        .approvals
        .iter()
        .find(|a| a.action.is_empty() || a.resource.is_empty())
    {
        return Err(invalid(format!(
            "an approval has an empty action or resource: {:?} {:?}",
            bad.action, bad.resource
        )));
    }
    Ok(file)
}

fn write_file(path: &Path, file: &FileFormat) -> io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let mut text = serde_json::to_string_pretty(file).map_err(io::Error::other)?;
    text.push('\n');
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(text.as_bytes())?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|err| err.error)?;
    Ok(())
}

/// An exclusive lock on `<path>.lock`, released when the returned file is dropped.
fn lock_file(path: &Path) -> io::Result<File> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(PathBuf::from(name))?;
    file.lock()?;
    Ok(file)
}

/// `<last path component, sanitised>-<FNV-1a 64 of the whole path>.json`: readable, stable
/// across runs and releases (unlike `DefaultHasher`), and distinct for distinct paths.
fn file_name(project: &Path) -> String {
    let full = project.display().to_string();
    let base: String = project
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let base = if base.is_empty() {
        "root".to_owned()
    } else {
        base
    };
    format!("{base}-{:016x}.json", fnv1a(full.as_bytes()))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_stable_and_distinct() {
        assert_eq!(
            file_name(Path::new("/home/ann/my repo")),
            format!("my_repo-{:016x}.json", fnv1a(b"/home/ann/my repo"))
        );
        assert_ne!(file_name(Path::new("/a/x")), file_name(Path::new("/b/x")));
        assert!(file_name(Path::new("/")).starts_with("root-"));
        // FNV-1a 64 test vector.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
