//! Settlement order, error texts and the error discipline of typed tools.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::json;
use tackle_tool_core::{
    Call, Content, Context, Defect, Execute, Halt, OutputContent, ResultValue, Tool, ToolError,
    ToolFailure, from_fn,
};

#[derive(Debug, Deserialize, JsonSchema)]
struct GreetInput {
    name: String,
    times: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct GreetOutput {
    greeting: String,
}

/// A tool with a captured service (a call counter), as leaves capture theirs.
struct Greet {
    calls: Arc<AtomicUsize>,
}

impl Execute for Greet {
    type Input = GreetInput;
    type Output = GreetOutput;

    async fn execute(&self, input: GreetInput, _ctx: &Context) -> Result<GreetOutput, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if input.name.is_empty() {
            return Err(ToolFailure::new("name must not be empty").into());
        }
        let greeting =
            vec![format!("hello {}", input.name); input.times.unwrap_or(1) as usize].join(", ");
        Ok(GreetOutput { greeting })
    }
}

fn greet() -> (Tool, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let tool = Tool::typed(
        "Greets someone",
        Greet {
            calls: Arc::clone(&calls),
        },
    )
    .build();
    (tool, calls)
}

fn call(input: serde_json::Value) -> Call {
    Call::new("call_1", "greet", input)
}

fn failure(result: Result<tackle_tool_core::ToolOutput, ToolError>) -> String {
    match result {
        Err(ToolError::Failure(f)) => f.message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[tokio::test]
async fn success_without_projection_is_structured_json() {
    let (tool, calls) = greet();
    let out = tool
        .run_unbounded(
            &call(json!({"name": "ada", "times": 2})),
            &Context::new("s"),
        )
        .await
        .unwrap();
    assert_eq!(out.structured, json!({"greeting": "hello ada, hello ada"}));
    assert!(out.content.is_empty());
    assert_eq!(
        out.to_result_value(),
        ResultValue::Json(json!({"greeting": "hello ada, hello ada"}))
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn invalid_input_names_the_field_and_never_executes() {
    let (tool, calls) = greet();
    let ctx = Context::new("s");
    let mut seen = String::new();
    for input in [
        json!({}),
        json!({"name": 5}),
        json!({"name": "a", "times": "x"}),
        json!({"name": "a", "times": -1}),
        json!({"name": "a", "tims": 2}),
        json!({"nam": 5, "times": true}),
        json!("ada"),
    ] {
        let message = failure(tool.run_unbounded(&call(input.clone()), &ctx).await);
        seen.push_str(&format!("{input}\n{message}\n\n"));
    }
    insta::assert_snapshot!(seen);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "execute must not run on invalid input"
    );
}

#[tokio::test]
async fn a_failure_from_execute_is_a_failure() {
    let (tool, _) = greet();
    let result = tool
        .run_unbounded(&call(json!({"name": ""})), &Context::new("s"))
        .await;
    assert_eq!(failure(result), "name must not be empty");
}

struct Unencodable;

impl Serialize for Unencodable {
    fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("the value cannot be encoded"))
    }
}

impl JsonSchema for Unencodable {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Unencodable".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string"})
    }
}

#[tokio::test]
async fn output_that_fails_its_schema_is_reported() {
    let tool = Tool::typed(
        "broken",
        from_fn(|_: serde_json::Value, _| async { Ok(Unencodable) }),
    )
    .build();
    let result = tool
        .run_unbounded(&call(json!({})), &Context::new("s"))
        .await;
    assert_eq!(
        failure(result),
        "Tool returned an invalid value for its output schema: the value cannot be encoded"
    );
}

#[tokio::test]
async fn a_structured_projection_that_fails_is_reported() {
    let (tool, _) = greet();
    let _ = tool;
    let tool = Tool::typed(
        "projects badly",
        Greet {
            calls: Arc::default(),
        },
    )
    .structured(|_| Unencodable)
    .build();
    let result = tool
        .run_unbounded(&call(json!({"name": "a"})), &Context::new("s"))
        .await;
    assert_eq!(
        failure(result),
        "Tool returned an invalid value for its output schema: the value cannot be encoded"
    );
}

#[derive(Debug, Serialize, JsonSchema)]
struct Summary {
    length: usize,
}

#[tokio::test]
async fn projections_shape_structured_output_and_model_content() {
    let tool = Tool::typed(
        "Greets",
        Greet {
            calls: Arc::default(),
        },
    )
    .structured(|out: &GreetOutput| Summary {
        length: out.greeting.len(),
    })
    .model_output(|out: &GreetOutput| {
        vec![
            Content::text(out.greeting.clone()),
            Content::File {
                mime: "text/plain".into(),
                data: b"hi".to_vec(),
                name: Some("hi.txt".into()),
            },
        ]
    })
    .build();
    let def = tool.definition("greet").unwrap();
    assert_eq!(def.output_schema["properties"]["length"]["type"], "integer");
    let out = tool
        .run_unbounded(&call(json!({"name": "bo"})), &Context::new("s"))
        .await
        .unwrap();
    assert_eq!(out.structured, json!({"length": 8}));
    assert_eq!(
        out.content,
        vec![
            OutputContent::Text {
                text: "hello bo".into()
            },
            OutputContent::File {
                uri: "data:text/plain;base64,aGk=".into(),
                mime: "text/plain".into(),
                name: Some("hi.txt".into())
            },
        ]
    );
}

