//! The one decoding layer every tool's input passes through, typed and dynamic alike.
//!
//! Models write what they were trained on, not what the schema says, so before an input is
//! decoded it is made to mean what the model meant, guided only by the tool's input schema:
//!
//! 1. Aliases: a property may declare other spellings in its schema (`"x-aliases":
//!    ["filePath", "file_path"]`, with `#[schemars(extend(...))]` next to the field); an alias is
//!    renamed to the property, and two spellings of one field in one call are an error naming
//!    both. An object may declare fields it accepts and drops (`"x-ignored"`). Neither key is
//!    ever advertised: [`advertised`] removes them from the schema models see.
//! 2. Harmless value mistakes: where the schema does not accept a string, a string holding a
//!    number (`"5"`), a boolean (`"true"`), an array or an object (`"[...]"`) is decoded once; a
//!    whole number written as `5.0` where an integer is expected becomes `5`; `null` for an
//!    optional field that does not accept `null` means the field is absent.
//! 3. The result is checked against the schema (types, ranges, enumerations, required and
//!    unknown fields), and every problem is reported with its field path and what was expected
//!    in JSON terms, followed by [`REWRITE_HINT`].
//!
//! An input that needs none of step 2's or step 1's changes is never copied.

mod check;
mod compiled;
mod describe;
mod rewrite;

use std::borrow::Cow;
use std::sync::OnceLock;

use serde_json::Value;

pub use describe::near as did_you_mean;
pub use describe::value_kind;

use crate::{ToolError, ToolFailure};

/// The schema keyword that lists a property's other accepted spellings.
pub(crate) const ALIASES: &str = "x-aliases";
/// The schema keyword that lists fields an object accepts and drops.
pub(crate) const IGNORED: &str = "x-ignored";

/// What every input error ends with: the model's next step.
pub const REWRITE_HINT: &str =
    "Correct the input so that it matches the tool's input schema, then call the tool again.";

/// One thing wrong with an input: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// The field path (`todos[0].status`); empty for the input as a whole.
    pub(crate) path: String,
    pub(crate) message: String,
}

impl Problem {
    pub(crate) fn new(path: &str, message: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            message: message.into(),
        }
    }

    /// A problem at a place a walk reached.
    pub(crate) fn at(path: &FieldPath<'_>, message: impl Into<String>) -> Self {
        Self {
            path: path.render(),
            message: message.into(),
        }
    }
}

/// The failure a model reads for `problems`: each with its path (one a line when there are
/// several), then the hint.
pub(crate) fn input_failure(problems: &[Problem]) -> ToolError {
    let listed: Vec<String> = problems
        .iter()
        .map(|problem| {
            if problem.path.is_empty() {
                problem.message.clone()
            } else {
                format!("{}: {}", problem.path, problem.message)
            }
        })
        .collect();
    let problems = match listed.as_slice() {
        [one] => format!(" {one}"),
        several => several.iter().map(|p| format!("\n- {p}")).collect(),
    };
    ToolFailure::new(format!("Invalid tool input:{problems}\n\n{REWRITE_HINT}")).into()
}

/// `input` made to mean what the model meant (aliases, harmless value mistakes) and checked
/// against `schema`; borrowed when nothing had to change.
pub(crate) fn prepare<'a>(
    input: &'a Value,
    schema: &InputSchema,
) -> Result<Cow<'a, Value>, ToolError> {
    let node = schema.compiled();
    let mut problems = Vec::new();
    let mut rewrite = false;
    check::check(
        input,
        node,
        &FieldPath::Root,
        &mut problems,
        Some(&mut rewrite),
    );
    if !rewrite && !problems.is_empty() {
        // The survey stopped at a wrong value; a rewrite below it may still be needed.
        rewrite = rewrite::needed(input, node);
    }
    let value = if rewrite {
        let mut owned = input.clone();
        rewrite::apply(&mut owned, node, &FieldPath::Root).map_err(|p| input_failure(&[p]))?;
        problems.clear();
        check::check(&owned, node, &FieldPath::Root, &mut problems, None);
        Cow::Owned(owned)
    } else {
        Cow::Borrowed(input)
    };
    if problems.is_empty() {
        Ok(value)
    } else {
        Err(input_failure(&problems))
    }
}

