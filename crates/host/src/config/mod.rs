//! One configuration, merged from layers, each value remembering where it came from.
//!
//! Order (later wins): built-in defaults → the user's file (`$XDG_CONFIG_HOME/tackle/tackle.json`
//! or `.jsonc`, else `~/.config/tackle/...`) → project files, from the repository root down to
//! the Location, in each directory `opencode.json[c]`, `.opencode/opencode.json[c]`, then
//! `tackle.json[c]` → the `--config` file → `TACKLE_*` environment variables → flags. Objects
//! merge key by key; a list or a single value replaces the earlier one.
//!
//! Permission rules are not replaced but appended in that order (the last matching rule wins).
//! A project's file is written by whoever wrote the repository: until the user trusts it
//! (`tackle trust`, recorded with its content hash in [`crate::trust`]) its rules only
//! tighten ([`Ruleset::restrict`]: for each request the stricter decision wins, its allows
//! allow nothing). The user's file, `--config`, the environment and flags are the user's own.
//! Likewise the settings that would widen what a tool reaches or reveals ([`TRUSTED_KEYS`]:
//! the shell, the credentials commands see, the local addresses webfetch reaches, the variable
//! whose value websearch sends, skill directories, MCP servers, the audit log, and the retention
//! and quota of the saved outputs every session shares) are ignored in an untrusted project
//! file, with a warning; its limits and timeouts apply only where they tighten the value they
//! override (`tighten`), a looser one is ignored with a warning. `tackle config` shows what was
//! ignored and where it came from.

mod defaults;
mod file;
mod layers;
mod parse;
mod show;
mod tighten;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use tackle_permission::{Effect, RuleOrigin, Ruleset, parse_permission};

pub use file::{
    AgentConfig, AuditConfig, BashConfig, ConfigFile, McpKind, McpServerConfig, OutputConfig,
    Provider, ReadConfig, SearchConfig, SkillsConfig, WebfetchConfig, WebsearchConfig, schema,
};
pub use layers::{
    ENVIRONMENT_KEYS, Layer, Origin, PROJECT_FILES, USER_FILES, project_dirs, variable,
};

pub(crate) use defaults::DAY;
use tighten::Ignored;

/// A project configuration file as found, for `tackle trust`.
#[derive(Debug, Clone)]
pub struct ProjectFile {
    /// The file.
    pub path: PathBuf,
    /// Its text (what is hashed).
    pub text: String,
    /// How many allow rules it has (global and per agent).
    pub allows: usize,
}

/// The project configuration files of `location` (canonical), parsed: a file that does not
/// load is an error, and is not worth trusting.
pub fn project_files(location: &Path) -> Result<Vec<ProjectFile>, HostError> {
    let mut files = Vec::new();
    for layer in layers::project_layers(location, None)? {
        let Origin::Project(path) = layer.origin else {
            continue;
        };
        let source = path.display().to_string();
        let file = &layer.parsed.file;
        let agents = file
            .agent
            .iter()
            .flatten()
            .filter_map(|(_, agent)| agent.permission.as_ref());
        let mut allows = 0;
        for permission in file.permission.iter().chain(agents) {
            allows += parse_permission(permission, &source)?
                .rules()
                .iter()
                .filter(|rule| rule.effect == Effect::Allow)
                .count();
        }
        files.push(ProjectFile {
            path,
            text: layer.text.unwrap_or_default(),
            allows,
        });
    }
    Ok(files)
}

use crate::env::Environment;
use crate::error::{ConfigError, HostError};
use crate::trust::{Trust, TrustStore};

/// What a configuration is loaded from.
#[derive(Debug, Clone)]
pub struct Sources {
    /// The Location (canonical); project files are looked for from here up to the repository
    /// root.
    pub location: PathBuf,
    /// Where the trust records are; `None`: every project file is untrusted.
    pub data_dir: Option<PathBuf>,
    /// `--config FILE`.
    pub file: Option<PathBuf>,
    /// The environment (the user's configuration directory, `TACKLE_*`).
    pub env: Environment,
    /// Flags, as key paths and values (`("output.max_lines", 500)`), in order.
    pub flags: Vec<(String, Value)>,
}

/// The merged configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Every setting but the rules, merged (absent: the built-in default).
    pub settings: ConfigFile,
    origins: BTreeMap<String, Origin>,
    /// The default rules, then each layer's (tightening only, when untrusted).
    pub rules: Ruleset,
    /// `agent.<name>.permission` of every layer, by agent, composed the same way (without the
    /// global rules: composing them on top is the permission service's).
    pub agents: BTreeMap<String, Ruleset>,
    /// The layers found, in merge order.
    pub layers: Vec<Layer>,
    /// What the user should read: untrusted project files whose allows were ignored.
    pub warnings: Vec<String>,
    /// The settings of untrusted project files that were not applied, in merge order.
    ignored: Vec<Ignored>,
}

