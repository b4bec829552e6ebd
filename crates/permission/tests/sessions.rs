//! "This session only" approvals, and deleting a session.

use std::time::Duration;

use tackle_permission::{Effect, PermissionError, Reply, ReplyLater, RuleOrigin};
use tackle_tool_core::{Halt, ToolError};

use crate::support::{request, service, until_pending};

use Effect::{Ask, Deny};

/// Asks for `bash ls`, saving `ls`, in `session`, and answers `reply` through the host.
async fn approve(permission: &tackle_permission::Permission, session: &str, reply: Reply) {
    let task = tokio::spawn({
        let permission = permission.clone();
        let session = session.to_owned();
        async move {
            let request = request(&session, "bash", &["ls"]).with_save(vec!["ls *".into()]);
            permission.assert(request).await
        }
    });
    let pending = until_pending(permission, session, 1).await;
    permission.reply(&pending[0].id, reply).unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_session_approval_allows_the_rest_of_the_session_only() {
    let permission = service(&[("*", "*", Ask)], ReplyLater);
    approve(&permission, "a", Reply::Session).await;
    // Again in the session: allowed without asking.
    tokio::time::timeout(
        Duration::from_secs(30),
        permission.assert(request("a", "bash", &["ls -la"])),
    )
    .await
    .unwrap()
    .unwrap();
    // Nothing was saved for the project, and another session is asked.
    assert!(permission.saved().list().is_empty());
    let other = tokio::spawn({
        let permission = permission.clone();
        async move { permission.assert(request("b", "bash", &["ls"])).await }
    });
    let pending = until_pending(&permission, "b", 1).await;
    let explained = permission.explain_in_session("a", "", "bash", "ls -la");
    assert_eq!(explained.effect, Effect::Allow);
    assert_eq!(
        explained.decided_by.unwrap().origin,
        RuleOrigin::Session {
            session_id: "a".into()
        }
    );
    insta::assert_snapshot!(
        RuleOrigin::Session { session_id: "a".into() }.to_string(),
        @r#"an approval for session "a" only"#
    );
    assert_eq!(
        permission.explain_in_session("b", "", "bash", "ls").effect,
        Ask
    );
    permission
        .reply(&pending[0].id, Reply::Reject { message: None })
        .unwrap();
    assert!(matches!(
        other.await.unwrap(),
        Err(PermissionError::Declined)
    ));
}

#[tokio::test]
async fn a_session_approval_resolves_the_requests_it_covers() {
    let permission = service(&[("*", "*", Ask)], ReplyLater);
    let tasks: Vec<_> = [("a", "ls"), ("a", "ls -l"), ("a", "rm x"), ("b", "ls")]
        .into_iter()
        .map(|(session, command)| {
            let permission = permission.clone();
            let request = request(session, "bash", &[command]).with_save(vec!["ls *".into()]);
            tokio::spawn(async move { permission.assert(request).await })
        })
        .collect();
    let pending = until_pending(&permission, "a", 3).await;
    until_pending(&permission, "b", 1).await;
    let first = pending
        .iter()
        .find(|p| p.request.resources == ["ls"])
        .unwrap();
    permission.reply(&first.id, Reply::Session).unwrap();
    let left = until_pending(&permission, "a", 1).await;
    assert_eq!(left[0].request.resources, ["rm x"]);
    assert_eq!(permission.pending("b").len(), 1);
    permission.close();
    let outcomes: Vec<bool> = futures_outcomes(tasks).await;
    assert_eq!(outcomes, [true, true, false, false]);
}

async fn futures_outcomes(
    tasks: Vec<tokio::task::JoinHandle<Result<(), PermissionError>>>,
) -> Vec<bool> {
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap().is_ok());
    }
    outcomes
}

#[tokio::test]
async fn a_session_approval_never_lifts_a_configured_deny() {
    let permission = service(&[("*", "*", Ask), ("bash", "ls /etc*", Deny)], ReplyLater);
    approve(&permission, "a", Reply::Session).await;
    let denied = permission.assert(request("a", "bash", &["ls /etc"])).await;
    assert!(matches!(denied, Err(PermissionError::Blocked { .. })));
}

