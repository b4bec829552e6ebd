//! The decoding layer: aliases, harmless value mistakes, and errors a model can act on.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tackle_tool_core::{Context, REWRITE_HINT, Tool, ToolError, from_fn, input_schema_for};

/// An input with aliases, an ignored field, nested objects and every scalar type.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Input {
    /// The file.
    #[schemars(extend("x-aliases" = ["filePath", "file_path"]))]
    path: String,
    /// How many.
    limit: Option<u32>,
    /// Whether to.
    #[schemars(extend("x-aliases" = ["replace_all"]))]
    replace_all: Option<bool>,
    /// Items.
    items: Option<Vec<Item>>,
    /// Options.
    options: Option<Options>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("x-ignored" = ["id"]))]
#[allow(dead_code)]
struct Item {
    name: String,
    #[schemars(extend("x-aliases" = ["multiSelect"]))]
    multiple: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Options {
    depth: u8,
}

fn tool() -> Tool {
    Tool::typed(
        "Echoes what it decoded",
        from_fn(
            |input: Input, _ctx: Context| async move { Ok::<_, ToolError>(format!("{input:?}")) },
        ),
    )
    .build()
}

fn accepted(input: &Value) -> Value {
    tool().check_input(input).unwrap()
}

fn refused(input: &Value) -> String {
    let message = tool().check_input(input).unwrap_err().message;
    let body = message
        .strip_suffix(&format!("\n\n{REWRITE_HINT}"))
        .unwrap_or_else(|| panic!("no hint at the end of {message:?}"));
    body.to_owned()
}

#[test]
fn aliases_are_renamed_at_every_level() {
    assert_eq!(accepted(&json!({"filePath": "a"})), json!({"path": "a"}));
    assert_eq!(
        accepted(&json!({"file_path": "a", "replace_all": true})),
        json!({"path": "a", "replaceAll": true})
    );
    assert_eq!(
        accepted(&json!({"path": "a", "items": [{"name": "x", "multiSelect": true, "id": "1"}]})),
        json!({"path": "a", "items": [{"name": "x", "multiple": true}]})
    );
}

#[test]
fn aliases_and_ignored_fields_are_never_advertised() {
    let schema = input_schema_for::<Input>();
    let text = schema.to_string();
    assert!(
        !text.contains("x-aliases") && !text.contains("x-ignored"),
        "{text}"
    );
    let definition = tool().definition("echo").unwrap();
    assert_eq!(definition.input_schema, schema);
}

#[test]
fn harmless_value_mistakes_are_corrected() {
    assert_eq!(
        accepted(&json!({
            "path": "a",
            "limit": "5",
            "replaceAll": "true",
            "items": "[{\"name\": \"x\", \"multiple\": \"False\"}]",
            "options": "{\"depth\": 2.0}"
        })),
        json!({
            "path": "a",
            "limit": 5,
            "replaceAll": true,
            "items": [{"name": "x", "multiple": false}],
            "options": {"depth": 2}
        })
    );
    // null for an optional field means the field was not given.
    assert_eq!(
        accepted(&json!({"path": "a", "limit": null, "options": null})),
        json!({"path": "a"})
    );
    // The whole input sent as a JSON string.
    assert_eq!(accepted(&json!("{\"path\": \"a\"}")), json!({"path": "a"}));
}

#[test]
fn an_input_that_needs_nothing_is_taken_as_it_is() {
    let input = json!({"path": "a", "limit": 5, "items": [{"name": "x"}]});
    assert_eq!(accepted(&input), input);
}

#[test]
fn mistakes_are_named_in_json_terms() {
    let mut seen = String::new();
    for input in [
        json!({"filePath": "a", "path": "b"}),
        json!({"file_path": "a", "filePath": "b"}),
        json!({"path": "a", "limt": 5}),
        json!({"path": "a", "ignoreCase": true}),
        json!({"path": "a", "limit": -1}),
        json!({"path": "a", "limit": "five"}),
        json!({"path": "a", "limit": 1.5}),
        json!({"path": "a", "replaceAll": "yes"}),
        json!({"path": "a", "items": "[not json"}),
        json!({"path": "a", "items": [{"multiple": true}]}),
        json!({"path": "a", "options": {"depth": 300}}),
        json!({"path": 7}),
        json!({}),
        json!([]),
        json!(null),
    ] {
        seen.push_str(&format!("{input}\n{}\n\n", refused(&input)));
    }
    insta::assert_snapshot!(seen);
}

#[test]
fn a_spelling_sent_as_null_is_not_sent() {
    assert_eq!(
        accepted(&json!({"path": "a", "filePath": null, "file_path": null})),
        json!({"path": "a"})
    );
    assert_eq!(
        accepted(&json!({"path": null, "filePath": "a"})),
        json!({"path": "a"})
    );
}

/// A string field's content is never reinterpreted: text that reads as a number, a boolean,
/// null, an array or an object stays the string it was, when checked and when the tool runs
/// (while the same text in a number or boolean field is a harmless mistake corrected).
#[tokio::test]
async fn a_string_field_keeps_its_text_whatever_it_looks_like() {
    for text in [
        "5",
        "-1.5",
        "true",
        "False",
        "null",
        "[1]",
        "{\"depth\": 2}",
        "\"quoted\"",
        "",
    ] {
        let input = json!({"path": text, "items": [{"name": text}]});
        assert_eq!(accepted(&input), input, "{text:?}");
        let out = tool()
            .run_unbounded(
                &tackle_tool_core::Call::new("call_1", "echo", input),
                &Context::new("s"),
            )
            .await
            .unwrap();
        let decoded = out.structured.as_str().unwrap().to_owned();
        let quoted = format!("{text:?}");
        assert_eq!(
            decoded,
            format!(
                "Input {{ path: {quoted}, limit: None, replace_all: None, items: Some([Item \
                 {{ name: {quoted}, multiple: None }}]), options: None }}"
            ),
            "{text:?}"
        );
    }
}

/// An input whose string and array have a maximum size.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Sized {
    #[schemars(length(max = 8))]
    name: String,
    #[schemars(length(max = 2))]
    tags: Option<Vec<String>>,
}

#[test]
fn a_value_past_its_maximum_size_is_refused_by_its_size() {
    let tool = Tool::typed(
        "Echoes what it decoded",
        from_fn(
            |input: Sized, _ctx: Context| async move { Ok::<_, ToolError>(format!("{input:?}")) },
        ),
    )
    .build();
    // At the limit (counted in characters, not bytes) the input is taken.
    let at_limit = json!({"name": "ééééé123", "tags": ["a", "b"]});
    assert_eq!(tool.check_input(&at_limit).unwrap(), at_limit);
    let mut seen = String::new();
    for input in [
        json!({"name": "ééééé1234"}),
        json!({"name": "a", "tags": ["a", "b", "c"]}),
        // A type mistake is still named as one.
        json!({"name": 5}),
    ] {
        let message = tool.check_input(&input).unwrap_err().message;
        seen.push_str(&format!("{input}\n{message}\n\n"));
    }
    insta::assert_snapshot!(seen);
}
