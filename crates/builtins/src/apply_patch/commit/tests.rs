use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::apply_patch::plan::Target;

fn change(root: &Path, name: &str, before: Option<&str>, after: Option<&str>) -> FileChange {
    FileChange {
        target: Target {
            resource: name.to_owned(),
            path: root.join(name),
            external: None,
        },
        before: before.map(|b| b.as_bytes().to_vec()),
        after: after.map(|a| a.as_bytes().to_vec()),
        moved_from: None,
        applied: 1,
        already_applied: 0,
        windows: None,
    }
}

/// Commits without holding any file's lock beforehand.
async fn commit_all(
    mutation: &FileMutation,
    changes: Vec<FileChange>,
) -> Result<(), CommitFailure> {
    let held = mutation.lock_all(Vec::new()).await;
    commit(mutation, &held, changes).await
}

fn read(root: &Path, name: &str) -> Option<String> {
    fs::read_to_string(root.join(name)).ok()
}

#[tokio::test]
async fn commits_creates_writes_and_removals() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("m.txt"), "old\n").unwrap();
    fs::write(root.join("d.txt"), "bye\n").unwrap();
    let changes = vec![
        change(root, "deep/er/new.txt", None, Some("hi\n")),
        change(root, "m.txt", Some("old\n"), Some("new\n")),
        change(root, "d.txt", Some("bye\n"), None),
    ];
    commit_all(&FileMutation::new(), changes).await.unwrap();
    assert_eq!(read(root, "deep/er/new.txt").as_deref(), Some("hi\n"));
    assert_eq!(read(root, "m.txt").as_deref(), Some("new\n"));
    assert!(!root.join("d.txt").exists());
}

#[tokio::test]
async fn failure_on_the_third_of_four_restores_everything() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("m.txt"), "old\n").unwrap();
    fs::write(root.join("locked.txt"), "keep\n").unwrap();
    fs::set_permissions(root.join("locked.txt"), Permissions::from_mode(0o444)).unwrap();
    fs::write(root.join("d.txt"), "bye\n").unwrap();
    let changes = vec![
        change(root, "new/dir/a.txt", None, Some("a\n")),
        change(root, "m.txt", Some("old\n"), Some("new\n")),
        change(root, "locked.txt", Some("keep\n"), Some("changed\n")),
        change(root, "d.txt", Some("bye\n"), None),
    ];
    let failure = commit_all(&FileMutation::new(), changes).await.unwrap_err();
    insta::assert_snapshot!(failure.message(), @"Unable to apply patch at locked.txt: the file is read-only. The files already changed were restored (new/dir/a.txt, m.txt); no files were changed.");
    assert!(
        !root.join("new").exists(),
        "created directories are removed again"
    );
    assert_eq!(read(root, "m.txt").as_deref(), Some("old\n"));
    assert_eq!(read(root, "locked.txt").as_deref(), Some("keep\n"));
    assert_eq!(read(root, "d.txt").as_deref(), Some("bye\n"));
}

#[tokio::test]
async fn stale_content_fails_before_anything_changes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("m.txt"), "someone else\n").unwrap();
    let changes = vec![change(root, "m.txt", Some("old\n"), Some("new\n"))];
    let failure = commit_all(&FileMutation::new(), changes).await.unwrap_err();
    insta::assert_snapshot!(failure.message(), @"Unable to apply patch at m.txt: the file changed on disk after the patch was prepared; read it again and retry. No files were changed.");
    assert_eq!(read(root, "m.txt").as_deref(), Some("someone else\n"));
}

#[tokio::test]
async fn a_failed_removal_brings_back_earlier_removals_with_their_mode() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("a.txt"), "a\n").unwrap();
    fs::set_permissions(root.join("a.txt"), Permissions::from_mode(0o640)).unwrap();
    fs::write(root.join("b.txt"), "changed\n").unwrap();
    let changes = vec![
        change(root, "a.txt", Some("a\n"), None),
        change(root, "b.txt", Some("b\n"), None),
    ];
    let failure = commit_all(&FileMutation::new(), changes).await.unwrap_err();
    assert_eq!(failure.changed, ["a.txt"]);
    assert!(failure.not_restored.is_empty());
    assert_eq!(read(root, "a.txt").as_deref(), Some("a\n"));
    let mode = fs::metadata(root.join("a.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
}

#[tokio::test]
async fn an_add_onto_a_file_created_meanwhile_fails() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("a.txt"), "theirs\n").unwrap();
    let changes = vec![change(root, "a.txt", None, Some("ours\n"))];
    let failure = commit_all(&FileMutation::new(), changes).await.unwrap_err();
    assert!(
        failure.message().contains("created by someone else"),
        "{}",
        failure.message()
    );
    assert_eq!(read(root, "a.txt").as_deref(), Some("theirs\n"));
}

#[test]
fn unrestorable_files_are_named() {
    let failure = CommitFailure {
        resource: "c".into(),
        reason: "cannot write it: disk full".into(),
        changed: vec!["a".into(), "b".into()],
        not_restored: vec![("b".into(), "the file is read-only".into())],
    };
    insta::assert_snapshot!(failure.message(), @"Unable to apply patch at c: cannot write it: disk full. Restoring the files already changed failed for: b (the file is read-only). They keep the patch's content; every other file is as before.");
}

#[tokio::test]
async fn dropping_the_caller_does_not_stop_a_commit_halfway() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let names: Vec<String> = (0..40).map(|i| format!("f{i}.txt")).collect();
    for name in &names {
        fs::write(root.join(name), "old\n").unwrap();
    }
    let changes = names
        .iter()
        .map(|name| change(root, name, Some("old\n"), Some("new\n")))
        .collect();
    let mutation = FileMutation::new();
    let held = mutation.lock_all(Vec::new()).await;
    let commit = commit(&mutation, &held, changes);
    // The commit is polled once (it starts its task), then abandoned.
    tokio::select! {
        biased;
        _ = commit => panic!("40 synced writes cannot finish within one poll"),
        () = std::future::ready(()) => {}
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while names
        .iter()
        .any(|n| read(root, n).as_deref() != Some("new\n"))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the commit stopped halfway"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
