//! Where configuration comes from, in order: user file, project files, `--config`, the
//! environment, flags. Each found layer is parsed and checked on its own, so an error names it.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::parse::{Dialect, Parsed, parse_text, parse_value};
use crate::env::Environment;
use crate::error::{ConfigError, HostError};
use crate::trust::{Trust, TrustStore};

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// Built in.
    Default,
    /// The user's configuration file.
    User(PathBuf),
    /// A project's configuration file.
    Project(PathBuf),
    /// The file given with `--config` (or [`HostBuilder::config_file`](crate::HostBuilder)).
    File(PathBuf),
    /// A `TACKLE_*` environment variable.
    Environment(String),
    /// A flag (`--set key=value`) or a value the embedding program set.
    Flag(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Default => f.write_str("default"),
            Self::User(path) | Self::Project(path) | Self::File(path) => {
                write!(f, "{}", path.display())
            }
            Self::Environment(name) => write!(f, "environment {name}"),
            Self::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

/// One layer that was found, in merge order.
#[derive(Debug, Clone)]
pub struct Layer {
    /// Where it came from.
    pub origin: Origin,
    /// For a project file, whether the user trusts it; `None` for the user's own layers.
    pub trust: Option<Trust>,
    pub(crate) parsed: Parsed,
    /// A project file's text (what `trust` hashes).
    pub(crate) text: Option<String>,
}

impl Layer {
    /// True when its permission rules apply in full (allows included).
    pub fn trusted(&self) -> bool {
        matches!(self.trust, None | Some(Trust::Trusted))
    }
}

/// The project files looked for in each directory, lowest precedence first.
pub const PROJECT_FILES: [&str; 6] = [
    "opencode.json",
    "opencode.jsonc",
    ".opencode/opencode.json",
    ".opencode/opencode.jsonc",
    "tackle.json",
    "tackle.jsonc",
];

/// The user's files below the configuration directory, lowest precedence first.
pub const USER_FILES: [&str; 2] = ["tackle/tackle.json", "tackle/tackle.jsonc"];

fn dialect(path: &Path) -> Dialect {
    let opencode = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("opencode."));
    if opencode {
        Dialect::Opencode
    } else {
        Dialect::Tackle
    }
}

/// The directories whose project files apply to `location`: from the repository root (the
/// nearest ancestor holding `.git`) down to the Location; only the Location outside a
/// repository.
pub fn project_dirs(location: &Path) -> Vec<PathBuf> {
    let root = location
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(location);
    let mut dirs: Vec<PathBuf> = location
        .ancestors()
        .take_while(|dir| dir.starts_with(root))
        .map(Path::to_path_buf)
        .collect();
    dirs.reverse();
    dirs
}

/// Reads `path`: `None` when it does not exist and is not `required`.
pub(crate) fn read(path: &Path, required: bool) -> Result<Option<String>, HostError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && !required => Ok(None),
        Err(source) => Err(HostError::ConfigRead {
            path: path.to_owned(),
            source,
        }),
    }
}

fn file_layer(path: &Path, text: String, origin: Origin) -> Result<Layer, HostError> {
    let base = path.parent().unwrap_or(Path::new("/"));
    let parsed = parse_text(&text, &path.display().to_string(), dialect(path), base)?;
    Ok(Layer {
        origin,
        trust: None,
        parsed,
        text: Some(text),
    })
}

/// The user's configuration files under `env`'s configuration directory.
pub(crate) fn user_layers(env: &Environment) -> Result<Vec<Layer>, HostError> {
    let mut layers = Vec::new();
    let Some(dir) = env.config_dir() else {
        return Ok(layers);
    };
    for name in USER_FILES {
        let path = dir.join(name);
        if let Some(text) = read(&path, false)? {
            let origin = Origin::User(path.clone());
            layers.push(file_layer(&path, text, origin)?);
        }
    }
    Ok(layers)
}

/// The project files of `location`, parsed, with their trust under `trust`.
pub(crate) fn project_layers(
    location: &Path,
    trust: Option<&TrustStore>,
) -> Result<Vec<Layer>, HostError> {
    let mut layers = Vec::new();
    for dir in project_dirs(location) {
        for name in PROJECT_FILES {
            let path = dir.join(name);
            let Some(text) = read(&path, false)? else {
                continue;
            };
            let mut layer = file_layer(&path, text, Origin::Project(path.clone()))?;
            if let (Some(store), Some(text)) = (trust, &layer.text) {
                layer.trust = Some(store.status(&path, text.as_bytes())?);
            }
            layers.push(layer);
        }
    }
    Ok(layers)
}