impl Config {
    /// Loads every layer of `sources` and merges them.
    pub fn load(sources: &Sources) -> Result<Self, HostError> {
        let mut layers = layers::user_layers(&sources.env)?;
        let trust = sources.data_dir.as_deref().map(TrustStore::new);
        layers.extend(layers::project_layers(&sources.location, trust.as_ref())?);
        if let Some(path) = &sources.file {
            layers.push(layers::explicit_layer(path)?);
        }
        layers.extend(layers::environment_layers(&sources.env, &sources.location)?);
        for (key, value) in &sources.flags {
            layers.push(layers::flag_layer(key, value.clone(), &sources.location)?);
        }
        Self::from_layers(layers, &sources.location)
    }

    fn from_layers(layers: Vec<Layer>, location: &Path) -> Result<Self, HostError> {
        let mut merged = Map::new();
        let mut origins = BTreeMap::new();
        let mut rules = Ruleset::defaults();
        let mut agents: BTreeMap<String, Ruleset> = BTreeMap::new();
        let mut warnings = Vec::new();
        let mut ignored = Vec::new();
        // The built-in values, looked up once and only when an untrusted file sets something.
        let mut defaults: Option<Map<String, Value>> = None;
        for layer in &layers {
            let source = layer.origin.to_string();
            let file = &layer.parsed.file;
            let mut value = layer.parsed.value.clone();
            for key in ["$schema", "permission", "agent"] {
                value.remove(key);
            }
            if !layer.trusted() {
                let removed = remove_trusted_keys(&mut value);
                if !removed.is_empty() {
                    let keys: Vec<&str> = removed.iter().map(|(key, _)| *key).collect();
                    warnings.push(format!(
                        "tackle: {source} is not trusted: its {} setting{} ignored \
                         (run `tackle trust {}` if you trust it)",
                        keys.join(", "),
                        if keys.len() == 1 { " is" } else { "s are" },
                        location.display()
                    ));
                }
                let defaults = defaults.get_or_insert_with(defaults::values);
                let loosening = tighten::remove_loosening(&mut value, &merged, defaults);
                if !loosening.is_empty() {
                    let settings: Vec<String> = loosening
                        .iter()
                        .map(|(key, value, over)| format!("{key} ({value} instead of {over})"))
                        .collect();
                    warnings.push(format!(
                        "tackle: {source} is not trusted: its {} setting{} ignored, as an \
                         untrusted project may only tighten a limit (run `tackle trust {}` if \
                         you trust it)",
                        settings.join(", "),
                        if settings.len() == 1 { " is" } else { "s are" },
                        location.display()
                    ));
                }
                let trusted = removed.into_iter().map(|(key, value)| (key, value, false));
                let loose = loosening
                    .into_iter()
                    .map(|(key, value, _)| (key, value, true));
                ignored.extend(trusted.chain(loose).map(|(key, value, loosens)| Ignored {
                    key: key.to_owned(),
                    value,
                    origin: layer.origin.clone(),
                    loosens,
                }));
            }
            merge(&mut merged, value, "", &layer.origin, &mut origins);
            if let Some(permission) = &file.permission {
                let parsed = parse_permission(permission, &source)?;
                if let Some(warning) = warning(layer, location, &parsed) {
                    warnings.push(warning);
                }
                compose(&mut rules, parsed, layer.trusted());
            }
            for (name, agent) in file.agent.iter().flatten() {
                if let Some(permission) = &agent.permission {
                    let parsed = under_agent(&parse_permission(permission, &source)?, name);
                    compose(
                        agents.entry(name.clone()).or_default(),
                        parsed,
                        layer.trusted(),
                    );
                }
            }
        }
        let settings: ConfigFile = serde_json::from_value(Value::Object(merged))
            .map_err(|err| ConfigError::new("the merged configuration", "", err.to_string()))?;
        Ok(Self {
            settings,
            origins,
            rules,
            agents,
            layers,
            warnings,
            ignored,
        })
    }

