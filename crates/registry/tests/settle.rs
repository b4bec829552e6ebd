//! The settle boundary: results, errors, bounding and stale calls.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_registry::{ApplicationTools, SettleError, ToolRegistry};
use tackle_tool_core::{
    Call, Content, Context, Defect, Halt, ResultValue, ShowAll, Tool, ToolError, ToolFailure,
    from_fn,
};

use crate::support::*;

fn failing(err: fn() -> ToolError) -> Tool {
    Tool::typed(
        "fails",
        from_fn(move |_: serde_json::Value, _| async move { Err::<String, _>(err()) }),
    )
    .build()
}

#[tokio::test]
async fn failures_are_error_results_and_halts_and_defects_propagate() {
    let fx = Fixture::new();
    let _g = fx
        .registry
        .tools()
        .register(vec![
            (
                "denied".to_owned(),
                failing(|| ToolFailure::new("Denied").into()),
            ),
            ("halts".to_owned(), failing(|| Halt::Declined.into())),
            (
                "breaks".to_owned(),
                failing(|| Defect::new("unexpected executor defect").into()),
            ),
        ])
        .unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    let settlement = settle(&snapshot, "denied", json!({})).await;
    assert_eq!(settlement, tackle_registry::Settlement::error("Denied"));
    assert_eq!(
        settle_echo(&snapshot, "missing").await,
        error("Unknown tool: missing")
    );
    let call = Call::new("c", "halts", json!({}));
    assert!(matches!(
        snapshot.settle(&call, &ctx()).await,
        Err(SettleError::Halt(Halt::Declined))
    ));
    let call = Call::new("c", "breaks", json!({}));
    match snapshot.settle(&call, &ctx()).await {
        Err(SettleError::Defect(d)) => assert_eq!(d.message(), "unexpected executor defect"),
        other => panic!("expected a defect, got {other:?}"),
    }
}

#[tokio::test]
async fn the_tool_sees_the_call_context() {
    let fx = Fixture::new();
    let seen: Arc<Mutex<Option<Context>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let tool = Tool::typed(
        "records",
        from_fn(move |_: serde_json::Value, ctx: Context| {
            *sink.lock().unwrap() = Some(ctx);
            async { Ok::<_, ToolError>("ok".to_owned()) }
        }),
    )
    .build();
    let _g = fx
        .registry
        .tools()
        .register(named(&[("contextual", tool)]))
        .unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    let call = Call::new("call-context", "contextual", json!({}));
    let settlement = snapshot.settle(&call, &ctx()).await.unwrap();
    assert_eq!(settlement.result(), text("ok"));
    let seen = seen.lock().unwrap().clone().unwrap();
    assert_eq!(
        (
            seen.session_id.as_str(),
            seen.agent.as_str(),
            seen.assistant_message_id.as_str(),
            seen.tool_call_id.as_str()
        ),
        ("ses_1", "build", "msg_1", "call-context")
    );
}

