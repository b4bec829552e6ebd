//! Bad configuration, bad directories and bad requests: typed errors, nothing lost or faked.

use tackle_output_store::{OutputRef, OutputStore, StoreConfig, StoreError};

use crate::common::*;

fn big() -> tackle_tool_core::ToolOutput {
    text_output("line\n".repeat(5000))
}

#[test]
fn a_managed_directory_that_is_a_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    std::fs::write(&store.config().directory, "not a directory").unwrap();
    let err = store.bound("ses", "call", big()).unwrap_err();
    assert!(matches!(err, StoreError::NotADirectory { .. }), "{err}");
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
    let err = store.bound("ses", "call", big()).unwrap_err();
    assert!(
        matches!(err, StoreError::SymlinkedDirectory { .. }),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn a_directory_that_cannot_be_created_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    // The data directory's parent is a regular file.
    let store = OutputStore::new(StoreConfig::in_data_dir(file.join("data")));
    let err = store.bound("ses", "call", big()).unwrap_err();
    assert!(matches!(err, StoreError::Directory { .. }), "{err}");
}

/// sysfs refuses new files even to root, so this is an unwritable directory on any Linux.
#[cfg(target_os = "linux")]
#[test]
fn an_unwritable_directory_is_an_error() {
    let store = OutputStore::new({
        let mut value = StoreConfig::in_data_dir("/unused");
        value.directory = "/sys/kernel".into();
        value
    });
    let err = store.bound("ses", "call-7", big()).unwrap_err();
    assert!(matches!(err, StoreError::Write { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with("cannot save the full output of call call-7 to /sys/kernel/tool_"),
        "{message}"
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
