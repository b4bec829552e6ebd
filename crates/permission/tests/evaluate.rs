//! Evaluation (P9, P11), wholly-disabled actions (RG7) and the default ruleset.

use tackle_permission::{Effect, Rule, RuleOrigin, Ruleset};
use tackle_tool_core::Visibility;

use Effect::{Allow, Ask, Deny};

fn rules(list: &[(&str, &str, Effect)]) -> Ruleset {
    Ruleset::new(
        list.iter()
            .map(|(action, resource, effect)| Rule::new(*action, *resource, *effect))
            .collect(),
    )
}

#[test]
fn last_match_wins_and_no_match_asks() {
    let set = rules(&[
        ("bash", "*", Ask),
        ("bash", "git status*", Allow),
        ("bash", "git *", Deny),
    ]);
    assert_eq!(set.evaluate("bash", "git status"), Deny);
    assert_eq!(set.evaluate("bash", "ls"), Ask);
    assert_eq!(set.evaluate("read", "x"), Ask);
    let reordered = rules(&[
        ("bash", "*", Ask),
        ("bash", "git *", Deny),
        ("bash", "git status*", Allow),
    ]);
    assert_eq!(reordered.evaluate("bash", "git status --short"), Allow);
    assert_eq!(reordered.evaluate("bash", "git push"), Deny);
    assert_eq!(Ruleset::default().evaluate("anything", "anything"), Ask);
}

#[test]
fn deny_all_then_allow_read() {
    // The reference's case: [{*,*,deny},{read,*,allow}]
    let set = rules(&[("*", "*", Deny), ("read", "*", Allow)]);
    assert_eq!(set.evaluate("read", "tool_123"), Allow);
    assert_eq!(
        set.evaluate("external_directory", "/tmp/tool-output/*"),
        Deny
    );
}

#[test]
fn bash_pwd_allow_all_or_no_rules() {
    // The reference's case.
    assert_eq!(rules(&[("*", "*", Allow)]).evaluate("bash", "pwd"), Allow);
    assert_eq!(rules(&[]).evaluate("bash", "pwd"), Ask);
}

#[test]
fn action_patterns_are_wildcards_too() {
    let set = rules(&[("web*", "*", Deny), ("*fetch", "https://docs.rs/*", Allow)]);
    assert_eq!(set.evaluate("websearch", "rust"), Deny);
    assert_eq!(set.evaluate("webfetch", "https://docs.rs/tokio"), Allow);
    assert_eq!(set.evaluate("webfetch", "https://evil.example"), Deny);
}

#[test]
fn wholly_disabled_follows_rg7() {
    // RG7's examples.
    let keep = rules(&[("*", "*", Deny), ("question", "private", Allow)]);
    assert!(!keep.wholly_disabled("question"));
    assert!(keep.wholly_disabled("bash"));
    let remove = rules(&[("question", "private", Allow), ("*", "*", Deny)]);
    assert!(remove.wholly_disabled("question"));
    let edit = rules(&[("edit", "*", Deny)]);
    assert!(edit.wholly_disabled("edit"));
    assert!(!edit.wholly_disabled("read"));
    // Only the literal resource `*` with deny disables.
    assert!(!rules(&[("bash", "**", Deny)]).wholly_disabled("bash"));
    assert!(!rules(&[("bash", "*", Ask)]).wholly_disabled("bash"));
    assert!(!rules(&[("bash", "rm *", Deny)]).wholly_disabled("bash"));
    assert!(!Ruleset::default().wholly_disabled("bash"));
    // Through the Visibility trait the registry uses.
    let visibility: &dyn Visibility = &edit;
    assert!(visibility.wholly_disabled("edit"));
}

#[test]
fn relevant_rules_are_those_whose_action_matches() {
    let set = rules(&[
        ("*", "*", Ask),
        ("bash", "rm *", Deny),
        ("read", "*", Allow),
        ("ba?h", "ls", Allow),
    ]);
    assert_eq!(
        set.relevant("bash"),
        vec![
            Rule::new("*", "*", Ask),
            Rule::new("bash", "rm *", Deny),
            Rule::new("ba?h", "ls", Allow),
        ]
    );
}