#[tokio::test]
async fn media_and_text_become_content() {
    let fx = Fixture::new();
    let tool = Tool::typed(
        "media",
        from_fn(|_: serde_json::Value, _| async { Ok::<_, ToolError>("x".to_owned()) }),
    )
    .model_output(|_| {
        vec![
            Content::text("ONCE"),
            Content::File {
                mime: "image/png".into(),
                data: b"hello".to_vec(),
                name: Some("result.png".into()),
            },
        ]
    })
    .build();
    let _g = fx.app.register(named(&[("media", tool)])).unwrap();
    let settlement = settle(&fx.registry.materialize(&ShowAll), "media", json!({})).await;
    insta::assert_json_snapshot!(settlement.result(), @r#"
    {
      "type": "content",
      "value": [
        {
          "type": "text",
          "text": "ONCE"
        },
        {
          "type": "file",
          "uri": "data:image/png;base64,aGVsbG8=",
          "mime": "image/png",
          "name": "result.png"
        }
      ]
    }
    "#);
}

fn big_text_tool() -> Tool {
    Tool::typed(
        "big",
        from_fn(|_: serde_json::Value, _| async {
            Ok::<_, ToolError>(
                (1..=5000)
                    .map(|n| format!("line {n}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        }),
    )
    .build()
}

#[tokio::test]
async fn a_large_success_is_bounded_with_a_reference() {
    let fx = Fixture::new();
    let _g = fx
        .registry
        .tools()
        .register(named(&[("big", big_text_tool())]))
        .unwrap();
    let settlement = settle(&fx.registry.materialize(&ShowAll), "big", json!({})).await;
    assert!(settlement.truncated());
    // The text preview names its managed output; the structured value (the same long string)
    // is bounded separately and may carry its own reference.
    assert!(!settlement.references().is_empty());
    assert!(settlement.omitted_lines() > 0);
    let ResultValue::Text(preview) = &settlement.result() else {
        panic!("{:?}", settlement.result())
    };
    assert!(
        preview.starts_with("line 1\nline 2\n"),
        "{}",
        &preview[..40]
    );
    assert!(preview.ends_with("line 5000"));
    assert!(
        settlement
            .references()
            .iter()
            .any(|r| preview.contains(&r.to_string())),
        "{preview}"
    );
    assert!(preview.lines().count() <= tackle_output_store::MAX_LINES);
    assert!(preview.len() <= tackle_output_store::MAX_BYTES);
}

#[tokio::test]
async fn a_store_that_cannot_save_keeps_the_preview() {
    let data = tempfile::tempdir().unwrap();
    let managed = data.path().join("tool-output");
    std::fs::write(&managed, "not a directory").unwrap();
    let mut config = StoreConfig::in_data_dir(data.path());
    config.directory = managed;
    let app = ApplicationTools::new();
    let registry = ToolRegistry::new(&app, OutputStore::new(config));
    let _g = registry
        .tools()
        .register(named(&[("big", big_text_tool())]))
        .unwrap();
    let call = Call::new("c", "big", json!({}));
    let settled = registry
        .materialize(&ShowAll)
        .settle(&call, &ctx())
        .await
        .unwrap();
    // The model keeps a bounded preview that says the rest is lost; the host learns why.
    let ResultValue::Text(preview) = settled.result() else {
        panic!("{settled:?}")
    };
    assert!(preview.len() <= tackle_output_store::MAX_BYTES);
    assert!(
        preview.contains("The full output could not be saved (the managed output directory is not a directory), so only this preview is left."),
        "{preview}"
    );
    assert!(settled.truncated() && settled.references().is_empty());
    assert!(settled.unsaved().unwrap().contains("is not a directory"));
    // A failure result within the limits needs no managed output, so it cannot hit the store.
    let _f = registry
        .tools()
        .register(vec![(
            "f".to_owned(),
            failing(|| ToolFailure::new("no").into()),
        )])
        .unwrap();
    let call = Call::new("c", "f", json!({}));
    assert_eq!(
        registry
            .materialize(&ShowAll)
            .settle(&call, &ctx())
            .await
            .unwrap()
            .into_result(),
        error("no")
    );
}

/// A failure whose message is far over the limits: thousands of lines, one of them 1 MB.
fn huge_failure() -> ToolError {
    let mut message = String::from("apply_patch failed:\n");
    for n in 0..20_000 {
        message.push_str(&format!("file-{n}.txt: no such file\n"));
    }
    message.push_str(&"p".repeat(1 << 20));
    ToolFailure::new(message).into()
}

#[tokio::test]
async fn error_results_are_bounded_like_successes() {
    let fx = Fixture::new();
    let _g = fx
        .registry
        .tools()
        .register(vec![("huge".to_owned(), failing(huge_failure))])
        .unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    let huge_name = format!("missing-{}", "n".repeat(200_000));
    for name in ["huge", huge_name.as_str()] {
        let call = Call::new("c", name, json!({}));
        let settlement = snapshot.settle(&call, &ctx()).await.unwrap();
        assert!(settlement.is_error());
        assert!(settlement.truncated());
        assert!(settlement.omitted_bytes() > 0);
        let ResultValue::Error(preview) = settlement.result() else {
            panic!("{:?}", settlement.result())
        };
        assert!(
            preview.len() <= tackle_output_store::MAX_BYTES,
            "{}",
            preview.len()
        );
        assert!(preview.lines().count() <= tackle_output_store::MAX_LINES);
        // The preview names the managed output that keeps every byte of the message.
        let [reference] = settlement.references() else {
            panic!("{:?}", settlement.references())
        };
        assert!(preview.contains(&reference.to_string()), "{preview}");
        let store = OutputStore::new(StoreConfig::in_data_dir(fx.data.path()));
        let mut full = String::new();
        std::io::Read::read_to_string(&mut store.open(reference).unwrap(), &mut full).unwrap();
        let expected = if name == "huge" {
            let ToolError::Failure(failure) = huge_failure() else {
                unreachable!()
            };
            failure.message
        } else {
            format!("Unknown tool: {name}")
        };
        assert!(
            full == expected,
            "the managed output differs from the message"
        );
    }
}

#[tokio::test]
async fn invalid_input_and_output_are_error_results() {
    let fx = Fixture::new();
    let _g = fx
        .registry
        .tools()
        .register(named(&[("echo", echo(""))]))
        .unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    let result = settle(&snapshot, "echo", json!({"text": 1}))
        .await
        .into_result();
    assert_eq!(
        result,
        error(&format!(
            "Invalid tool input: text: expected a string, got 1\n\n{}",
            tackle_tool_core::REWRITE_HINT
        ))
    );
}

#[tokio::test]
async fn stale_calls() {
    let fx = Fixture::new();
    // Unchanged: settles.
    let guard = fx
        .registry
        .tools()
        .register(named(&[("echo", echo(""))]))
        .unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    assert!(snapshot.is_current());
    assert_eq!(settle_echo(&snapshot, "echo").await, text("echo"));
    // Removed after the snapshot.
    drop(guard);
    assert!(
        !snapshot.is_current(),
        "a removal ends a snapshot's currency"
    );
    assert_eq!(
        settle_echo(&snapshot, "echo").await,
        error("Stale tool call: echo")
    );

    // Re-registering one of two names makes only that one stale.
    let _both = fx
        .registry
        .tools()
        .register(named(&[("first", echo("")), ("second", echo(""))]))
        .unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    let unrelated = fx.app.register(named(&[("elsewhere", echo(""))])).unwrap();
    assert!(
        !snapshot.is_current(),
        "a change in the application layer ends it too"
    );
    drop(unrelated);
    let snapshot = fx.registry.materialize(&ShowAll);
    let _again = fx
        .registry
        .tools()
        .register(named(&[("first", echo("again:"))]))
        .unwrap();
    assert_eq!(
        settle_echo(&snapshot, "first").await,
        error("Stale tool call: first")
    );
    assert_eq!(settle_echo(&snapshot, "second").await, text("echo"));

    // Dropping an overlay that reveals the base.
    let _base = fx
        .registry
        .tools()
        .register(named(&[("layered", echo("base:"))]))
        .unwrap();
    let overlay = fx
        .registry
        .tools()
        .register(named(&[("layered", echo("top:"))]))
        .unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    drop(overlay);
    assert_eq!(
        settle_echo(&snapshot, "layered").await,
        error("Stale tool call: layered")
    );
    assert_eq!(
        settle_echo(&fx.registry.materialize(&ShowAll), "layered").await,
        text("base:echo")
    );

    // An application tool later overridden by a Location tool.
    let _app = fx.app.register(named(&[("shared", echo("app:"))])).unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    let local = fx
        .registry
        .tools()
        .register(named(&[("shared", echo("loc:"))]))
        .unwrap();
    assert_eq!(
        settle_echo(&snapshot, "shared").await,
        error("Stale tool call: shared")
    );
    // And dropping the Location tool reveals the application tool: stale again.
    let snapshot = fx.registry.materialize(&ShowAll);
    drop(local);
    assert_eq!(
        settle_echo(&snapshot, "shared").await,
        error("Stale tool call: shared")
    );
}

#[tokio::test]
async fn a_captured_execution_finishes_after_its_registration_goes_away() {
    let fx = Fixture::new();
    let gate = Arc::new(tokio::sync::Notify::new());
    let started = Arc::new(tokio::sync::Notify::new());
    let (g, s) = (Arc::clone(&gate), Arc::clone(&started));
    let slow = Tool::typed(
        "slow",
        from_fn(move |input: Echo, _| {
            let (gate, started) = (Arc::clone(&g), Arc::clone(&s));
            async move {
                started.notify_one();
                gate.notified().await;
                Ok::<_, ToolError>(input.text)
            }
        }),
    )
    .build();
    let guard = fx
        .registry
        .tools()
        .register(named(&[("echo", slow)]))
        .unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    let running = tokio::spawn(async move { settle_echo(&snapshot, "echo").await });
    started.notified().await;
    drop(guard);
    let _newer = fx
        .registry
        .tools()
        .register(named(&[("echo", echo("new:"))]))
        .unwrap();
    gate.notify_one();
    let result = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result, text("echo"));
}

#[tokio::test]
async fn the_tool_runs_with_the_stores_budget_whatever_the_host_passed() {
    let data = tempfile::tempdir().unwrap();
    let store = OutputStore::new({
        let mut value = StoreConfig::in_data_dir(data.path());
        value.max_lines = 300;
        value.max_bytes = 4096;
        value
    });
    let registry = ToolRegistry::new(&ApplicationTools::new(), store);
    let tool = Tool::typed(
        "Reports its budget",
        from_fn(|_: serde_json::Value, ctx: Context| async move {
            Ok::<_, ToolError>(format!(
                "{} {} {}",
                ctx.budget.max_lines,
                ctx.budget.max_bytes,
                ctx.budget.max_structured_bytes()
            ))
        }),
    )
    .build();
    let _g = registry
        .tools()
        .register([("budget".to_owned(), tool)])
        .unwrap();
    let snapshot = registry.materialize(&ShowAll);
    let mut ctx = Context::new("s");
    ctx.budget = tackle_tool_core::Budget::new(1, 1);
    let settlement = snapshot
        .settle(&Call::new("c", "budget", json!(null)), &ctx)
        .await
        .unwrap();
    assert_eq!(
        settlement.into_result(),
        ResultValue::Text("300 4096 4096".into())
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_spilling_settle_works_on_a_single_threaded_runtime() {
    let fx = Fixture::new();
    let big = Tool::typed(
        "Big",
        from_fn(|_: serde_json::Value, _| async move { Ok::<_, ToolError>("line\n".repeat(5000)) }),
    )
    .build();
    let _g = fx
        .registry
        .tools()
        .register([("big".to_owned(), big)])
        .unwrap();
    let settlement = fx
        .registry
        .materialize(&ShowAll)
        .settle(&Call::new("c", "big", json!(null)), &Context::new("s"))
        .await
        .unwrap();
    // The text and the structured value (the same string) are saved once.
    assert!(settlement.truncated() && settlement.references().len() == 1);
    let output = settlement.output().unwrap();
    assert_eq!(
        output.structured.as_str(),
        output.content[0].as_text(),
        "the structured string follows the bounded text"
    );
}

#[tokio::test]
async fn a_name_in_another_case_settles_the_one_tool_it_matches() {
    let fx = Fixture::new();
    let _g = fx
        .registry
        .tools()
        .register(named(&[
            ("bash", echo("bash:")),
            ("grep", echo("lower:")),
            ("Grep", echo("upper:")),
        ]))
        .unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    let settled = settle(&snapshot, "Bash", json!({"text": "echo"})).await;
    assert_eq!(settled.result(), text("bash:echo"));
    assert_eq!(settled.settled_as(), Some("bash"));
    let wire = serde_json::to_value(&settled).unwrap();
    assert_eq!(wire["settledAs"], "bash");
    // An exact name always wins, and says nothing.
    let exact = settle(&snapshot, "Grep", json!({"text": "echo"})).await;
    assert_eq!(
        (exact.result(), exact.settled_as()),
        (text("upper:echo"), None)
    );
    // Two tools match when case is ignored: neither is guessed.
    assert_eq!(
        settle_echo(&snapshot, "GREP").await,
        error("Unknown tool: GREP")
    );
    // A failure of the resolved tool says which tool it was too.
    let failed = settle(&snapshot, "BASH", json!({})).await;
    assert!(failed.is_error());
    assert_eq!(failed.settled_as(), Some("bash"));
}
