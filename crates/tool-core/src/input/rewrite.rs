//! Step 1 and 2 of the decoding layer: aliases, dropped fields, and harmless value mistakes.
//!
//! [`needed`] decides without copying whether [`apply`] would change anything, so an input that
//! is already right (the common case, and the one with the largest strings) is never cloned.

use serde_json::{Map, Number, Value};

use super::describe::{json_type, type_admits, types};
use super::{ALIASES, IGNORED, Problem, push_field, push_index};

/// True when [`apply`] would change `value`.
pub(crate) fn needed(value: &Value, schema: &Value) -> bool {
    if coerced(value, schema).is_some() {
        return true;
    }
    match value {
        Value::Object(map) => {
            let Some(properties) = properties(schema) else {
                return false;
            };
            if ignored(schema).any(|name| map.contains_key(name)) {
                return true;
            }
            map.iter().any(|(key, field)| match properties.get(key) {
                Some(field_schema) => {
                    absent_null(field, key, field_schema, schema) || needed(field, field_schema)
                }
                None => alias_target(properties, key).is_some(),
            })
        }
        Value::Array(items) => match schema.get("items") {
            Some(item_schema) => items.iter().any(|item| needed(item, item_schema)),
            None => false,
        },
        _ => false,
    }
}

/// Renames aliases, drops declared ignored fields and absent-meaning nulls, and decodes
/// harmless value mistakes, in place. Two spellings of one field are an error.
pub(crate) fn apply(value: &mut Value, schema: &Value, path: &mut String) -> Result<(), Problem> {
    if let Some(fixed) = coerced(value, schema) {
        *value = fixed;
    }
    match value {
        Value::Object(map) => {
            let Some(properties) = properties(schema) else {
                return Ok(());
            };
            for name in ignored(schema) {
                map.remove(name);
            }
            rename_aliases(map, properties, path)?;
            map.retain(|key, field| {
                properties
                    .get(key)
                    .is_none_or(|field_schema| !absent_null(field, key, field_schema, schema))
            });
            for (key, field) in map.iter_mut() {
                if let Some(field_schema) = properties.get(key) {
                    let len = push_field(path, key);
                    apply(field, field_schema, path)?;
                    path.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter_mut().enumerate() {
                    let len = push_index(path, index);
                    apply(item, item_schema, path)?;
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn properties(schema: &Value) -> Option<&Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

fn ignored(schema: &Value) -> impl Iterator<Item = &str> {
    schema
        .get(IGNORED)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

fn aliases(field_schema: &Value) -> impl Iterator<Item = &str> {
    field_schema
        .get(ALIASES)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// The property `key` is an alias of.
fn alias_target<'a>(properties: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    properties
        .iter()
        .find(|(_, field_schema)| aliases(field_schema).any(|alias| alias == key))
        .map(|(name, _)| name.as_str())
}

fn rename_aliases(
    map: &mut Map<String, Value>,
    properties: &Map<String, Value>,
    path: &str,
) -> Result<(), Problem> {
    for (name, field_schema) in properties {
        // A spelling sent as null is a spelling not used (models that fill every field send
        // null for the ones they mean to leave out).
        let mut spellings: Vec<&str> = Vec::new();
        for alias in aliases(field_schema) {
            match map.get(alias) {
                Some(Value::Null) => {
                    map.remove(alias);
                }
                Some(_) => spellings.push(alias),
                None => {}
            }
        }
        if spellings.is_empty() {
            continue;
        }
        match map.get(name) {
            Some(Value::Null) => {
                map.remove(name);
            }
            Some(_) => spellings.insert(0, name),
            None => {}
        }
        if let [alias] = spellings.as_slice() {
            if let Some(value) = map.remove(*alias) {
                map.insert(name.clone(), value);
            }
            continue;
        }
        let mut field_path = path.to_owned();
        push_field(&mut field_path, name);
        let sent: Vec<String> = spellings.iter().map(|s| format!("`{s}`")).collect();
        return Err(Problem::new(
            &field_path,
            format!(
                "sent twice, as {}; they name the same field: send it once, as `{name}`",
                sent.join(" and ")
            ),
        ));
    }
    Ok(())
}

/// A `null` for an optional field that does not accept `null`: the model meant "not given".
fn absent_null(field: &Value, key: &str, field_schema: &Value, object_schema: &Value) -> bool {
    if !field.is_null() {
        return false;
    }
    let required = object_schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|names| names.iter().any(|name| name == key));
    let admits_null = types(field_schema).is_none_or(|types| types.contains(&"null"));
    !required && !admits_null
}

/// The value the model meant when `value` is a harmless mistake for `schema`: a string where
/// the schema accepts no string but a number, a boolean, an array or an object that the string
/// spells; or a whole number written with a fraction where an integer is expected.
fn coerced(value: &Value, schema: &Value) -> Option<Value> {
    let wanted = types(schema)?;
    match value {
        Value::String(text) if !wanted.contains(&"string") => {
            let text = text.trim();
            if wanted.contains(&"boolean") {
                if text.eq_ignore_ascii_case("true") {
                    return Some(Value::Bool(true));
                }
                if text.eq_ignore_ascii_case("false") {
                    return Some(Value::Bool(false));
                }
            }
            let starts = text.chars().next()?;
            let plausible = match starts {
                '[' => wanted.contains(&"array"),
                '{' => wanted.contains(&"object"),
                '-' | '0'..='9' => wanted.contains(&"integer") || wanted.contains(&"number"),
                _ => false,
            };
            if !plausible {
                return None;
            }
            let parsed: Value = serde_json::from_str(text).ok()?;
            let parsed = whole(&parsed, &wanted).unwrap_or(parsed);
            let actual = json_type(&parsed);
            wanted
                .iter()
                .any(|w| type_admits(w, actual))
                .then_some(parsed)
        }
        Value::Number(_) => whole(value, &wanted),
        _ => None,
    }
}

/// `5.0` as `5` where an integer, and no other number, is expected.
fn whole(value: &Value, wanted: &[&str]) -> Option<Value> {
    if !wanted.contains(&"integer") || wanted.contains(&"number") {
        return None;
    }
    let n = value.as_number()?;
    if n.is_i64() || n.is_u64() {
        return None;
    }
    let f = n.as_f64()?;
    if f.fract() != 0.0 || !f.is_finite() || f.abs() > 9_007_199_254_740_992.0 {
        return None;
    }
    // Exact: |f| ≤ 2^53 and whole.
    #[allow(clippy::cast_possible_truncation)]
    let whole = f as i64;
    Some(Value::Number(Number::from(whole)))
}