#[tokio::test]
async fn deleting_a_session_ends_its_requests_and_forgets_its_approvals() {
    let permission = service(&[("*", "*", Ask)], ReplyLater);
    approve(&permission, "a", Reply::Session).await;
    let spawn = |session: &'static str, action: &'static str| {
        let permission = permission.clone();
        tokio::spawn(async move { permission.assert(request(session, action, &["x"])).await })
    };
    let (a_edit, a_fetch, b_edit) = (
        spawn("a", "edit"),
        spawn("a", "webfetch"),
        spawn("b", "edit"),
    );
    until_pending(&permission, "a", 2).await;
    until_pending(&permission, "b", 1).await;

    permission.delete_session("a");
    for task in [a_edit, a_fetch] {
        let outcome = tokio::time::timeout(Duration::from_secs(30), task)
            .await
            .expect("a deleted session's request ends")
            .unwrap();
        let Err(err) = outcome else { panic!("allowed") };
        insta::allow_duplicates! {
            insta::assert_snapshot!(err.to_string(), @r#"the session "a" was deleted while this permission request was pending"#);
        }
        assert!(matches!(
            ToolError::from(err),
            ToolError::Halt(Halt::Cancelled)
        ));
    }
    // Other sessions are untouched.
    assert!(permission.pending("a").is_empty());
    let b = until_pending(&permission, "b", 1).await;
    permission.reply(&b[0].id, Reply::Once).unwrap();
    b_edit.await.unwrap().unwrap();
    // The approval went with the session: the same command is asked again.
    let again = tokio::spawn({
        let permission = permission.clone();
        async move { permission.assert(request("a", "bash", &["ls"])).await }
    });
    let pending = until_pending(&permission, "a", 1).await;
    permission.delete_session("a");
    assert!(matches!(
        again.await.unwrap(),
        Err(PermissionError::SessionDeleted { .. })
    ));
    assert!(pending[0].request.resources == ["ls"]);
}

#[tokio::test]
async fn a_session_reply_without_save_patterns_acts_like_once() {
    let permission = service(&[("*", "*", Ask)], ReplyLater);
    for _ in 0..2 {
        let task = tokio::spawn({
            let permission = permission.clone();
            async move { permission.assert(request("a", "bash", &["ls"])).await }
        });
        // Asked both times: the first reply kept nothing.
        let pending = until_pending(&permission, "a", 1).await;
        permission.reply(&pending[0].id, Reply::Session).unwrap();
        task.await.unwrap().unwrap();
    }
    assert_eq!(
        permission.explain_in_session("a", "", "bash", "ls").effect,
        Ask
    );
}

/// Asks `request` in session `s`, answers the pending ask `reply`, and returns the outcome.
async fn asked_and_answered(
    permission: &tackle_permission::Permission,
    request: tackle_permission::Request,
    reply: Reply,
) -> Result<(), PermissionError> {
    let task = tokio::spawn({
        let permission = permission.clone();
        async move { permission.assert(request).await }
    });
    let pending = until_pending(permission, "s", 1).await;
    permission.reply(&pending[0].id, reply).unwrap();
    task.await.unwrap()
}

#[tokio::test]
async fn a_session_approval_never_lifts_a_protected_write() {
    let permission = service(&[("*", "*", Ask)], ReplyLater);
    // "This session" on a protected write, saving `edit *`.
    let first = request("s", "edit", &["tackle.json"]).with_save(vec!["*".into()]);
    asked_and_answered(&permission, first, Reply::Session)
        .await
        .unwrap();
    // The approval covers ordinary files for the rest of the session...
    tokio::time::timeout(
        Duration::from_secs(30),
        permission.assert(request("s", "edit", &["src/main.rs"])),
    )
    .await
    .unwrap()
    .unwrap();
    // ...and no protected write: each is asked again.
    for resource in [
        "tackle.json",
        ".git/hooks/pre-commit",
        ".tackle/skills/x/SKILL.md",
    ] {
        let again = request("s", "edit", &[resource]);
        let outcome = asked_and_answered(&permission, again, Reply::Reject { message: None }).await;
        assert!(
            matches!(outcome, Err(PermissionError::Declined)),
            "{resource}: {outcome:?}"
        );
    }
}

#[tokio::test]
async fn a_session_approval_never_lifts_an_always_asked_request() {
    let permission = service(&[("*", "*", Ask)], ReplyLater);
    let forced = || {
        request("s", "bash", &["$(echo rm) x"])
            .with_save(vec!["*".into()])
            .with_always_ask()
    };
    asked_and_answered(&permission, forced(), Reply::Session)
        .await
        .unwrap();
    // The approval covers ordinary commands for the rest of the session...
    tokio::time::timeout(
        Duration::from_secs(30),
        permission.assert(request("s", "bash", &["ls"])),
    )
    .await
    .unwrap()
    .unwrap();
    // ...and the always-asked request is asked again, every time.
    let outcome = asked_and_answered(&permission, forced(), Reply::Reject { message: None }).await;
    assert!(
        matches!(outcome, Err(PermissionError::Declined)),
        "{outcome:?}"
    );
}
