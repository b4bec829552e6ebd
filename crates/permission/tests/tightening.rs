//! Tightening rules (an untrusted project's): the stricter of the ordinary decision and theirs
//! wins, and an allow among them allows nothing.

use std::sync::Arc;

use tackle_permission::{
    AnswerAll, Effect, Permission, PermissionError, Reply, Ruleset, SavedApprovals, UnknownKeys,
    parse_config,
};

use crate::support::{request, rules};

use Effect::{Allow, Ask, Deny};

/// The defaults, restricted by the project file `text`.
fn restricted(text: &str) -> Ruleset {
    let mut set = Ruleset::defaults();
    set.restrict(parse_config(text, "/repo/tackle.json", UnknownKeys::Reject).unwrap());
    set
}

#[test]
fn a_project_allow_allows_nothing() {
    let set = restricted(r#"{"permission": "allow"}"#);
    assert_eq!(set.evaluate("bash", "rm -rf /"), Ask);
    assert_eq!(set.evaluate("edit", "src/main.rs"), Ask);
    assert_eq!(set.evaluate("webfetch", "https://x.org"), Ask);
    // The user's own allows stay.
    assert_eq!(set.evaluate("read", "src/main.rs"), Allow);
    assert!(!set.wholly_disabled("bash"));
}

#[test]
fn a_project_deny_or_ask_applies() {
    let set = restricted(
        r#"{"permission": {"bash": {"*": "deny", "git *": "allow"}, "read": {"*.pem": "deny"}, "grep": "ask", "webfetch": "deny"}}"#,
    );
    assert_eq!(set.evaluate("bash", "rm x"), Deny);
    // The project's own exception allows nothing: the user's decision (ask) stands.
    assert_eq!(set.evaluate("bash", "git status"), Ask);
    assert_eq!(set.evaluate("read", "keys/a.pem"), Deny);
    assert_eq!(set.evaluate("read", "src/a.rs"), Allow);
    assert_eq!(set.evaluate("grep", "TODO"), Ask);
    assert!(set.wholly_disabled("webfetch"));
    assert!(!set.wholly_disabled("read"));
    // The deciding rule is the project's, with its origin.
    let index = set.deciding("bash", "rm x").unwrap();
    assert!(set.is_tightening(index));
    assert_eq!(
        set.origin(index).unwrap().to_string(),
        "/repo/tackle.json, permission.bash[\"*\"] (rule #1 of that file)"
    );
}

#[test]
fn the_user_deny_stays_when_the_project_is_looser() {
    let mut set = rules(&[("*", "*", Ask), ("bash", "rm *", Deny)]);
    set.restrict(rules(&[("bash", "*", Ask)]));
    assert_eq!(set.evaluate("bash", "rm x"), Deny);
    let index = set.deciding("bash", "rm x").unwrap();
    assert!(!set.is_tightening(index));
}

#[tokio::test]
async fn the_service_takes_the_stricter_decision_over_saved_approvals_too() {
    let saved = SavedApprovals::in_memory();
    saved
        .add("bash", &["git push".to_owned(), "ls".to_owned()])
        .unwrap();
    let mut set = rules(&[("*", "*", Ask)]);
    set.restrict(rules(&[
        ("bash", "*", Allow),
        ("bash", "git *", Ask),
        ("bash", "curl *", Deny),
    ]));
    let permission = Permission::new(
        set,
        saved,
        Arc::new(AnswerAll(Reply::Reject { message: None })),
    );
    // The user's saved approval allows ls; the project's allow has no say.
    permission
        .assert(request("s", "bash", &["ls"]))
        .await
        .unwrap();
    // The project asks for git: the stricter decision, even over the saved approval.
    let err = permission
        .assert(request("s", "bash", &["git push"]))
        .await
        .unwrap_err();
    assert!(matches!(err, PermissionError::Declined), "{err:?}");
    let explained = permission.explain("bash", "git push");
    assert_eq!(explained.effect, Ask);
    assert_eq!(explained.decided_by.unwrap().rule.resource, "git *");
    // Nothing the user allowed lifts the project's deny, and the model reads which rule.
    let err = permission
        .assert(request("s", "bash", &["curl x"]))
        .await
        .unwrap_err();
    insta::assert_snapshot!(err.to_string(), @r#"Permission denied: bash "curl x" is blocked by the configured rule {action: "bash", resource: "curl *", effect: "deny"}. Do not retry it; use another approach or ask the user to change the rule."#);
}

mod composed {
    //! For any rules: the decision is the stricter of the ordinary rules' and the tightening
    //! rules' (an allow among those deciding nothing).

    use proptest::prelude::*;
    use tackle_permission::{Effect, Rule, Ruleset};

    const ACTIONS: &[&str] = &["bash", "read", "b*", "*", "edit"];
    const RESOURCES: &[&str] = &["*", "git *", "src/*", "ls", "*.env"];
    const ASKED: &[&str] = &["bash", "read", "edit", "web"];
    const INPUTS: &[&str] = &["git push", "ls", "src/a", "x.env"];

    fn rule() -> impl Strategy<Value = Rule> {
        (
            prop::sample::select(ACTIONS),
            prop::sample::select(RESOURCES),
            prop::sample::select(vec![Effect::Allow, Effect::Deny, Effect::Ask]),
        )
            .prop_map(|(a, r, e)| Rule::new(a, r, e))
    }

    fn rank(effect: Effect) -> u8 {
        match effect {
            Effect::Allow => 0,
            Effect::Ask => 1,
            Effect::Deny => 2,
        }
    }

    proptest! {
        #[test]
        fn the_stricter_decision_wins(
            user in prop::collection::vec(rule(), 0..12),
            project in prop::collection::vec(rule(), 0..12),
            later in prop::collection::vec(rule(), 0..4),
        ) {
            let user_set = Ruleset::new(user.iter().chain(&later).cloned().collect());
            let project_set = Ruleset::new(project.clone());
            let mut set = Ruleset::new(user.clone());
            set.restrict(project_set.clone());
            // Ordinary rules appended after the tightening ones are still ordinary.
            set.append(Ruleset::new(later.clone()));
            for action in ASKED {
                for input in INPUTS {
                    let ordinary = user_set.evaluate(action, input);
                    let tightening = project_set.evaluate(action, input);
                    let tightening_decides = project_set.deciding(action, input).is_some()
                        && rank(tightening) > rank(ordinary);
                    let expected = if tightening_decides { tightening } else { ordinary };
                    prop_assert_eq!(set.evaluate(action, input), expected, "{} {}", action, input);
                }
                prop_assert_eq!(
                    set.wholly_disabled(action),
                    user_set.wholly_disabled(action) || project_set.wholly_disabled(action),
                    "{}", action
                );
            }
        }
    }
}
