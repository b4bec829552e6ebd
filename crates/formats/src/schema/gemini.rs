//! Gemini's schema subset (its `Schema` type, an OpenAPI 3.0 dialect).
//!
//! Gemini takes no `$ref`/`$defs`, no `additionalProperties`, no `const` or `oneOf`, only
//! string enumerations, and says "may be null" with `nullable` instead of a `null` type; it
//! sorts properties by name unless `propertyOrdering` says otherwise. Anything else it does not
//! know fails the whole request, so the conversion keeps only the keywords it takes and drops
//! the rest (the decoder still enforces them).

use serde_json::{Map, Value};

use super::{consts_to_enum, resolve_ref};

/// How deep references are inlined: a recursive type is cut there.
const MAX_INLINE: usize = 8;

/// Keywords Gemini's `Schema` takes with the same meaning, copied as they are.
const KEPT: &[&str] = &[
    "description",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "pattern",
];

/// The Gemini form of `schema` (a tool's input or output schema).
pub fn gemini_schema(schema: &Value) -> Value {
    convert(schema, schema, 0)
}

fn convert(root: &Value, node: &Value, inlined: usize) -> Value {
    let Value::Object(source) = node else {
        return Value::Object(Map::new());
    };
    if let Some(reference) = source.get("$ref").and_then(Value::as_str) {
        let target = match resolve_ref(root, reference) {
            Some(target) if inlined < MAX_INLINE => target,
            // A recursive type is cut here: an object of any shape.
            _ => return serde_json::json!({"type": "OBJECT"}),
        };
        let mut merged = target.as_object().cloned().unwrap_or_default();
        for (key, value) in source.iter().filter(|(key, _)| *key != "$ref") {
            merged.insert(key.clone(), value.clone());
        }
        return convert(root, &Value::Object(merged), inlined + 1);
    }
    let mut map = source.clone();
    consts_to_enum(&mut map);
    if let Some(value) = map.remove("const") {
        map.insert("enum".into(), Value::Array(vec![value]));
    }
    let mut out = Map::new();
    let mut nullable = false;
    match map.get("type") {
        Some(Value::String(single)) => {
            out.insert("type".into(), gemini_type(single));
        }
        Some(Value::Array(types)) => {
            nullable = types.iter().any(|t| t == "null");
            let named: Vec<&str> = types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            if let [single] = named.as_slice() {
                out.insert("type".into(), gemini_type(single));
            } else if !named.is_empty() {
                let options = named
                    .iter()
                    .map(|t| serde_json::json!({"type": gemini_type(t)}));
                out.insert("anyOf".into(), Value::Array(options.collect()));
            }
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = map.get(key) {
            let mut kept = Vec::new();
            for option in options {
                if option.get("type").and_then(Value::as_str) == Some("null") {
                    nullable = true;
                } else {
                    kept.push(convert(root, option, inlined));
                }
            }
            match kept.len() {
                0 => {}
                // `T | null` is `T` with `nullable`.
                1 => {
                    if let Some(Value::Object(single)) = kept.pop() {
                        for (k, v) in single {
                            out.entry(k).or_insert(v);
                        }
                    }
                }
                _ => {
                    out.insert("anyOf".into(), Value::Array(kept));
                }
            }
        }
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        // Gemini enumerates strings only; the decoder reads `"5"` where a number is expected.
        let mut strings = Vec::new();
        for value in values {
            match value {
                Value::Null => nullable = true,
                Value::String(text) => strings.push(Value::String(text.clone())),
                other => strings.push(Value::String(other.to_string())),
            }
        }
        out.insert("type".into(), Value::from("STRING"));
        out.insert("enum".into(), Value::Array(strings));
    }
    if nullable {
        out.insert("nullable".into(), Value::Bool(true));
    }
    for key in KEPT {
        if let Some(value) = map.get(*key) {
            out.insert((*key).to_owned(), value.clone());
        }
    }
    if map.get("format").and_then(Value::as_str) == Some("date-time") {
        out.insert("format".into(), Value::from("date-time"));
    }
    if let Some(default) = map.get("default").filter(|d| !d.is_null()) {
        out.insert("default".into(), default.clone());
    }
    if let Some(items) = map.get("items") {
        out.insert("items".into(), convert(root, items, inlined));
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        let converted: Map<String, Value> = properties
            .iter()
            .map(|(name, schema)| (name.clone(), convert(root, schema, inlined)))
            .collect();
        let order: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
        out.entry("type").or_insert_with(|| Value::from("OBJECT"));
        out.insert("properties".into(), Value::Object(converted));
        if let Some(required) = map.get("required") {
            out.insert("required".into(), required.clone());
        }
        if order.len() > 1 {
            out.insert("propertyOrdering".into(), Value::Array(order));
        }
    }
    Value::Object(out)
}

/// Gemini's name of a JSON Schema type.
fn gemini_type(name: &str) -> Value {
    Value::from(name.to_ascii_uppercase())
}
