//! Limits an untrusted project file may set: only tighter ones.
//!
//! A repository's `tackle.json` is written by whoever wrote the repository. Raising a limit
//! (more inline text, a larger body held in memory, a longer timeout, images turned back on)
//! spends the user's memory, disk, time or model context, so until the file is trusted each
//! limit it sets applies only when it is at least as tight as the value it would override (what
//! the earlier layers set, else the default); a looser one is ignored with a warning.

use serde_json::{Map, Value};

use super::layers::Origin;

/// Which way a limit tightens.
#[derive(Debug, Clone, Copy)]
enum Tighter {
    /// A smaller number: sizes, counts, durations, budgets, timeouts.
    Lower,
    /// This boolean: the other value turns on something the user pays for or relies on.
    Is(bool),
}

/// Every limit of the configuration, with its direction. A key here that is also a
/// [`TRUSTED_KEYS`](super::TRUSTED_KEYS) entry never reaches this check untrusted.
const LIMITS: &[(&str, Tighter)] = &[
    ("output.max_lines", Tighter::Lower),
    ("output.max_bytes", Tighter::Lower),
    ("output.max_file_bytes", Tighter::Lower),
    ("read.image_max_width", Tighter::Lower),
    ("read.image_max_height", Tighter::Lower),
    ("read.image_max_bytes", Tighter::Lower),
    // Images cost context and may be refused by the provider; off is the tighter choice.
    ("read.image_input", Tighter::Is(false)),
    ("bash.default_timeout_ms", Tighter::Lower),
    ("bash.max_timeout_ms", Tighter::Lower),
    ("webfetch.timeout_seconds", Tighter::Lower),
    ("webfetch.max_bytes", Tighter::Lower),
    ("search.budget_ms", Tighter::Lower),
    // Refusing calls that cannot be recorded is stricter than letting them run.
    ("audit.required", Tighter::Is(true)),
];

/// A setting of an untrusted project file that was not applied.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ignored {
    /// The key path (`output.max_bytes`).
    pub(crate) key: String,
    /// The value the file gave.
    pub(crate) value: Value,
    /// The file.
    pub(crate) origin: Origin,
    /// Why: it loosens a limit, or it is a trusted key.
    pub(crate) loosens: bool,
}

/// Removes from `layer` every limit that is looser than what it would override (`merged`'s
/// value, else `defaults`'), and returns them with the value each would have overridden.
pub(crate) fn remove_loosening(
    layer: &mut Map<String, Value>,
    merged: &Map<String, Value>,
    defaults: &Map<String, Value>,
) -> Vec<(&'static str, Value, Value)> {
    let mut removed = Vec::new();
    for (key, tighter) in LIMITS {
        let Some((parent, child)) = key.split_once('.') else {
            continue;
        };
        let Some(Value::Object(section)) = layer.get_mut(parent) else {
            continue;
        };
        let Some(value) = section.get(child) else {
            continue;
        };
        let Some(current) =
            lookup(merged, parent, child).or_else(|| lookup(defaults, parent, child))
        else {
            continue;
        };
        if loosens(*tighter, value, current) {
            let value = section.remove(child).unwrap_or(Value::Null);
            removed.push((*key, value, current.clone()));
        }
    }
    removed
}

fn lookup<'a>(map: &'a Map<String, Value>, parent: &str, child: &str) -> Option<&'a Value> {
    map.get(parent)?
        .as_object()?
        .get(child)
        .filter(|value| !value.is_null())
}

/// True when `value` is looser than `current` (a value of another type than expected, which
/// parsing already refused, loosens nothing).
fn loosens(tighter: Tighter, value: &Value, current: &Value) -> bool {
    match tighter {
        Tighter::Lower => match (value.as_u64(), current.as_u64()) {
            (Some(value), Some(current)) => value > current,
            _ => false,
        },
        Tighter::Is(tight) => match (value.as_bool(), current.as_bool()) {
            (Some(value), Some(current)) => value != tight && current == tight,
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn a_limit_is_compared_with_what_it_overrides_else_the_default() {
        let defaults = object(json!({"output": {"max_bytes": 51200, "max_lines": 2000}}));
        let merged = object(json!({"output": {"max_lines": 100}}));
        let mut layer = object(json!({"output": {"max_bytes": 60000, "max_lines": 500}}));
        let removed = remove_loosening(&mut layer, &merged, &defaults);
        assert_eq!(
            removed,
            [
                ("output.max_lines", json!(500), json!(100)),
                ("output.max_bytes", json!(60000), json!(51200)),
            ]
        );
        assert_eq!(layer, object(json!({"output": {}})));
        let mut layer = object(json!({"output": {"max_bytes": 51200, "max_lines": 10}}));
        assert!(remove_loosening(&mut layer, &merged, &defaults).is_empty());
        assert_eq!(layer["output"]["max_lines"], 10);
    }

    #[test]
    fn a_boolean_may_only_be_set_its_tight_way() {
        let defaults = object(json!({"read": {"image_input": true}, "audit": {"required": false}}));
        let mut layer =
            object(json!({"read": {"image_input": false}, "audit": {"required": true}}));
        assert!(remove_loosening(&mut layer, &Map::new(), &defaults).is_empty());
        let merged = object(json!({"read": {"image_input": false}, "audit": {"required": true}}));
        let mut layer =
            object(json!({"read": {"image_input": true}, "audit": {"required": false}}));
        let removed = remove_loosening(&mut layer, &merged, &defaults);
        assert_eq!(removed.len(), 2, "{removed:?}");
    }
}
