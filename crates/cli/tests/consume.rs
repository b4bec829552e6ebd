//! Consuming MCP servers: `tackle mcp list|tools`, a call of a server's tool, and `tackle
//! serve` re-exporting the tools of a consumed `tackle serve`.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::Workspace;

const ANSWER: Duration = Duration::from_secs(120);

/// The outer workspace's user configuration: the server `inner` is `tackle serve` on a second
/// Location (with its own home, so it does not read this configuration and start itself).
fn consuming(outer: &Workspace, inner: &Workspace, extra: Value) {
    let mut servers = json!({
        "inner": {
            "type": "local",
            "command": [
                env!("CARGO_BIN_EXE_tackle"), "--data-dir", inner.data.path(),
                "serve", "--dir", inner.dir.path(), "--ask", "allow-once"
            ],
            "environment": {"HOME": inner.data.path()},
            "timeout": 60000
        }
    });
    if let (Some(servers), Value::Object(extra)) = (servers.as_object_mut(), extra) {
        servers.extend(extra);
    }
    let config = json!({"mcp": servers, "permission": {"inner_*": "allow"}});
    let dir = outer.data.path().join(".config/tackle");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tackle.json"), config.to_string()).unwrap();
}

fn pair() -> (Workspace, Workspace) {
    let outer = Workspace::new();
    let inner = Workspace::new();
    inner.write("hello.txt", "hello from the inner Location\n");
    (outer, inner)
}

#[test]
fn mcp_list_and_tools_show_each_server_and_a_failing_one_leaves_the_rest() {
    let (outer, inner) = pair();
    consuming(
        &outer,
        &inner,
        json!({"missing": {"type": "local", "command": ["/nonexistent/server"]}}),
    );
    let output = outer
        .tackle(&["mcp", "list"])
        .timeout(ANSWER)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    let inner_line = stdout.lines().find(|l| l.starts_with("inner")).unwrap();
    assert!(inner_line.contains("connected"), "{stdout}");
    let missing = stdout.lines().find(|l| l.starts_with("missing")).unwrap();
    assert!(
        missing.contains("failed") && missing.contains("could not start /nonexistent/server"),
        "{stdout}"
    );

    let output = outer
        .tackle(&["mcp", "tools", "inner"])
        .timeout(ANSWER)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(
        stdout
            .lines()
            .any(|l| l.split_whitespace().eq(["inner_read", "read"])),
        "{stdout}"
    );

    let output = outer
        .tackle(&["mcp", "tools", "nope"])
        .timeout(ANSWER)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn a_call_of_a_consumed_tool_settles_through_tackle() {
    let (outer, inner) = pair();
    consuming(&outer, &inner, json!({}));
    let output = outer
        .tackle(&["call", "inner_read", r#"{"path": "hello.txt"}"#])
        .timeout(ANSWER)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(stdout.contains("hello from the inner Location"), "{stdout}");
}

#[test]
fn tackle_serve_re_exports_the_consumed_servers_tools() {
    let (outer, inner) = pair();
    consuming(&outer, &inner, json!({}));
    let mut child = Command::new(env!("CARGO_BIN_EXE_tackle"))
        .arg("--data-dir")
        .arg(outer.data.path())
        .args(["serve", "--dir"])
        .arg(outer.dir.path())
        .env("HOME", outer.data.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("TACKLE_MCP_DEPTH")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Owns standard input: dropping it ends the session.
    let mut send = move |message: Value| {
        stdin.write_all(message.to_string().as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    // The answer to `id`; `u64::MAX`: the next notification.
    let mut answer = |id: u64| loop {
        let message: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if message["id"] == id || (id == u64::MAX && message.get("id").is_none()) {
            return message;
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    answer(0);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // The first catalog waits a little for the consumed server; a slower start is announced
    // as a catalog change, after which the list has its tools.
    let names = |listed: &Value| -> Vec<String> {
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let mut listed = names(&answer(1));
    let mut id = 10;
    while !listed.iter().any(|n| n == "inner_read") {
        answer(u64::MAX); // returns at the next message without an id: the notification
        id += 1;
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        listed = names(&answer(id));
    }
    assert!(listed.iter().any(|n| n == "read"), "{listed:?}");
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "inner_read", "arguments": {"path": "hello.txt"}}}));
    let called = answer(2);
    assert_eq!(called["result"]["isError"], false, "{called}");
    assert!(
        called.to_string().contains("hello from the inner Location"),
        "{called}"
    );
    drop(send);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// Whether a process runs `command` (a slow server below; each test has its own).
fn slow_server_runs(command: &[u8]) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .any(|entry| std::fs::read(entry.path().join("cmdline")).is_ok_and(|cmd| cmd == command))
}

#[test]
fn tackle_tools_does_not_wait_for_a_slow_server_and_names_it() {
    let (outer, inner) = pair();
    // It never answers the handshake; its timeout is a minute.
    consuming(
        &outer,
        &inner,
        json!({"slow": {"type": "local", "command": ["sleep", "613"], "timeout": 60000}}),
    );
    let started = std::time::Instant::now();
    let output = outer.tackle(&["tools"]).timeout(ANSWER).output().unwrap();
    let took = started.elapsed();
    assert!(output.status.success(), "{output:?}");
    assert!(took < Duration::from_secs(40), "took {took:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("MCP server slow is still connecting; its tools are not listed"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.lines().any(|l| l.starts_with("read")), "{stdout}");
    // The slow server went with tackle.
    let stopped = std::time::Instant::now();
    while slow_server_runs(b"sleep\x00613\x00") {
        assert!(
            stopped.elapsed() < Duration::from_secs(10),
            "sleep 613 still runs"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn tackle_serve_answers_its_first_list_without_waiting_for_a_slow_server() {
    let (outer, inner) = pair();
    consuming(
        &outer,
        &inner,
        json!({"slow": {"type": "local", "command": ["sleep", "614"], "timeout": 60000}}),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_tackle"))
        .arg("--data-dir")
        .arg(outer.data.path())
        .args(["serve", "--dir"])
        .arg(outer.dir.path())
        .env("HOME", outer.data.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("TACKLE_MCP_DEPTH")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Owns standard input: dropping it ends the session.
    let mut send = move |message: Value| {
        stdin.write_all(message.to_string().as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    let mut answer = |id: u64| loop {
        let message: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if message["id"] == id {
            return message;
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    answer(0);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let started = std::time::Instant::now();
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let listed = answer(1);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(40), "took {took:?}");
    assert!(listed.to_string().contains("\"read\""), "{listed}");
    drop(send);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let stopped = std::time::Instant::now();
    while slow_server_runs(b"sleep\x00614\x00") {
        assert!(
            stopped.elapsed() < Duration::from_secs(10),
            "sleep 614 still runs"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
