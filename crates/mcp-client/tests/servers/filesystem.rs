//! The official filesystem reference server, confined to a temporary directory.

use serde_json::json;
use tackle_mcp_client::ServerConfig;

use super::support::{Fixture, node_server, settle, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_and_writes_through_the_registry_and_the_gate_sees_destructive_tools() {
    let root = tempfile::TempDir::new().unwrap();
    let root_path = std::fs::canonicalize(root.path()).unwrap();
    std::fs::write(root_path.join("hello.txt"), "hello from disk\n").unwrap();
    let mut command = node_server("server-filesystem");
    command.push(root_path.display().to_string());
    let fx = Fixture::start(vec![("fs", ServerConfig::local(command))]);
    fx.ready().await;
    let status = fx.connected("fs");
    assert!(status.skipped.is_empty(), "{:?}", status.skipped);
    let snapshot = fx.snapshot();

    let path = root_path.join("hello.txt").display().to_string();
    let read = settle(&snapshot, "fs_read_text_file", json!({"path": path})).await;
    assert!(!read.is_error(), "{:?}", read.result());
    assert!(format!("{:?}", read.result()).contains("hello from disk"));

    let target = root_path.join("new.txt").display().to_string();
    let wrote = settle(
        &snapshot,
        "fs_write_file",
        json!({"path": target, "content": "written\n"}),
    )
    .await;
    assert!(!wrote.is_error(), "{:?}", wrote.result());
    assert_eq!(
        std::fs::read_to_string(root_path.join("new.txt")).unwrap(),
        "written\n"
    );

    // Outside its root the server refuses: an error the model reads.
    let outside = settle(
        &snapshot,
        "fs_read_text_file",
        json!({"path": "/etc/hostname"}),
    )
    .await;
    assert!(outside.is_error(), "{:?}", outside.result());
    assert!(!text(&outside).is_empty());

    let seen = fx.gate.seen.lock().unwrap().clone();
    let destructive = |tool: &str| seen.iter().find(|(_, t, _)| t == tool).unwrap().2;
    assert!(!destructive("read_text_file"), "{seen:?}");
    assert!(destructive("write_file"), "{seen:?}");
}
