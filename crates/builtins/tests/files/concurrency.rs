//! Concurrent edits (and apply_patch calls) of one file through the registry's settle: none is lost.

use std::sync::Arc;

use serde_json::json;
use tackle_permission::{Effect, Reply, Rule};
use tackle_tool_core::{Call, ResultValue};

use super::support::{Fixture, context};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_edits_of_distinct_lines_all_apply() {
    let fx = Fixture::with_rules(Reply::Once, vec![Rule::new("*", "*", Effect::Allow)]);
    let text: String = (0..50).map(|n| format!("line {n} = old\n")).collect();
    fx.put("shared.txt", &text);
    let (_registration, snapshot) = fx.registered();
    let snapshot = Arc::new(snapshot);
    let mut tasks = Vec::new();
    for n in 0..50 {
        let snapshot = Arc::clone(&snapshot);
        tasks.push(tokio::spawn(async move {
            let input = json!({
                "path": "shared.txt",
                "oldString": format!("line {n} = old"),
                "newString": format!("line {n} = new"),
            });
            let call = Call::new(format!("call_{n}"), "edit", input);
            snapshot.settle(&call, &context()).await.unwrap()
        }));
    }
    for task in tasks {
        let settlement = task.await.unwrap();
        assert!(
            matches!(&settlement.result(), ResultValue::Text(t) if t.starts_with("Edited file successfully")),
            "{:?}",
            settlement.result()
        );
    }
    let expected: String = (0..50).map(|n| format!("line {n} = new\n")).collect();
    assert_eq!(String::from_utf8(fx.bytes("shared.txt")).unwrap(), expected);
}

/// edit and apply_patch on one file wait for each other instead of failing "file changed on
/// disk": apply_patch holds the file from its read to its commit.
#[cfg(feature = "apply-patch")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_edits_and_patches_of_one_file_all_apply() {
    let fx = Fixture::with_rules(Reply::Once, vec![Rule::new("*", "*", Effect::Allow)]);
    let text: String = (0..60).map(|n| format!("line {n} = old\n")).collect();
    fx.put("shared.txt", &text);
    let (_registration, snapshot) = fx.registered();
    let snapshot = Arc::new(snapshot);
    let mut tasks = Vec::new();
    for n in 0..60 {
        let snapshot = Arc::clone(&snapshot);
        tasks.push(tokio::spawn(async move {
            let call = if n % 2 == 0 {
                let input = json!({
                    "path": "shared.txt",
                    "oldString": format!("line {n} = old"),
                    "newString": format!("line {n} = new"),
                });
                Call::new(format!("call_{n}"), "edit", input)
            } else {
                let patch = format!(
                    "*** Begin Patch\n*** Update File: shared.txt\n@@\n-line {n} = old\n+line {n} = new\n*** End Patch"
                );
                Call::new(format!("call_{n}"), "apply_patch", json!({"patchText": patch}))
            };
            snapshot.settle(&call, &context()).await.unwrap()
        }));
    }
    for task in tasks {
        let settlement = task.await.unwrap();
        assert!(!settlement.is_error(), "{:?}", settlement.result());
    }
    let expected: String = (0..60).map(|n| format!("line {n} = new\n")).collect();
    assert_eq!(String::from_utf8(fx.bytes("shared.txt")).unwrap(), expected);
}
