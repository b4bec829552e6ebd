//! Every decision reaches the service's observer (and a `tracing` event): what the rules said,
//! which rule and where it came from, the answer, how it ended.

use std::sync::{Arc, Mutex};

use tackle_permission::{
    AnswerAll, Decision, DecisionObserver, Effect, Permission, PermissionError, Reply, RuleOrigin,
    Verdict,
};

use crate::support::{Recorder, request, service, until_pending};

use Effect::{Allow, Ask, Deny};

#[derive(Default)]
struct Seen(Mutex<Vec<Decision>>);

impl DecisionObserver for Seen {
    fn decided(&self, decision: &Decision) {
        self.0.lock().unwrap().push(decision.clone());
    }
}

fn observed(permission: &Permission) -> (Permission, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    (permission.with_observer(seen.clone()), seen)
}

fn summary(d: &Decision) -> (String, Vec<String>, Effect, Option<&'static str>, Verdict) {
    (
        d.action.clone(),
        d.resources.clone(),
        d.effect,
        d.reply_kind(),
        d.verdict,
    )
}

#[tokio::test]
async fn allowed_blocked_and_answered_requests_are_each_one_decision() {
    let rules = [
        ("read", "*", Allow),
        ("bash", "*", Ask),
        ("bash", "rm *", Deny),
    ];
    let (permission, seen) = observed(&service(&rules, AnswerAll(Reply::Once)));
    permission
        .assert(request("s", "read", &["src/a.rs"]))
        .await
        .unwrap();
    let blocked = permission
        .assert(request("s", "bash", &["ls", "rm -rf x"]))
        .await;
    assert!(matches!(blocked, Err(PermissionError::Blocked { .. })));
    permission
        .assert(request("s", "bash", &["ls"]))
        .await
        .unwrap();

    let seen = seen.0.lock().unwrap().clone();
    let summaries: Vec<_> = seen.iter().map(summary).collect();
    assert_eq!(
        summaries,
        vec![
            (
                "read".into(),
                vec!["src/a.rs".into()],
                Allow,
                None,
                Verdict::Allowed
            ),
            (
                "bash".into(),
                vec!["ls".into(), "rm -rf x".into()],
                Deny,
                None,
                Verdict::Blocked
            ),
            (
                "bash".into(),
                vec!["ls".into()],
                Ask,
                Some("once"),
                Verdict::Allowed
            ),
        ]
    );
    // The deciding rule and its origin: the deny of `rm *`, the third rule the host gave.
    let deciding = seen[1].deciding().unwrap();
    assert_eq!(deciding.resource, "rm -rf x");
    let by = deciding.decided_by.as_ref().unwrap();
    assert_eq!(by.rule.resource.as_str(), "rm *");
    assert_eq!(by.origin, RuleOrigin::Given { index: 2 });
    assert_eq!(seen[0].call_id, "call_1");
    assert_eq!(seen[0].session_id, "s");
}

#[tokio::test]
async fn rejections_and_dropped_requests_are_decisions_too() {
    let recorder = Recorder::default();
    let (permission, seen) = observed(&service(&[("*", "*", Ask)], recorder));
    // Rejected with feedback.
    let asked = tokio::spawn({
        let permission = permission.clone();
        async move { permission.assert(request("a", "edit", &["f"])).await }
    });
    let pending = until_pending(&permission, "a", 1).await;
    permission
        .reply(
            &pending[0].id,
            Reply::Reject {
                message: Some("use the other file".into()),
            },
        )
        .unwrap();
    assert!(matches!(
        asked.await.unwrap(),
        Err(PermissionError::Corrected { .. })
    ));
    // Dropped while it waits: the call went away.
    let dropped = tokio::spawn({
        let permission = permission.clone();
        async move { permission.assert(request("b", "edit", &["g"])).await }
    });
    until_pending(&permission, "b", 1).await;
    dropped.abort();
    let _ = dropped.await;

    let seen = seen.0.lock().unwrap().clone();
    let summaries: Vec<_> = seen.iter().map(summary).collect();
    assert_eq!(
        summaries,
        vec![
            (
                "edit".into(),
                vec!["f".into()],
                Ask,
                Some("reject"),
                Verdict::Rejected
            ),
            ("edit".into(), vec!["g".into()], Ask, None, Verdict::Ended),
        ]
    );
}

#[tokio::test]
async fn a_service_built_in_one_step_has_its_protection_agents_and_observer() {
    let config = tempfile::tempdir().unwrap();
    let protected = std::fs::canonicalize(config.path()).unwrap();
    let mut agents = tackle_permission::Agents::new();
    agents.define("plan", crate::support::rules(&[("bash", "*", Deny)]));
    let seen = Arc::new(Seen::default());
    let permission = Permission::builder(
        crate::support::rules(&[("*", "*", Allow)]),
        tackle_permission::SavedApprovals::in_memory(),
        Arc::new(AnswerAll(Reply::Reject { message: None })),
    )
    .protected(tackle_permission::Protected::with_user_dirs([
        protected.clone()
    ]))
    .agents(agents)
    .observer(seen.clone())
    .build();
    let inside = protected.join("tackle.json");
    // The protected directory asks (and the asker rejects) despite the allow rule.
    let err = permission
        .assert(request("s", "edit", &[inside.to_str().unwrap()]))
        .await
        .unwrap_err();
    assert!(matches!(err, PermissionError::Declined), "{err:?}");
    // The agent's own rules apply after the global ones.
    let mut plan = request("s", "bash", &["ls"]);
    plan.agent = "plan".into();
    let err = permission.assert(plan).await.unwrap_err();
    assert!(matches!(err, PermissionError::Blocked { .. }), "{err:?}");
    permission
        .assert(request("s", "bash", &["ls"]))
        .await
        .unwrap();
    let seen: Vec<_> = seen.0.lock().unwrap().iter().map(summary).collect();
    assert_eq!(
        seen.iter().map(|s| s.4).collect::<Vec<_>>(),
        [Verdict::Rejected, Verdict::Blocked, Verdict::Allowed],
        "{seen:?}"
    );
}