#[test]
fn defaults_are_what_a_new_user_expects() {
    let set = Ruleset::defaults();
    let cases = [
        ("read", "src/main.rs", Allow),
        ("read", "/repo/.env", Ask),
        ("read", "config/prod.env", Ask),
        ("read", ".env.local", Ask),
        ("read", ".env.example", Allow),
        ("glob", "**/*.rs", Allow),
        ("grep", "fn main", Allow),
        ("list", "src", Allow),
        ("edit", "src/main.rs", Ask),
        ("bash", "ls", Ask),
        ("webfetch", "https://example.com", Ask),
        ("websearch", "rust", Ask),
        ("external_directory", "/tmp/*", Ask),
        ("question", "*", Allow),
        ("todowrite", "*", Allow),
        ("skill", "review", Allow),
        ("some_mcp_tool", "*", Ask),
    ];
    for (action, resource, want) in cases {
        assert_eq!(set.evaluate(action, resource), want, "{action} {resource}");
    }
    assert!(set.origin(0) == Some(&RuleOrigin::Default { index: 0 }));
    for action in ["read", "bash", "edit", "question", "anything"] {
        assert!(!set.wholly_disabled(action));
    }
}

#[test]
fn configured_rules_apply_on_top_of_defaults() {
    let mut set = Ruleset::defaults();
    let before = set.len();
    set.append(rules(&[
        ("bash", "git status*", Allow),
        ("read", "*", Deny),
    ]));
    assert_eq!(set.len(), before + 2);
    assert_eq!(set.evaluate("bash", "git status"), Allow);
    assert_eq!(set.evaluate("bash", "git push"), Ask);
    assert_eq!(set.evaluate("read", ".env.example"), Deny);
    assert_eq!(set.origin(before), Some(&RuleOrigin::Given { index: 0 }));
    assert!(set.wholly_disabled("read"));
}

#[test]
fn backslash_paths_match_slash_rules() {
    let set = rules(&[("read", "C:/secrets/*", Deny)]);
    assert_eq!(set.evaluate("read", "C:\\secrets\\key.pem"), Deny);
}

#[test]
fn rule_display_and_serde() {
    let rule = Rule::new("bash", "git *", Allow);
    assert_eq!(rule.to_string(), r#""bash" "git *" allow"#);
    assert_eq!(
        serde_json::to_value(&rule).unwrap(),
        serde_json::json!({"action": "bash", "resource": "git *", "effect": "allow"})
    );
    let back: Rule = serde_json::from_value(
        serde_json::json!({"action": "a", "resource": "b", "effect": "deny"}),
    )
    .unwrap();
    assert_eq!(back, Rule::new("a", "b", Deny));
    let collected: Ruleset = vec![rule.clone()].into_iter().collect();
    assert_eq!(collected.rules(), &[rule]);
}

mod indexed {
    //! The action index gives the same answers as scanning every rule.

    use proptest::prelude::*;
    use tackle_permission::{Effect, Rule, Ruleset, matches};

    const ACTIONS: &[&str] = &["bash", "read", "b*", "*", "re?d", "*a*", "edit", "ba\\sh"];
    const RESOURCES: &[&str] = &["*", "git *", "src/*", "ls", "*.env", "?s", "src\\a"];
    const ASKED: &[&str] = &["bash", "read", "reed", "edit", "web", "ba/sh", "b"];
    const INPUTS: &[&str] = &["git push", "ls", "src/a", "x.env", "zs", "git"];

    fn rule() -> impl Strategy<Value = Rule> {
        (
            prop::sample::select(ACTIONS),
            prop::sample::select(RESOURCES),
            prop::sample::select(vec![Effect::Allow, Effect::Deny, Effect::Ask]),
        )
            .prop_map(|(a, r, e)| Rule::new(a, r, e))
    }

    proptest! {
        #[test]
        fn same_as_a_full_scan(
            rules in prop::collection::vec(rule(), 0..24),
            split in 0usize..24,
        ) {
            let split = split.min(rules.len());
            let mut set = Ruleset::new(rules[..split].to_vec());
            set.append(Ruleset::new(rules[split..].to_vec()));
            prop_assert_eq!(set.rules(), rules.as_slice());
            for action in ASKED {
                for input in INPUTS {
                    let naive = rules
                        .iter()
                        .rposition(|r| matches(action, &r.action) && matches(input, &r.resource));
                    prop_assert_eq!(set.deciding(action, input), naive, "{} {}", action, input);
                }
                let last = rules.iter().rev().find(|r| matches(action, &r.action));
                let disabled =
                    last.is_some_and(|r| r.resource == "*" && r.effect == Effect::Deny);
                prop_assert_eq!(set.wholly_disabled(action), disabled, "{}", action);
                let relevant: Vec<Rule> =
                    rules.iter().filter(|r| matches(action, &r.action)).cloned().collect();
                prop_assert_eq!(set.relevant(action), relevant);
            }
        }
    }
}
