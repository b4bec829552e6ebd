//! Model-aware catalogs.

use tackle_formats::{CatalogProfile, EditTools};
use tackle_permission::{Effect, Rule};
use tackle_tool_core::Call;

use crate::support::*;

fn offered(fx: &Fixture, profile: &CatalogProfile) -> Vec<String> {
    profile
        .apply(&fx.snapshot())
        .definitions()
        .iter()
        .map(|d| d.name.clone())
        .collect()
}

fn edits(names: &[String]) -> Vec<&str> {
    names
        .iter()
        .map(String::as_str)
        .filter(|n| ["edit", "write", "apply_patch"].contains(n))
        .collect()
}

#[test]
fn gpt_models_get_apply_patch_and_the_others_edit_and_write() {
    let fx = Fixture::new();
    for model in ["gpt-5", "openai/gpt-5.1-codex", "GPT-5-mini"] {
        let names = offered(&fx, &CatalogProfile::for_model(model));
        assert_eq!(edits(&names), ["apply_patch"], "{model}");
        assert!(names.contains(&"read".to_owned()));
    }
    for model in [
        "claude-sonnet-4-5",
        "gemini-2.5-pro",
        "gpt-4o",
        "gpt-4.1",
        "gpt-oss-120b",
    ] {
        let names = offered(&fx, &CatalogProfile::for_model(model));
        assert_eq!(edits(&names), ["edit", "write"], "{model}");
    }
    let both = offered(&fx, &CatalogProfile::new(EditTools::Both));
    assert_eq!(edits(&both), ["edit", "write", "apply_patch"]);
    let custom = offered(&fx, &CatalogProfile::new(EditTools::Both).hiding("bash"));
    assert!(!custom.contains(&"bash".to_owned()));
}

#[tokio::test]
async fn a_tool_the_profile_leaves_out_cannot_be_called() {
    let fx = Fixture::new();
    let snapshot = CatalogProfile::for_model("gpt-5").apply(&fx.snapshot());
    let call = Call::new(
        "c",
        "edit",
        serde_json::json!({"path": "a.txt", "oldString": "a", "newString": "b"}),
    );
    let settled = snapshot.settle(&call, &ctx()).await.unwrap();
    assert!(settled.is_error());
    assert_eq!(
        std::fs::read_to_string(fx.root.path().join("a.txt")).unwrap(),
        "alpha\nbeta\ngamma\n"
    );
}

#[test]
fn a_profile_never_takes_away_the_only_way_to_edit() {
    // Without apply_patch (its action denied by name), a GPT model keeps edit and write.
    let fx = Fixture::with(
        vec![Rule::new("*", "*", Effect::Allow)],
        std::sync::Arc::new(Once),
    );
    let without_patch = fx.snapshot().filtered(|name, _| name != "apply_patch");
    let names: Vec<String> = CatalogProfile::for_model("gpt-5")
        .apply(&without_patch)
        .definitions()
        .iter()
        .map(|d| d.name.clone())
        .collect();
    assert_eq!(edits(&names), ["edit", "write"]);
}
