//! A JSON Schema's fields as a Markdown table: one row per field, nested objects and array
//! items flattened into dotted paths (`todos[].status`).

use serde_json::{Map, Value};

/// How deep nested objects are followed (a recursive `$ref` would not end otherwise).
const MAX_DEPTH: usize = 8;

/// The table of `schema`'s properties; `root` resolves `$ref`s (`#/$defs/...`).
pub(crate) fn table(schema: &Value, root: &Value) -> String {
    let mut rows = Vec::new();
    fields(schema, root, "", 0, &mut rows);
    if rows.is_empty() {
        return "No fields.\n".to_owned();
    }
    let mut text = "| Field | Type | Required | Description |\n|---|---|---|---|\n".to_owned();
    for row in rows {
        text.push_str(&row);
        text.push('\n');
    }
    text
}

fn fields(schema: &Value, root: &Value, prefix: &str, depth: usize, rows: &mut Vec<String>) {
    let schema = resolve(schema, root);
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, field) in properties {
        let field = resolve(field, root);
        let path = format!("{prefix}{name}");
        let description = field
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default();
        rows.push(format!(
            "| `{path}` | {} | {} | {} |",
            cell(&type_of(field, root)),
            if required.contains(&name.as_str()) {
                "yes"
            } else {
                "no"
            },
            cell(description)
        ));
        if depth >= MAX_DEPTH {
            continue;
        }
        fields(field, root, &format!("{path}."), depth + 1, rows);
        if let Some(items) = field.get("items") {
            fields(items, root, &format!("{path}[]."), depth + 1, rows);
        }
    }
}

/// A field's type in words: `string`, `integer ≥ 1`, `one of: a, b`, `array of object`.
fn type_of(schema: &Value, root: &Value) -> String {
    let schema = resolve(schema, root);
    let choices = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array);
    let mut words = if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        format!(
            "one of: {}",
            values.iter().map(literal).collect::<Vec<_>>().join(", ")
        )
    } else if let Some(value) = schema.get("const") {
        literal(value)
    } else if let Some(choices) = choices {
        let consts: Option<Vec<String>> = choices
            .iter()
            .map(|c| resolve(c, root).get("const").map(literal))
            .collect();
        match consts {
            Some(consts) => format!("one of: {}", consts.join(", ")),
            None => choices
                .iter()
                .map(|c| type_of(c, root))
                .collect::<Vec<_>>()
                .join(" or "),
        }
    } else {
        match schema.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            Some(Value::Array(kinds)) => kinds
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" or "),
            _ => "any".to_owned(),
        }
    };
    if words == "array"
        && let Some(items) = schema.get("items")
    {
        words = format!("array of {}", type_of(items, root));
    }
    words.push_str(&bounds(schema.as_object()));
    if let Some(default) = schema.get("default") {
        words.push_str(&format!(", default {}", literal(default)));
    }
    words
}

fn bounds(schema: Option<&Map<String, Value>>) -> String {
    let Some(schema) = schema else {
        return String::new();
    };
    let pairs = [
        ("minimum", "≥"),
        ("exclusiveMinimum", ">"),
        ("maximum", "≤"),
        ("exclusiveMaximum", "<"),
        ("minLength", "length ≥"),
        ("maxLength", "length ≤"),
        ("minItems", "items ≥"),
        ("maxItems", "items ≤"),
    ];
    pairs
        .iter()
        .filter_map(|(key, sign)| schema.get(*key).map(|v| format!(" {sign} {v}")))
        .collect::<Vec<_>>()
        .join(",")
}

fn literal(value: &Value) -> String {
    match value {
        Value::String(text) => format!("`{text}`"),
        other => format!("`{other}`"),
    }
}

/// Follows a local `$ref` (`#/$defs/Name`, `#/definitions/Name`).
fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut schema = schema;
    for _ in 0..MAX_DEPTH {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let Some(pointer) = reference.strip_prefix('#') else {
            break;
        };
        match root.pointer(pointer) {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

/// Text that stays inside one table cell.
pub(crate) fn cell(text: &str) -> String {
    text.trim()
        .replace('|', "\\|")
        .replace("\r\n", "\n")
        .replace('\n', "<br>")
}
