//! One layer's text or value to a checked [`ConfigFile`], with errors that point at the key.

use std::path::Path;

use serde_json::{Map, Value};
use tackle_builtins::web::WebAccess;
use tackle_permission::{PermissionError, jsonc_to_json, parse_permission};
use tackle_tool_core::value_kind as kind;

use super::file::{ConfigFile, OPENCODE_KEYS};
use crate::error::ConfigError;

/// How a file treats keys it does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// tackle's own files and `--config`: an unknown key is an error.
    Tackle,
    /// opencode's files: only opencode's keys that tackle reads; the rest are ignored.
    Opencode,
}

/// A checked layer: its typed content and the same as JSON (for merging).
#[derive(Debug, Clone)]
pub(crate) struct Parsed {
    pub(crate) file: ConfigFile,
    pub(crate) value: Map<String, Value>,
}

/// Parses a file's JSONC `text`; `source` names it in errors. Relative skill paths are made
/// relative to `base` (the file's directory).
pub(crate) fn parse_text(
    text: &str,
    source: &str,
    dialect: Dialect,
    base: &Path,
) -> Result<Parsed, ConfigError> {
    let plain = jsonc_to_json(text).map_err(|message| ConfigError::new(source, "", message))?;
    let value: Value = serde_json::from_str(&plain).map_err(|err| {
        let mut error = ConfigError::new(source, "", syntax(&err));
        error.position = Some((err.line(), err.column()));
        error
    })?;
    let Value::Object(object) = value else {
        return Err(ConfigError::new(
            source,
            "",
            format!(
                "expected a JSON object at the top level, found {}",
                kind(&value)
            ),
        ));
    };
    match dialect {
        // Deserialized from the text, so a type error has the file's line and column.
        Dialect::Tackle => {
            let mut deserializer = serde_json::Deserializer::from_str(&plain);
            let file: ConfigFile =
                serde_path_to_error::deserialize(&mut deserializer).map_err(|err| {
                    let position = (err.inner().line(), err.inner().column());
                    let mut error = typed(source, &err);
                    error.position = Some(position);
                    error
                })?;
            finish(file, object, source, base)
        }
        Dialect::Opencode => parse_value(opencode_subset(object), source, base),
    }
}

/// Checks a layer given as JSON (an environment variable, a flag, a library caller's value).
pub(crate) fn parse_value(
    object: Map<String, Value>,
    source: &str,
    base: &Path,
) -> Result<Parsed, ConfigError> {
    let file: ConfigFile = serde_path_to_error::deserialize(Value::Object(object.clone()))
        .map_err(|err| typed(source, &err))?;
    finish(file, object, source, base)
}

fn finish(
    mut file: ConfigFile,
    mut value: Map<String, Value>,
    source: &str,
    base: &Path,
) -> Result<Parsed, ConfigError> {
    check(&file, source)?;
    if let Some(paths) = file.skills.as_mut().and_then(|s| s.paths.as_mut()) {
        for path in paths.iter_mut() {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        }
        let absolute: Vec<Value> = paths
            .iter()
            .map(|p| Value::String(p.display().to_string()))
            .collect();
        if let Some(Value::Object(skills)) = value.get_mut("skills") {
            skills.insert("paths".to_owned(), Value::Array(absolute));
        }
    }
    Ok(Parsed { file, value })
}

/// The keys of an opencode file tackle reads.
fn opencode_subset(mut object: Map<String, Value>) -> Map<String, Value> {
    object.retain(|key, _| OPENCODE_KEYS.contains(&key.as_str()));
    if let Some(Value::Object(agents)) = object.get_mut("agent") {
        for agent in agents.values_mut() {
            if let Value::Object(settings) = agent {
                settings.retain(|key, _| key == "permission");
            }
        }
    }
    object
}

/// What serde's message becomes: unknown keys get a "did you mean" and the accepted keys.
fn typed<E: std::fmt::Display>(source: &str, err: &serde_path_to_error::Error<E>) -> ConfigError {
    let path = err.path().to_string();
    let path = if path == "." { String::new() } else { path };
    let inner = err.inner().to_string();
    // serde names Rust types; a configuration's reader knows JSON's.
    let inner = inner
        .split(" at line ")
        .next()
        .unwrap_or_default()
        .replace("expected u64", "expected a whole number")
        .replace("expected u32", "expected a whole number")
        .replace("expected usize", "expected a whole number")
        .replace("expected a sequence", "expected a list")
        .replace("expected a map", "expected an object");
    match unknown_key(&inner) {
        // The message names the key; the path is where it is.
        Some(message) => {
            let parent = path.rsplit_once('.').map_or("", |(parent, _)| parent);
            ConfigError::new(source, parent, message)
        }
        None => ConfigError::new(source, &path, inner),
    }
}

/// `unknown field `x`, expected one of `a`, `b`` as our message.
fn unknown_key(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (unknown, rest) = rest.split_once('`')?;
    let accepted: Vec<&str> = rest
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|key| !key.is_empty())
        .collect();
    let hint = tackle_tool_core::did_you_mean(unknown, accepted.iter().copied())
        .map(|near| format!(" (did you mean \"{near}\"?)"))
        .unwrap_or_default();
    Some(format!(
        "unknown key \"{unknown}\"{hint}; expected one of: {}",
        accepted.join(", ")
    ))
}

