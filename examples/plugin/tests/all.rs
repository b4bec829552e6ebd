//! The example plugin booted by the host library, as a downstream host would: its tools reach
//! the model only through the host's snapshot and settle (listed in the catalog, bounded,
//! filtered and asked about by the rules, stale once the host is gone).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on broken setup

use std::sync::Arc;

use serde_json::json;
use tackle_host::{Environment, Host, HostBuilder};
use tackle_permission::{AnswerAll, Reply};
use tackle_registry::SettleError;
use tackle_tool_core::{Call, ResultValue};

struct Dirs {
    location: tempfile::TempDir,
    data: tempfile::TempDir,
}

impl Dirs {
    fn new() -> Self {
        Self {
            location: tempfile::tempdir().unwrap(),
            data: tempfile::tempdir().unwrap(),
        }
    }

    /// A host of the Location with the example plugin, reading no configuration of the machine.
    fn host(&self) -> HostBuilder {
        Host::builder(self.location.path())
            .data_dir(self.data.path())
            .env(Environment::from_vars([("HOME", self.data.path())]))
            .plugin(tackle_example_plugin::plugin())
    }
}

fn text(result: ResultValue) -> String {
    match result {
        ResultValue::Text(text) | ResultValue::Error(text) => text,
        other => panic!("not text: {other:?}"),
    }
}

#[tokio::test]
async fn both_tools_are_offered_and_settle() {
    let dirs = Dirs::new();
    let host = dirs
        .host()
        .set("permission", json!({"example_greet": "allow"}))
        .build()
        .unwrap();
    assert!(host.plugins().iter().all(|status| status.booted()));
    let catalog = host.materialize();
    let names: Vec<&str> = catalog
        .definitions()
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert!(names.contains(&"example_repeat") && names.contains(&"example_greet"));
    let greet = catalog
        .definitions()
        .iter()
        .find(|d| d.name == "example_greet")
        .unwrap();
    assert_eq!(greet.input_schema["required"], json!(["name"]));
    let session = host.create_session();
    let call = Call::new(
        "c1",
        "example_greet",
        json!({"name": "world", "shout": true}),
    );
    let settled = session.settle(&call).await.unwrap();
    assert_eq!(text(settled.into_result()), "HELLO, WORLD!");
    let call = Call::new("c2", "example_repeat", json!({"text": "ab", "times": 3}));
    let settled = session.settle(&call).await.unwrap();
    assert_eq!(text(settled.into_result()), "ab\nab\nab");
    // Input is checked against the tool's schema before it runs.
    let call = Call::new("c3", "example_repeat", json!({"text": "ab", "times": 0}));
    let settled = session.settle(&call).await.unwrap();
    assert!(settled.is_error());
    assert!(text(settled.into_result()).starts_with("Invalid tool input: times"));
}

#[tokio::test]
async fn output_is_bounded_like_every_tool() {
    let dirs = Dirs::new();
    let host = dirs
        .host()
        .set("output.max_lines", json!(10))
        .build()
        .unwrap();
    let call = Call::new(
        "c1",
        "example_repeat",
        json!({"text": "line", "times": 5000}),
    );
    let settled = host.create_session().settle(&call).await.unwrap();
    assert!(settled.truncated());
    assert_eq!(settled.references().len(), 1);
    let shown = text(settled.into_result());
    assert!(shown.lines().count() <= 10, "{shown}");
    assert!(shown.contains("tool-output://"), "{shown}");
}

#[tokio::test]
async fn the_rules_hide_deny_and_ask() {
    let dirs = Dirs::new();
    // A wholly denied tool is not offered, and calling it anyway finds nothing.
    let host = dirs
        .host()
        .set("permission", json!({"example_*": "deny"}))
        .build()
        .unwrap();
    let catalog = host.materialize();
    assert!(!catalog.contains("example_greet") && !catalog.contains("example_repeat"));
    let call = Call::new("c1", "example_greet", json!({"name": "world"}));
    let settled = host.create_session().settle(&call).await.unwrap();
    assert_eq!(text(settled.into_result()), "Unknown tool: example_greet");
    drop(host);
    // Allowed for one name, asked for the others: the asker here declines.
    let rules = json!({"example_greet": {"*": "ask", "world": "allow"}});
    let host = dirs
        .host()
        .set("permission", rules.clone())
        .build()
        .unwrap();
    let session = host.create_session();
    let call = Call::new("c2", "example_greet", json!({"name": "world"}));
    assert_eq!(
        text(session.settle(&call).await.unwrap().into_result()),
        "Hello, world!"
    );
    let call = Call::new("c3", "example_greet", json!({"name": "moon"}));
    assert!(matches!(
        session.settle(&call).await,
        Err(SettleError::Halt(_))
    ));
    // An asker that answers "once" lets it run.
    let host = dirs
        .host()
        .set("permission", rules)
        .asker(Arc::new(AnswerAll(Reply::Once)))
        .build()
        .unwrap();
    let settled = host.create_session().settle(&call).await.unwrap();
    assert_eq!(text(settled.into_result()), "Hello, moon!");
}

#[tokio::test]
async fn the_tools_go_with_the_host() {
    let dirs = Dirs::new();
    let host = dirs.host().build().unwrap();
    let catalog = host.materialize();
    drop(host);
    let ctx = tackle_tool_core::Context::new("ses_1");
    for name in ["example_greet", "example_repeat"] {
        let call = Call::new("c1", name, json!({"name": "x", "text": "x", "times": 1}));
        let settled = catalog.settle(&call, &ctx).await.unwrap();
        assert_eq!(
            text(settled.into_result()),
            format!("Stale tool call: {name}")
        );
    }
}
