//! `explain`: the deciding rule and where it came from.

use std::sync::Arc;

use tackle_permission::{
    AnswerAll, Effect, Permission, Reply, Rule, RuleOrigin, Ruleset, SavedApprovals, UnknownKeys,
    parse_config,
};

fn permission(saved: SavedApprovals) -> Permission {
    let mut rules = Ruleset::defaults();
    rules.append(
        parse_config(
            r#"{"permission": {"bash": {"git status*": "allow", "rm *": "deny"}}}"#,
            "/repo/tackle.json",
            UnknownKeys::Reject,
        )
        .unwrap(),
    );
    Permission::new(rules, saved, Arc::new(AnswerAll(Reply::Once)))
}

#[test]
fn explains_config_default_saved_and_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let saved = SavedApprovals::open(dir.path().join("a.json")).unwrap();
    saved
        .add("bash", &["cargo *".into(), "rm -i *".into()])
        .unwrap();
    let p = permission(saved);

    let config = p.explain("bash", "git status --short");
    assert_eq!(config.effect, Effect::Allow);
    insta::assert_snapshot!(config.to_string(), @r#"
    bash "git status --short": allow
      decided by {action: "bash", resource: "git status*", effect: "allow"}
      from /repo/tackle.json, permission.bash["git status*"] (rule #1 of that file)
    "#);

    let default = p.explain("read", "src/.env");
    assert_eq!(default.effect, Effect::Ask);
    insta::assert_snapshot!(default.to_string(), @r#"
    read "src/.env": ask
      decided by {action: "read", resource: "*.env", effect: "ask"}
      from default rule #3
    "#);

    let saved = p.explain("bash", "cargo test");
    assert_eq!(saved.effect, Effect::Allow);
    assert!(matches!(
        saved.decided_by.as_ref().unwrap().origin,
        RuleOrigin::Saved { file: Some(_) }
    ));

    // A configured deny beats the saved approval `rm -i *`.
    let denied = p.explain("bash", "rm -i x");
    assert_eq!(denied.effect, Effect::Deny);
    assert_eq!(
        denied.decided_by.unwrap().rule,
        Rule::new("bash", "rm *", Effect::Deny)
    );

    let none = Permission::new(
        Ruleset::default(),
        SavedApprovals::in_memory(),
        Arc::new(AnswerAll(Reply::Once)),
    )
    .explain("bash", "ls");
    assert_eq!(none.effect, Effect::Ask);
    insta::assert_snapshot!(none.to_string(), @r#"
    bash "ls": ask
      no rule matches; the user is asked
    "#);
    insta::assert_json_snapshot!(p.explain("edit", "a.rs"), @r#"
    {
      "action": "edit",
      "resource": "a.rs",
      "effect": "ask",
      "decided_by": {
        "rule": {
          "action": "edit",
          "resource": "*",
          "effect": "ask"
        },
        "origin": {
          "kind": "default",
          "index": 8
        }
      }
    }
    "#);
}

#[test]
fn explain_given_and_in_memory_saved_origins() {
    let saved = SavedApprovals::in_memory();
    saved
        .add("webfetch", &["https://docs.rs/*".into()])
        .unwrap();
    let p = Permission::new(
        Ruleset::new(vec![Rule::new("webfetch", "*", Effect::Ask)]),
        saved,
        Arc::new(AnswerAll(Reply::Once)),
    );
    insta::assert_snapshot!(p.explain("webfetch", "https://docs.rs/x").to_string(), @r#"
    webfetch "https://docs.rs/x": allow
      decided by {action: "webfetch", resource: "https://docs.rs/*", effect: "allow"}
      from an approval saved for this run
    "#);
    insta::assert_snapshot!(p.explain("webfetch", "https://x.org").to_string(), @r#"
    webfetch "https://x.org": ask
      decided by {action: "webfetch", resource: "*", effect: "ask"}
      from rule #1 given by the host
    "#);
}
