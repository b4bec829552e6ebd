//! One entry point builds every leaf for a Location and registers it.

use serde_json::json;
use tackle_builtins::builtin_tools;
use tackle_permission::{Effect, Reply, Rule, Ruleset};
use tackle_registry::{ApplicationTools, ToolRegistry};
use tackle_tool_core::{Call, ResultValue, ShowAll};

use super::support::{Fixture, context};

#[tokio::test]
async fn builtins_register_in_catalog_order_and_settle() {
    let fx = Fixture::with_rules(Reply::Once, vec![Rule::new("*", "*", Effect::Allow)]);
    fx.put("README.md", "hello\n");
    let names: Vec<String> = builtin_tools(&fx.services)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let mine: Vec<&String> = names
        .iter()
        .filter(|name| ["read", "edit", "write"].contains(&name.as_str()))
        .collect();
    assert_eq!(mine, ["read", "edit", "write"], "catalog order: {names:?}");
    let app = ApplicationTools::new();
    let registry = ToolRegistry::new(&app, fx.services.store.clone());
    let registration = registry
        .tools()
        .register(tackle_builtins::builtin_tools(&fx.services))
        .unwrap();
    let snapshot = registry.materialize(&ShowAll);
    let listed: Vec<String> = snapshot
        .definitions()
        .iter()
        .map(|d| d.name.clone())
        .collect();
    assert_eq!(listed, names);
    let settlement = snapshot
        .settle(
            &Call::new("c1", "read", json!({"path": "README.md"})),
            &context(),
        )
        .await
        .unwrap();
    assert!(
        matches!(&settlement.result(), ResultValue::Text(t) if t.contains("1: hello")),
        "{:?}",
        settlement.result()
    );
    drop(registration);
    assert!(registry.materialize(&ShowAll).definitions().is_empty());
}

#[test]
fn denying_edit_hides_edit_and_write() {
    let fx = Fixture::new();
    let app = ApplicationTools::new();
    let registry = ToolRegistry::new(&app, fx.services.store.clone());
    let _registration = registry
        .tools()
        .register(tackle_builtins::builtin_tools(&fx.services))
        .unwrap();
    let rules = Ruleset::new(vec![Rule::new("edit", "*", Effect::Deny)]);
    let listed: Vec<String> = registry
        .materialize(&rules)
        .definitions()
        .iter()
        .map(|d| d.name.clone())
        .collect();
    assert!(listed.contains(&"read".to_owned()), "{listed:?}");
    assert!(
        !listed.iter().any(|name| name == "edit" || name == "write"),
        "{listed:?}"
    );
    let rules = Ruleset::new(vec![Rule::new("read", "*", Effect::Deny)]);
    let listed: Vec<String> = registry
        .materialize(&rules)
        .definitions()
        .iter()
        .map(|d| d.name.clone())
        .collect();
    assert!(listed.contains(&"edit".to_owned()) && listed.contains(&"write".to_owned()));
    assert!(!listed.contains(&"read".to_owned()), "{listed:?}");
}
