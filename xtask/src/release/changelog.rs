//! The `CHANGELOG.md` section of a release, in the Keep a Changelog layout.
//!
//! Our commit subjects are sentences that usually start with the area they touch, not
//! conventional-commit prefixes, so the section is grouped by the crate whose files a commit
//! changed (read from `git log --name-only`): one `###` group per crate, in publish order,
//! then the binary and xtask, then `Workspace` for everything outside the crates (docs, CI,
//! the manifest). A commit that touches several crates is listed under each, so one crate's
//! group is the whole story of that crate. Merge commits are left out: their branches' commits
//! are listed themselves. Notes written by hand under `## [Unreleased]` open the new section.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use cargo_metadata::Metadata;

use super::{git_output, order};

pub(crate) const FILE: &str = "CHANGELOG.md";

const HEADER: &str = "# Changelog\n\n\
All notable changes to tackle are listed here. The format is based on \
[Keep a Changelog](https://keepachangelog.com/en/1.1.0/), and the crates follow \
[Semantic Versioning](https://semver.org/spec/v2.0.0.html). `cargo xtask release` writes each \
section from the commits since the previous tag, grouped by the crate they change.\n\n";

const UNRELEASED: &str = "## [Unreleased]";

/// The group of changes outside every crate.
const WORKSPACE: &str = "Workspace";

/// One commit: short hash, subject and the files it changed.
#[derive(Debug)]
pub(crate) struct Commit {
    pub(crate) hash: String,
    pub(crate) subject: String,
    pub(crate) files: Vec<String>,
}

/// Writes the section for `version` into `CHANGELOG.md` (created when missing) and returns it.
pub(crate) fn write(
    root: &Path,
    metadata: &Metadata,
    version: &str,
    date: &str,
    binary: Option<&str>,
) -> Result<String, String> {
    let commits = commits_since_last_tag(root)?;
    let groups = group_dirs(root, metadata)?;
    let path = root.join(FILE);
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(format!("{FILE}: {err}")),
    };
    let (before, unreleased, after) = split_unreleased(&existing);
    let section = section(version, date, binary, unreleased, &groups, &commits);
    let text = format!("{before}{UNRELEASED}\n\n{section}{after}");
    std::fs::write(&path, text).map_err(|err| format!("{FILE}: {err}"))?;
    Ok(section)
}

/// The changelog's text before `## [Unreleased]` (the header when there is none), the notes
/// under it, and the earlier releases after them.
fn split_unreleased(text: &str) -> (&str, &str, &str) {
    let Some(start) = text.find(UNRELEASED) else {
        return if text.is_empty() {
            (HEADER, "", "")
        } else {
            // A changelog without the heading: the new section goes on top of what is there.
            let split = text.find("\n## ").map_or(text.len(), |at| at + 1);
            (&text[..split], "", &text[split..])
        };
    };
    let body = start + UNRELEASED.len();
    let end = text[body..]
        .find("\n## ")
        .map_or(text.len(), |at| body + at + 1);
    (&text[..start], text[body..end].trim(), &text[end..])
}

/// The section for one release. `groups` are `(group name, path prefix)` in display order.
pub(crate) fn section(
    version: &str,
    date: &str,
    binary: Option<&str>,
    notes: &str,
    groups: &[(String, String)],
    commits: &[Commit],
) -> String {
    let mut listed: BTreeMap<usize, Vec<&Commit>> = BTreeMap::new();
    for commit in commits {
        let mut touched: Vec<usize> = commit
            .files
            .iter()
            .map(|file| group_of(groups, file))
            .collect();
        touched.sort_unstable();
        touched.dedup();
        for group in touched {
            listed.entry(group).or_default().push(commit);
        }
    }
    let mut text = format!("## [{version}] - {date}\n\n");
    if !notes.is_empty() {
        text.push_str(notes);
        text.push_str("\n\n");
    }
    if let Some(binary) = binary {
        text.push_str(binary);
        text.push_str("\n\n");
    }
    if commits.is_empty() {
        text.push_str("No changes since the previous release.\n\n");
    }
    for (index, commits) in listed {
        let name = groups
            .get(index)
            .map_or(WORKSPACE, |(name, _)| name.as_str());
        text.push_str(&format!("### {name}\n\n"));
        for commit in commits {
            text.push_str(&format!("- {} ({})\n", commit.subject, commit.hash));
        }
        text.push('\n');
    }
    text
}

/// The index of the group a changed file belongs to; `groups.len()` for the workspace.
fn group_of(groups: &[(String, String)], file: &str) -> usize {
    groups
        .iter()
        .position(|(_, prefix)| file.starts_with(prefix.as_str()))
        .unwrap_or(groups.len())
}

/// `(package name, "<dir>/")` for every member: publishable crates in publish order, then the
/// others by name.
fn group_dirs(root: &Path, metadata: &Metadata) -> Result<Vec<(String, String)>, String> {
    let mut names = order::publish_order(metadata)?;
    let mut others: Vec<String> = metadata
        .workspace_packages()
        .into_iter()
        .map(|p| p.name.to_string())
        .filter(|name| !names.contains(name))
        .collect();
    others.sort();
    names.extend(others);
    let root = root
        .canonicalize()
        .map_err(|err| format!("{}: {err}", root.display()))?;
    let mut groups = Vec::new();
    for name in names {
        let Some(dir) = super::package_dir(metadata, &name) else {
            continue;
        };
        let dir = dir.canonicalize().unwrap_or(dir);
        let relative = dir
            .strip_prefix(&root)
            .map_err(|_| format!("{name} lies outside the workspace"))?;
        groups.push((name, format!("{}/", relative.display())));
    }
    Ok(groups)
}

/// The non-merge commits after the newest tag reachable from `HEAD` (all of them without a
/// tag), newest first.
pub(crate) fn commits_since_last_tag(root: &Path) -> Result<Vec<Commit>, String> {
    let range = match git_output(root, &["describe", "--tags", "--abbrev=0"]) {
        Ok(tag) => format!("{}..HEAD", tag.trim()),
        Err(_) => "HEAD".to_owned(),
    };
    let log = git_output(
        root,
        &[
            "log",
            "--no-merges",
            "--name-only",
            "--format=%x1e%h%x1f%s",
            &range,
        ],
    )?;
    Ok(parse_log(&log))
}

fn parse_log(log: &str) -> Vec<Commit> {
    log.split('\x1e')
        .filter_map(|record| {
            let mut lines = record.lines();
            let (hash, subject) = lines.next()?.split_once('\x1f')?;
            let files = lines
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .map(str::to_owned)
                .collect();
            Some(Commit {
                hash: hash.to_owned(),
                subject: subject.to_owned(),
                files,
            })
        })
        .collect()
}

/// Today's date in UTC, `YYYY-MM-DD`.
pub(crate) fn today() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil_date(seconds / 86_400)
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
pub(crate) fn civil_date(days: u64) -> String {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
