//! Step 3 of the decoding layer: the input against its schema, every problem in JSON terms.
//!
//! It covers what tool input schemas use (types, `const`/`enum`/`oneOf`/`anyOf`, numeric
//! bounds, string and array lengths, `properties`, `required`, `additionalProperties: false`,
//! `items`). A dynamic tool's input is validated in full by its compiled schema afterwards; a
//! typed tool's by its decoder, and a test keeps each builtin's decoder and schema in
//! agreement.

use serde_json::{Map, Value};

use super::compiled::{Node, field_names};
use super::describe::{expected, got, json_type, near, type_admits};
use super::{FieldPath, Problem};

/// Appends to `problems` everything wrong with `value` under the compiled schema `node`.
pub(crate) fn check(value: &Value, node: &Node, path: &FieldPath<'_>, problems: &mut Vec<Problem>) {
    if !admitted(value, node) {
        let hint = match (value, &node.choices) {
            (Value::String(sent), Some(choices)) => {
                near(sent, choices.iter().filter_map(|c| c.as_str()))
                    .map(|choice| format!(" (did you mean `{choice}`?)"))
            }
            _ => None,
        };
        problems.push(Problem::at(
            path,
            format!(
                "expected {}, got {}{}",
                expected(&node.schema),
                got(value),
                hint.unwrap_or_default()
            ),
        ));
        return;
    }
    match value {
        Value::Object(map) => object(map, node, path, problems),
        Value::Array(items) => {
            if let Some(item_node) = &node.items {
                for (index, item) in items.iter().enumerate() {
                    check(item, item_node, &path.index(index), problems);
                }
            }
        }
        _ => {}
    }
}

/// True when `value` has a type, value and size `node` allows (fields are checked apart).
fn admitted(value: &Value, node: &Node) -> bool {
    if let Some(choices) = &node.choices {
        return choices.contains(value);
    }
    if let Some(alternatives) = &node.alternatives {
        return alternatives.iter().any(|alternative| {
            let mut inner = Vec::new();
            check(value, alternative, &FieldPath::Root, &mut inner);
            inner.is_empty()
        });
    }
    let actual = json_type(value);
    if let Some(types) = &node.types
        && !types.iter().any(|wanted| type_admits(wanted, actual))
    {
        return false;
    }
    node.limits.admit(value)
}

fn object(
    map: &Map<String, Value>,
    node: &Node,
    path: &FieldPath<'_>,
    problems: &mut Vec<Problem>,
) {
    // Counting the required fields present is a scan; naming the missing ones a lookup each,
    // made only when one is missing.
    let present = map
        .keys()
        .filter(|key| node.required.iter().any(|name| name == *key))
        .count();
    if present < node.required.len() {
        for name in node.required.iter().filter(|name| !map.contains_key(*name)) {
            let what = node
                .property(name)
                .map_or_else(|| "a value".to_owned(), |p| expected(&p.node.schema));
            problems.push(Problem::at(
                &path.field(name),
                format!("missing required field; expected {what}"),
            ));
        }
    }
    for (key, field) in map {
        match node.property(key) {
            Some(property) => {
                check(field, &property.node, &path.field(key), problems);
            }
            None if node.closed => {
                let accepted = field_names(node);
                let hint = match near(key, accepted.iter().copied()) {
                    Some(name) => format!(" (did you mean `{name}`?)"),
                    None => String::new(),
                };
                problems.push(Problem::at(
                    &path.field(key),
                    format!(
                        "unknown field{hint}; the accepted fields are: {}",
                        accepted.join(", ")
                    ),
                ));
            }
            None => {}
        }
    }
}
