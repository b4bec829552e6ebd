//! Replies racing the asker, withdrawal, close, and the edge cases of "always".

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tackle_permission::{
    AnswerAll, Asker, Effect, PendingRequest, Permission, PermissionError, Reply, ReplyLater,
    Ruleset, SavedApprovals,
};

use crate::support::{Recorder, request, rules, service, until_pending};

use Effect::{Allow, Deny};

#[tokio::test]
async fn host_reply_and_asker_race_first_one_wins() {
    /// Answers "reject" after a delay far longer than the host takes to reply, even on a loaded
    /// machine; the host's reply wins, and the rest of the delay is never waited for.
    struct Slow;
    impl Asker for Slow {
        fn ask(&self, _: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
            Box::pin(async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Reply::Reject { message: None }
            })
        }
    }
    let permission = service(&[], Slow);
    let task = tokio::spawn({
        let permission = permission.clone();
        async move { permission.assert(request("s", "bash", &["ls"])).await }
    });
    let pending = until_pending(&permission, "s", 1).await;
    permission.reply(&pending[0].id, Reply::Once).unwrap();
    task.await.unwrap().unwrap();

    // The asker first: the host's later reply finds nothing.
    let permission = service(&[], AnswerAll(Reply::Once));
    permission
        .assert(request("s", "bash", &["ls"]))
        .await
        .unwrap();
    assert!(permission.all_pending().is_empty());
}

#[tokio::test]
async fn a_dropped_assert_withdraws_its_request() {
    let permission = service(&[], ReplyLater);
    let outcome = tokio::time::timeout(
        Duration::from_millis(30),
        permission.assert(request("s", "bash", &["ls"])),
    )
    .await;
    assert!(outcome.is_err(), "timed out");
    assert!(permission.pending("s").is_empty());
}

#[tokio::test]
async fn close_declines_pending_and_later_asks() {
    let permission = service(&[("read", "*", Allow), ("bash", "rm *", Deny)], ReplyLater);
    let tasks: Vec<_> = ["a", "b", "c"]
        .into_iter()
        .map(|session| {
            let p = permission.clone();
            tokio::spawn(async move { p.assert(request(session, "edit", &["x"])).await })
        })
        .collect();
    for session in ["a", "b", "c"] {
        until_pending(&permission, session, 1).await;
    }
    permission.close();
    for task in tasks {
        assert!(matches!(
            task.await.unwrap(),
            Err(PermissionError::Declined)
        ));
    }
    assert!(matches!(
        permission.assert(request("a", "edit", &["y"])).await,
        Err(PermissionError::Declined)
    ));
    // Rules still decide what needs no answer.
    permission
        .assert(request("a", "read", &["y"]))
        .await
        .unwrap();
    assert!(matches!(
        permission.assert(request("a", "bash", &["rm x"])).await,
        Err(PermissionError::Blocked { .. })
    ));
}

#[tokio::test]
async fn always_without_save_acts_like_once() {
    let permission = service(&[], ReplyLater);
    let task = tokio::spawn({
        let permission = permission.clone();
        async move { permission.assert(request("s", "bash", &["ls"])).await }
    });
    let pending = until_pending(&permission, "s", 1).await;
    permission.reply(&pending[0].id, Reply::Always).unwrap();
    task.await.unwrap().unwrap();
    assert!(permission.saved().list().is_empty());
}

#[tokio::test]
async fn always_that_cannot_save_fails_the_request() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("blocker");
    let saved = SavedApprovals::open(blocker.join("approvals.json")).unwrap();
    // The approvals file's directory is now a regular file: saving must fail.
    std::fs::write(&blocker, "").unwrap();
    let permission = Permission::new(Ruleset::default(), saved, Arc::new(ReplyLater));
    let task = tokio::spawn({
        let permission = permission.clone();
        async move {
            permission
                .assert(request("s", "bash", &["ls"]).with_save(vec!["ls".into()]))
                .await
        }
    });
    let pending = until_pending(&permission, "s", 1).await;
    let err = permission.reply(&pending[0].id, Reply::Always).unwrap_err();
    assert!(matches!(err, PermissionError::Saved { .. }), "{err:?}");
    assert!(matches!(
        task.await.unwrap(),
        Err(PermissionError::Saved { .. })
    ));
    assert!(permission.saved().list().is_empty());
}

#[test]
fn permission_is_a_visibility_and_debug() {
    use tackle_tool_core::Visibility;
    let permission = service(&[("bash", "*", Deny)], ReplyLater);
    assert!(Visibility::wholly_disabled(&permission, "bash"));
    assert!(!Visibility::wholly_disabled(&permission, "read"));
    assert_eq!(permission.rules().len(), 1);
    assert!(format!("{permission:?}").contains("pending: 0"));
}

#[tokio::test]
async fn always_ask_requests_ask_even_when_allowed_but_deny_still_blocks() {
    let recorder = Recorder::default();
    let saved = SavedApprovals::in_memory();
    saved.add("bash", &["*".into()]).unwrap();
    let permission = Permission::new(
        rules(&[("bash", "*", Allow), ("bash", "rm *", Deny)]),
        saved,
        Arc::new(recorder.clone()),
    );
    let blocked = permission
        .assert(request("s", "bash", &["rm -rf /"]).with_always_ask())
        .await;
    assert!(matches!(blocked, Err(PermissionError::Blocked { .. })));

    let asked = tokio::spawn({
        let permission = permission.clone();
        async move {
            permission
                .assert(request("s", "bash", &["$(echo rm) x"]).with_always_ask())
                .await
        }
    });
    let plain = tokio::spawn({
        let permission = permission.clone();
        async move {
            permission
                .assert(request("s", "edit", &["a.rs"]).with_save(vec!["*".into()]))
                .await
        }
    });
    let pending = until_pending(&permission, "s", 2).await;
    assert!(pending[0].request.always_ask || pending[1].request.always_ask);
    // An "always" on the edit covers nothing for the forced ask.
    let edit = pending.iter().find(|p| p.request.action == "edit").unwrap();
    permission.reply(&edit.id, Reply::Always).unwrap();
    plain.await.unwrap().unwrap();
    let left = permission.pending("s");
    assert_eq!(left.len(), 1);
    assert!(left[0].request.always_ask);
    permission.reply(&left[0].id, Reply::Once).unwrap();
    asked.await.unwrap().unwrap();
    assert_eq!(recorder.0.lock().unwrap().len(), 2);
}
