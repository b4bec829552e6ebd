//! Where the binary's configuration comes from, and how far a project's is believed.
//!
//! `--config FILE`, else the Location's `tackle.json`, else its `opencode.json` (so a repository
//! already configured for opencode/Kilo keeps its rules). Both have the shape of opencode.json:
//! the rules sit under the top-level `permission` key. Other keys of opencode.json are ignored;
//! tackle.json (and an explicit `--config`) accepts only `permission` and `$schema`.
//!
//! The user's rules are the defaults plus an explicit `--config` (the user named it). A
//! project's file is written by whoever wrote the repository: until the user trusts it
//! (`tackle trust`, recorded with its content hash, see [`crate::trust`]) its rules only
//! tighten the user's ([`Ruleset::restrict`]: for each request the stricter decision wins, and
//! its allows allow nothing). A trusted file's rules apply on top of the defaults, allows
//! included; a trusted file that changed is untrusted again.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tackle_permission::{Effect, RuleOrigin, Ruleset, SavedApprovals, UnknownKeys, parse_config};

use crate::error::CliError;
use crate::trust::{Trust, TrustStore};

/// The project configuration files, in the order the loader looks for them.
pub(crate) const PROJECT_FILES: [(&str, UnknownKeys); 2] = [
    ("tackle.json", UnknownKeys::Reject),
    ("opencode.json", UnknownKeys::Ignore),
];

/// The rules in force for a Location and the file they came from.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The default rules, then the configured ones (tightening only, when untrusted).
    pub(crate) rules: Ruleset,
    /// The configuration file, if one was found.
    pub(crate) source: Option<PathBuf>,
    /// How far the file is believed: `None` for `--config` or no file.
    pub(crate) trust: Option<Trust>,
}

/// A project configuration file as read.
#[derive(Debug)]
pub(crate) struct ProjectFile {
    pub(crate) path: PathBuf,
    pub(crate) text: String,
    pub(crate) rules: Ruleset,
}

/// The Location's configuration files that exist, parsed, in lookup order.
pub(crate) fn project_files(location: &Path) -> Result<Vec<ProjectFile>, CliError> {
    let mut found = Vec::new();
    for (name, unknown) in PROJECT_FILES {
        let path = location.join(name);
        if let Some(text) = read(&path, false)? {
            let rules = parse_config(&text, &path.display().to_string(), unknown)?;
            found.push(ProjectFile { path, text, rules });
        }
    }
    Ok(found)
}

/// The rules for `location`: the defaults, then those of the first configuration file found,
/// as far as `data_dir`'s trust records allow. Warns on stderr when a project file's allows
/// are ignored.
pub(crate) fn load(
    location: &Path,
    explicit: Option<&Path>,
    data_dir: &Path,
) -> Result<Loaded, CliError> {
    let mut rules = Ruleset::defaults();
    if let Some(path) = explicit {
        let text = read(path, true)?.unwrap_or_default();
        let source = path.display().to_string();
        rules.append(parse_config(&text, &source, UnknownKeys::Reject)?);
        return Ok(Loaded {
            rules,
            source: Some(path.to_owned()),
            trust: None,
        });
    }
    for (name, unknown) in PROJECT_FILES {
        let path = location.join(name);
        let Some(text) = read(&path, false)? else {
            continue;
        };
        let project = parse_config(&text, &path.display().to_string(), unknown)?;
        let trust = TrustStore::new(data_dir).status(&path, text.as_bytes())?;
        if trust == Trust::Trusted {
            rules.append(project);
        } else {
            if let Some(warning) = warning(&path, location, &project, trust) {
                eprintln!("{warning}");
            }
            rules.restrict(project);
        }
        return Ok(Loaded {
            rules,
            source: Some(path),
            trust: Some(trust),
        });
    }
    Ok(Loaded {
        rules,
        source: None,
        trust: None,
    })
}

/// `path`'s text; `None` when it does not exist and is not `required`.
fn read(path: &Path, required: bool) -> Result<Option<String>, CliError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && !required => Ok(None),
        Err(source) => Err(CliError::ConfigRead {
            path: path.to_owned(),
            source,
        }),
    }
}

/// What the user reads when an untrusted project file is loaded: nothing when it has no allow
/// and did not change since it was trusted.
fn warning(path: &Path, location: &Path, project: &Ruleset, trust: Trust) -> Option<String> {
    let allows: Vec<String> = project
        .rules()
        .iter()
        .enumerate()
        .filter(|(_, rule)| rule.effect == Effect::Allow)
        .filter_map(|(index, _)| match project.origin(index)? {
            RuleOrigin::Config { key, .. } => Some(key.clone()),
            _ => None,
        })
        .collect();
    if allows.is_empty() && trust != Trust::Changed {
        return None;
    }
    let mut text = format!("tackle: {}", path.display());
    text.push_str(if trust == Trust::Changed {
        " changed since you trusted it, so it is untrusted again"
    } else {
        " is not trusted"
    });
    if allows.is_empty() {
        text.push_str("; its deny and ask rules apply.");
    } else {
        const SHOWN: usize = 5;
        let mut keys = allows
            .iter()
            .take(SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if allows.len() > SHOWN {
            let _ = write!(keys, " and {} more", allows.len() - SHOWN);
        }
        let _ = write!(
            text,
            ": its allow rules are ignored ({keys}); its deny and ask rules apply."
        );
    }
    let _ = write!(
        text,
        "\n  If you trust this project, review the file and run: tackle trust {}",
        location.display()
    );
    Some(text)
}

/// The approvals saved for `location` ("always" replies) under `data_dir`.
pub(crate) fn saved_approvals(
    data_dir: &Path,
    location: &Path,
) -> Result<SavedApprovals, CliError> {
    SavedApprovals::for_project(data_dir, location).map_err(CliError::Permission)
}