fn syntax(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let text = text.split(" at line ").next().unwrap_or_default();
    format!("invalid JSON: {text}")
}

/// The checks serde's types cannot make, so an error names the layer that has the value.
fn check(file: &ConfigFile, source: &str) -> Result<(), ConfigError> {
    let fail = |path: &str, message: String| Err(ConfigError::new(source, path, message));
    if let Some(permission) = &file.permission {
        parse_permission(permission, source).map_err(|err| permission_error(err, source, ""))?;
    }
    for (name, agent) in file.agent.iter().flatten() {
        if let Some(permission) = &agent.permission {
            let prefix = format!("agent.{name}.");
            parse_permission(permission, source)
                .map_err(|err| permission_error(err, source, &prefix))?;
        }
    }
    let at_least = |path: &str, value: Option<u64>, min: u64, max: u64| match value {
        Some(v) if v < min || v > max => fail(
            path,
            if max == u64::MAX {
                format!("must be at least {min}, not {v}")
            } else {
                format!("must be between {min} and {max}, not {v}")
            },
        ),
        _ => Ok(()),
    };
    let usize_u64 = |v: Option<usize>| v.map(|v| u64::try_from(v).unwrap_or(u64::MAX));
    if let Some(output) = &file.output {
        at_least("output.max_lines", usize_u64(output.max_lines), 1, u64::MAX)?;
        let min_bytes = usize_u64(Some(tackle_output_store::MIN_BYTES)).unwrap_or(128);
        at_least(
            "output.max_bytes",
            usize_u64(output.max_bytes),
            min_bytes,
            u64::MAX,
        )?;
        at_least("output.retention_days", output.retention_days, 1, 36_500)?;
        let min_file = tackle_output_store::MIN_SPILL_CAP;
        at_least(
            "output.max_file_bytes",
            output.max_file_bytes,
            min_file,
            u64::MAX,
        )?;
    }
    if let Some(read) = &file.read {
        let side = |v: Option<u32>| v.map(u64::from);
        at_least(
            "read.image_max_width",
            side(read.image_max_width),
            1,
            u64::MAX,
        )?;
        at_least(
            "read.image_max_height",
            side(read.image_max_height),
            1,
            u64::MAX,
        )?;
        at_least(
            "read.image_max_bytes",
            usize_u64(read.image_max_bytes),
            usize_u64(Some(tackle_builtins::read::MIN_IMAGE_BYTES)).unwrap_or(0),
            usize_u64(Some(tackle_output_store::MAX_INLINE_MEDIA_BYTES)).unwrap_or(u64::MAX),
        )?;
    }
    if let Some(bash) = &file.bash {
        let max = tackle_builtins::bash::MAX_TIMEOUT_MS;
        at_least("bash.default_timeout_ms", bash.default_timeout_ms, 1, max)?;
        at_least("bash.max_timeout_ms", bash.max_timeout_ms, 1, max)?;
        if let Some(shell) = &bash.shell
            && shell.as_os_str().is_empty()
        {
            return fail("bash.shell", "must not be empty".to_owned());
        }
        for name in bash.env.iter().flat_map(|env| env.keys()) {
            if name.is_empty() || name.contains(['=', '\0']) {
                return fail(
                    "bash.env",
                    format!("{name:?} is not a variable name (empty, or has `=` or NUL)"),
                );
            }
        }
    }
    if let Some(web) = &file.webfetch {
        let max = tackle_builtins::web::MAX_TIMEOUT_SECONDS;
        at_least("webfetch.timeout_seconds", web.timeout_seconds, 1, max)?;
        at_least("webfetch.max_bytes", usize_u64(web.max_bytes), 1, u64::MAX)?;
        if let Err(err) = WebAccess::from_entries(web.allow.iter().flatten()) {
            return fail("webfetch.allow", err.to_string());
        }
    }
    if let Some(search) = &file.websearch
        && let Some(variable) = &search.api_key_env
    {
        if variable.is_empty() || variable.contains(['=', '\0']) {
            return fail(
                "websearch.api_key_env",
                format!("{variable:?} is not a variable name"),
            );
        }
        if search.provider.is_none() {
            return fail(
                "websearch.api_key_env",
                "says where a provider's key is: name the provider too (websearch.provider)"
                    .to_owned(),
            );
        }
    }
    if let Some(search) = &file.search {
        at_least("search.budget_ms", search.budget_ms, 1, u64::MAX)?;
    }
    Ok(())
}

/// A permission parse error as a configuration error of the layer, its path under `prefix`.
fn permission_error(err: PermissionError, source: &str, prefix: &str) -> ConfigError {
    match err {
        PermissionError::Config { path, message, .. } => {
            ConfigError::new(source, &format!("{prefix}{path}"), message)
        }
        other => ConfigError::new(source, &format!("{prefix}permission"), other.to_string()),
    }
}
