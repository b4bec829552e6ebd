//! A tool's input schema compiled once into the shape the per-call walks follow.
//!
//! Every call asks the same questions of the same schema (which types, which fields, which
//! aliases, which bounds). Asked of the schema's JSON, each is a keyed lookup in an ordered map,
//! and they cost several times the tool's own decoding; asked of a [`Node`], each is a field
//! read or a short scan. A node keeps its source schema only to describe it in error messages,
//! which are made on the failure path alone.

use serde_json::Value;

use super::describe::{alternatives, bounds, choices, dedup, types};
use super::{ALIASES, IGNORED};

/// One schema, compiled.
#[derive(Debug)]
pub(crate) struct Node {
    /// The schema this node was compiled from, for error messages.
    pub(crate) schema: Value,
    /// The JSON types admitted, when the schema says (see [`types`]).
    pub(crate) kinds: Option<Kinds>,
    /// The fixed values admitted (`enum`, `const`, or alternatives that are each a `const`).
    pub(crate) choices: Option<Vec<Value>>,
    /// The `oneOf`/`anyOf` alternatives of a schema without `type`.
    pub(crate) alternatives: Option<Vec<Node>>,
    pub(crate) limits: Limits,
    /// The schema of an array's items.
    pub(crate) items: Option<Box<Node>>,
    /// The declared fields of an object, in schema order.
    pub(crate) properties: Option<Vec<Property>>,
    /// The names an object must have.
    pub(crate) required: Vec<String>,
    /// `additionalProperties: false`.
    pub(crate) closed: bool,
    /// Fields an object accepts and drops.
    pub(crate) ignored: Vec<String>,
}

/// One declared field of an object.
#[derive(Debug)]
pub(crate) struct Property {
    pub(crate) name: String,
    pub(crate) node: Node,
    /// The field's other accepted spellings.
    pub(crate) aliases: Vec<String>,
    pub(crate) required: bool,
}

impl Node {
    pub(crate) fn compile(schema: &Value) -> Self {
        let map = schema.as_object();
        let get = |key: &str| map.and_then(|m| m.get(key));
        let untyped_alternatives = map
            .filter(|m| !m.contains_key("type"))
            .and_then(alternatives)
            .map(|each| each.iter().map(Self::compile).collect());
        let required: Vec<String> = strings(get("required"));
        let properties = get("properties").and_then(Value::as_object).map(|fields| {
            fields
                .iter()
                .map(|(name, field)| Property {
                    name: name.clone(),
                    node: Self::compile(field),
                    aliases: strings(field.get(ALIASES)),
                    required: required.contains(name),
                })
                .collect()
        });
        Self {
            schema: schema.clone(),
            kinds: types(schema).as_deref().map(Kinds::of),
            choices: choices(schema).map(|values| values.into_iter().cloned().collect()),
            alternatives: untyped_alternatives,
            limits: Limits::of(schema),
            items: get("items").map(|items| Box::new(Self::compile(items))),
            properties,
            required: dedup(required),
            closed: get("additionalProperties") == Some(&Value::Bool(false)),
            ignored: strings(get(IGNORED)),
        }
    }

    /// The declared field named `key`.
    pub(crate) fn property(&self, key: &str) -> Option<&Property> {
        self.properties.as_ref()?.iter().find(|p| p.name == key)
    }

    /// The declared field `key` is another spelling of.
    pub(crate) fn alias_target(&self, key: &str) -> Option<&Property> {
        self.properties
            .as_ref()?
            .iter()
            .find(|p| p.aliases.iter().any(|alias| alias == key))
    }

    /// True when the schema admits `null` (or says nothing of types).
    pub(crate) fn admits_null(&self) -> bool {
        self.kinds.is_none_or(|kinds| kinds.has(Kinds::NULL))
    }
}

/// A set of JSON types. A value's type is one bit, so admitting it is one test rather than a
/// comparison of type names per declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kinds(u8);

impl Kinds {
    pub(crate) const NULL: u8 = 1;
    pub(crate) const BOOLEAN: u8 = 1 << 1;
    /// Also in every set that has [`NUMBER`](Self::NUMBER).
    pub(crate) const INTEGER: u8 = 1 << 2;
    pub(crate) const NUMBER: u8 = 1 << 3;
    pub(crate) const STRING: u8 = 1 << 4;
    pub(crate) const ARRAY: u8 = 1 << 5;
    pub(crate) const OBJECT: u8 = 1 << 6;

    /// The set of the named types; `number` admits integers too.
    pub(crate) fn of(names: &[&str]) -> Self {
        Self(names.iter().fold(0, |bits, name| {
            bits | match *name {
                "null" => Self::NULL,
                "boolean" => Self::BOOLEAN,
                "integer" => Self::INTEGER,
                "number" => Self::NUMBER | Self::INTEGER,
                "string" => Self::STRING,
                "array" => Self::ARRAY,
                "object" => Self::OBJECT,
                _ => 0,
            }
        }))
    }

