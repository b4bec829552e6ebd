//! The permission service: assert, replies, pending requests, close (P11–P16).

use std::sync::Arc;

use tackle_permission::{
    AnswerAll, Effect, Permission, PermissionError, Reply, ReplyLater, Request, Rule, Ruleset,
    SavedApprovals,
};
use tackle_tool_core::Context;

use crate::support::{Recorder, request, rules, service, until_pending};

use Effect::{Allow, Ask, Deny};

#[tokio::test]
async fn allowed_and_denied_requests_never_ask() {
    let recorder = Recorder::default();
    let permission = service(
        &[
            ("*", "*", Ask),
            ("read", "*", Allow),
            ("bash", "rm *", Deny),
        ],
        recorder.clone(),
    );
    permission
        .assert(request("s", "read", &["a", "b"]))
        .await
        .unwrap();
    let err = permission
        .assert(request("s", "bash", &["ls", "rm -rf /", "rm x"]))
        .await
        .unwrap_err();
    match err {
        PermissionError::Blocked {
            action,
            resources,
            rules,
        } => {
            assert_eq!(action, "bash");
            assert_eq!(resources, vec!["rm -rf /", "rm x"]);
            // P12: the configured rules whose action pattern matches.
            assert_eq!(
                rules,
                vec![Rule::new("*", "*", Ask), Rule::new("bash", "rm *", Deny)]
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(recorder.0.lock().unwrap().is_empty());
    assert!(permission.pending("s").is_empty());
}

#[tokio::test]
async fn ask_queues_then_once_resolves() {
    let recorder = Recorder::default();
    let permission = service(&[], recorder.clone());
    let mut ctx = Context::new("s").for_call("call_9");
    ctx.assistant_message_id = "msg_1".into();
    let req = Request::new(&ctx, "bash", vec!["pwd".into()])
        .with_save(vec!["pwd".into()])
        .with_metadata("command", serde_json::json!("pwd"));
    let task = tokio::spawn({
        let permission = permission.clone();
        async move { permission.assert(req).await }
    });
    let pending = until_pending(&permission, "s", 1).await;
    assert!(pending[0].id.starts_with("per_"));
    assert_eq!(pending[0].request.source.message_id, "msg_1");
    assert_eq!(pending[0].request.source.call_id, "call_9");
    assert_eq!(pending[0].request.metadata["command"], "pwd");
    assert_eq!(recorder.0.lock().unwrap()[0].id, pending[0].id);
    assert!(permission.pending("other").is_empty());
    permission.reply(&pending[0].id, Reply::Once).unwrap();
    task.await.unwrap().unwrap();
    assert!(permission.pending("s").is_empty());
    // "once" saved nothing: the next identical request asks again.
    assert!(permission.saved().list().is_empty());
    // Replying to an answered request: NotFound.
    assert!(matches!(
        permission.reply(&pending[0].id, Reply::Once),
        Err(PermissionError::NotFound { request_id }) if request_id == pending[0].id
    ));
}

#[tokio::test]
async fn asker_replies() {
    let once = service(&[], AnswerAll(Reply::Once));
    once.assert(request("s", "bash", &["pwd"])).await.unwrap();

    let declined = service(&[], AnswerAll(Reply::Reject { message: None }));
    assert!(matches!(
        declined.assert(request("s", "bash", &["pwd"])).await,
        Err(PermissionError::Declined)
    ));

    let corrected = service(
        &[],
        AnswerAll(Reply::Reject {
            message: Some("use ls instead".into()),
        }),
    );
    match corrected.assert(request("s", "bash", &["pwd"])).await {
        Err(PermissionError::Corrected { feedback }) => assert_eq!(feedback, "use ls instead"),
        other => panic!("{other:?}"),
    }

    // "always" from the asker saves the request's patterns (P14).
    let always = service(&[("*", "*", Ask)], AnswerAll(Reply::Always));
    always
        .assert(request("s", "read", &["src/a.ts"]).with_save(vec!["src/*".into()]))
        .await
        .unwrap();
    assert_eq!(
        always.saved().list(),
        vec![Rule::new("read", "src/*", Allow)]
    );
    assert!(always.pending("s").is_empty());
}

#[tokio::test]
async fn always_saves_and_later_requests_do_not_ask() {
    // P14: always with save ["src/*"] persists {read, src/*}; src/next.ts then passes.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("approvals.json");
    let recorder = Recorder::default();
    let permission = Permission::new(
        rules(&[("*", "*", Ask)]),
        SavedApprovals::open(&file).unwrap(),
        Arc::new(recorder.clone()),
    );
    let first = tokio::spawn({
        let permission = permission.clone();
        async move {
            permission
                .assert(request("s", "read", &["src/a.ts"]).with_save(vec!["src/*".into()]))
                .await
        }
    });
    let pending = until_pending(&permission, "s", 1).await;
    permission.reply(&pending[0].id, Reply::Always).unwrap();
    first.await.unwrap().unwrap();
    permission
        .assert(request("s", "read", &["src/next.ts"]))
        .await
        .unwrap();
    assert_eq!(recorder.0.lock().unwrap().len(), 1);
    // Persisted: a new service on the same file allows it too.
    let reopened = Permission::new(
        rules(&[("*", "*", Ask)]),
        SavedApprovals::open(&file).unwrap(),
        Arc::new(AnswerAll(Reply::Reject { message: None })),
    );
    reopened
        .assert(request("t", "read", &["src/next.ts"]))
        .await
        .unwrap();
}

#[tokio::test]
async fn saved_approval_allows_but_configured_deny_wins() {
    // P11.
    let saved = SavedApprovals::in_memory();
    saved.add("bash", &["pwd".into()]).unwrap();
    let asked = Permission::new(
        Ruleset::default(),
        saved.clone(),
        Arc::new(AnswerAll(Reply::Reject { message: None })),
    );
    asked.assert(request("s", "bash", &["pwd"])).await.unwrap();
    let denied = Permission::new(
        rules(&[("bash", "*", Deny)]),
        saved,
        Arc::new(AnswerAll(Reply::Once)),
    );
    assert!(matches!(
        denied.assert(request("s", "bash", &["pwd"])).await,
        Err(PermissionError::Blocked { .. })
    ));
}

#[tokio::test]
async fn every_resource_must_be_allowed() {
    let saved = SavedApprovals::in_memory();
    saved.add("read", &["src/*".into()]).unwrap();
    let recorder = Recorder::default();
    let permission = Permission::new(rules(&[]), saved, Arc::new(recorder.clone()));
    permission
        .assert(request("s", "read", &["src/a", "src/b"]))
        .await
        .unwrap();
    let mixed = tokio::spawn({
        let permission = permission.clone();
        async move {
            permission
                .assert(request("s", "read", &["src/a", "docs/b"]))
                .await
        }
    });
    until_pending(&permission, "s", 1).await;
    permission.close();
    assert!(matches!(
        mixed.await.unwrap(),
        Err(PermissionError::Declined)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_asks_always_resolves_exactly_what_it_covers_and_reject_declines_the_rest() {
    let permission = Permission::new(
        rules(&[("*", "*", Ask), ("bash", "rm *", Deny)]),
        SavedApprovals::in_memory(),
        Arc::new(ReplyLater),
    );
    let mut reads = Vec::new();
    let mut commands = Vec::new();
    for i in 0..16 {
        let p = permission.clone();
        reads.push(tokio::spawn(async move {
            p.assert(
                request("s", "read", &[&format!("src/f{i}.rs")]).with_save(vec!["src/*".into()]),
            )
            .await
        }));
        let p = permission.clone();
        commands.push(tokio::spawn(async move {
            p.assert(request("s", "bash", &[&format!("cargo test {i}")]))
                .await
        }));
    }
    // A read outside src/ and another session's read are not covered.
    let p = permission.clone();
    let docs = tokio::spawn(async move { p.assert(request("s", "read", &["docs/x.md"])).await });
    let p = permission.clone();
    let other = tokio::spawn(async move { p.assert(request("t", "read", &["src/z.rs"])).await });
    let pending = until_pending(&permission, "s", 33).await;
    until_pending(&permission, "t", 1).await;

    let first_read = pending
        .iter()
        .find(|p| p.request.action == "read" && p.request.resources[0].starts_with("src/"))
        .unwrap();
    permission.reply(&first_read.id, Reply::Always).unwrap();
    for task in reads {
        task.await.unwrap().unwrap();
    }
    let left = permission.pending("s");
    assert_eq!(left.len(), 17, "16 bash + docs/x.md");
    assert!(
        left.iter()
            .all(|p| p.request.action == "bash" || p.request.resources == ["docs/x.md"])
    );
    // The other session's request is now allowed too, but "always" resolves only its own
    // session's requests; it stays pending until answered.
    assert_eq!(permission.pending("t").len(), 1);

    let bash = left.iter().find(|p| p.request.action == "bash").unwrap();
    permission
        .reply(
            &bash.id,
            Reply::Reject {
                message: Some("no tests now".into()),
            },
        )
        .unwrap();
    let mut corrected = 0;
    let mut declined = 0;
    for task in commands {
        match task.await.unwrap() {
            Err(PermissionError::Corrected { feedback }) => {
                assert_eq!(feedback, "no tests now");
                corrected += 1;
            }
            Err(PermissionError::Declined) => declined += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((corrected, declined), (1, 15));
    assert!(matches!(
        docs.await.unwrap(),
        Err(PermissionError::Declined)
    ));
    assert!(permission.pending("s").is_empty());
    assert_eq!(permission.pending("t").len(), 1);
    permission.close();
    assert!(matches!(
        other.await.unwrap(),
        Err(PermissionError::Declined)
    ));
}
