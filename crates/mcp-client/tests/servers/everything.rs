//! The official "everything" reference server: text, image, resource and structured results.

use serde_json::json;
use tackle_mcp_client::ServerConfig;
use tackle_tool_core::{OutputContent, ResultValue};

use super::support::{Fixture, node_server, settle, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_image_resource_and_structured_results_map_to_tackle_outputs() {
    let fx = Fixture::start(vec![(
        "ev",
        ServerConfig::local(node_server("server-everything")),
    )]);
    fx.ready().await;
    // The server adds a tool once the handshake is done and says so (`tools/list_changed`).
    fx.wait_for("ev", |s| {
        s.tools
            .iter()
            .any(|t| t.name == "ev_simulate-research-query")
    })
    .await;
    let status = fx.connected("ev");
    assert!(status.skipped.is_empty(), "{:?}", status.skipped);
    let snapshot = fx.snapshot();
    for name in fx.names() {
        tackle_tool_core::validate_name(&name).unwrap();
    }

    let echo = settle(&snapshot, "ev_echo", json!({"message": "hello"})).await;
    assert_eq!(text(&echo), "Echo: hello");

    let image = settle(&snapshot, "ev_get-tiny-image", json!({})).await;
    let ResultValue::Content(parts) = image.result() else {
        panic!("{:?}", image.result());
    };
    assert!(
        parts
            .iter()
            .any(|p| matches!(p, OutputContent::File { mime, uri, .. }
            if mime == "image/png" && uri.starts_with("data:image/png;base64,iVBOR"))),
        "{parts:?}"
    );

    let resource = settle(&snapshot, "ev_get-resource-reference", json!({})).await;
    let all = format!("{:?}", resource.result());
    assert!(all.contains("Resource demo://resource/"), "{all}");

    let structured = settle(
        &snapshot,
        "ev_get-structured-content",
        json!({"location": "New York"}),
    )
    .await;
    assert!(!structured.is_error(), "{:?}", structured.result());
    let value = &structured.output().unwrap().structured;
    assert!(value.get("temperature").is_some(), "{value}");

    // Its input schema is enforced before anything is sent.
    let bad = settle(&snapshot, "ev_get-sum", json!({"a": "one", "b": 2})).await;
    assert!(bad.is_error());
    assert!(
        text(&bad).starts_with("Invalid tool input"),
        "{}",
        text(&bad)
    );
    let sum = settle(&snapshot, "ev_get-sum", json!({"a": 1, "b": 2})).await;
    assert!(text(&sum).contains('3'), "{}", text(&sum));
}