    /// True when the set has the type `kind` (one of the constants).
    pub(crate) fn has(self, kind: u8) -> bool {
        self.0 & kind != 0
    }

    /// True when `value`'s type is in the set.
    pub(crate) fn admits(self, value: &Value) -> bool {
        let kind = match value {
            Value::Null => Self::NULL,
            Value::Bool(_) => Self::BOOLEAN,
            Value::Number(n) if n.is_i64() || n.is_u64() => Self::INTEGER,
            Value::Number(_) => Self::NUMBER,
            Value::String(_) => Self::STRING,
            Value::Array(_) => Self::ARRAY,
            Value::Object(_) => Self::OBJECT,
        };
        self.0 & kind != 0
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// The size and range bounds of a schema: string lengths in characters, array lengths, and
/// numeric bounds (exclusive bounds made inclusive for integers).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Limits {
    /// Any bound at all: most fields have none, and then nothing is compared.
    bounded: bool,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    integer: (Option<Bound>, Option<Bound>),
    number: (Option<Bound>, Option<Bound>),
}

/// A numeric bound, with its whole value when it has one, so that whole numbers are compared
/// as integers (no large value rounds into range) without converting on every call.
#[derive(Debug, Clone, Copy)]
struct Bound {
    value: f64,
    whole: Option<i128>,
}

impl Bound {
    fn new(value: f64) -> Self {
        #[allow(clippy::cast_possible_truncation)] // a whole bound, saturating
        let whole = (value.fract() == 0.0).then_some(value as i128);
        Self { value, whole }
    }

    /// How `n` compares with this bound; `whole` is `n` when it is a whole number.
    fn order(&self, n: &serde_json::Number, whole: Option<i128>) -> Option<std::cmp::Ordering> {
        match (whole, self.whole) {
            (Some(i), Some(bound)) => Some(i.cmp(&bound)),
            _ => n.as_f64().and_then(|x| x.partial_cmp(&self.value)),
        }
    }
}

impl Limits {
    pub(crate) fn of(schema: &Value) -> Self {
        let count = |key: &str| schema.get(key).and_then(Value::as_u64);
        let counts = [
            count("minLength"),
            count("maxLength"),
            count("minItems"),
            count("maxItems"),
        ];
        let [min_length, max_length, min_items, max_items] = counts;
        let (integer, number) = (both(bounds(schema, true)), both(bounds(schema, false)));
        Self {
            bounded: counts.iter().any(Option::is_some)
                || [integer.0, integer.1, number.0, number.1]
                    .iter()
                    .any(Option::is_some),
            min_length,
            max_length,
            min_items,
            max_items,
            integer,
            number,
        }
    }

