//! Registration, shadowing and catalog filtering (the reference's registry and application-tool
//! cases).

use std::sync::Arc;

use tackle_registry::ToolRegistry;
use tackle_tool_core::{SharedAction, ShowAll};

use crate::support::*;

fn filtering_fixture() -> (Fixture, tackle_registry::Registration) {
    let fx = Fixture::new();
    let edit = echo("");
    let guard = fx
        .registry
        .tools()
        .register(named(&[
            ("question", echo("")),
            ("bash", echo("")),
            ("edit", edit.with_action(SharedAction::Edit)),
            ("write", echo("").with_action(SharedAction::Edit)),
            ("apply_patch", echo("").with_action(SharedAction::Edit)),
        ]))
        .unwrap();
    (fx, guard)
}

#[test]
fn filtering_follows_the_last_matching_rule() {
    let (fx, _guard) = filtering_fixture();
    assert_eq!(
        fx.names(&Rules(vec![("question", "*", true)])),
        ["bash", "edit", "write", "apply_patch"]
    );
    assert_eq!(
        fx.names(&Rules(vec![
            ("*", "*", true),
            ("question", "private", false)
        ])),
        ["question"]
    );
    assert!(
        fx.names(&Rules(vec![
            ("question", "private", false),
            ("*", "*", true)
        ]))
        .is_empty()
    );
    assert_eq!(
        fx.names(&Rules(vec![("edit", "*", true)])),
        ["question", "bash"]
    );
    assert_eq!(
        fx.names(&ShowAll),
        ["question", "bash", "edit", "write", "apply_patch"]
    );
}

#[test]
fn permission_decoration_stays_isolated() {
    let fx = Fixture::new();
    let shared = echo("");
    let _guard = fx
        .registry
        .tools()
        .register(named(&[
            ("first", shared.clone()),
            ("second", shared.with_action(SharedAction::Edit)),
        ]))
        .unwrap();
    // Decorating the shared value again changes neither registration.
    let _side = shared.with_action(SharedAction::Edit);
    assert_eq!(fx.names(&Rules(vec![("edit", "*", true)])), ["first"]);
    assert_eq!(fx.names(&Rules(vec![("first", "*", true)])), ["second"]);
}

