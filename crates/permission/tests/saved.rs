//! Saved approvals on disk: atomic, merged, never overwriting what cannot be read.

use std::fs;

use tackle_permission::{Effect, PermissionError, Rule, SavedApprovals};

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn missing_file_is_empty_and_created_on_first_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep").join("er").join("approvals.json");
    let saved = SavedApprovals::open(&path).unwrap();
    assert!(saved.list().is_empty());
    assert!(!path.exists());
    saved
        .add("read", &["src/*".into(), "docs/*".into()])
        .unwrap();
    saved.add("read", &["src/*".into()]).unwrap(); // not repeated
    saved.add("bash", &["git status".into()]).unwrap();
    insta::assert_snapshot!(fs::read_to_string(&path).unwrap(), @r#"
    {
      "version": 1,
      "approvals": [
        {
          "action": "read",
          "resource": "src/*"
        },
        {
          "action": "read",
          "resource": "docs/*"
        },
        {
          "action": "bash",
          "resource": "git status"
        }
      ]
    }
    "#);
    // Only the file and its lock file: no temporary file is left behind.
    assert_eq!(
        names(path.parent().unwrap()),
        ["approvals.json", "approvals.json.lock"]
    );
    let reopened = SavedApprovals::open(&path).unwrap();
    assert_eq!(
        reopened.list(),
        vec![
            Rule::new("read", "src/*", Effect::Allow),
            Rule::new("read", "docs/*", Effect::Allow),
            Rule::new("bash", "git status", Effect::Allow),
        ]
    );
    assert!(reopened.allows("read", "src/lib.rs"));
    assert!(!reopened.allows("read", "tests/x.rs"));
    assert!(!reopened.allows("edit", "src/lib.rs"));
}

#[test]
fn two_handles_on_one_file_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.json");
    let a = SavedApprovals::open(&path).unwrap();
    let b = SavedApprovals::open(&path).unwrap();
    a.add("read", &["a/*".into()]).unwrap();
    b.add("read", &["b/*".into()]).unwrap();
    assert_eq!(SavedApprovals::open(&path).unwrap().list().len(), 2);
    // b re-read the file before writing, so it sees a's approval too.
    assert!(b.allows("read", "a/x"));
}

#[test]
fn concurrent_adds_from_threads_all_persist() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.json");
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let path = path.clone();
            std::thread::spawn(move || {
                // Separate handles, as separate processes would have.
                let saved = SavedApprovals::open(&path).unwrap();
                for j in 0..5 {
                    saved.add("bash", &[format!("cmd {i} {j}")]).unwrap();
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    assert_eq!(SavedApprovals::open(&path).unwrap().list().len(), 40);
}

#[test]
fn revoke_and_clear() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.json");
    let saved = SavedApprovals::open(&path).unwrap();
    saved
        .add("read", &["src/*".into(), "docs/*".into()])
        .unwrap();
    assert!(saved.revoke("read", "src/*").unwrap());
    assert!(!saved.revoke("read", "src/*").unwrap());
    // Revocation compares as written, not as wildcards.
    assert!(!saved.revoke("read", "docs/x").unwrap());
    assert!(!saved.allows("read", "src/a"));
    assert_eq!(SavedApprovals::open(&path).unwrap().list().len(), 1);
    assert_eq!(saved.clear().unwrap(), 1);
    assert!(SavedApprovals::open(&path).unwrap().list().is_empty());
}

#[test]
fn malformed_files_are_errors_and_are_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.json");
    for (text, message) in [
        (
            "not json",
            "not a valid approvals file: expected ident at line 1 column 2",
        ),
        (
            r#"{"version": 2, "approvals": []}"#,
            "unsupported version 2 (this tackle reads version 1)",
        ),
        (
            r#"{"version": 1, "approvals": [{"action": "", "resource": "x"}]}"#,
            "an approval has an empty action or resource: \"\" \"x\"",
        ),
        (
            r#"{"version": 1, "approvals": [], "extra": 1}"#,
            "not a valid approvals file: unknown field `extra`, expected one of `version`, `project`, `approvals` at line 1 column 39",
        ),
    ] {
        fs::write(&path, text).unwrap();
        let err = SavedApprovals::open(&path).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("saved approvals {}: {message}", path.display())
        );
    }
    // A handle opened on a good file whose file later breaks: adding fails, file untouched.
    fs::write(&path, r#"{"version": 1, "approvals": []}"#).unwrap();
    let saved = SavedApprovals::open(&path).unwrap();
    fs::write(&path, "garbage").unwrap();
    assert!(matches!(
        saved.add("read", &["x".into()]),
        Err(PermissionError::Saved { .. })
    ));
    assert_eq!(fs::read_to_string(&path).unwrap(), "garbage");
    assert!(saved.list().is_empty());
}

#[test]
fn per_project_files_under_the_data_dir() {
    let data = tempfile::tempdir().unwrap();
    let a = SavedApprovals::for_project(data.path(), std::path::Path::new("/work/app")).unwrap();
    let b = SavedApprovals::for_project(data.path(), std::path::Path::new("/other/app")).unwrap();
    assert_ne!(a.path(), b.path());
    assert!(
        a.path()
            .unwrap()
            .starts_with(data.path().join("permission"))
    );
    assert!(
        a.path()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("app-")
    );
    a.add("read", &["*".into()]).unwrap();
    let text = fs::read_to_string(a.path().unwrap()).unwrap();
    assert!(text.contains(r#""project": "/work/app""#), "{text}");
    assert!(b.list().is_empty());
    let again =
        SavedApprovals::for_project(data.path(), std::path::Path::new("/work/app")).unwrap();
    assert_eq!(again.list().len(), 1);
}

#[test]
fn in_memory_approvals_are_shared_by_clones() {
    let saved = SavedApprovals::in_memory();
    let clone = saved.clone();
    saved
        .add("webfetch", &["https://docs.rs/*".into()])
        .unwrap();
    assert!(clone.allows("webfetch", "https://docs.rs/tokio"));
    assert!(saved.path().is_none());
    assert_eq!(saved.ruleset().len(), 1);
}