    /// Where the value at `key` (a dotted path, `bash.shell`) came from.
    pub fn origin(&self, key: &str) -> Origin {
        let mut at = key;
        loop {
            if let Some(origin) = self.origins.get(at) {
                return origin.clone();
            }
            match at.rsplit_once('.') {
                Some((parent, _)) => at = parent,
                None => break,
            }
        }
        // An object set key by key (`mcp`, `bash.env`): the last layer that set part of it.
        let below = format!("{key}.");
        self.origins
            .iter()
            .filter(|(path, _)| path.starts_with(&below))
            .map(|(_, origin)| origin)
            .max_by_key(|origin| self.layer_index(origin))
            .cloned()
            .unwrap_or(Origin::Default)
    }

    fn layer_index(&self, origin: &Origin) -> usize {
        self.layers
            .iter()
            .position(|layer| &layer.origin == origin)
            .unwrap_or(0)
    }

    /// The project files found, with their trust.
    pub fn project_files(&self) -> impl Iterator<Item = (&Path, Option<Trust>)> {
        self.layers.iter().filter_map(|layer| match &layer.origin {
            Origin::Project(path) => Some((path.as_path(), layer.trust)),
            _ => None,
        })
    }

    /// The effective configuration, one value a line with its origin (`tackle config`).
    pub fn describe(&self) -> String {
        show::describe(self)
    }
}

/// Settings only a trusted layer may set: each widens what a tool reaches or reveals.
pub const TRUSTED_KEYS: &[&str] = &[
    "bash.shell",
    "bash.env_allow",
    "bash.env",
    "webfetch.allow",
    "websearch.api_key_env",
    "skills.paths",
    "mcp",
    // Where the audit log goes: a project must not make tackle append to a file of its choice,
    // nor rotate the user's records away. (`audit.required` only tightens: a limit.)
    "audit.path",
    "audit.max_bytes",
    "audit.keep",
    // The saved outputs' directory is shared by every session of the data directory: a shorter
    // retention or a smaller quota from one repository would sweep the outputs other sessions
    // still page through.
    "output.retention_days",
    "output.quota_bytes",
];

/// Removes [`TRUSTED_KEYS`] from `value` and names those that were there, with their values.
fn remove_trusted_keys(value: &mut Map<String, Value>) -> Vec<(&'static str, Value)> {
    let mut removed = Vec::new();
    for key in TRUSTED_KEYS {
        let gone = match key.split_once('.') {
            Some((parent, child)) => match value.get_mut(parent) {
                Some(Value::Object(object)) => object.remove(child),
                _ => None,
            },
            None => value.remove(*key),
        };
        if let Some(gone) = gone {
            removed.push((*key, gone));
        }
    }
    removed
}

/// `rules` with their origins' key paths under `agent.<name>.`, where the file has them.
fn under_agent(rules: &Ruleset, name: &str) -> Ruleset {
    Ruleset::with_origins(rules.rules().iter().enumerate().map(|(index, rule)| {
        let origin = match rules.origin(index) {
            Some(RuleOrigin::Config { file, key, index }) => RuleOrigin::Config {
                file: file.clone(),
                key: format!("agent.{name}.{key}"),
                index: *index,
            },
            Some(other) => other.clone(),
            None => RuleOrigin::Given { index },
        };
        (rule.clone(), origin)
    }))
}

fn compose(rules: &mut Ruleset, layer: Ruleset, trusted: bool) {
    if trusted {
        rules.append(layer);
    } else {
        rules.restrict(layer);
    }
}

/// Merges `layer` into `into` key by key, recording each leaf's origin under `prefix`.
fn merge(
    into: &mut Map<String, Value>,
    layer: Map<String, Value>,
    prefix: &str,
    origin: &Origin,
    origins: &mut BTreeMap<String, Origin>,
) {
    for (key, value) in layer {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match (into.get_mut(&key), value) {
            (Some(Value::Object(existing)), Value::Object(object)) => {
                merge(existing, object, &path, origin, origins);
            }
            (_, Value::Object(object)) => {
                let mut fresh = Map::new();
                merge(&mut fresh, object, &path, origin, origins);
                into.insert(key, Value::Object(fresh));
            }
            (_, value) => {
                origins
                    .retain(|known, _| known != &path && !known.starts_with(&format!("{path}.")));
                origins.insert(path, origin.clone());
                into.insert(key, value);
            }
        }
    }
}

/// What the user reads when an untrusted project file is loaded: nothing when it has no
/// allow and did not change since it was trusted.
fn warning(layer: &Layer, location: &Path, project: &Ruleset) -> Option<String> {
    let (Origin::Project(path), Some(trust)) = (&layer.origin, layer.trust) else {
        return None;
    };
    if trust == Trust::Trusted {
        return None;
    }
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
