//! Step 1 and 2 of the decoding layer: aliases, dropped fields, and harmless value mistakes.
//!
//! [`needed`] decides without copying whether [`apply`] would change anything, so an input that
//! is already right (the common case, and the one with the largest strings) is never cloned.

use serde_json::{Map, Number, Value};

use super::compiled::{Kinds, Node, Property};
use super::{FieldPath, Problem};

/// True when [`apply`] would change `value` (asked of the compiled schema, since it is asked
/// of every call whose survey found a problem; see `check`).
pub(crate) fn needed(value: &Value, node: &Node) -> bool {
    if coerced(value, node).is_some() {
        return true;
    }
    match value {
        Value::Object(map) => {
            drops_any(map, node)
                || map.iter().any(|(key, field)| match node.property(key) {
                    Some(property) => {
                        absent_field(field, property) || needed(field, &property.node)
                    }
                    None => node.alias_target(key).is_some(),
                })
        }
        Value::Array(items) => match &node.items {
            Some(item_node) => items.iter().any(|item| needed(item, item_node)),
            None => false,
        },
        _ => false,
    }
}

/// True when `map` holds a field its object declares ignored ([`apply`] drops it).
pub(crate) fn drops_any(map: &Map<String, Value>, node: &Node) -> bool {
    node.properties.is_some() && node.ignored.iter().any(|name| map.contains_key(name))
}

/// True when `field` is a null [`apply`] removes: a `null` for an optional field that does not
/// accept `null` means the model meant "not given".
fn absent_field(field: &Value, property: &Property) -> bool {
    field.is_null() && !property.required && !property.node.admits_null()
}

/// Renames aliases, drops declared ignored fields and absent-meaning nulls, and decodes
/// harmless value mistakes, in place. Two spellings of one field are an error.
pub(crate) fn apply(value: &mut Value, node: &Node, path: &FieldPath<'_>) -> Result<(), Problem> {
    if let Some(fixed) = coerced(value, node) {
        *value = fixed;
    }
    match value {
        Value::Object(map) => {
            let Some(properties) = &node.properties else {
                return Ok(());
            };
            for name in &node.ignored {
                map.remove(name);
            }
            rename_aliases(map, properties, path)?;
            map.retain(|key, field| {
                node.property(key)
                    .is_none_or(|property| !absent_field(field, property))
            });
            for (key, field) in map.iter_mut() {
                if let Some(property) = node.property(key) {
                    apply(field, &property.node, &path.field(key))?;
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_node) = &node.items {
                for (index, item) in items.iter_mut().enumerate() {
                    apply(item, item_node, &path.index(index))?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn rename_aliases(
    map: &mut Map<String, Value>,
    properties: &[Property],
    path: &FieldPath<'_>,
) -> Result<(), Problem> {
    for property in properties {
        let name = &property.name;
        // A spelling sent as null is a spelling not used (models that fill every field send
        // null for the ones they mean to leave out).
        let mut spellings: Vec<&str> = Vec::new();
        for alias in &property.aliases {
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
        let sent: Vec<String> = spellings.iter().map(|s| format!("`{s}`")).collect();
        return Err(Problem::at(
            &path.field(name),
            format!(
                "sent twice, as {}; they name the same field: send it once, as `{name}`",
                sent.join(" and ")
            ),
        ));
    }
    Ok(())
}

/// The value the model meant when `value` is a harmless mistake for `node`: a string where
/// the schema accepts no string but a number, a boolean, an array or an object that the string
/// spells; or a whole number written with a fraction where an integer is expected.
fn coerced(value: &Value, node: &Node) -> Option<Value> {
    let wanted = node.kinds?;
    match value {
        Value::String(text) if !wanted.has(Kinds::STRING) => {
            let text = text.trim();
            if wanted.has(Kinds::BOOLEAN) {
                if text.eq_ignore_ascii_case("true") {
                    return Some(Value::Bool(true));
                }
                if text.eq_ignore_ascii_case("false") {
                    return Some(Value::Bool(false));
                }
            }
            let starts = text.chars().next()?;
            let plausible = match starts {
                '[' => wanted.has(Kinds::ARRAY),
                '{' => wanted.has(Kinds::OBJECT),
                '-' | '0'..='9' => wanted.has(Kinds::INTEGER),
                _ => false,
            };
            if !plausible {
                return None;
            }
            let parsed: Value = serde_json::from_str(text).ok()?;
            let parsed = whole(&parsed, wanted).unwrap_or(parsed);
            wanted.admits(&parsed).then_some(parsed)
        }
        Value::Number(_) => whole(value, wanted),
        _ => None,
    }
}

/// `5.0` as `5` where an integer, and no other number, is expected.
fn whole(value: &Value, wanted: Kinds) -> Option<Value> {
    if !wanted.has(Kinds::INTEGER) || wanted.has(Kinds::NUMBER) {
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