/// `schema` as models see it: without the decoding layer's own keywords.
pub(crate) fn advertised(mut schema: Value) -> Value {
    strip(&mut schema);
    schema
}

fn strip(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove(ALIASES);
            map.remove(IGNORED);
            map.values_mut().for_each(strip);
        }
        Value::Array(items) => items.iter_mut().for_each(strip),
        _ => {}
    }
}

/// A tool's input schema in its three forms: the one decoding follows (with aliases), that one
/// compiled for the walks of every call, and the one models are shown; each made when first
/// needed.
pub(crate) struct InputSchema {
    decode: OnceLock<Value>,
    compiled: OnceLock<compiled::Node>,
    advertised: OnceLock<Value>,
    derive: fn() -> Value,
}

impl InputSchema {
    /// A schema known already (a dynamic tool's).
    #[cfg(feature = "dynamic")]
    pub(crate) fn ready(value: Value) -> Self {
        Self {
            decode: OnceLock::from(value),
            compiled: OnceLock::new(),
            advertised: OnceLock::new(),
            derive: || Value::Null,
        }
    }

    /// A schema derived by `derive` when first asked for.
    pub(crate) fn derived(derive: fn() -> Value) -> Self {
        Self {
            decode: OnceLock::new(),
            compiled: OnceLock::new(),
            advertised: OnceLock::new(),
            derive,
        }
    }

    /// The schema decoding follows.
    pub(crate) fn decoding(&self) -> &Value {
        self.decode.get_or_init(self.derive)
    }

    /// The decoding schema compiled.
    fn compiled(&self) -> &compiled::Node {
        self.compiled
            .get_or_init(|| compiled::Node::compile(self.decoding()))
    }

    /// The schema models see.
    pub(crate) fn advertised(&self) -> &Value {
        self.advertised
            .get_or_init(|| advertised(self.decoding().clone()))
    }
}

/// Where in an input a value is (`todos[0].status`): built on the stack as a walk descends,
/// and spelled out only for a problem, so a walk over a right input allocates nothing.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FieldPath<'a> {
    Root,
    Field(&'a FieldPath<'a>, &'a str),
    Index(&'a FieldPath<'a>, usize),
}

