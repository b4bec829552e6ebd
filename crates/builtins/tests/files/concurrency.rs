//! 50 concurrent edits of one file through the registry's settle: none is lost.

use std::sync::Arc;

use serde_json::json;
use tackle_permission::{Effect, Reply, Rule};
use tackle_registry::{ApplicationTools, ToolRegistry};
use tackle_tool_core::{Call, ResultValue, ShowAll};

use super::support::{Fixture, context};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_edits_of_distinct_lines_all_apply() {
    let fx = Fixture::with_rules(Reply::Once, vec![Rule::new("*", "*", Effect::Allow)]);
    let text: String = (0..50).map(|n| format!("line {n} = old\n")).collect();
    fx.put("shared.txt", &text);
    let app = ApplicationTools::new();
    let registry = ToolRegistry::new(&app, fx.services.store.clone());
    let _registration = registry
        .tools()
        .register(tackle_builtins::builtin_tools(&fx.services))
        .unwrap();
    let snapshot = Arc::new(registry.materialize(&ShowAll));
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