/// The `--config` file: it must exist, and is trusted (the user named it).
pub(crate) fn explicit_layer(path: &Path) -> Result<Layer, HostError> {
    let text = read(path, true)?.unwrap_or_default();
    let mut parsed = file_layer(path, text, Origin::File(path.to_owned()))?;
    // An explicit file is held to tackle's keys whatever its name.
    if dialect(path) == Dialect::Opencode {
        let base = path.parent().unwrap_or(Path::new("/"));
        let text = parsed.text.clone().unwrap_or_default();
        parsed.parsed = parse_text(&text, &path.display().to_string(), Dialect::Tackle, base)?;
    }
    Ok(parsed)
}

/// How an environment variable's text becomes a value.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Number,
    /// `true` or `false`.
    Flag,
    Text,
    /// Comma-separated.
    List,
}

/// The `TACKLE_*` variables read, each setting one key (`TACKLE_` + the key path in upper
/// case, `.` as `_`).
pub const ENVIRONMENT_KEYS: &[&str] = &[
    "output.max_lines",
    "output.max_bytes",
    "output.retention_days",
    "output.max_file_bytes",
    "output.quota_bytes",
    "read.image_max_width",
    "read.image_max_height",
    "read.image_max_bytes",
    "read.image_input",
    "bash.shell",
    "bash.default_timeout_ms",
    "bash.max_timeout_ms",
    "bash.env_allow",
    "webfetch.allow",
    "webfetch.timeout_seconds",
    "webfetch.max_bytes",
    "websearch.provider",
    "websearch.api_key_env",
    "search.budget_ms",
    "skills.paths",
];

fn kind(key: &str) -> Kind {
    match key {
        "bash.shell" | "websearch.provider" | "websearch.api_key_env" => Kind::Text,
        "bash.env_allow" | "webfetch.allow" | "skills.paths" => Kind::List,
        "read.image_input" => Kind::Flag,
        _ => Kind::Number,
    }
}

/// The variable that sets `key`.
pub fn variable(key: &str) -> String {
    format!("TACKLE_{}", key.to_ascii_uppercase().replace('.', "_"))
}

/// One layer per `TACKLE_*` variable set in `env`; relative paths are relative to `base`.
pub(crate) fn environment_layers(env: &Environment, base: &Path) -> Result<Vec<Layer>, HostError> {
    let mut layers = Vec::new();
    for key in ENVIRONMENT_KEYS {
        let name = variable(key);
        let Some(text) = env.get_os(&name) else {
            continue;
        };
        let source = format!("environment {name}");
        let text = text
            .into_string()
            .map_err(|_| ConfigError::new(&source, key, "is not valid UTF-8"))?;
        let value = match kind(key) {
            Kind::Text => Value::String(text),
            Kind::List => Value::Array(
                text.split(',')
                    .map(str::trim)
                    .filter(|item| !item.is_empty())
                    .map(|item| Value::String(item.to_owned()))
                    .collect(),
            ),
            Kind::Flag => match text.trim().parse::<bool>() {
                Ok(flag) => Value::Bool(flag),
                Err(_) => {
                    return Err(ConfigError::new(
                        &source,
                        key,
                        format!("expected true or false, found {text:?}"),
                    )
                    .into());
                }
            },
            Kind::Number => match text.trim().parse::<u64>() {
                Ok(number) => Value::from(number),
                Err(_) => {
                    return Err(ConfigError::new(
                        &source,
                        key,
                        format!("expected a whole number, found {text:?}"),
                    )
                    .into());
                }
            },
        };
        let parsed = parse_value(nest(key, value), &source, base)?;
        layers.push(Layer {
            origin: Origin::Environment(name),
            trust: None,
            parsed,
            text: None,
        });
    }
    Ok(layers)
}

/// A flag's layer: `key` (a dotted path) set to `value`.
pub(crate) fn flag_layer(key: &str, value: Value, base: &Path) -> Result<Layer, HostError> {
    let flag = format!("--set {key}={value}");
    let parsed = parse_value(nest(key, value), &format!("flag {flag}"), base)?;
    Ok(Layer {
        origin: Origin::Flag(flag),
        trust: None,
        parsed,
        text: None,
    })
}

/// `{"a": {"b": value}}` for `a.b`.
fn nest(key: &str, value: Value) -> Map<String, Value> {
    let mut value = value;
    let mut parts: Vec<&str> = key.split('.').collect();
    let first = parts.remove(0);
    for part in parts.iter().rev() {
        let mut object = Map::new();
        object.insert((*part).to_owned(), value);
        value = Value::Object(object);
    }
    let mut top = Map::new();
    top.insert(first.to_owned(), value);
    top
}
