//! Tools built from a JSON Schema and a closure.

use serde_json::{Value, json};
use tackle_tool_core::{Call, Content, Context, REWRITE_HINT, ResultValue, Tool, ToolError};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": false
    })
}

fn add() -> Tool {
    Tool::dynamic(
        "Adds two integers",
        schema(),
        |input: Value, _ctx| async move {
            let sum = input["a"].as_i64().unwrap_or(0) + input["b"].as_i64().unwrap_or(0);
            Ok::<_, ToolError>(json!({"sum": sum}))
        },
    )
    .output_schema(
        json!({"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}),
    )
    .model_output(|out| vec![Content::text(format!("sum = {}", out["sum"]))])
    .build()
    .unwrap()
}

async fn settle(tool: &Tool, input: Value) -> Result<tackle_tool_core::ToolOutput, ToolError> {
    tool.run_unbounded(&Call::new("c", "add", input), &Context::new("s"))
        .await
}

#[tokio::test]
async fn valid_input_settles() {
    let out = settle(&add(), json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(out.structured, json!({"sum": 5}));
    assert_eq!(out.to_result_value(), ResultValue::Text("sum = 5".into()));
    let def = add().definition("add").unwrap();
    assert_eq!(def.input_schema, schema());
}

#[tokio::test]
async fn schema_invalid_input_is_rejected_before_execution() {
    let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = ran.clone();
    let tool = Tool::dynamic("Adds", schema(), move |_input: Value, _ctx| {
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
        async { Ok::<_, ToolError>(json!({})) }
    })
    .build()
    .unwrap();
    let cases = [
        (
            json!({"a": 1}),
            "Invalid tool input: b: missing required field; expected an integer",
        ),
        (
            json!({"a": "x", "b": 2}),
            "Invalid tool input: a: expected an integer, got \"x\"",
        ),
        (
            json!({"a": 1, "b": 2, "c": 3}),
            "Invalid tool input: c: unknown field; the accepted fields are: a, b",
        ),
    ];
    for (input, expected) in cases {
        match settle(&tool, input).await {
            Err(ToolError::Failure(f)) => {
                assert_eq!(f.message, format!("{expected}\n\n{REWRITE_HINT}"));
            }
            other => panic!("expected a failure, got {other:?}"),
        }
    }
    assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
}

#[tokio::test]
async fn output_violating_the_output_schema_is_reported() {
    let tool = Tool::dynamic("bad", json!({"type": "object"}), |_, _| async {
        Ok::<_, ToolError>(json!({"sum": "x"}))
    })
    .output_schema(json!({"type": "object", "properties": {"sum": {"type": "integer"}}}))
    .build()
    .unwrap();
    match settle(&tool, json!({})).await {
        Err(ToolError::Failure(f)) => assert_eq!(
            f.message,
            "Tool returned an invalid value for its output schema: /sum: \"x\" is not of type \"integer\""
        ),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn an_invalid_schema_is_refused_at_construction() {
    let err = Tool::dynamic("x", json!({"type": 12}), |_, _| async {
        Ok::<_, ToolError>(json!(null))
    })
    .build()
    .unwrap_err();
    assert_eq!(err.which, "input");
    assert!(
        err.to_string().starts_with("invalid input schema: "),
        "{err}"
    );
}

#[tokio::test]
async fn harmless_mistakes_are_corrected_before_validation() {
    // Numbers sent as strings, and the whole input sent as a JSON string.
    let out = settle(&add(), json!({"a": "2", "b": 3.0})).await.unwrap();
    assert_eq!(out.structured, json!({"sum": 5}));
    let out = settle(&add(), json!("{\"a\": 1, \"b\": 1}")).await.unwrap();
    assert_eq!(out.structured, json!({"sum": 2}));
}

#[tokio::test]
async fn the_full_schema_still_decides_what_the_decoding_layer_does_not_check() {
    let schema = json!({
        "type": "object",
        "properties": {"id": {"type": "string", "pattern": "^[a-z]+$", "x-aliases": ["ID"]}},
        "required": ["id"],
        "additionalProperties": false
    });
    let tool = Tool::dynamic("Echo", schema, |input: Value, _ctx| async move {
        Ok::<_, ToolError>(input)
    })
    .build()
    .unwrap();
    assert_eq!(
        tool.check_input(&json!({"ID": "abc"})).unwrap(),
        json!({"id": "abc"})
    );
    let failure = tool.check_input(&json!({"id": "ABC"})).unwrap_err();
    assert!(
        failure.message.starts_with("Invalid tool input: /id: "),
        "{}",
        failure.message
    );
    assert!(failure.message.ends_with(REWRITE_HINT));
    let advertised = tool.definition("echo").unwrap().input_schema.clone();
    assert!(advertised["properties"]["id"].get("x-aliases").is_none());
}