impl FieldPath<'_> {
    pub(crate) fn field<'b>(&'b self, name: &'b str) -> FieldPath<'b> {
        FieldPath::Field(self, name)
    }

    pub(crate) fn index(&self, index: usize) -> FieldPath<'_> {
        FieldPath::Index(self, index)
    }

    /// The path as a model reads it; empty for the input as a whole.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out);
        out
    }

    fn render_into(&self, out: &mut String) {
        match self {
            Self::Root => {}
            Self::Field(parent, name) => {
                parent.render_into(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Self::Index(parent, index) => {
                parent.render_into(out);
                out.push('[');
                out.push_str(&index.to_string());
                out.push(']');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Map, json};

    use super::*;

    /// A schema with every feature the decoding layer acts on.
    fn schema() -> InputSchema {
        InputSchema::derived(|| {
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "minLength": 1, "x-aliases": ["filePath"]},
                    "limit": {"type": "integer", "minimum": 1},
                    "flag": {"type": ["boolean", "null"]},
                    "mode": {"enum": ["a", "b"]},
                    "items": {
                        "type": "array",
                        "maxItems": 2,
                        "items": {
                            "type": "object",
                            "properties": {
                                "n": {"type": "number", "maximum": 10, "x-aliases": ["num"]},
                            },
                            "required": ["n"],
                            "additionalProperties": false,
                        },
                    },
                    "opts": {
                        "type": "object",
                        "properties": {"depth": {"type": "integer", "x-aliases": ["maxDepth"]}},
                        "x-ignored": ["note"],
                    },
                    "either": {"anyOf": [{"type": "integer"}, {"type": "object", "properties": {"path": {"type": "string"}}}]},
                },
                "required": ["path"],
                "additionalProperties": false,
                "x-ignored": ["description"],
            })
        })
    }

    /// The two-walk definition `prepare` must agree with: decide, rewrite, then check.
    fn reference(input: &Value, schema: &InputSchema) -> Result<Value, String> {
        let node = schema.compiled();
        let mut value = input.clone();
        if rewrite::needed(input, node) {
            rewrite::apply(&mut value, node, &FieldPath::Root)
                .map_err(|p| input_failure(&[p]).to_string())?;
        }
        let mut problems = Vec::new();
        check::check(&value, node, &FieldPath::Root, &mut problems, None);
        if problems.is_empty() {
            Ok(value)
        } else {
            Err(input_failure(&problems).to_string())
        }
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3i64..20).prop_map(Value::from),
            prop_oneof![Just(2.0), Just(2.5), Just(11.0)].prop_map(Value::from),
            prop_oneof![
                Just(""),
                Just("a"),
                Just("c"),
                Just("5"),
                Just("true"),
                Just("[1]"),
                Just("src")
            ]
            .prop_map(Value::from),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        let keys = prop_oneof![
            Just("path"),
            Just("filePath"),
            Just("limit"),
            Just("flag"),
            Just("mode"),
            Just("items"),
            Just("either"),
            Just("description"),
            Just("n"),
            Just("opts"),
            Just("depth"),
            Just("maxDepth"),
            Just("note"),
            Just("other"),
        ];
        leaf().prop_recursive(3, 24, 5, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec((keys.clone(), inner), 0..5).prop_map(|fields| {
                    Value::Object(
                        fields
                            .into_iter()
                            .map(|(k, v)| (k.to_owned(), v))
                            .collect::<Map<_, _>>(),
                    )
                }),
            ]
        })
    }

    /// Mostly objects with the required field, so that most inputs get past the first problem.
    fn input() -> impl Strategy<Value = Value> {
        (value(), any::<bool>()).prop_map(|(value, with_path)| match value {
            Value::Object(mut map) if with_path => {
                map.insert("path".to_owned(), json!("src"));
                Value::Object(map)
            }
            other => other,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]
        #[test]
        fn one_survey_decides_as_deciding_then_checking_does(input in input()) {
            let schema = schema();
            let surveyed = prepare(&input, &schema)
                .map(Cow::into_owned)
                .map_err(|err| err.to_string());
            prop_assert_eq!(surveyed, reference(&input, &schema));
        }
    }

    /// Each kind of rewrite, in an input with no problem elsewhere (where the survey alone
    /// decides), agrees with the two-walk definition.
    #[test]
    fn every_rewrite_is_found_by_the_survey() {
        let schema = schema();
        for input in [
            json!({"path": "p", "opts": {"maxDepth": 1}}),
            json!({"path": "p", "opts": {"note": "x", "depth": 1}}),
            json!({"path": "p", "opts": {"depth": "2"}}),
            json!({"path": "p", "opts": {"depth": 2.0}}),
            json!({"path": "p", "limit": null}),
            json!({"path": "p", "description": "x"}),
            json!({"path": "p", "items": [{"n": 1}, {"num": 2}]}),
            json!({"path": "p", "items": "[{\"n\": 1}]"}),
            json!({"path": "p", "flag": "true"}),
            json!({"path": "p", "flag": null}),
        ] {
            let prepared = prepare(&input, &schema)
                .map(Cow::into_owned)
                .map_err(|err| err.to_string());
            assert_eq!(prepared, reference(&input, &schema), "{input}");
        }
    }

    #[test]
    fn a_right_input_is_borrowed_and_a_rewritten_one_checked_again() {
        let schema = schema();
        let right = json!({"path": "src", "limit": 3});
        assert!(matches!(prepare(&right, &schema), Ok(Cow::Borrowed(_))));
        let aliased = json!({"filePath": "src", "limit": "3", "description": "x"});
        let prepared = prepare(&aliased, &schema).unwrap();
        assert_eq!(*prepared, json!({"path": "src", "limit": 3}));
        // A rewrite below a value that is wrong as a whole still comes first: the survey stops
        // at the too-long array, and the field sent twice inside it is the error reported.
        let twice = json!({"path": "p", "items": [{"n": 1, "num": 2}, {"n": 1}, {"n": 1}]});
        let err = prepare(&twice, &schema).unwrap_err().to_string();
        assert!(err.contains("items[0].n: sent twice"), "{err}");
        assert_eq!(Err(err), reference(&twice, &schema));
        let still_wrong = json!({"filePath": "", "flag": null});
        let err = prepare(&still_wrong, &schema).unwrap_err().to_string();
        assert!(err.contains("path: expected a non-empty string"), "{err}");
    }
}
