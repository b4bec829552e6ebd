//! The recorded-host example, run as a test.

#[path = "../examples/recorded_host.rs"]
mod recorded_host;

#[tokio::test]
async fn the_recorded_responses_settle_into_provider_messages() {
    let location = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let answers = recorded_host::replay(location.path(), data.path())
        .await
        .unwrap();
    let real = std::fs::canonicalize(location.path()).unwrap();
    let text = serde_json::to_string_pretty(&answers)
        .unwrap()
        .replace(&real.display().to_string(), "[root]");
    // GPT-5 patched the notes; Claude's edit then found the TODO gone, and its apply_patch is
    // not in Claude's catalog.
    assert!(text.contains("Unknown tool: apply_patch"), "{text}");
    assert_eq!(
        std::fs::read_to_string(location.path().join("notes.txt")).unwrap(),
        "Release 1.2\nDONE: write the release notes\n"
    );
    insta::assert_snapshot!(text);
}
