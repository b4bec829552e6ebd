//! The write leaf (the reference's write cases, WR1–WR4).

use std::os::unix::fs::PermissionsExt;

use serde_json::json;
use tackle_permission::Reply;

use super::support::{Fixture, asked, slash, text_of};

#[tokio::test]
async fn creates_files_and_parents() {
    let fx = Fixture::new();
    let output = fx
        .call(
            "write",
            json!({"path": "src/new.txt", "content": "hello\n"}),
        )
        .await
        .unwrap();
    assert_eq!(output.content.len(), 1);
    assert_eq!(text_of(&output), "Created file successfully: src/new.txt");
    assert_eq!(
        output.structured,
        json!({
            "operation": "write",
            "target": slash(&fx.real_root().join("src/new.txt")),
            "resource": "src/new.txt",
            "existed": false,
            "additions": 1,
            "deletions": 0
        })
    );
    assert_eq!(fx.bytes("src/new.txt"), b"hello\n");
    assert_eq!(fx.asked(), vec![asked("edit", "src/new.txt", "*")]);
}

#[tokio::test]
async fn overwrites_keep_mode_and_report_the_change() {
    let fx = Fixture::new();
    let path = fx.put("existing.txt", "a\nb\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let output = fx
        .call(
            "write",
            json!({"path": "existing.txt", "content": "a\nc\nd\n"}),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&output), "Wrote file successfully: existing.txt");
    assert_eq!(output.structured["existed"], json!(true));
    assert_eq!(
        (
            &output.structured["additions"],
            &output.structured["deletions"]
        ),
        (&json!(2), &json!(1))
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o640
    );
}

#[tokio::test]
async fn one_bom_at_most() {
    let fx = Fixture::new();
    fx.put("bom.txt", "\u{FEFF}before");
    fx.call("write", json!({"path": "bom.txt", "content": "after"}))
        .await
        .unwrap();
    assert_eq!(fx.bytes("bom.txt"), "\u{FEFF}after".as_bytes());
    fx.call(
        "write",
        json!({"path": "bom.txt", "content": "\u{FEFF}again"}),
    )
    .await
    .unwrap();
    assert_eq!(fx.bytes("bom.txt"), "\u{FEFF}again".as_bytes());
}

/// Over 8 MiB the previous file is streamed, never held: its BOM is still kept and the counts
/// are whole-file (every old line removed, every new one added).
#[tokio::test]
async fn large_files_keep_their_bom_and_count_whole_files() {
    let fx = Fixture::new();
    let line = "0123456789abcdef\n";
    let old = format!("\u{FEFF}{}", line.repeat(600_000));
    fx.put("big.txt", &old);
    let new = line.repeat(10);
    let output = fx
        .call("write", json!({"path": "big.txt", "content": new}))
        .await
        .unwrap();
    assert_eq!(
        (
            &output.structured["additions"],
            &output.structured["deletions"]
        ),
        (&json!(10), &json!(600_000))
    );
    assert_eq!(fx.bytes("big.txt"), format!("\u{FEFF}{new}").as_bytes());
}

#[tokio::test]
async fn permission_order() {
    let fx = Fixture::new();
    let inside = fx.path("abs.txt");
    fx.call("write", json!({"path": inside, "content": "x"}))
        .await
        .unwrap();
    assert_eq!(fx.asked(), vec![asked("edit", "abs.txt", "*")]);

    let fx = Fixture::new();
    let outside = fx.real_outside();
    let target = outside.join("deep/new.txt");
    fx.call("write", json!({"path": target, "content": "x"}))
        .await
        .unwrap();
    let pattern = format!("{}/*", slash(&outside));
    assert_eq!(
        fx.asked(),
        vec![
            asked("external_directory", &pattern, &pattern),
            asked("edit", &slash(&target), "*")
        ]
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"x");
}

#[tokio::test]
async fn denials_write_nothing() {
    for denied in ["external_directory", "edit"] {
        let fx = Fixture::with(Reply::Once, &[denied]);
        let target = fx.real_outside().join("x.txt");
        let message = fx
            .failure("write", json!({"path": target, "content": "x"}))
            .await;
        let unable = format!(
            "Unable to write {}: Permission denied: {denied}",
            target.display()
        );
        assert!(message.starts_with(&unable), "{message}");
        assert!(!target.exists());
    }
    let fx = Fixture::with(Reply::Once, &["edit"]);
    fx.put("keep.txt", "kept");
    fx.failure("write", json!({"path": "keep.txt", "content": "x"}))
        .await;
    assert_eq!(fx.bytes("keep.txt"), b"kept");
}

#[tokio::test]
async fn unusable_targets() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.path("dir")).unwrap();
    insta::assert_snapshot!(fx.failure("write", json!({"path": "dir", "content": "x"})).await, @"Unable to write dir: it is a directory");
    fx.put("file.txt", "x");
    insta::assert_snapshot!(fx.failure("write", json!({"path": "file.txt/inner", "content": "x"})).await, @"Unable to write file.txt/inner: file.txt/inner: a parent of the path is not a directory");
    assert!(fx.asked().is_empty());
}

#[test]
fn the_input_schema_has_content_and_path() {
    let fx = Fixture::new();
    let tool = fx.tool("write");
    let definition = tool.definition("write").unwrap();
    let mut keys: Vec<&String> = definition.input_schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    keys.sort();
    assert_eq!(keys, ["content", "path"]);
    assert_eq!(tool.permission("write"), "edit");
    insta::assert_json_snapshot!(definition.input_schema);
}
