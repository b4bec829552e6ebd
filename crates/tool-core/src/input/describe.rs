//! What a schema expects and what a value is, in the words of JSON ("a non-negative integer",
//! "one of: content, count"), never in the words of the Rust type behind it.

use serde_json::{Map, Value};

/// The JSON types a schema admits, when it says: from `type`, `const`, `enum`, or the
/// alternatives of `oneOf`/`anyOf`. `None`: anything (or something this layer leaves to the
/// full validator, such as `$ref`).
pub(crate) fn types(schema: &Value) -> Option<Vec<&'static str>> {
    let map = schema.as_object()?;
    if let Some(declared) = map.get("type") {
        let names: Vec<&'static str> = match declared {
            Value::String(name) => vec![type_name(name)?],
            Value::Array(names) => names
                .iter()
                .filter_map(|n| n.as_str().and_then(type_name))
                .collect(),
            _ => return None,
        };
        return Some(names);
    }
    if let Some(value) = map.get("const") {
        return Some(vec![json_type(value)]);
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        return Some(dedup(values.iter().map(json_type).collect()));
    }
    let alternatives = alternatives(map)?;
    let mut all = Vec::new();
    for alternative in alternatives {
        all.extend(types(alternative)?);
    }
    Some(dedup(all))
}

/// `items` without repeats, the first of each kept in order.
pub(crate) fn dedup<T: PartialEq>(mut items: Vec<T>) -> Vec<T> {
    let mut kept = 0;
    for i in 0..items.len() {
        if !items[..kept].contains(&items[i]) {
            items.swap(kept, i);
            kept += 1;
        }
    }
    items.truncate(kept);
    items
}

fn type_name(name: &str) -> Option<&'static str> {
    [
        "string", "integer", "number", "boolean", "array", "object", "null",
    ]
    .into_iter()
    .find(|known| *known == name)
}

/// The JSON type of `value` (`integer` for whole numbers).
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The `oneOf`/`anyOf` alternatives of a schema.
pub(crate) fn alternatives(map: &Map<String, Value>) -> Option<&Vec<Value>> {
    map.get("oneOf")
        .or_else(|| map.get("anyOf"))
        .and_then(Value::as_array)
}

/// The fixed values a schema allows (`enum`, `const`, or alternatives that are each a `const`).
pub(crate) fn choices(schema: &Value) -> Option<Vec<&Value>> {
    let map = schema.as_object()?;
    if let Some(value) = map.get("const") {
        return Some(vec![value]);
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        return Some(values.iter().collect());
    }
    let alternatives = alternatives(map)?;
    alternatives
        .iter()
        .map(|alternative| alternative.get("const"))
        .collect()
}

/// What `schema` expects, e.g. "a positive integer" or "one of: markdown, text, html".
pub(crate) fn expected(schema: &Value) -> String {
    if let Some(choices) = choices(schema) {
        let listed: Vec<String> = choices.into_iter().map(choice).collect();
        return match listed.as_slice() {
            [only] => only.clone(),
            _ => format!("one of: {}", listed.join(", ")),
        };
    }
    if let Some(map) = schema.as_object()
        && !map.contains_key("type")
        && let Some(alternatives) = alternatives(map)
    {
        let each: Vec<String> = alternatives.iter().map(expected).collect();
        return each.join(" or ");
    }
    match types(schema) {
        Some(types) if !types.is_empty() => {
            let each: Vec<String> = types.iter().map(|t| one_type(t, schema)).collect();
            each.join(" or ")
        }
        _ => "a JSON value".to_owned(),
    }
}

