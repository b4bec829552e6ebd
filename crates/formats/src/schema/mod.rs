//! Provider dialects of JSON Schema, made from the normalised schemas tool-core derives.

mod gemini;
mod strict;

pub use gemini::gemini_schema;
pub use strict::{NotStrict, strict_schema};

use serde_json::{Map, Value};

/// A `oneOf`/`anyOf` whose every alternative is one constant (how a Rust enum of unit variants
/// with descriptions comes out) as one `enum`, each alternative's description folded into the
/// schema's own: neither Gemini nor OpenAI's strict mode takes `const`.
fn consts_to_enum(map: &mut Map<String, Value>) {
    for key in ["oneOf", "anyOf"] {
        let Some(Value::Array(options)) = map.get(key) else {
            continue;
        };
        let mut values = Vec::with_capacity(options.len());
        let mut notes = Vec::new();
        let mut types = Vec::new();
        for option in options {
            let Some(option) = option.as_object() else {
                return;
            };
            let Some(value) = option.get("const") else {
                return;
            };
            if option
                .keys()
                .any(|k| !matches!(k.as_str(), "const" | "type" | "description"))
            {
                return;
            }
            if let Some(t) = option.get("type")
                && !types.contains(t)
            {
                types.push(t.clone());
            }
            if let Some(note) = option.get("description").and_then(Value::as_str) {
                let shown = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_owned);
                notes.push(format!("`{shown}`: {note}"));
            }
            values.push(value.clone());
        }
        map.remove(key);
        if let [single] = types.as_slice() {
            map.entry("type").or_insert_with(|| single.clone());
        }
        map.insert("enum".into(), Value::Array(values));
        if !notes.is_empty() {
            let joined = notes.join("\n");
            let description = match map.get("description").and_then(Value::as_str) {
                Some(own) => format!("{own}\n{joined}"),
                None => joined,
            };
            map.insert("description".into(), Value::String(description));
        }
        return;
    }
}

/// The schema a local `$ref` (`#/$defs/Name`, `#/definitions/Name`) points to in `root`.
fn resolve_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let path = reference.strip_prefix("#/")?;
    path.split('/').try_fold(root, |node, key| {
        node.get(key.replace("~1", "/").replace("~0", "~"))
    })
}
