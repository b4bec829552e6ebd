//! Bad input: clear errors or correct answers, never a panic or an exponential match.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tackle_permission::{
    AnswerAll, Effect, Permission, PermissionError, Reply, Request, Rule, Ruleset, SavedApprovals,
    matches,
};
use tackle_tool_core::Context;

fn invalid(action: &str, resources: &[&str], save: &[&str]) -> String {
    let permission = Permission::new(
        Ruleset::new(vec![Rule::new("*", "*", Effect::Allow)]),
        SavedApprovals::in_memory(),
        Arc::new(AnswerAll(Reply::Once)),
    );
    let request = Request::new(
        &Context::new("s"),
        action,
        resources.iter().map(ToString::to_string).collect(),
    )
    .with_save(save.iter().map(ToString::to_string).collect());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    match runtime.block_on(permission.assert(request)) {
        Err(err @ PermissionError::InvalidRequest { .. }) => err.to_string(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn invalid_requests_are_clear_errors() {
    let messages = [
        invalid("", &["x"], &[]),
        invalid("ba\0sh", &["x"], &[]),
        invalid("bash", &[], &[]),
        invalid("bash", &[""], &[]),
        invalid("bash", &["ls\0rm"], &[]),
        invalid("bash", &["ls"], &[""]),
    ];
    insta::assert_snapshot!(messages.join("\n"), @r#"
    invalid permission request: the action is empty
    invalid permission request: the action "ba\0sh" contains NUL
    invalid permission request: no resources given for bash
    invalid permission request: an empty resource for bash
    invalid permission request: the resource "ls\0rm" contains NUL
    invalid permission request: an empty save pattern for bash
    "#);
}

#[test]
fn evaluation_answers_empty_and_odd_inputs() {
    let set = Ruleset::new(vec![
        Rule::new("*", "*", Effect::Ask),
        Rule::new("bash", "", Effect::Deny),
    ]);
    assert_eq!(set.evaluate("bash", ""), Effect::Deny);
    assert_eq!(set.evaluate("", ""), Effect::Ask);
    assert_eq!(set.evaluate("bash", "a\0b"), Effect::Ask);
    assert!(matches("a\0b", "a?b"));
    assert!(matches("a\0b", "a*"));
}

#[test]
fn huge_patterns_and_inputs_are_fast() {
    let star_heavy = "*a".repeat(50_000); // 100k characters
    let question_heavy = "?".repeat(100_000);
    let input = "a".repeat(100_000);
    let start = Instant::now();
    // Needs 50k a's (the last at the end).
    assert!(matches(&input, &star_heavy));
    assert!(!matches(&input[..49_999], &star_heavy));
    assert!(!matches(&format!("{input}b"), &star_heavy));
    assert!(matches(&input, &question_heavy));
    assert!(!matches(&input[1..], &question_heavy));
    let set = Ruleset::new(vec![Rule::new("bash", star_heavy.as_str(), Effect::Deny)]);
    assert_eq!(set.evaluate("bash", "short"), Effect::Ask);
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}
