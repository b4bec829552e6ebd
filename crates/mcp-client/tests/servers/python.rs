//! A server written with the official Python SDK (`MCPServer`), in the test's directory: its
//! results, its names, its list changes, and what happens when it is killed.

use std::time::Duration;

use serde_json::json;
use tackle_mcp_client::{ServerConfig, State};

use super::support::{Fixture, python, settle, text};

const SERVER: &str = r#"
import os, sys
from mcp.server.mcpserver import MCPServer, Context

with open(sys.argv[1], "a") as f:
    f.write(f"{os.getpid()}\n")

srv = MCPServer("py")

@srv.tool()
def ping(word: str) -> str:
    """Answers pong and the word."""
    return f"pong {word}"

@srv.tool()
def lines(count: int) -> str:
    """count numbered lines."""
    return "".join(f"line {i} of a long result\n" for i in range(count))

@srv.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("it broke on purpose")

@srv.tool(name="t" * 200)
def long_name() -> str:
    return "long"

@srv.tool(name="a/b.c")
def odd() -> str:
    return "odd"

def grown() -> str:
    return "grown"

@srv.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `grown` and says so."""
    srv.add_tool(grown, name="grown")
    await ctx.session.send_tool_list_changed()
    return "grew"

srv.run()
"#;

/// The script in `dir`, run with a file collecting the pid of each start.
fn python_server(dir: &std::path::Path) -> ServerConfig {
    std::fs::write(dir.join("server.py"), SERVER).unwrap();
    ServerConfig::local(vec![
        python(),
        dir.join("server.py").display().to_string(),
        dir.join("pids").display().to_string(),
    ])
    .with_timeout(Duration::from_secs(60))
}

fn pids(dir: &std::path::Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("pids"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

fn start() -> Fixture {
    let dir = tempfile::TempDir::new().unwrap();
    let config = python_server(dir.path());
    let mut fx = Fixture::start(vec![("py", config)]);
    // The script lives in the fixture's directory from now on.
    fx.dir = dir;
    fx
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn its_tools_register_as_one_batch_with_fitted_names_and_settle() {
    let fx = start();
    fx.ready().await;
    let status = fx.connected("py");
    let names = fx.names();
    for name in ["py_ping", "py_lines", "py_fail", "py_a_b_c", "py_grow"] {
        assert!(names.contains(name), "{name} missing from {names:?}");
    }
    // 200 characters: cut to 64 with a stable hash; the reverse map calls the original.
    let long = status
        .tools
        .iter()
        .find(|t| t.original == "t".repeat(200))
        .unwrap();
    assert_eq!(long.name.len(), 64, "{}", long.name);
    let snapshot = fx.snapshot();
    assert_eq!(
        text(&settle(&snapshot, &long.name, json!({})).await),
        "long"
    );
    assert_eq!(text(&settle(&snapshot, "py_a_b_c", json!({})).await), "odd");

    let pong = settle(&snapshot, "py_ping", json!({"word": "hi"})).await;
    assert!(!pong.is_error());
    assert_eq!(text(&pong), "pong hi");

    // The input schema is checked at settle: the server never sees a bad input.
    let bad = settle(&snapshot, "py_ping", json!({"word": 5, "extra": 1})).await;
    assert!(bad.is_error());
    assert!(
        text(&bad).starts_with("Invalid tool input"),
        "{}",
        text(&bad)
    );

    // isError is a failure the model reads.
    let failed = settle(&snapshot, "py_fail", json!({})).await;
    assert!(failed.is_error());
    assert!(
        text(&failed).contains("Error executing tool fail"),
        "{}",
        text(&failed)
    );

    // The gate saw each call under its registered name and the server's own name.
    let seen = fx.gate.seen.lock().unwrap().clone();
    assert!(
        seen.contains(&("py_ping".to_owned(), "ping".to_owned(), true)),
        "{seen:?}"
    );
    assert!(
        !seen
            .iter()
            .any(|(_, tool, _)| tool == "ping" && seen.len() > 10)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_change_registers_a_fresh_batch() {
    let fx = start();
    fx.ready().await;
    let before = fx.snapshot();
    assert!(!before.contains("py_grown"));
    assert_eq!(text(&settle(&before, "py_grow", json!({})).await), "grew");
    fx.wait_for("py", |s| s.tools.iter().any(|t| t.name == "py_grown"))
        .await;
    let after = fx.snapshot();
    assert_eq!(text(&settle(&after, "py_grown", json!({})).await), "grown");
    // The old snapshot's tools were re-registered: its calls are stale, never misrouted.
    let stale = settle(&before, "py_ping", json!({"word": "x"})).await;
    assert_eq!(text(&stale), "Stale tool call: py_ping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_drops_its_batch_and_reconnects_with_a_fresh_one() {
    let fx = start();
    fx.ready().await;
    fx.connected("py");
    let before = fx.snapshot();
    let first = pids(fx.dir.path());
    assert_eq!(first.len(), 1);
    let killed = std::process::Command::new("kill")
        .args(["-9", &first[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // The batch goes with the connection; the supervisor starts the server again.
    fx.wait_for("py", |s| s.connections >= 2 && s.state == State::Connected)
        .await;
    assert_eq!(pids(fx.dir.path()).len(), 2);
    let status = fx.status("py");
    assert!(
        status
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("closed the connection")),
        "{status:?}"
    );
    let stale = settle(&before, "py_ping", json!({"word": "x"})).await;
    assert_eq!(text(&stale), "Stale tool call: py_ping");
    let fresh = settle(&fx.snapshot(), "py_ping", json!({"word": "again"})).await;
    assert_eq!(text(&fresh), "pong again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_result_is_bounded_and_saved_whole() {
    let fx = start();
    fx.ready().await;
    // About 3 MB: under the transport's message limit, far over the model's budget.
    let settled = settle(&fx.snapshot(), "py_lines", json!({"count": 100_000})).await;
    assert!(!settled.is_error());
    assert!(settled.truncated());
    // The text, and the SDK's structured copy of it (`{"result": ...}`), each saved whole.
    assert!(!settled.references().is_empty());
    assert!(
        text(&settled).len() <= 50 * 1024,
        "{}",
        text(&settled).len()
    );
    assert!(text(&settled).contains("line 99999 of a long result"));
}

/// The process's peak resident memory, in KiB.
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_of_100_mb_comes_back_at_once_bounded_and_saved_whole() {
    let dir = tempfile::TempDir::new().unwrap();
    // A timeout the answer must come well before: it is not what ends the call.
    let config = python_server(dir.path()).with_timeout(Duration::from_secs(300));
    let fx = Fixture::start(vec![("py", config)]);
    fx.ready().await;
    fx.connected("py");
    let before = peak_kib();
    let started = std::time::Instant::now();
    // 4 million lines of 25 bytes: 100 MB in one JSON-RPC message, over rmcp's 16 MiB.
    let settled = settle(&fx.snapshot(), "py_lines", json!({"count": 4_000_000})).await;
    let took = started.elapsed();
    let grown = peak_kib().saturating_sub(before);
    let shown = text(&settled);
    assert!(took < Duration::from_secs(120), "took {took:?}");
    // The SDK declares an output schema (`{"result": ...}`) whose value was in the message
    // too: the call is a failure the model reads, with the text's ends and where it is.
    assert!(settled.is_error(), "{shown}");
    assert!(
        shown.ends_with("output schema requires could not be kept.]"),
        "{shown}"
    );
    assert!(shown.len() <= 50 * 1024, "{}", shown.len());
    assert!(
        shown.starts_with("line 0 of a long result\nline 1 of"),
        "{}",
        &shown[..200]
    );
    assert!(
        shown.contains("line 3999999 of a long result\n["),
        "{}",
        &shown[shown.len() - 300..]
    );
    let at = shown.find("tool-output://").expect("a reference");
    let reference: String = shown[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, ':' | '/' | '_' | '-'))
        .collect();
    let reference = tackle_output_store::OutputRef::parse(&reference).expect(&reference);
    // The saved text: its lines as the server wrote them (the middle beyond the spill cap is
    // recorded as dropped, its ends kept).
    let limits = tackle_output_store::PageLimits::new(2, 4096, 12);
    let first = fx.store.read_page(&reference, 1, limits).unwrap();
    assert_eq!(first.total_lines, 4_000_000);
    assert_eq!(
        first.lines,
        ["line 0 of a long result", "line 1 of a long result"]
    );
    let last = fx.store.read_page(&reference, 4_000_000, limits).unwrap();
    assert_eq!(last.lines, ["line 3999999 of a long result"]);
    // Nothing near the message's size was held.
    assert!(grown < 48 * 1024, "peak memory grew by {grown} KiB");
    eprintln!("100 MB answer: {took:?}, peak memory grew by {grown} KiB");
    // The connection survives: the next call works.
    let pong = settle(&fx.snapshot(), "py_ping", json!({"word": "after"})).await;
    assert_eq!(text(&pong), "pong after");
}
