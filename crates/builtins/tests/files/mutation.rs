//! Atomic, serialized, mode-keeping file mutation (reference FM1–FM5).

use std::os::unix::fs::{PermissionsExt, symlink};
use std::time::Duration;

use tackle_builtins::{ContentHash, Error, FileMutation, Operation};

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn write_creates_parents_and_reports_existence() {
    let dir = tempfile::tempdir().unwrap();
    let files = FileMutation::new();
    let target = dir.path().join("a/b/c.txt");
    let first = files.write(&target, b"one".to_vec()).await.unwrap();
    assert_eq!(first.operation, Operation::Write);
    assert!(!first.existed);
    assert_eq!(first.target, std::fs::canonicalize(&target).unwrap());
    let second = files.write(&target, b"two".to_vec()).await.unwrap();
    assert!(second.existed);
    assert_eq!(std::fs::read(&target).unwrap(), b"two");
    assert_eq!(
        names(&dir.path().join("a/b")),
        vec!["c.txt"],
        "no temporary file is left"
    );
}

#[tokio::test]
async fn create_refuses_an_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let files = FileMutation::new();
    let target = dir.path().join("x.txt");
    files.create(&target, b"first".to_vec()).await.unwrap();
    let err = files.create(&target, b"second".to_vec()).await.unwrap_err();
    assert!(matches!(err, Error::TargetExists { .. }), "{err}");
    assert_eq!(std::fs::read(&target).unwrap(), b"first");
}

#[tokio::test]
async fn modes_are_kept_and_new_files_follow_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    let files = FileMutation::new();
    let script = dir.path().join("run.sh");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o751)).unwrap();
    files
        .write(&script, b"#!/bin/sh\necho hi\n".to_vec())
        .await
        .unwrap();
    assert_eq!(mode(&script), 0o751);
    // A plain new file gets what any program creating it with 0666 gets (not tempfile's 0600).
    let reference = dir.path().join("reference");
    std::fs::write(&reference, "").unwrap();
    let created = dir.path().join("created");
    files.write(&created, Vec::new()).await.unwrap();
    assert_eq!(mode(&created), mode(&reference));
}

#[tokio::test]
async fn symlinks_are_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let files = FileMutation::new();
    let real = dir.path().join("real.txt");
    std::fs::write(&real, "old").unwrap();
    let link = dir.path().join("link.txt");
    symlink(&real, &link).unwrap();
    let written = files.write(&link, b"new".to_vec()).await.unwrap();
    assert_eq!(written.target, std::fs::canonicalize(&real).unwrap());
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&real).unwrap(), b"new");
    // A dangling link: its target is created, the link stays a link.
    let dangling = dir.path().join("dangling");
    symlink(dir.path().join("made.txt"), &dangling).unwrap();
    files.write(&dangling, b"made".to_vec()).await.unwrap();
    assert!(
        std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(dir.path().join("made.txt")).unwrap(), b"made");
}

#[tokio::test]
async fn text_keeps_exactly_one_bom() {
    let dir = tempfile::tempdir().unwrap();
    let files = FileMutation::new();
    let target = dir.path().join("bom.txt");
    std::fs::write(&target, "\u{FEFF}before").unwrap();
    let written = files
        .write_text_preserving_bom(&target, "after".to_owned())
        .await
        .unwrap();
    assert_eq!(
        (written.before.as_str(), written.after.as_str()),
        ("before", "after")
    );
    assert_eq!(std::fs::read(&target).unwrap(), "\u{FEFF}after".as_bytes());
    files
        .write_text_preserving_bom(&target, "\u{FEFF}\u{FEFF}again".to_owned())
        .await
        .unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), "\u{FEFF}again".as_bytes());
    let fresh = dir.path().join("fresh.txt");
    let written = files
        .write_text_preserving_bom(&fresh, "\u{FEFF}x".to_owned())
        .await
        .unwrap();
    assert_eq!(written.before, "");
    assert!(!written.written.existed);
    assert_eq!(std::fs::read(&fresh).unwrap(), "\u{FEFF}x".as_bytes());
    let plain = dir.path().join("plain.txt");
    files
        .write_text_preserving_bom(&plain, "x".to_owned())
        .await
        .unwrap();
    assert_eq!(std::fs::read(&plain).unwrap(), b"x");
}

