//! Servers that misbehave: invalid schemas, a builtin's name, silence, a missing program.
//! None of them keeps another server from working.

use std::time::{Duration, Instant};

use serde_json::json;
use tackle_mcp_client::{ServerConfig, State};

use super::support::{Fixture, python, settle, text};

/// A server speaking raw JSON-RPC on stdio: one good tool, one whose schema is not a schema,
/// one whose schema points at the network, and one named so that it would shadow a builtin.
const RAW: &str = r#"
import json, sys
tools = [
    {"name": "good", "description": "Answers ok.", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "broken", "inputSchema": {"type": "object", "properties": {"x": {"type": "nonsense"}}}},
    {"name": "remote", "inputSchema": {"type": "object", "properties": {"x": {"$ref": "https://example.invalid/s.json"}}}},
    {"name": "patch", "inputSchema": {"type": "object"}},
]
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "raw", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": tools}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "ok " + msg["params"]["name"]}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

/// Reads its input and never answers.
const SILENT: &str = "import sys\nfor _ in sys.stdin:\n    pass\n";

fn script(dir: &std::path::Path, name: &str, body: &str) -> Vec<String> {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    vec![python(), path.display().to_string()]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tools_are_skipped_and_reported_and_silent_or_missing_servers_fail_alone() {
    let dir = tempfile::TempDir::new().unwrap();
    let started = Instant::now();
    let fx = Fixture::start(vec![
        // Named `apply`, its tool `patch` would be `apply_patch`, a builtin.
        (
            "apply",
            ServerConfig::local(script(dir.path(), "raw.py", RAW)),
        ),
        (
            "silent",
            ServerConfig::local(script(dir.path(), "silent.py", SILENT))
                .with_timeout(Duration::from_millis(1500)),
        ),
        (
            "missing",
            ServerConfig::local(vec!["/nonexistent/mcp-server".to_owned()]),
        ),
    ]);
    fx.ready().await;
    // The servers were tried side by side: the silent one's timeout did not hold up the rest.
    assert!(started.elapsed() < Duration::from_secs(45));

    let status = fx.connected("apply");
    let registered: Vec<_> = status.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(registered, ["apply_good"]);
    let skipped: Vec<_> = status
        .skipped
        .iter()
        .map(|s| (s.original.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(skipped.len(), 3, "{skipped:?}");
    assert!(skipped[0].0 == "broken" && skipped[0].1.starts_with("invalid schema"));
    assert!(skipped[1].0 == "remote" && skipped[1].1.starts_with("invalid schema"));
    assert_eq!(
        skipped[2],
        (
            "patch",
            "its name apply_patch would shadow the builtin apply_patch"
        )
    );
    let ok = settle(&fx.snapshot(), "apply_good", json!({})).await;
    assert_eq!(text(&ok), "ok good");

    let silent = fx.status("silent");
    assert_eq!(silent.state, State::Failed);
    assert_eq!(
        silent.last_error.as_deref(),
        Some("no answer within 1500 ms")
    );
    let missing = fx.status("missing");
    assert_eq!(missing.state, State::Failed);
    assert!(
        missing
            .last_error
            .as_deref()
            .is_some_and(|e| e.starts_with("could not start /nonexistent/mcp-server")),
        "{missing:?}"
    );
    assert_eq!(fx.names().len(), 1);
}
