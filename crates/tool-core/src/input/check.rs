//! Step 3 of the decoding layer: the input against its schema, every problem in JSON terms.
//!
//! The first walk over an input is also a survey for step 1 and 2 (given a `rewrite` flag), so
//! an input that is already right is walked once, not once to decide and once to check. Most
//! rewrites show as problems (a number sent as a string, a null meaning "not given", anything
//! unknown to a closed object), and a survey that finds a problem leaves the decision to
//! [`needed`](super::rewrite::needed); the survey itself flags the rewrites that are no problem
//! as they stand: an alias or a dropped field where the object admits other fields.
//!
//! It covers what tool input schemas use (types, `const`/`enum`/`oneOf`/`anyOf`, numeric
//! bounds, string and array lengths, `properties`, `required`, `additionalProperties: false`,
//! `items`). A dynamic tool's input is validated in full by its compiled schema afterwards; a
//! typed tool's by its decoder, and a test keeps each builtin's decoder and schema in
//! agreement.

use serde_json::{Map, Value};

use super::compiled::{Node, field_names};
use super::describe::{expected, got, near};
use super::rewrite::drops_any;
use super::{FieldPath, Problem};

/// Appends to `problems` everything wrong with `value` under the compiled schema `node`.
///
/// With `rewrite`, it is also a survey (see the module's doc): the flag is set where an alias
/// or a dropped field would be rewritten. Only a survey without problems rules a rewrite out.
pub(crate) fn check(
    value: &Value,
    node: &Node,
    path: &FieldPath<'_>,
    problems: &mut Vec<Problem>,
    mut rewrite: Option<&mut bool>,
) {
    if !admitted(value, node) {
        if let Some(message) = too_large(value, node) {
            problems.push(Problem::at(path, message));
            return;
        }
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
        Value::Object(map) => object(map, node, path, problems, rewrite),
        Value::Array(items) => {
            if let Some(item_node) = &node.items {
                for (index, item) in items.iter().enumerate() {
                    check(
                        item,
                        item_node,
                        &path.index(index),
                        problems,
                        rewrite.as_deref_mut(),
                    );
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
            // Alternatives are checked as they are: a rewrite never looks inside them.
            check(value, alternative, &FieldPath::Root, &mut inner, None);
            inner.is_empty()
        });
    }
    node.kinds.is_none_or(|kinds| kinds.admits(value)) && node.limits.admit(value)
}

/// The size problem of a value of an admitted type that is past its schema's maximum.
fn too_large(value: &Value, node: &Node) -> Option<String> {
    if node.choices.is_some() || node.alternatives.is_some() {
        return None;
    }
    node.kinds
        .is_none_or(|kinds| kinds.admits(value))
        .then(|| node.limits.too_large(value))
        .flatten()
}

fn object(
    map: &Map<String, Value>,
    node: &Node,
    path: &FieldPath<'_>,
    problems: &mut Vec<Problem>,
    mut rewrite: Option<&mut bool>,
) {
    if let Some(flag) = rewrite.as_deref_mut()
        && drops_any(map, node)
    {
        *flag = true;
    }
    // The required fields present are counted during the walk over the fields; the missing
    // ones are named (a lookup each) only when one is missing, ahead of the fields' problems.
    let first = problems.len();
    let mut present = 0;
    for (key, field) in map {
        match node.property(key) {
            Some(property) => {
                present += usize::from(property.required);
                check(
                    field,
                    &property.node,
                    &path.field(key),
                    problems,
                    rewrite.as_deref_mut(),
                );
            }
            None if rewrite.is_some() && node.alias_target(key).is_some() => {
                if let Some(flag) = rewrite.as_deref_mut() {
                    *flag = true;
                }
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
    if present < node.required.len() {
        let missing = node
            .required
            .iter()
            .filter(|name| !map.contains_key(*name))
            .map(|name| {
                let what = node
                    .property(name)
                    .map_or_else(|| "a value".to_owned(), |p| expected(&p.node.schema));
                Problem::at(
                    &path.field(name),
                    format!("missing required field; expected {what}"),
                )
            });
        problems.splice(first..first, missing);
    }
}