#[tokio::test]
async fn write_if_unchanged_compares_content() {
    let dir = tempfile::tempdir().unwrap();
    let files = FileMutation::new();
    let target = dir.path().join("f.txt");
    std::fs::write(&target, "v1").unwrap();
    let expected = ContentHash::of(b"v1");
    // Touching the file (same bytes, new mtime) is not a change.
    std::fs::write(&target, "v1").unwrap();
    files
        .write_if_unchanged(&target, expected, b"v2".to_vec())
        .await
        .unwrap();
    let err = files
        .write_if_unchanged(&target, expected, b"v3".to_vec())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::StaleContent { .. }), "{err}");
    assert_eq!(std::fs::read(&target).unwrap(), b"v2");
}

#[tokio::test]
async fn remove_reports_whether_the_file_existed() {
    let dir = tempfile::tempdir().unwrap();
    let files = FileMutation::new();
    let target = dir.path().join("gone.txt");
    std::fs::write(&target, "x").unwrap();
    let removed = files.remove(&target).await.unwrap();
    assert_eq!(
        (removed.operation, removed.existed),
        (Operation::Remove, true)
    );
    assert!(!target.exists());
    assert!(!files.remove(&target).await.unwrap().existed);
}

#[tokio::test]
async fn directories_and_read_only_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let files = FileMutation::new();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    assert!(matches!(
        files.write(&sub, b"x".to_vec()).await,
        Err(Error::IsDirectory { .. })
    ));
    assert!(matches!(
        files.read(&sub).await,
        Err(Error::IsDirectory { .. })
    ));
    let locked = dir.path().join("locked.txt");
    std::fs::write(&locked, "keep").unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o444)).unwrap();
    assert!(matches!(
        files.write(&locked, b"x".to_vec()).await,
        Err(Error::ReadOnly { .. })
    ));
    assert_eq!(std::fs::read(&locked).unwrap(), b"keep");
    assert_eq!(files.read(&dir.path().join("none")).await.unwrap(), None);
}

#[tokio::test]
async fn a_dropped_caller_does_not_stop_a_write() {
    let dir = tempfile::tempdir().unwrap();
    let files = FileMutation::new();
    let target = dir.path().join("big.bin");
    let content = vec![b'z'; 32 * 1024 * 1024];
    // The first poll takes the lock and starts the write; the timeout then drops the future.
    let dropped = tokio::time::timeout(
        Duration::from_nanos(1),
        files.write(&target, content.clone()),
    )
    .await;
    assert!(dropped.is_err(), "the write should still have been running");
    // The next operation on the path waits for that write and sees all of it.
    let seen = files.read(&target).await.unwrap().unwrap();
    assert_eq!(seen.len(), content.len());
    assert!(seen == content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn transactions_on_one_path_are_serialized() {
    let dir = tempfile::tempdir().unwrap();
    let files = FileMutation::new();
    let target = dir.path().join("counter.txt");
    std::fs::write(&target, "").unwrap();
    let mut tasks = Vec::new();
    for n in 0..40 {
        let files = files.clone();
        let target = target.clone();
        tasks.push(tokio::spawn(async move {
            files
                .transact(&target, move |tx| {
                    let mut bytes = tx.read()?.unwrap_or_default();
                    bytes.extend_from_slice(format!("{n}\n").as_bytes());
                    tx.write(&bytes)
                })
                .await
                .unwrap();
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let text = std::fs::read_to_string(&target).unwrap();
    let mut seen: Vec<u32> = text.lines().map(|l| l.parse().unwrap()).collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..40).collect::<Vec<_>>());
}
