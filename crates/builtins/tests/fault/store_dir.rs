//! The output store's directory deleted, or replaced by a file, while a long bash call runs
//! (before its output spills) and between calls: every call still settles with a bounded
//! result, the next spill recreates the directory, and a managed output that went with the
//! directory is a clear error to read.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tackle_registry::Settlement;
use tackle_tool_core::{MAX_BYTES, ResultValue};

use super::{Host, no_hook};

/// A command whose output must spill, after a pause that leaves time to break the store.
const SLOW_BIG: &str = "sleep 1; seq 1 20000";

fn text(settled: &Settlement) -> String {
    match settled.result() {
        ResultValue::Text(text) => text,
        other => panic!("expected text, got {other:?}"),
    }
}

/// Settles `input` on `tool` while `meanwhile` runs 300 ms into the call.
async fn settle_while(
    host: &Host,
    tool: &str,
    input: Value,
    meanwhile: impl FnOnce(),
) -> Settlement {
    let (settled, ()) = tokio::join!(host.settle(tool, input), async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        meanwhile();
    });
    settled
}

/// `settled` is a spilled bash output with its reference.
fn spilled(settled: &Settlement) -> String {
    let text = text(settled);
    assert!(text.len() <= MAX_BYTES);
    assert!(text.contains("\n20000"), "{text}");
    assert_eq!(settled.references().len(), 1, "{settled:?}");
    settled.references()[0].to_string()
}

fn remove(dir: &Path) {
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn a_deleted_store_directory_is_recreated_by_the_next_spill() {
    let (loc, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let data = data.path().join("data");
    let host = Host::new(loc.path(), &data, no_hook());
    let first = host.settle("bash", json!({"command": "seq 1 20000"})).await;
    let first = spilled(&first);

    // While the second call runs, before it spills.
    let second = settle_while(&host, "bash", json!({"command": SLOW_BIG}), || {
        remove(&data)
    })
    .await;
    let second = spilled(&second);
    assert!(data.join("tool-output").is_dir());
    let page = host
        .text("read", json!({"path": second, "offset": 19999}))
        .await;
    assert!(page.contains("19999: 19999\n20000: 20000"), "{page}");

    // Between two calls.
    remove(&data);
    let third = host.settle("bash", json!({"command": "seq 1 20000"})).await;
    let third = spilled(&third);
    let page = host
        .text("read", json!({"path": third, "offset": 19999}))
        .await;
    assert!(page.contains("20000: 20000"), "{page}");
    let gone = host.error("read", json!({"path": second})).await;
    assert!(gone.contains("does not exist"), "{gone}");
    // The first output went with the directory.
    let gone = host.error("read", json!({"path": first})).await;
    insta::assert_snapshot!(
        "read_of_a_deleted_output",
        gone.replace(first.as_str(), "tool-output://[ID]")
    );
}

#[tokio::test]
async fn a_store_directory_replaced_by_a_file_keeps_the_preview() {
    let (loc, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let data = data.path().join("data");
    let host = Host::new(loc.path(), &data, no_hook());
    let managed = data.join("tool-output");
    let settled = settle_while(&host, "bash", json!({"command": SLOW_BIG}), || {
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(&managed, "not a directory").unwrap();
    })
    .await;
    let preview = text(&settled);
    assert!(preview.len() <= MAX_BYTES);
    assert!(
        preview.starts_with("1\n2\n") && preview.contains("\n20000"),
        "{preview}"
    );
    assert!(settled.references().is_empty() && settled.truncated());
    assert!(settled.unsaved().unwrap().contains("is not a directory"));
    let marker = preview
        .lines()
        .find(|line| line.starts_with("[... "))
        .unwrap();
    insta::assert_snapshot!("spill_into_a_file", marker);

    // Once the file is gone, the next call spills as usual.
    std::fs::remove_file(&managed).unwrap();
    let again = host.settle("bash", json!({"command": "seq 1 20000"})).await;
    spilled(&again);
}