    /// True when `value`'s size or magnitude is within these limits.
    pub(crate) fn admit(&self, value: &Value) -> bool {
        if !self.bounded {
            return true;
        }
        let within = |n: usize, min: Option<u64>, max: Option<u64>| {
            min.is_none_or(|min| n as u64 >= min) && max.is_none_or(|max| n as u64 <= max)
        };
        match value {
            Value::Number(n) => {
                let whole = n.as_i64().map(i128::from).or(n.as_u64().map(i128::from));
                let (min, max) = if whole.is_some() {
                    self.integer
                } else {
                    self.number
                };
                min.is_none_or(|m| m.order(n, whole).is_some_and(std::cmp::Ordering::is_ge))
                    && max.is_none_or(|m| m.order(n, whole).is_some_and(std::cmp::Ordering::is_le))
            }
            Value::String(text) => {
                // A string has between a quarter of its bytes and all of them as characters,
                // which settles most bounds without counting (a file's content can be large).
                let bytes = text.len() as u64;
                let long_enough = self.min_length.is_none_or(|min| bytes.div_ceil(4) >= min);
                let short_enough = self.max_length.is_none_or(|max| bytes <= max);
                long_enough && short_enough
                    || within(text.chars().count(), self.min_length, self.max_length)
            }
            Value::Array(items) => within(items.len(), self.min_items, self.max_items),
            _ => true,
        }
    }
}

impl Limits {
    /// What is wrong with `value`'s size when it is past a maximum, in words of its own:
    /// "expected a string" would not tell a model that its string was too long.
    pub(crate) fn too_large(&self, value: &Value) -> Option<String> {
        let (size, max, unit) = match value {
            Value::String(text) => (text.chars().count(), self.max_length?, "characters"),
            Value::Array(items) => (items.len(), self.max_items?, "items"),
            _ => return None,
        };
        (size as u64 > max)
            .then(|| format!("too long: {size} {unit}, and at most {max} are accepted"))
    }
}

fn both((min, max): (Option<f64>, Option<f64>)) -> (Option<Bound>, Option<Bound>) {
    (min.map(Bound::new), max.map(Bound::new))
}

/// The keys of an object schema's declared fields (for "the accepted fields are").
pub(crate) fn field_names(node: &Node) -> Vec<&str> {
    node.properties
        .as_ref()
        .map(|p| p.iter().map(|p| p.name.as_str()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    proptest! {
        /// The byte-length shortcut never decides differently from counting characters.
        #[test]
        fn string_bounds_agree_with_counting(
            text in "\\PC{0,12}",
            min in proptest::option::of(0u64..14),
            max in proptest::option::of(0u64..14),
        ) {
            let mut schema = json!({"type": "string"});
            if let Some(min) = min { schema["minLength"] = json!(min); }
            if let Some(max) = max { schema["maxLength"] = json!(max); }
            let chars = text.chars().count() as u64;
            let expected = min.is_none_or(|m| chars >= m) && max.is_none_or(|m| chars <= m);
            prop_assert_eq!(Limits::of(&schema).admit(&json!(text)), expected);
        }

        /// Whole numbers are compared with whole bounds exactly, however large.
        #[test]
        fn integer_bounds_are_exact(n in any::<i64>(), bound in any::<i64>()) {
            // Bounds that are exactly representable as JSON floats.
            let bound = (bound >> 11) << 11;
            let schema = json!({"type": "integer", "minimum": bound as f64});
            prop_assert_eq!(Limits::of(&schema).admit(&json!(n)), i128::from(n) >= i128::from(bound));
        }
    }

    #[test]
    fn a_value_just_past_a_large_bound_is_outside_it() {
        let schema = json!({"type": "integer", "maximum": 9_007_199_254_740_992_u64});
        let limits = Limits::of(&schema);
        assert!(limits.admit(&json!(9_007_199_254_740_992_u64)));
        assert!(!limits.admit(&json!(9_007_199_254_740_993_u64)));
        assert!(!limits.admit(&json!(u64::MAX)));
        let exclusive = Limits::of(&json!({"type": "number", "exclusiveMinimum": 0.5}));
        assert!(
            exclusive.admit(&json!(0.5)),
            "exclusive bounds are made inclusive"
        );
        assert!(!exclusive.admit(&json!(0.25)));
    }

    #[test]
    fn a_type_set_admits_its_types_and_a_number_admits_an_integer() {
        let values = [
            json!(null),
            json!(true),
            json!(3),
            json!(1.5),
            json!("x"),
            json!([]),
            json!({}),
        ];
        let names = [
            "null", "boolean", "integer", "number", "string", "array", "object",
        ];
        for (index, name) in names.iter().enumerate() {
            let kinds = Kinds::of(&[name]);
            for (other, value) in values.iter().enumerate() {
                let expected = other == index || (*name == "number" && value.is_i64());
                assert_eq!(kinds.admits(value), expected, "{name} admits {value}?");
            }
        }
        let either = Kinds::of(&["string", "null"]);
        assert!(either.admits(&json!(null)) && either.admits(&json!("x")));
        assert!(!either.admits(&json!(1)));
        assert!(!Kinds::of(&[]).admits(&json!(1)));
    }

    #[test]
    fn a_schema_without_bounds_admits_any_size_and_one_bound_still_counts() {
        let unbounded = Limits::of(&json!({"type": "string"}));
        assert!(unbounded.admit(&json!("x".repeat(10_000))));
        let bounded = Limits::of(&json!({"type": "integer", "maximum": 3}));
        assert!(bounded.admit(&json!(3)));
        assert!(!bounded.admit(&json!(4)));
        let items = Limits::of(&json!({"type": "array", "minItems": 1}));
        assert!(!items.admit(&json!([])));
    }

    #[test]
    fn a_schema_compiles_to_its_fields_aliases_and_required_names() {
        let node = Node::compile(&json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "x-aliases": ["filePath", "file_path"]},
                "limit": {"type": "integer"},
            },
            "required": ["path", "path"],
            "additionalProperties": false,
            "x-ignored": ["description"],
        }));
        assert_eq!(field_names(&node), ["path", "limit"]);
        assert_eq!(node.required, ["path"]);
        assert!(node.closed);
        assert_eq!(node.ignored, ["description"]);
        assert_eq!(
            node.alias_target("file_path").map(|p| p.name.as_str()),
            Some("path")
        );
        assert!(node.property("path").is_some_and(|p| p.required));
        assert!(
            node.property("limit")
                .is_some_and(|p| !p.required && !p.node.admits_null())
        );
    }
}
