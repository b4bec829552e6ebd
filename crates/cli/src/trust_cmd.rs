//! `tackle trust [DIR]`, `tackle trust --list`, `tackle untrust [DIR]`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tackle_host::config::{PROJECT_FILES, project_dirs, project_files};
use tackle_host::trust::{Entry, Trust, TrustStore, sha256_hex};
use tackle_host::{HostError, location};

use crate::error::CliError;
use crate::options::HostArgs;
use crate::print;

fn dir_location(dir: Option<&Path>) -> Result<PathBuf, CliError> {
    Ok(location(dir.unwrap_or(Path::new(".")))?)
}

/// Records the project configuration files of `dir` (default: the current directory) as
/// trusted with their current content.
pub(crate) fn trust(dir: Option<&Path>, data_dir: Option<&Path>) -> Result<ExitCode, CliError> {
    let location = dir_location(dir)?;
    let store = TrustStore::new(&HostArgs::data_dir(data_dir)?);
    // Parsing first: a file that does not load is not worth trusting.
    let files = project_files(&location)?;
    if files.is_empty() {
        return Err(HostError::NothingToTrust(location).into());
    }
    let mut text = String::new();
    let mut entries = Vec::new();
    for file in files {
        let sha256 = sha256_hex(file.text.as_bytes());
        let allows = file.allows;
        text.push_str(&format!(
            "trusted {} (sha256 {}): its rules apply in full, {allows} allow rule{} included\n",
            file.path.display(),
            &sha256[..16],
            if allows == 1 { "" } else { "s" }
        ));
        entries.push(Entry {
            path: file.path,
            sha256,
        });
    }
    store.trust(entries)?;
    text.push_str("Any change to a trusted file makes it untrusted again.\n");
    print(&text)
}

/// Lists the trusted files and whether each still has the content it was trusted with.
pub(crate) fn list(data_dir: Option<&Path>) -> Result<ExitCode, CliError> {
    let store = TrustStore::new(&HostArgs::data_dir(data_dir)?);
    let entries = store.entries()?;
    if entries.is_empty() {
        return print("no project configuration is trusted\n");
    }
    let mut text = String::new();
    for entry in entries {
        let state = match std::fs::read(&entry.path) {
            Ok(content) => match store.status(&entry.path, &content)? {
                Trust::Trusted => "trusted",
                Trust::Changed | Trust::Untrusted => "changed",
            },
            Err(_) => "missing",
        };
        text.push_str(&format!(
            "{state:<8} {} (sha256 {})\n",
            entry.path.display(),
            &entry.sha256[..entry.sha256.len().min(16)]
        ));
    }
    print(&text)
}

/// Forgets the trust of every configuration file of `dir` (default: the current directory).
pub(crate) fn untrust(dir: Option<&Path>, data_dir: Option<&Path>) -> Result<ExitCode, CliError> {
    let location = dir_location(dir)?;
    let store = TrustStore::new(&HostArgs::data_dir(data_dir)?);
    let files: Vec<PathBuf> = project_dirs(&location)
        .iter()
        .flat_map(|dir| PROJECT_FILES.iter().map(move |name| dir.join(name)))
        .collect();
    let removed = store.untrust(|entry| files.contains(&entry.path))?;
    if removed.is_empty() {
        return print(&format!("nothing in {} was trusted\n", location.display()));
    }
    let text: String = removed
        .iter()
        .map(|entry| {
            format!(
                "untrusted {}: its rules can only tighten yours\n",
                entry.path.display()
            )
        })
        .collect();
    print(&text)
}
