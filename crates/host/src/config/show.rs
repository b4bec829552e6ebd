//! `tackle config`: the effective configuration, one value a line, each with its origin.

use std::fmt::Write as _;

use serde_json::{Map, Value};
use tackle_permission::Ruleset;

use super::defaults;
use super::{Config, Ignored, Origin};

pub(super) fn describe(config: &Config) -> String {
    let mut leaves = Vec::new();
    let effective = defaults::effective(&config.settings);
    if let Ok(Value::Object(object)) = serde_json::to_value(&effective) {
        flatten(&object, "", &mut leaves);
    }
    let width = leaves.iter().map(|(key, _)| key.len()).max().unwrap_or(0);
    let mut text =
        String::from("# The effective configuration: each value, then where it came from.\n");
    for (key, value) in &leaves {
        let origin = config.origin(key);
        let _ = write!(text, "{key:width$} = {value}  # {origin}");
        for ignored in config.ignored.iter().filter(|ignored| &ignored.key == key) {
            let _ = write!(text, "; {}", note(ignored));
        }
        text.push('\n');
    }
    if !config.ignored.is_empty() {
        text.push_str("\n# Ignored settings of untrusted project files:\n");
        for ignored in &config.ignored {
            let _ = writeln!(text, "{} = {}", ignored.key, note(ignored));
        }
    }
    rules(&mut text, "permission", &config.rules);
    for (agent, ruleset) in &config.agents {
        rules(&mut text, &format!("agent.{agent}.permission"), ruleset);
    }
    text.push_str("\n# Layers, in merge order (later wins):\n");
    if config.layers.is_empty() {
        text.push_str("(defaults only)\n");
    }
    for layer in &config.layers {
        let kind = match (&layer.origin, layer.trust) {
            (Origin::User(_), _) => "user",
            (Origin::Project(_), Some(crate::Trust::Trusted)) => "project, trusted",
            (Origin::Project(_), Some(crate::Trust::Changed)) => {
                "project, changed since trusted: only tightens"
            }
            (Origin::Project(_), _) => "project, untrusted: only tightens",
            (Origin::File(_), _) => "--config",
            (Origin::Environment(_), _) => "environment",
            (Origin::Flag(_), _) => "flag",
            (Origin::Default, _) => "default",
        };
        let _ = writeln!(text, "{} ({kind})", layer.origin);
    }
    text
}

/// `<value> from <file> ignored (untrusted: <why>)`.
fn note(ignored: &Ignored) -> String {
    let why = if ignored.loosens {
        "loosens a limit"
    } else {
        "only a trusted file may set it"
    };
    format!(
        "{} from {} ignored (untrusted: {why})",
        ignored.value, ignored.origin
    )
}

fn rules(text: &mut String, title: &str, ruleset: &Ruleset) {
    let _ = writeln!(text, "\n# {title} (the last matching rule wins):");
    let width = ruleset
        .rules()
        .iter()
        .map(|rule| rule.action.len() + rule.resource.len() + 1)
        .max()
        .unwrap_or(0);
    for (index, rule) in ruleset.rules().iter().enumerate() {
        let pattern = format!("{} {}", rule.action, rule.resource);
        let origin = ruleset
            .origin(index)
            .map_or_else(String::new, ToString::to_string);
        let tightening = if ruleset.is_tightening(index) {
            ", only tightens"
        } else {
            ""
        };
        let _ = writeln!(
            text,
            "{pattern:width$} {:5}  # {origin}{tightening}",
            rule.effect.as_str()
        );
    }
}

fn flatten(object: &Map<String, Value>, prefix: &str, out: &mut Vec<(String, String)>) {
    for (key, value) in object {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            Value::Object(inner) if !inner.is_empty() && key != "mcp" => {
                flatten(inner, &path, out);
            }
            other => out.push((path, other.to_string())),
        }
    }
}