#[test]
fn definitions_are_identical_across_snapshots() {
    let (fx, _guard) = filtering_fixture();
    let a = fx.registry.materialize(&ShowAll);
    let b = fx.registry.materialize(&ShowAll);
    for (x, y) in a.definitions().iter().zip(b.definitions()) {
        assert!(Arc::ptr_eq(x, y), "{} differs", x.name);
    }
    insta::assert_json_snapshot!(a.definitions()[0].as_ref(), @r#"
    {
      "name": "question",
      "description": "Echoes text",
      "inputSchema": {
        "type": "object",
        "properties": {
          "text": {
            "type": "string"
          }
        },
        "required": [
          "text"
        ],
        "additionalProperties": false
      },
      "outputSchema": {
        "type": "object",
        "properties": {
          "text": {
            "type": "string"
          }
        },
        "required": [
          "text"
        ],
        "additionalProperties": false
      }
    }
    "#);
}

#[test]
fn dropping_a_registration_removes_exactly_its_batch() {
    let fx = Fixture::new();
    let a = fx
        .registry
        .tools()
        .register(named(&[("a", echo("")), ("b", echo(""))]))
        .unwrap();
    let c = fx
        .registry
        .tools()
        .register(named(&[("c", echo(""))]))
        .unwrap();
    assert_eq!(fx.names(&ShowAll), ["a", "b", "c"]);
    drop(a);
    assert_eq!(fx.names(&ShowAll), ["c"]);
    assert!(c.is_active());
    drop(c);
    assert!(fx.names(&ShowAll).is_empty());
}

#[test]
fn one_invalid_name_fails_the_whole_batch() {
    let fx = Fixture::new();
    let err = fx
        .registry
        .tools()
        .register(named(&[("good", echo("")), ("invalid name", echo(""))]))
        .unwrap_err();
    assert_eq!(err.name, "invalid name");
    assert_eq!(err.to_string(), "Invalid tool name: invalid name");
    assert!(fx.names(&ShowAll).is_empty());
    let err = fx
        .app
        .register(named(&[("ok", echo("")), ("9", echo(""))]))
        .unwrap_err();
    assert_eq!(err.to_string(), "Invalid tool name: 9");
    assert!(fx.names(&ShowAll).is_empty());
}

#[test]
fn registering_after_the_registry_is_gone_leaves_no_trace() {
    let fx = Fixture::new();
    let tools = fx.registry.tools();
    let store = tackle_output_store::OutputStore::new(
        tackle_output_store::StoreConfig::in_data_dir(fx.data.path()),
    );
    drop(fx.registry);
    let guard = tools.register(named(&[("late", echo(""))])).unwrap();
    assert!(!guard.is_active());
    assert!(tools.register(named(&[("bad name", echo(""))])).is_err());
    // A new registry over the same application layer sees nothing of it.
    let registry = ToolRegistry::new(&fx.app, store);
    assert!(names(&registry.materialize(&ShowAll)).is_empty());
}

#[tokio::test]
async fn the_newest_application_registration_wins_and_dropping_it_reveals_the_older() {
    let fx = Fixture::new();
    let old = fx.app.register(named(&[("echo", echo("old:"))])).unwrap();
    let new = fx.app.register(named(&[("echo", echo("new:"))])).unwrap();
    assert_eq!(
        settle_echo(&fx.registry.materialize(&ShowAll), "echo").await,
        text("new:echo")
    );
    drop(new);
    assert_eq!(
        settle_echo(&fx.registry.materialize(&ShowAll), "echo").await,
        text("old:echo")
    );
    drop(old);
    let snapshot = fx.registry.materialize(&ShowAll);
    let settlement = settle(&snapshot, "echo", serde_json::json!({"text": "x"})).await;
    insta::assert_json_snapshot!(settlement, @r#"
    {
      "result": {
        "type": "error",
        "value": "Unknown tool: echo"
      }
    }
    "#);
}

#[tokio::test]
async fn application_tools_are_shared_by_every_location() {
    let app = tackle_registry::ApplicationTools::new();
    let one = Fixture::with_app(app.clone());
    let two = Fixture::with_app(app.clone());
    let guard = app.register(named(&[("shared", echo("app:"))])).unwrap();
    assert_eq!(one.names(&ShowAll), ["shared"]);
    assert_eq!(two.names(&ShowAll), ["shared"]);
    let _local = one
        .registry
        .tools()
        .register(named(&[("shared", echo("one:"))]))
        .unwrap();
    assert_eq!(
        settle_echo(&one.registry.materialize(&ShowAll), "shared").await,
        text("one:echo")
    );
    assert_eq!(
        settle_echo(&two.registry.materialize(&ShowAll), "shared").await,
        text("app:echo")
    );
    drop(guard);
    assert!(two.names(&ShowAll).is_empty());
}

#[tokio::test]
async fn a_location_tool_shadows_an_application_tool_and_a_deny_hides_both() {
    let fx = Fixture::new();
    let _app = fx
        .app
        .register(named(&[("echo", echo("app:")), ("other", echo(""))]))
        .unwrap();
    let _loc = fx
        .registry
        .tools()
        .register(named(&[("echo", echo("loc:")), ("mine", echo(""))]))
        .unwrap();
    // The shadowing name keeps the application tool's position; new names come after.
    assert_eq!(fx.names(&ShowAll), ["echo", "other", "mine"]);
    assert_eq!(
        settle_echo(&fx.registry.materialize(&ShowAll), "echo").await,
        text("loc:echo")
    );
    assert_eq!(
        fx.names(&Rules(vec![("echo", "*", true)])),
        ["other", "mine"]
    );
}

#[tokio::test]
async fn hiding_is_not_authorization_and_not_execution_either() {
    let fx = Fixture::new();
    let _app = fx
        .app
        .register(named(&[("contextual", echo("ran:"))]))
        .unwrap();
    let hidden = fx
        .registry
        .materialize(&Rules(vec![("contextual", "*", true)]));
    assert!(!hidden.contains("contextual"));
    assert_eq!(
        settle_echo(&hidden, "contextual").await,
        error("Unknown tool: contextual")
    );
    // A snapshot that offers it executes it: the registry authorizes nothing.
    assert_eq!(
        settle_echo(&fx.registry.materialize(&ShowAll), "contextual").await,
        text("ran:echo")
    );
}