#[tokio::test]
async fn a_string_output_becomes_text_and_an_empty_projection_becomes_json() {
    let echo = Tool::typed(
        "echo",
        from_fn(|s: String, _| async move { Ok::<_, ToolError>(s) }),
    )
    .build();
    let out = echo
        .run_unbounded(&call(json!("hey")), &Context::new("s"))
        .await
        .unwrap();
    assert_eq!(out.to_result_value(), ResultValue::Text("hey".into()));

    let silent = Tool::typed(
        "silent",
        from_fn(|s: String, _| async move { Ok::<_, ToolError>(s) }),
    )
    .model_output(|_| Vec::new())
    .build();
    let out = silent
        .run_unbounded(&call(json!("hey")), &Context::new("s"))
        .await
        .unwrap();
    assert_eq!(out.to_result_value(), ResultValue::Json(json!("hey")));
}

#[tokio::test]
async fn halts_and_defects_propagate_unchanged() {
    let halting = Tool::typed(
        "asks",
        from_fn(|_: serde_json::Value, _| async {
            Err::<String, _>(ToolError::Halt(Halt::Declined))
        }),
    )
    .build();
    let result = halting
        .run_unbounded(&call(json!({})), &Context::new("s"))
        .await;
    assert!(
        matches!(result, Err(ToolError::Halt(Halt::Declined))),
        "{result:?}"
    );

    let broken = Tool::typed(
        "breaks",
        from_fn(|_: serde_json::Value, _| async {
            Err::<String, _>(Defect::new("disk on fire").into())
        }),
    )
    .build();
    match broken
        .run_unbounded(&call(json!({})), &Context::new("s"))
        .await
    {
        Err(ToolError::Defect(defect)) => assert_eq!(defect.message(), "disk on fire"),
        other => panic!("expected a defect, got {other:?}"),
    }
}

#[tokio::test]
async fn cancellation_halts_a_running_call() {
    let slow = Tool::typed(
        "slow",
        from_fn(|_: serde_json::Value, _| async {
            std::future::pending::<()>().await;
            Ok::<_, ToolError>("never")
        }),
    )
    .build();
    let ctx = Context::new("s");
    let cancel = ctx.cancel.clone();
    let handle = tokio::spawn(async move { slow.run_unbounded(&call(json!({})), &ctx).await });
    cancel.cancel();
    let result = handle.await.unwrap();
    assert!(
        matches!(result, Err(ToolError::Halt(Halt::Cancelled))),
        "{result:?}"
    );
}

#[test]
fn definitions_are_cached_per_name_and_names_are_validated() {
    let (tool, _) = greet();
    let a = tool.definition("greet").unwrap();
    let b = tool.clone().definition("greet").unwrap();
    assert!(
        Arc::ptr_eq(&a, &b),
        "the same name must give the identical definition"
    );
    let other = tool.definition("hello").unwrap();
    assert_eq!(other.name, "hello");
    assert!(!Arc::ptr_eq(&a, &other));
    let err = tool.definition("no spaces").unwrap_err();
    assert_eq!(err.to_string(), "Invalid tool name: no spaces");
}

#[test]
fn the_permission_action_defaults_to_the_name() {
    let (tool, _) = greet();
    assert_eq!(tool.permission("greet"), "greet");
    assert_eq!(tool.permission("other"), "other");
}

/// A leaf that renders its model text alongside a structured output that does not keep it.
struct Page;

#[derive(serde::Serialize, schemars::JsonSchema)]
struct PageOutput {
    lines: usize,
}

impl tackle_tool_core::Execute for Page {
    type Input = serde_json::Value;
    type Output = tackle_tool_core::Rendered<PageOutput>;

    async fn execute(
        &self,
        _input: serde_json::Value,
        _ctx: &Context,
    ) -> Result<Self::Output, ToolError> {
        Ok(tackle_tool_core::Rendered::text(
            PageOutput { lines: 2 },
            "1: a\n2: b",
        ))
    }
}

#[tokio::test]
async fn a_rendered_output_is_structured_as_its_output_and_read_as_its_content() {
    let tool = Tool::typed("Pages", Page).rendered().build();
    let definition = tool.definition("page").unwrap();
    assert_eq!(
        definition.output_schema,
        tackle_tool_core::output_schema_for::<PageOutput>()
    );
    let output = tool
        .run_unbounded(&Call::new("c", "page", json!({})), &Context::new("s"))
        .await
        .unwrap();
    assert_eq!(output.structured, json!({"lines": 2}));
    assert_eq!(output.content.len(), 1);
    assert_eq!(output.content[0].as_text(), Some("1: a\n2: b"));
}
