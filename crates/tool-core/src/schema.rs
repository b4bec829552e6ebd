//! JSON Schemas derived from Rust types and normalised for models.
//!
//! Providers differ in what they accept; the shape every one of them takes is: the schema
//! inlined (no `$ref`/`$defs` unless a type is recursive), no `$schema` or `title`, optional
//! input fields simply absent from `required` (never `"type": [T, "null"]`), `additionalProperties:
//! false` on every object, properties in declaration order, and only standard `format`s.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The normalised schema of a tool input type (the deserialize contract), as models see it.
///
/// The decoding layer's own keywords (a field's `x-aliases`, an object's `x-ignored`) are not
/// part of it: other spellings are accepted, never advertised.
pub fn input_schema_for<T: JsonSchema>() -> Value {
    crate::input::advertised(decode_schema_for::<T>())
}

/// The schema a typed input is decoded with: [`input_schema_for`] plus the decoding layer's
/// keywords.
pub(crate) fn decode_schema_for<T: JsonSchema>() -> Value {
    derive::<T>(settings().for_deserialize(), Nulls::Drop)
}

/// The normalised schema of a tool output type (the serialize contract).
///
/// Unlike input schemas this keeps `null` alternatives: an output's `None` is encoded as
/// `null`, and the schema must say so.
pub fn output_schema_for<T: JsonSchema>() -> Value {
    // A type used both ways (a todo list) may carry the decoding layer's keywords.
    crate::input::advertised(derive::<T>(settings().for_serialize(), Nulls::Keep))
}

/// Whether `null` alternatives are removed while normalising.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Nulls {
    Drop,
    Keep,
}

fn settings() -> SchemaSettings {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    settings
}

fn derive<T: JsonSchema>(settings: SchemaSettings, nulls: Nulls) -> Value {
    let mut value = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    normalise(&mut value, nulls);
    value
}

/// Formats every provider accepts; schemars' numeric ones (`uint32`, `double`, ...) are not.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uuid",
];

fn normalise(value: &mut Value, nulls: Nulls) {
    match value {
        Value::Object(map) => {
            map.remove("$schema");
            map.remove("title");
            if nulls == Nulls::Drop {
                drop_null(map);
            }
            if let Some(format) = map.get("format").and_then(Value::as_str)
                && !STANDARD_FORMATS.contains(&format)
            {
                let implied = implied_bounds(format);
                map.remove("format");
                // The bounds a narrow integer format carried stay stated, so the schema still
                // says what its decoder accepts.
                if let Some((min, max)) = implied {
                    map.entry("minimum").or_insert(min.into());
                    map.entry("maximum").or_insert(max.into());
                }
            }
            if is_object_schema(map) && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            for (key, child) in map.iter_mut() {
                // `properties` and `$defs` map names to schemas; every other key holds a
                // schema, a list of schemas, or a plain value that normalising leaves alone.
                if key == "properties" || key == "$defs" {
                    if let Value::Object(named) = child {
                        named
                            .values_mut()
                            .for_each(|schema| normalise(schema, nulls));
                    }
                } else if key != "enum" && key != "const" && key != "default" && key != "examples" {
                    normalise(child, nulls);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| normalise(item, nulls)),
        _ => {}
    }
}

/// `Option<T>` comes out as `"type": [T, "null"]` or `anyOf: [T, {"type": "null"}]`; an absent
/// field already says "no value", so the null alternative only confuses models.
fn drop_null(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if let [single] = types.as_slice() {
            let single = single.clone();
            map.insert("type".into(), single);
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(options)) = map.get_mut(key) else {
            continue;
        };
        let before = options.len();
        options.retain(|option| option.get("type").and_then(Value::as_str) != Some("null"));
        if options.len() == 1
            && before == 2
            && let Some(Value::Object(inner)) = options.pop()
        {
            map.remove(key);
            for (k, v) in inner {
                map.entry(k).or_insert(v);
            }
        }
    }
}

/// The range of a fixed-width integer format narrower than JSON's own integers.
fn implied_bounds(format: &str) -> Option<(i64, i64)> {
    Some(match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "uint8" => (0, u8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        _ => return None,
    })
}

fn is_object_schema(map: &Map<String, Value>) -> bool {
    map.get("type").and_then(Value::as_str) == Some("object") || map.contains_key("properties")
}
