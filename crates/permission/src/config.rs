//! The opencode/Kilo `permission` configuration object, and config files of that shape.
//!
//! `"edit": "ask"` is the rule `{edit, *, ask}`; `"bash": {"*": "ask", "git status*":
//! "allow"}` is one rule per entry, in file order (the workspace's `serde_json` keeps object
//! order). As in JavaScript's `JSON.parse`, a key repeated in one object keeps its first
//! position and its last value. A whole `permission` that is a string applies to every action.

use serde_json::{Map, Value};

use crate::error::{PermissionError, kind};
use crate::jsonc;
use crate::rule::{Effect, Rule, RuleOrigin, Ruleset};

/// How [`parse_config`] treats top-level keys other than `permission` and `$schema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownKeys {
    /// Ignore them (an `opencode.json` has many other keys).
    Ignore,
    /// Reject them (`tackle.json` has only these two).
    Reject,
}

/// Parses a config file's text (JSON or JSONC) of the shape `{"permission": {...}}`; `source`
/// names the file in errors and rule origins. A file without `permission` has no rules.
pub fn parse_config(
    text: &str,
    source: &str,
    unknown: UnknownKeys,
) -> Result<Ruleset, PermissionError> {
    let error = |path: &str, message: String| PermissionError::Config {
        file: source.to_owned(),
        path: path.to_owned(),
        message,
    };
    let value = jsonc::parse(text).map_err(|message| error("", message))?;
    let Value::Object(top) = value else {
        return Err(error(
            "",
            format!(
                "expected a JSON object at the top level, found {}",
                kind(&value)
            ),
        ));
    };
    if unknown == UnknownKeys::Reject
        && let Some(key) = top.keys().find(|k| *k != "permission" && *k != "$schema")
    {
        return Err(error(
            "",
            format!("unknown key {key:?}; this file accepts only \"permission\" and \"$schema\""),
        ));
    }
    match top.get("permission") {
        Some(permission) => parse_permission(permission, source),
        None => Ok(Ruleset::default()),
    }
}

/// Parses a `permission` value: an object of actions, or one effect for everything.
pub fn parse_permission(value: &Value, source: &str) -> Result<Ruleset, PermissionError> {
    parse_permission_at(value, source, "permission")
}

/// Parses the `permission` value of `agent` (opencode's `agent.<name>.permission`), for
/// [`Agents::define`](crate::Agents::define); errors and rule origins name that key path.
pub fn parse_agent_permission(
    agent: &str,
    value: &Value,
    source: &str,
) -> Result<Ruleset, PermissionError> {
    let base = format!("{}.permission", key_path("agent", agent));
    parse_permission_at(value, source, &base)
}

fn parse_permission_at(
    value: &Value,
    source: &str,
    base: &str,
) -> Result<Ruleset, PermissionError> {
    let mut rules = Vec::new();
    match value {
        Value::String(_) => {
            let path = base.to_owned();
            let effect = effect(value, source, &path)?;
            rules.push((Rule::new("*", "*", effect), path));
        }
        Value::Object(actions) => parse_actions(actions, source, base, &mut rules)?,
        other => {
            return Err(PermissionError::Config {
                file: source.to_owned(),
                path: base.to_owned(),
                message: format!(
                    "expected an object of actions or an effect (\"allow\", \"ask\" or \
                     \"deny\"), found {}",
                    kind(other)
                ),
            });
        }
    }
    Ok(Ruleset::with_origins(rules.into_iter().enumerate().map(
        |(index, (rule, key))| {
            (
                rule,
                RuleOrigin::Config {
                    file: source.to_owned(),
                    key,
                    index,
                },
            )
        },
    )))
}

fn parse_actions(
    actions: &Map<String, Value>,
    source: &str,
    base: &str,
    rules: &mut Vec<(Rule, String)>,
) -> Result<(), PermissionError> {
    for (action, value) in actions {
        let path = key_path(base, action);
        if action.is_empty() {
            return Err(config_error(source, &path, "an action pattern is empty"));
        }
        match value {
            Value::String(_) => {
                rules.push((Rule::new(action, "*", effect(value, source, &path)?), path));
            }
            Value::Object(patterns) => {
                for (pattern, value) in patterns {
                    let path = key_path(&path, pattern);
                    if pattern.is_empty() {
                        return Err(config_error(source, &path, "a resource pattern is empty"));
                    }
                    rules.push((
                        Rule::new(action, pattern, effect(value, source, &path)?),
                        path,
                    ));
                }
            }
            other => {
                return Err(config_error(
                    source,
                    &path,
                    &format!(
                        "expected an effect (\"allow\", \"ask\" or \"deny\") or an object of \
                         resource patterns to effects, found {}",
                        kind(other)
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn effect(value: &Value, source: &str, path: &str) -> Result<Effect, PermissionError> {
    match value.as_str() {
        Some("allow") => Ok(Effect::Allow),
        Some("ask") => Ok(Effect::Ask),
        Some("deny") => Ok(Effect::Deny),
        Some(other) => Err(config_error(
            source,
            path,
            &format!("unknown effect {other:?}; expected \"allow\", \"ask\" or \"deny\""),
        )),
        None => Err(config_error(
            source,
            path,
            &format!(
                "expected an effect (\"allow\", \"ask\" or \"deny\"), found {}",
                kind(value)
            ),
        )),
    }
}

fn config_error(source: &str, path: &str, message: &str) -> PermissionError {
    PermissionError::Config {
        file: source.to_owned(),
        path: path.to_owned(),
        message: message.to_owned(),
    }
}

/// `parent.key` for plain keys, `parent["key"]` for the rest.
fn key_path(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        format!("{parent}.{key}")
    } else {
        format!("{parent}[{}]", Value::String(key.to_owned()))
    }
}