fn choice(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn one_type(name: &str, schema: &Value) -> String {
    match name {
        "integer" => range("integer", schema),
        "number" => range("number", schema),
        "string" => match schema.get("minLength").and_then(Value::as_u64) {
            Some(n) if n >= 1 => "a non-empty string".to_owned(),
            _ => "a string".to_owned(),
        },
        "boolean" => "true or false".to_owned(),
        "array" => {
            let article = match schema.get("minItems").and_then(Value::as_u64) {
                Some(n) if n >= 1 => "a non-empty",
                _ => "an",
            };
            match schema.get("items").map(plural) {
                Some(items) => format!("{article} array of {items}"),
                None => format!("{article} array"),
            }
        }
        "object" => "an object".to_owned(),
        _ => "null".to_owned(),
    }
}

/// The lower and upper bounds of a numeric schema (exclusive bounds made inclusive for
/// integers).
pub(crate) fn bounds(schema: &Value, integer: bool) -> (Option<f64>, Option<f64>) {
    let get = |key: &str| schema.get(key).and_then(Value::as_f64);
    let step = if integer { 1.0 } else { 0.0 };
    let min = get("minimum").or_else(|| get("exclusiveMinimum").map(|m| m + step));
    let max = get("maximum").or_else(|| get("exclusiveMaximum").map(|m| m - step));
    (min, max)
}

fn range(kind: &str, schema: &Value) -> String {
    let (min, max) = bounds(schema, kind == "integer");
    let article = if kind == "integer" { "an" } else { "a" };
    match (min, max) {
        (Some(min), Some(max)) => format!("{article} {kind} from {min} to {max}"),
        (Some(0.0), None) => format!("a non-negative {kind}"),
        (Some(min), None) if min == 1.0 && kind == "integer" => "a positive integer".to_owned(),
        (Some(min), None) => format!("{article} {kind} of at least {min}"),
        (None, Some(max)) => format!("{article} {kind} of at most {max}"),
        (None, None) => format!("{article} {kind}"),
    }
}

/// "strings", "objects", ... for an array's items.
fn plural(items: &Value) -> String {
    if choices(items).is_some() {
        return format!("values ({})", expected(items));
    }
    match types(items).as_deref() {
        Some([single]) => match *single {
            "string" => "strings",
            "integer" => "integers",
            "number" => "numbers",
            "boolean" => "booleans",
            "array" => "arrays",
            "object" => "objects",
            _ => "nulls",
        }
        .to_owned(),
        _ => "values".to_owned(),
    }
}

/// A JSON value's kind in words, as error messages name it: `null`, `a boolean`, `a number`,
/// `a string`, `an array`, `an object`.
pub fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A short rendering of what was sent: `"abc"`, `0`, `an object`, `an array`.
pub(crate) fn got(value: &Value) -> String {
    const SHOWN: usize = 40;
    match value {
        Value::Object(map) if map.is_empty() => "{}".to_owned(),
        Value::Array(items) if items.is_empty() => "[]".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::String(text) if text.chars().count() > SHOWN => {
            let head: String = text.chars().take(SHOWN).collect();
            format!("{}… (a string)", Value::String(head))
        }
        other => other.to_string(),
    }
}

/// The accepted name closest to `unknown`, when it is a near miss: the same name in another
/// case or separator style, or a small typo. Every "did you mean" (tool inputs, configuration
/// keys) comes from here.
pub fn near<'a>(unknown: &str, accepted: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let folded = fold(unknown);
    let allowed = match folded.chars().count() {
        0..=2 => 0,
        3..=4 => 1,
        _ => 2,
    };
    accepted
        .into_iter()
        .map(|name| {
            let other = fold(name);
            let distance = if other == folded {
                0
            } else {
                levenshtein(&folded, &other)
            };
            (distance, name)
        })
        .filter(|(distance, _)| *distance <= allowed)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn expectations_are_said_in_json_terms() {
        let cases = [
            (
                json!({"type": "integer", "minimum": 0}),
                "a non-negative integer",
            ),
            (
                json!({"type": "integer", "minimum": 1}),
                "a positive integer",
            ),
            (
                json!({"type": "integer", "minimum": 1, "maximum": 120}),
                "an integer from 1 to 120",
            ),
            (json!({"type": "boolean"}), "true or false"),
            (
                json!({"type": "array", "items": {"type": "string"}}),
                "an array of strings",
            ),
            (
                json!({"oneOf": [{"const": "a"}, {"const": "b"}]}),
                "one of: a, b",
            ),
            (json!({"type": ["string", "null"]}), "a string or null"),
        ];
        for (schema, words) in cases {
            assert_eq!(expected(&schema), words, "{schema}");
        }
    }

    #[test]
    fn near_misses_are_found() {
        let accepted = ["path", "offset", "limit"];
        assert_eq!(near("offest", accepted), Some("offset"));
        assert_eq!(near("Limit", accepted), Some("limit"));
        assert_eq!(near("ignoreCase", accepted), None);
    }
}
