//! OpenAI's strict function schemas.
//!
//! Strict mode makes the model's arguments always match the schema, but takes only a subset
//! of JSON Schema: every object closed (`additionalProperties: false`) and every property
//! required, an optional one made nullable instead (tool-core's decoding reads `null` for an
//! optional field as absent, so such a call decodes as if the field were left out); no
//! `oneOf`, `allOf`, `not`, conditionals or pattern properties; limits on nesting, property
//! and enumeration counts. A schema that needs what strict mode lacks is not made strict
//! ([`NotStrict`] says where and why) and the tool is offered non-strict. Keywords that only
//! narrow values (`minLength`, `uniqueItems`, formats strict mode does not know, `default`)
//! are left out of the strict schema: the decoder still enforces them on every call, and a
//! call that breaks one is answered with the input error the model can fix.

use serde_json::{Map, Value};

use super::{consts_to_enum, resolve_ref};

/// Object nesting strict mode takes.
const MAX_DEPTH: usize = 10;
/// Properties over the whole schema strict mode takes.
const MAX_PROPERTIES: usize = 5000;
/// Enumeration values over the whole schema strict mode takes.
const MAX_ENUM_VALUES: usize = 1000;

/// String formats strict mode takes.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Keywords strict mode takes as they are.
const KEPT: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "enum",
    "$ref",
    "$defs",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// Keywords that only narrow values or annotate: left out, since the decoder enforces them.
const DROPPED: &[&str] = &[
    "title",
    "default",
    "examples",
    "minLength",
    "maxLength",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "readOnly",
    "writeOnly",
    "deprecated",
    "$comment",
    "$schema",
    "contentEncoding",
    "contentMediaType",
];

/// Why a tool's input schema cannot be made strict; the tool is then offered non-strict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct NotStrict {
    /// Where in the schema (a JSON pointer; empty for the root).
    pub path: String,
    /// What strict mode cannot express there.
    pub reason: String,
}

/// The strict form of the input schema `schema`, or why it has none.
pub fn strict_schema(schema: &Value) -> Result<Value, NotStrict> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(not_strict("", "the input is not an object"));
    }
    let mut walk = Walk {
        root: schema,
        properties: 0,
        enum_values: 0,
    };
    let mut strict = schema.clone();
    walk.node(&mut strict, "", 0)?;
    Ok(strict)
}

fn not_strict(path: &str, reason: impl Into<String>) -> NotStrict {
    NotStrict {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

struct Walk<'a> {
    root: &'a Value,
    properties: usize,
    enum_values: usize,
}

impl Walk<'_> {
    fn node(&mut self, node: &mut Value, path: &str, depth: usize) -> Result<(), NotStrict> {
        let Value::Object(map) = node else {
            return Err(not_strict(path, "a schema that is not an object"));
        };
        consts_to_enum(map);
        if let Some(Value::Array(options)) = map.remove("oneOf") {
            // Exclusive alternatives as inclusive ones: the decoder still checks exclusivity.
            map.insert("anyOf".into(), Value::Array(options));
        }
        if let Some(value) = map.remove("const") {
            map.insert("enum".into(), Value::Array(vec![value]));
        }
        let known_format = map
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|format| FORMATS.contains(&format));
        if !known_format {
            map.remove("format");
        }
        let keys: Vec<String> = map.keys().cloned().collect();
        for key in keys {
            if key.starts_with("x-") || DROPPED.contains(&key.as_str()) {
                map.remove(&key);
            } else if !KEPT.contains(&key.as_str()) && key != "format" {
                return Err(not_strict(path, format!("`{key}` is not supported")));
            }
        }
        if map.contains_key("$ref") {
            if map.len() > 1 {
                return Err(not_strict(
                    path,
                    "a reference with other keywords beside it",
                ));
            }
            let reference = map.get("$ref").and_then(Value::as_str).unwrap_or_default();
            if resolve_ref(self.root, reference).is_none() {
                return Err(not_strict(
                    path,
                    format!("unresolved reference {reference}"),
                ));
            }
            return Ok(());
        }
        if !["type", "anyOf", "enum"]
            .iter()
            .any(|k| map.contains_key(*k))
        {
            return Err(not_strict(path, "a value of any type"));
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            self.enum_values += values.len();
            if self.enum_values > MAX_ENUM_VALUES {
                return Err(not_strict(path, "more than 1000 enumeration values"));
            }
        }
        if let Some(Value::Object(defs)) = map.get_mut("$defs") {
            for (name, def) in defs.iter_mut() {
                self.node(def, &format!("{path}/$defs/{name}"), depth)?;
            }
        }
        if let Some(Value::Array(options)) = map.get_mut("anyOf") {
            for (i, option) in options.iter_mut().enumerate() {
                self.node(option, &format!("{path}/anyOf/{i}"), depth)?;
            }
        }
        match map.get_mut("items") {
            Some(items @ Value::Object(_)) => self.node(items, &format!("{path}/items"), depth)?,
            Some(_) => return Err(not_strict(path, "`items` that is not one schema")),
            None => {}
        }
        let is_object = map.get("type").and_then(Value::as_str) == Some("object")
            || map.contains_key("properties");
        if is_object {
            self.object(map, path, depth + 1)?;
        }
        Ok(())
    }

    fn object(
        &mut self,
        map: &mut Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<(), NotStrict> {
        if depth > MAX_DEPTH {
            return Err(not_strict(path, "objects nested more than 10 deep"));
        }
        match map.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => return Err(not_strict(path, "an object with free-form keys")),
        }
        map.insert("additionalProperties".into(), Value::Bool(false));
        let required: Vec<Value> = match map.get("required") {
            Some(Value::Array(names)) => names.clone(),
            _ => Vec::new(),
        };
        let Some(Value::Object(properties)) = map.get_mut("properties") else {
            map.insert("properties".into(), Value::Object(Map::new()));
            map.insert("required".into(), Value::Array(Vec::new()));
            return Ok(());
        };
        self.properties += properties.len();
        if self.properties > MAX_PROPERTIES {
            return Err(not_strict(path, "more than 5000 properties"));
        }
        for (name, property) in properties.iter_mut() {
            let at = format!("{path}/properties/{name}");
            self.node(property, &at, depth)?;
            if !required.iter().any(|r| r == name) {
                nullable(property);
            }
        }
        let all: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
        map.insert("required".into(), Value::Array(all));
        Ok(())
    }
}

/// `schema` also accepting `null`, which stands for "absent" for an optional property.
fn nullable(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(Value::Array(options)) = map.get_mut("anyOf") {
        if !options
            .iter()
            .any(|o| o.get("type") == Some(&Value::from("null")))
        {
            options.push(serde_json::json!({"type": "null"}));
        }
        return;
    }
    if map.contains_key("$ref") {
        let inner = std::mem::take(map);
        map.insert(
            "anyOf".into(),
            serde_json::json!([Value::Object(inner), {"type": "null"}]),
        );
        return;
    }
    match map.get_mut("type") {
        Some(Value::String(single)) if single != "null" => {
            let single = std::mem::take(single);
            map.insert("type".into(), serde_json::json!([single, "null"]));
        }
        Some(Value::Array(types)) if !types.iter().any(|t| t == "null") => {
            types.push(Value::from("null"));
        }
        _ => {}
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}
