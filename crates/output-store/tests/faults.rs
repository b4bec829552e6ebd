//! Bad configuration, bad directories and bad requests: typed errors, nothing lost or faked.
//! A managed output that cannot be saved keeps its preview, whose marker says so and why.

use serde_json::json;
use tackle_output_store::{Bounded, OutputRef, OutputStore, StoreConfig, StoreError};

use crate::common::*;

fn big() -> tackle_tool_core::ToolOutput {
    text_output("line\n".repeat(5000))
}

/// The marker line of a preview.
fn marker(text: &str) -> &str {
    text.lines().find(|line| line.starts_with("[... ")).unwrap()
}

/// `bounded` is the preview of [`big`] whose full output could not be saved: within the
/// limits, no reference, the reason for the host in `unsaved`; returns its marker.
fn unsaved(store: &OutputStore, bounded: &Bounded, host_reason: &str) -> String {
    let text = model_text(&bounded.output);
    assert!(store.text_fits(text), "the preview is not bounded");
    assert!(text.starts_with("line\nline\n") && text.ends_with("line\n"));
    assert!(bounded.truncated && bounded.references.is_empty());
    assert_eq!(bounded.omitted_lines, 5000 - 1999);
    let reason = bounded.unsaved.as_deref().unwrap();
    assert!(reason.contains(host_reason), "{reason}");
    let marker = marker(text).to_owned();
    assert!(marker.contains("could not be saved"), "{marker}");
    assert!(!marker.contains("tool-output://"), "{marker}");
    marker
}

#[test]
fn a_managed_directory_that_is_a_file_keeps_the_preview() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    std::fs::write(&store.config().directory, "not a directory").unwrap();
    let bounded = store.bound("ses", "call", big()).unwrap();
    let marker = unsaved(&store, &bounded, "is not a directory");
    insta::assert_snapshot!(marker, @"[... output truncated: omitted 3001 of 5000 lines (lines 800-3800) and 15005 of 25000 bytes. The full output could not be saved (the managed output directory is not a directory), so only this preview is left. ...]");
    // Small output never touches the directory.
    assert!(store.bound("ses", "call", text_output("ok")).is_ok());
    assert!(matches!(
        store.cleanup(),
        Err(StoreError::NotADirectory { .. })
    ));
}

#[cfg(unix)]
#[test]
fn a_symlinked_managed_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let store = store(dir.path());
    std::os::unix::fs::symlink(&elsewhere, &store.config().directory).unwrap();
    let bounded = store.bound("ses", "call", big()).unwrap();
    unsaved(&store, &bounded, "is a symbolic link");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert!(matches!(
        store.cleanup(),
        Err(StoreError::SymlinkedDirectory { .. })
    ));
}

#[test]
fn a_directory_that_cannot_be_created_keeps_the_preview() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    // The data directory's parent is a regular file.
    let store = paging_store(StoreConfig::in_data_dir(file.join("data")));
    let bounded = store.bound("ses", "call", big()).unwrap();
    let marker = unsaved(
        &store,
        &bounded,
        "cannot create the managed output directory",
    );
    // The model reads the system's reason, never the store's paths.
    assert!(
        marker.contains("(Not a directory (os error 20))"),
        "{marker}"
    );
    assert!(!marker.contains(&dir.path().display().to_string()));
}

#[test]
fn a_structured_value_that_cannot_be_saved_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    std::fs::write(&store.config().directory, "not a directory").unwrap();
    let value = json!({"items": vec!["x".repeat(100); 500]});
    let bounded = store.bound("ses", "call", structured_only(value)).unwrap();
    assert!(bounded.truncated && bounded.references.is_empty());
    assert!(bounded.unsaved.is_some());
    insta::assert_json_snapshot!(bounded.output.structured, @r#"
    {
      "truncated": true,
      "bytes": 51511,
      "unsaved": "the structured output was too large and could not be saved (the managed output directory is not a directory)"
    }
    "#);
}

#[test]
fn raw_bytes_that_cannot_be_saved_keep_their_preview() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    std::fs::write(&store.config().directory, "not a directory").unwrap();
    let bounded = store
        .bound_bytes("ses", "call", b"ok \xff\n".repeat(10))
        .unwrap();
    assert!(bounded.invalid_utf8 && bounded.reference.is_none());
    assert!(bounded.unsaved.is_some());
    // All of it fits: the marker only says the exact bytes are not kept.
    assert!(
        bounded.text.starts_with("ok \u{FFFD}\n"),
        "{}",
        bounded.text
    );
    insta::assert_snapshot!(marker(&bounded.text), @"[... nothing omitted (10 lines, 50 bytes). The full output could not be saved (the managed output directory is not a directory), so only this preview is left. The output is not valid UTF-8: invalid bytes are shown as U+FFFD here. ...]");
}

/// sysfs refuses new files even to root, so this is an unwritable directory on any Linux.
#[cfg(target_os = "linux")]
#[test]
fn an_unwritable_directory_keeps_the_preview() {
    let store = paging_store({
        let mut value = StoreConfig::in_data_dir("/unused");
        value.directory = "/sys/kernel".into();
        value
    });
    let bounded = store.bound("ses", "call-7", big()).unwrap();
    unsaved(
        &store,
        &bounded,
        "cannot save the full output of call call-7 to /sys/kernel/tool_",
    );
}

#[test]
fn limits_that_cannot_hold_a_preview_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), 10, 64);
    let err = store.bound("ses", "call", text_output("ok")).unwrap_err();
    assert!(matches!(err, StoreError::InvalidLimits { .. }), "{err}");
    assert!(matches!(
        store.bound_bytes("s", "c", b"x".to_vec()),
        Err(StoreError::InvalidLimits { .. })
    ));
}

#[test]
fn bad_references_and_pages() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let missing = OutputRef::parse("tool-output://faaaaaaaaaaaaaaaaaaaaaaaaaa").unwrap();
    assert!(matches!(
        store.read_page(&missing, 1, page_limits(&store, 10)),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.open(&missing),
        Err(StoreError::NotFound { .. })
    ));
    let bounded = store.bound("ses", "call", big()).unwrap();
    let reference = &bounded.references[0];
    assert!(matches!(
        store.read_page(reference, 0, page_limits(&store, 10)),
        Err(StoreError::InvalidPage { .. })
    ));
    assert!(matches!(
        store.read_page(reference, 1, page_limits(&store, 0)),
        Err(StoreError::InvalidPage { .. })
    ));
    assert!(matches!(
        store.read_page(reference, 5001, page_limits(&store, 10)),
        Err(StoreError::OffsetOutOfRange {
            total_lines: 5000,
            ..
        })
    ));
    assert!(matches!(
        "/etc/passwd".parse::<OutputRef>(),
        Err(StoreError::InvalidReference { .. })
    ));
}

#[test]
fn an_expired_output_is_not_found_afterwards() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let bounded = store.bound("ses", "call", big()).unwrap();
    let reference = &bounded.references[0];
    std::fs::remove_file(
        store
            .config()
            .directory
            .join(format!("tool_{}", reference.id())),
    )
    .unwrap();
    let err = store
        .read_page(reference, 1, page_limits(&store, 10))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("managed output {reference} does not exist (it may have expired or been removed)")
    );
}
