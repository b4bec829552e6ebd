//! Where the binary's configuration comes from.
//!
//! `--config FILE`, else the Location's `tackle.json`, else its `opencode.json` (so a repository
//! already configured for opencode/Kilo keeps its rules). Both have the shape of opencode.json:
//! the rules sit under the top-level `permission` key. Other keys of opencode.json are ignored;
//! tackle.json (and an explicit `--config`) accepts only `permission` and `$schema`. The
//! configured rules apply on top of the defaults.

use std::path::{Path, PathBuf};

use tackle_permission::{Ruleset, SavedApprovals, UnknownKeys, parse_config};

use crate::error::CliError;

/// The rules in force for a Location and the file they came from.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The default rules, then the configured ones.
    pub(crate) rules: Ruleset,
    /// The configuration file, if one was found.
    pub(crate) source: Option<PathBuf>,
}

/// The rules for `location`: the defaults, then those of the first configuration file found.
pub(crate) fn load(location: &Path, explicit: Option<&Path>) -> Result<Loaded, CliError> {
    let candidates: Vec<(PathBuf, UnknownKeys, bool)> = match explicit {
        Some(path) => vec![(path.to_owned(), UnknownKeys::Reject, true)],
        None => vec![
            (location.join("tackle.json"), UnknownKeys::Reject, false),
            (location.join("opencode.json"), UnknownKeys::Ignore, false),
        ],
    };
    let mut rules = Ruleset::defaults();
    for (path, unknown, required) in candidates {
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let source = path.display().to_string();
                rules.append(parse_config(&text, &source, unknown).map_err(CliError::Permission)?);
                return Ok(Loaded {
                    rules,
                    source: Some(path),
                });
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound && !required => {}
            Err(source) => return Err(CliError::ConfigRead { path, source }),
        }
    }
    Ok(Loaded {
        rules,
        source: None,
    })
}

/// The approvals saved for `location` ("always" replies) under `data_dir`.
pub(crate) fn saved_approvals(
    data_dir: &Path,
    location: &Path,
) -> Result<SavedApprovals, CliError> {
    SavedApprovals::for_project(data_dir, location).map_err(CliError::Permission)
}
