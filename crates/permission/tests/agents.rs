//! Agents: their own rules after the global ones, subagents held to their parents' decisions.

use std::sync::Arc;
use std::time::Duration;

use tackle_permission::{
    Agents, AnswerAll, Effect, Permission, PermissionError, Reply, ReplyLater, SavedApprovals,
    parse_agent_permission,
};
use tackle_tool_core::Visibility;

use crate::support::{request, rules, until_pending};

use Effect::{Allow, Ask, Deny};

fn agent_request(
    session: &str,
    agent: &str,
    action: &str,
    resource: &str,
) -> tackle_permission::Request {
    let mut request = request(session, action, &[resource]);
    request.agent = agent.to_owned();
    request
}

/// A service whose asker declines everything, so an asked request is `Declined`.
fn declining(global: &[(&str, &str, Effect)], agents: Agents) -> Permission {
    Permission::new(
        rules(global),
        SavedApprovals::in_memory(),
        Arc::new(AnswerAll(Reply::Reject { message: None })),
    )
    .with_agents(agents)
}

#[tokio::test]
async fn agent_rules_apply_after_the_global_rules() {
    let mut agents = Agents::new();
    agents.define("build", rules(&[("bash", "*", Allow)]));
    agents.define(
        "plan",
        parse_agent_permission(
            "plan",
            &serde_json::json!({"edit": "deny", "bash": {"git *": "allow"}}),
            "tackle.json",
        )
        .unwrap(),
    );
    let permission = declining(&[("*", "*", Ask), ("edit", "*", Allow)], agents);

    permission
        .assert(agent_request("s", "build", "bash", "cargo test"))
        .await
        .unwrap();
    permission
        .assert(agent_request("s", "build", "edit", "a.rs"))
        .await
        .unwrap();
    let blocked = permission
        .assert(agent_request("s", "plan", "edit", "a.rs"))
        .await;
    assert!(matches!(blocked, Err(PermissionError::Blocked { .. })));
    permission
        .assert(agent_request("s", "plan", "bash", "git status"))
        .await
        .unwrap();
    // An agent without rules of its own, or none at all: the global rules.
    for agent in ["", "unknown"] {
        let asked = permission
            .assert(agent_request("s", agent, "bash", "cargo test"))
            .await;
        assert!(matches!(asked, Err(PermissionError::Declined)), "{agent}");
    }

    let explained = permission.explain_agent("plan", "edit", "a.rs");
    assert_eq!(explained.effect, Deny);
    insta::assert_snapshot!(explained.to_string(), @r#"
    edit "a.rs": deny
      decided by {action: "edit", resource: "*", effect: "deny"}
      from tackle.json, agent.plan.permission.edit (rule #1 of that file)
    "#);
    assert_eq!(permission.explain("edit", "a.rs").effect, Allow);
}

#[tokio::test]
async fn a_subagent_is_never_allowed_what_its_parent_is_denied() {
    let mut agents = Agents::new();
    agents.define(
        "plan",
        rules(&[
            ("bash", "*", Deny),
            ("edit", "*", Ask),
            ("bash", "ls*", Allow),
        ]),
    );
    agents.define(
        "explore",
        rules(&[
            ("bash", "*", Allow),
            ("edit", "*", Allow),
            ("webfetch", "*", Allow),
        ]),
    );
    agents.define("scout", rules(&[("*", "*", Allow)]));
    agents.subagent_of("explore", "plan").unwrap();
    agents.subagent_of("scout", "explore").unwrap();
    let permission = declining(&[("*", "*", Allow), ("webfetch", "*", Deny)], agents);

    for agent in ["explore", "scout"] {
        // The parent (or grandparent) denies, whatever the subagent's own rules allow.
        let bash = permission
            .assert(agent_request("s", agent, "bash", "rm -rf /"))
            .await;
        let Err(PermissionError::Blocked { rules, .. }) = bash else {
            panic!("{agent}: {bash:?}")
        };
        assert!(rules.contains(&tackle_permission::Rule::new("bash", "*", Deny)));
        // The parent asks: so does the subagent.
        let edit = permission
            .assert(agent_request("s", agent, "edit", "a.rs"))
            .await;
        assert!(matches!(edit, Err(PermissionError::Declined)), "{agent}");
        // Allowed by every agent up the chain.
        permission
            .assert(agent_request("s", agent, "bash", "ls -la"))
            .await
            .unwrap();
        // The subagent's own allow still cannot lift a global deny.
        let fetch = permission
            .assert(agent_request("s", agent, "webfetch", "https://x.org"))
            .await;
        assert!(
            matches!(fetch, Err(PermissionError::Blocked { .. })),
            "{agent}"
        );
    }
    // The parent's rules are not widened by its subagents.
    let parent = permission
        .assert(agent_request("s", "plan", "bash", "cargo test"))
        .await;
    assert!(matches!(parent, Err(PermissionError::Blocked { .. })));

    let explained = permission.explain_agent("scout", "bash", "rm -rf /");
    assert_eq!(explained.effect, Deny);
    assert_eq!(
        explained.decided_by.unwrap().rule,
        tackle_permission::Rule::new("bash", "*", Deny)
    );
    assert_eq!(
        permission.explain_agent("scout", "edit", "a.rs").effect,
        Ask
    );
    assert_eq!(
        permission.explain_agent("scout", "read", "a.rs").effect,
        Allow
    );
}

#[tokio::test]
async fn a_subagent_approval_in_the_session_still_meets_its_parents_deny() {
    let mut agents = Agents::new();
    agents.define("plan", rules(&[("bash", "rm *", Deny)]));
    agents.subagent_of("explore", "plan").unwrap();
    let permission = Permission::new(
        rules(&[("*", "*", Ask)]),
        SavedApprovals::in_memory(),
        Arc::new(ReplyLater),
    )
    .with_agents(agents);
    let task = tokio::spawn({
        let permission = permission.clone();
        async move {
            let request = agent_request("s", "explore", "bash", "ls").with_save(vec!["*".into()]);
            permission.assert(request).await
        }
    });
    let pending = until_pending(&permission, "s", 1).await;
    assert_eq!(pending[0].request.agent, "explore");
    permission.reply(&pending[0].id, Reply::Session).unwrap();
    task.await.unwrap().unwrap();
    // The session's approval covers every bash command the parent does not deny.
    let asked = tokio::time::timeout(
        Duration::from_secs(30),
        permission.assert(agent_request("s", "explore", "bash", "cargo test")),
    );
    asked.await.unwrap().unwrap();
    let denied = permission
        .assert(agent_request("s", "explore", "bash", "rm -rf /"))
        .await;
    assert!(matches!(denied, Err(PermissionError::Blocked { .. })));
}

#[test]
fn subagent_cycles_are_refused() {
    let mut agents = Agents::new();
    agents.subagent_of("b", "a").unwrap();
    agents.subagent_of("c", "b").unwrap();
    let err = agents.subagent_of("a", "c").unwrap_err();
    insta::assert_snapshot!(err.to_string(), @r#"agent "a" cannot be a subagent of "c": "c" is "a" or one of its subagents"#);
    assert!(agents.subagent_of("a", "a").is_err());
    assert_eq!(agents.parent("a"), None);
    assert_eq!(agents.parent("c"), Some("b"));
    assert_eq!(agents.names().collect::<Vec<_>>(), ["a", "b", "c"]);
}

#[test]
fn an_agent_catalog_hides_what_it_or_a_parent_wholly_denies() {
    let mut agents = Agents::new();
    agents.define("plan", rules(&[("edit", "*", Deny)]));
    agents.define(
        "explore",
        rules(&[("edit", "*", Allow), ("bash", "*", Deny)]),
    );
    agents.subagent_of("explore", "plan").unwrap();
    let permission = declining(&[("*", "*", Ask)], agents);
    let explore = permission.visibility("explore");
    assert!(explore.wholly_disabled("edit"));
    assert!(explore.wholly_disabled("bash"));
    assert!(!explore.wholly_disabled("read"));
    let plan = permission.visibility("plan");
    assert!(plan.wholly_disabled("edit") && !plan.wholly_disabled("bash"));
    assert!(!permission.visibility("").wholly_disabled("edit"));
}

#[test]
fn agent_configuration_errors_name_the_agent_key() {
    let err = parse_agent_permission(
        "plan v2",
        &serde_json::json!({"bash": {"git *": "yes"}}),
        "opencode.json",
    )
    .unwrap_err();
    insta::assert_snapshot!(err.to_string(), @r#"opencode.json: agent["plan v2"].permission.bash["git *"]: unknown effect "yes"; expected "allow", "ask" or "deny""#);
}
