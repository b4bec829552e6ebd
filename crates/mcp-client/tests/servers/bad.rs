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

/// A raw server whose one tool (no output schema) first sends a 20 MB notification, then
/// answers with 20 MB of escaped text in two parts.
const HUGE: &str = r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "huge", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "huge", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        noise = {"jsonrpc": "2.0", "method": "notifications/message",
                 "params": {"level": "info", "data": "n" * 20_000_000}}
        print(json.dumps(noise), flush=True)
        text = "".join(f"é line {i} \"quoted\"\n" for i in range(1_000_000))
        result = {"content": [{"type": "text", "text": text}, {"type": "text", "text": "the end"}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_message_limit_is_a_bounded_result_at_once() {
    let dir = tempfile::TempDir::new().unwrap();
    let fx = Fixture::start(vec![(
        "big",
        ServerConfig::local(script(dir.path(), "huge.py", HUGE))
            .with_timeout(Duration::from_secs(300)),
    )]);
    fx.ready().await;
    fx.connected("big");
    let started = Instant::now();
    let settled = settle(&fx.snapshot(), "big_huge", json!({})).await;
    let shown = text(&settled);
    assert!(started.elapsed() < Duration::from_secs(120));
    assert!(!settled.is_error(), "{shown}");
    assert!(
        shown.starts_with("é line 0 \"quoted\"\né line 1"),
        "{shown}"
    );
    // The parts joined by a newline, as the model reads parts.
    assert!(
        shown.ends_with("é line 999999 \"quoted\"\n\nthe end"),
        "{shown}"
    );
    let at = shown.find("tool-output://").unwrap();
    let reference: String = shown[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '/' | '_' | '-'))
        .collect();
    let reference = tackle_output_store::OutputRef::parse(&reference).unwrap();
    let limits = tackle_output_store::PageLimits::new(2, 4096, 12);
    let page = fx.store.read_page(&reference, 500_000, limits).unwrap();
    assert_eq!(
        page.lines,
        ["é line 499999 \"quoted\"", "é line 500000 \"quoted\""]
    );
    assert_eq!(page.total_lines, 1_000_002);
    let end = fx.store.read_page(&reference, 1_000_002, limits).unwrap();
    assert_eq!(end.lines, ["the end"]);
}
