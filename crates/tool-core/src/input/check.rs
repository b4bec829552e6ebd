//! Step 3 of the decoding layer: the input against its schema, every problem in JSON terms.
//!
//! It covers what tool input schemas use (types, `const`/`enum`/`oneOf`/`anyOf`, numeric
//! bounds, string and array lengths, `properties`, `required`, `additionalProperties: false`,
//! `items`). A dynamic tool's input is validated in full by its compiled schema afterwards; a
//! typed tool's by its decoder, and a test keeps each builtin's decoder and schema in
//! agreement.

use serde_json::{Map, Value};

use super::describe::{
    alternatives, bounds, choices, expected, got, json_type, near, type_admits, types,
};
use super::{Problem, push_field, push_index};

/// Appends to `problems` everything wrong with `value` under `schema`.
pub(crate) fn check(value: &Value, schema: &Value, path: &mut String, problems: &mut Vec<Problem>) {
    if !admitted(value, schema) {
        let hint = match (value, choices(schema)) {
            (Value::String(sent), Some(choices)) => {
                near(sent, choices.iter().filter_map(|c| c.as_str()))
                    .map(|choice| format!(" (did you mean `{choice}`?)"))
            }
            _ => None,
        };
        problems.push(Problem::new(
            path,
            format!(
                "expected {}, got {}{}",
                expected(schema),
                got(value),
                hint.unwrap_or_default()
            ),
        ));
        return;
    }
    match value {
        Value::Object(map) => object(map, schema, path, problems),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter().enumerate() {
                    let len = push_index(path, index);
                    check(item, item_schema, path, problems);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

/// True when `value` has a type, value and size `schema` allows (fields are checked apart).
fn admitted(value: &Value, schema: &Value) -> bool {
    if let Some(choices) = choices(schema) {
        return choices.contains(&value);
    }
    if let Some(map) = schema.as_object()
        && !map.contains_key("type")
        && let Some(alternatives) = alternatives(map)
    {
        return alternatives.iter().any(|alternative| {
            let mut inner = Vec::new();
            check(value, alternative, &mut String::new(), &mut inner);
            inner.is_empty()
        });
    }
    let actual = json_type(value);
    if let Some(types) = types(schema)
        && !types.iter().any(|wanted| type_admits(wanted, actual))
    {
        return false;
    }
    sized(value, schema)
}

fn sized(value: &Value, schema: &Value) -> bool {
    let at_least = |key: &str, n: usize| {
        schema
            .get(key)
            .and_then(Value::as_u64)
            .is_none_or(|min| n as u64 >= min)
    };
    let at_most = |key: &str, n: usize| {
        schema
            .get(key)
            .and_then(Value::as_u64)
            .is_none_or(|max| n as u64 <= max)
    };
    match value {
        Value::Number(n) => {
            let integer = n.is_i64() || n.is_u64();
            let (min, max) = bounds(schema, integer);
            // Whole numbers are compared as integers, so no large value rounds into range.
            let order = |bound: f64| {
                let whole = n.as_i64().map(i128::from).or(n.as_u64().map(i128::from));
                match whole {
                    #[allow(clippy::cast_possible_truncation)] // a whole bound, saturating
                    Some(i) if bound.fract() == 0.0 => Some(i.cmp(&(bound as i128))),
                    _ => n.as_f64().and_then(|x| x.partial_cmp(&bound)),
                }
            };
            let within = |bound: f64, above: bool| {
                order(bound).is_some_and(|o| if above { o.is_ge() } else { o.is_le() })
            };
            min.is_none_or(|m| within(m, true)) && max.is_none_or(|m| within(m, false))
        }
        Value::String(text) => {
            let chars = text.chars().count();
            at_least("minLength", chars) && at_most("maxLength", chars)
        }
        Value::Array(items) => {
            at_least("minItems", items.len()) && at_most("maxItems", items.len())
        }
        _ => true,
    }
}

fn object(
    map: &Map<String, Value>,
    schema: &Value,
    path: &mut String,
    problems: &mut Vec<Problem>,
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(name) {
                let field_schema = properties.and_then(|p| p.get(name));
                let what = field_schema.map_or_else(|| "a value".to_owned(), expected);
                let len = push_field(path, name);
                problems.push(Problem::new(
                    path,
                    format!("missing required field; expected {what}"),
                ));
                path.truncate(len);
            }
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (key, field) in map {
        match properties.and_then(|p| p.get(key)) {
            Some(field_schema) => {
                let len = push_field(path, key);
                check(field, field_schema, path, problems);
                path.truncate(len);
            }
            None if closed => {
                let accepted: Vec<&str> = properties
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                let hint = match near(key, accepted.iter().copied()) {
                    Some(name) => format!(" (did you mean `{name}`?)"),
                    None => String::new(),
                };
                let len = push_field(path, key);
                problems.push(Problem::new(
                    path,
                    format!(
                        "unknown field{hint}; the accepted fields are: {}",
                        accepted.join(", ")
                    ),
                ));
                path.truncate(len);
            }
            None => {}
        }
    }
}
