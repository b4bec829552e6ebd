//! `tackle permission explain`, and where the binary's configuration comes from.

use predicates::str::contains;
use tackle_permission::SavedApprovals;

use crate::Workspace;

/// `tackle permission explain <action> <resource> [extra...]` in `ws`, its stdout with the
/// workspace path replaced by `[dir]`.
fn explain(ws: &Workspace, action: &str, resource: &str, extra: &[&str]) -> String {
    let mut args = vec!["permission", "explain", action, resource];
    args.extend_from_slice(extra);
    let out = ws.tackle(&args).assert().code(0);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let canonical = std::fs::canonicalize(ws.dir.path()).unwrap();
    text.replace(&canonical.display().to_string(), "[dir]")
        .replace(&ws.dir.path().display().to_string(), "[dir]")
}

#[test]
fn explain_names_the_default_rule() {
    let ws = Workspace::new();
    insta::assert_snapshot!(explain(&ws, "read", "src/.env", &[]), @r#"
    read "src/.env": ask
      decided by {action: "read", resource: "*.env", effect: "ask"}
      from default rule #3
    configuration: none (default rules only)
    "#);
    insta::assert_snapshot!(explain(&ws, "read", "src/main.rs", &[]), @r#"
    read "src/main.rs": allow
      decided by {action: "read", resource: "*", effect: "allow"}
      from default rule #2
    configuration: none (default rules only)
    "#);
}

#[test]
fn explain_names_the_file_and_key_of_a_configured_rule() {
    let ws = Workspace::new();
    ws.write(
        "tackle.json",
        "{\n  // JSONC is fine\n  \"permission\": {\"bash\": {\"*\": \"ask\", \"git status*\": \"allow\",}},\n}\n",
    );
    ws.trust();
    insta::assert_snapshot!(explain(&ws, "bash", "git status --short", &[]), @r#"
    bash "git status --short": allow
      decided by {action: "bash", resource: "git status*", effect: "allow"}
      from [dir]/tackle.json, permission.bash["git status*"] (rule #2 of that file)
    configuration: [dir]/tackle.json
    "#);
    // Configured rules apply on top of the defaults: unlisted actions keep the defaults.
    assert!(explain(&ws, "grep", "x", &[]).starts_with("grep \"x\": allow"));
}

#[test]
fn explain_as_json() {
    let ws = Workspace::new();
    let out = ws
        .tackle(&[
            "permission",
            "explain",
            "webfetch",
            "https://x.org",
            "--json",
        ])
        .assert()
        .code(0);
    let value: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        value,
        serde_json::json!({
            "configuration": [],
            "explanation": {
                "action": "webfetch",
                "resource": "https://x.org",
                "effect": "ask",
                "decided_by": {
                    "rule": {"action": "webfetch", "resource": "*", "effect": "ask"},
                    "origin": {"kind": "default", "index": 10}
                }
            }
        })
    );
}

#[test]
fn tackle_json_wins_over_opencode_json_and_config_wins_over_both() {
    let ws = Workspace::new();
    ws.write(
        "opencode.json",
        r#"{"model": "anything", "agent": {}, "permission": {"bash": "deny"}}"#,
    );
    // opencode.json alone: its other keys are ignored.
    assert!(explain(&ws, "bash", "ls", &[]).starts_with("bash \"ls\": deny"));
    ws.write("tackle.json", r#"{"permission": {"bash": "allow"}}"#);
    ws.trust();
    let text = explain(&ws, "bash", "ls", &[]);
    assert!(text.starts_with("bash \"ls\": allow"), "{text}");
    // Both project files apply, in merge order.
    assert!(
        text.ends_with("configuration: [dir]/opencode.json, [dir]/tackle.json\n"),
        "{text}"
    );
    let other = ws.dir.path().join("strict.json");
    std::fs::write(
        &other,
        r#"{"$schema": "x", "permission": {"bash": {"ls": "ask"}}}"#,
    )
    .unwrap();
    let text = explain(&ws, "bash", "ls", &["--config", other.to_str().unwrap()]);
    assert!(text.starts_with("bash \"ls\": ask"), "{text}");
    assert!(
        text.ends_with(
            "configuration: [dir]/opencode.json, [dir]/tackle.json, [dir]/strict.json\n"
        ),
        "{text}"
    );
}

#[test]
fn configuration_errors_are_clear_and_stop_the_command() {
    let ws = Workspace::new();
    ws.write("tackle.json", r#"{"permission": {}, "model": "x"}"#);
    ws.tackle(&["permission", "explain", "bash", "ls"])
        .assert()
        .code(2)
        .stderr(contains(
            r#"tackle.json:1:26: unknown key "model"; expected one of: $schema, permission, agent"#,
        ));
    ws.write(
        "tackle.json",
        r#"{"permission": {"bash": {"git *": "maybe"}}}"#,
    );
    ws.tackle(&["permission", "explain", "bash", "ls"])
        .assert()
        .code(2)
        .stderr(contains(
            r#"tackle.json: permission.bash["git *"]: unknown effect "maybe"; expected "allow", "ask" or "deny""#,
        ));
    // Every layer is read: the project's file is fixed, the named one is missing.
    ws.write("tackle.json", "{}");
    let missing = ws.dir.path().join("missing.json");
    ws.tackle(&[
        "permission",
        "explain",
        "bash",
        "ls",
        "--config",
        missing.to_str().unwrap(),
    ])
    .assert()
    .code(2)
    .stderr(contains("missing.json"));
}

#[test]
fn explain_shows_saved_approvals_but_a_configured_deny_wins() {
    let ws = Workspace::new();
    ws.write(
        "tackle.json",
        r#"{"permission": {"bash": {"rm *": "deny"}}}"#,
    );
    let location = std::fs::canonicalize(ws.dir.path()).unwrap();
    let saved = SavedApprovals::for_project(ws.data.path(), &location).unwrap();
    saved
        .add("bash", &["cargo *".into(), "rm -i *".into()])
        .unwrap();
    let text = explain(&ws, "bash", "cargo test", &[]);
    assert!(text.starts_with("bash \"cargo test\": allow"), "{text}");
    assert!(text.contains("from a saved approval in"), "{text}");
    let text = explain(&ws, "bash", "rm -i x", &[]);
    assert!(text.starts_with("bash \"rm -i x\": deny"), "{text}");
    assert!(text.contains("[dir]/tackle.json"), "{text}");
}

#[test]
fn without_a_terminal_the_decline_says_why() {
    let ws = Workspace::new();
    ws.tackle(&["call", "write", r#"{"path":"new.txt","content":"x"}"#])
        .assert()
        .code(2)
        .stderr(contains(
            "needs permission and there is no terminal to ask, so it is declined; pass --yes",
        ));
    assert!(!ws.dir.path().join("new.txt").exists());
}
