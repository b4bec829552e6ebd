//! Protected resources: an `edit` of a configuration or repository-control file always asks.

use std::path::PathBuf;
use std::sync::Arc;

use tackle_permission::{
    AnswerAll, Effect, Permission, PermissionError, Protected, Reply, Ruleset, SavedApprovals,
};

use crate::support::{Recorder, request, rules, service, until_pending};

use Effect::{Allow, Deny};

#[tokio::test]
async fn an_allow_rule_does_not_pre_approve_a_protected_write() {
    let recorder = Recorder::default();
    let permission = service(&[("*", "*", Allow)], recorder.clone());
    // An ordinary file is allowed without asking.
    permission
        .assert(request("s", "edit", &["src/main.rs"]))
        .await
        .unwrap();
    for resource in [
        "tackle.json",
        "sub/opencode.jsonc",
        ".git/hooks/pre-commit",
        ".claude/skills/x/SKILL.md",
        "sub/.agents/skills/y/SKILL.md",
        ".KILO/agents.md",
        ".kilocode/rules.md",
    ] {
        let asking = permission.clone();
        let task =
            tokio::spawn(async move { asking.assert(request("s", "edit", &[resource])).await });
        let pending = until_pending(&permission, "s", 1).await;
        assert!(pending[0].request.always_ask, "{resource}");
        let protected = &pending[0].request.metadata["protected"];
        assert_eq!(protected[0]["resource"], resource, "{protected}");
        permission.reply(&pending[0].id, Reply::Once).unwrap();
        task.await.unwrap().unwrap();
    }
    assert_eq!(recorder.0.lock().unwrap().len(), 7);
}

#[tokio::test]
async fn one_protected_resource_makes_the_whole_request_ask() {
    let permission = service(
        &[("edit", "*", Allow)],
        AnswerAll(Reply::Reject { message: None }),
    );
    let err = permission
        .assert(request("s", "edit", &["a.txt", "b/tackle.json", "c.txt"]))
        .await
        .unwrap_err();
    assert!(matches!(err, PermissionError::Declined), "{err:?}");
}

#[tokio::test]
async fn a_saved_always_does_not_pre_approve_a_protected_write() {
    let saved = SavedApprovals::in_memory();
    saved.add("edit", &["*".to_owned()]).unwrap();
    let permission = Permission::new(
        rules(&[]),
        saved,
        Arc::new(AnswerAll(Reply::Reject { message: None })),
    );
    permission
        .assert(request("s", "edit", &["notes.md"]))
        .await
        .unwrap();
    let err = permission
        .assert(request("s", "edit", &[".tackle/skills/x/SKILL.md"]))
        .await
        .unwrap_err();
    assert!(matches!(err, PermissionError::Declined), "{err:?}");
}

#[tokio::test]
async fn an_always_reply_to_a_protected_write_does_not_cover_the_next_one() {
    let recorder = Recorder::default();
    let permission = service(&[], recorder.clone());
    let first = {
        let permission = permission.clone();
        tokio::spawn(async move {
            permission
                .assert(request("s", "edit", &["tackle.json"]).with_save(vec!["*".into()]))
                .await
        })
    };
    let pending = until_pending(&permission, "s", 1).await;
    permission.reply(&pending[0].id, Reply::Always).unwrap();
    first.await.unwrap().unwrap();
    // The approval saved `edit *`: ordinary files now pass, the protected one asks again.
    permission
        .assert(request("s", "edit", &["other.txt"]))
        .await
        .unwrap();
    let second = {
        let permission = permission.clone();
        tokio::spawn(async move {
            permission
                .assert(request("s", "edit", &["tackle.json"]))
                .await
        })
    };
    let pending = until_pending(&permission, "s", 1).await;
    permission
        .reply(&pending[0].id, Reply::Reject { message: None })
        .unwrap();
    assert!(matches!(
        second.await.unwrap(),
        Err(PermissionError::Declined)
    ));
    assert_eq!(recorder.0.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_deny_still_blocks_a_protected_write() {
    let recorder = Recorder::default();
    let permission = service(&[("edit", "*.json", Deny)], recorder.clone());
    let err = permission
        .assert(request("s", "edit", &["tackle.json"]))
        .await
        .unwrap_err();
    assert!(matches!(err, PermissionError::Blocked { .. }), "{err:?}");
    assert!(recorder.0.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_user_configuration_directory_is_protected() {
    let config = tempfile::tempdir().unwrap();
    let dir = config.path().join("tackle");
    std::fs::create_dir(&dir).unwrap();
    let permission = service(
        &[("*", "*", Allow)],
        AnswerAll(Reply::Reject { message: None }),
    )
    .with_protected(Protected::with_user_dirs([dir.clone()]));
    let real = std::fs::canonicalize(&dir).unwrap();
    let inside = real.join("skills").join("a").join("SKILL.md");
    let err = permission
        .assert(request("s", "edit", &[inside.to_str().unwrap()]))
        .await
        .unwrap_err();
    assert!(matches!(err, PermissionError::Declined), "{err:?}");
    let beside: PathBuf = config.path().join("tackle-notes.txt");
    permission
        .assert(request("s", "edit", &[beside.to_str().unwrap()]))
        .await
        .unwrap();
    // Other actions on the same resources follow the rules.
    permission
        .assert(request("s", "read", &[inside.to_str().unwrap()]))
        .await
        .unwrap();
}

#[test]
fn explain_says_a_protected_write_asks() {
    let mut configured = Ruleset::defaults();
    configured.append(rules(&[("edit", "*", Allow)]));
    let permission = Permission::new(
        configured,
        SavedApprovals::in_memory(),
        Arc::new(AnswerAll(Reply::Once)),
    );
    insta::assert_snapshot!(permission.explain("edit", ".git/config").to_string(), @r#"
    edit ".git/config": ask
      decided by {action: "edit", resource: "*", effect: "allow"}
      from rule #1 given by the host
      protected (inside .git/): a write is always asked, whatever the rules or saved approvals allow
    "#);
    assert_eq!(permission.explain("edit", "src/lib.rs").effect, Allow);
    assert_eq!(permission.explain("edit", "src/lib.rs").protected, None);
}
