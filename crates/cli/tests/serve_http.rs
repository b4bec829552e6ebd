//! `tackle serve --http` driven by raw HTTP/1.1 requests: what a browser page or another
//! local process can send that the Python SDK never would (a foreign `Host`, a flood of
//! sessions).

use std::io::{Read as _, Write as _};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::Workspace;

/// Generous: two loaded cores.
const ANSWER: Duration = Duration::from_secs(60);

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + ANSWER;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The bearer token of [`HttpServer`].
const HTTP_TOKEN: &str = "s3cret-token-for-the-host-test";

/// `tackle serve --http` on a free loopback port, with [`HTTP_TOKEN`]; killed on drop.
struct HttpServer {
    child: Child,
    port: u16,
    ws: Workspace,
}

impl HttpServer {
    fn start() -> Self {
        let ws = Workspace::new();
        let token = ws.data.path().join("token");
        std::fs::write(&token, HTTP_TOKEN).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(env!("CARGO_BIN_EXE_tackle"))
            .arg("--data-dir")
            .arg(ws.data.path())
            .arg("serve")
            .arg("--dir")
            .arg(ws.dir.path())
            .args([
                "--ask",
                "allow-once",
                "--http",
                &format!("127.0.0.1:{port}"),
            ])
            .arg("--token-file")
            .arg(&token)
            .env("HOME", ws.data.path())
            .env_remove("XDG_CONFIG_HOME")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = Self { child, port, ws };
        wait_for("tackle serve --http to listen", || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        server
    }

    /// POSTs `body` to `/mcp` with `host` as `Host` (and `session` as `Mcp-Session-Id`);
    /// the status code, the session id answered, and the body read until `until` shows in it
    /// or the server ends it (empty `until`: the head only).
    fn post(
        &self,
        host: &str,
        session: Option<&str>,
        body: &Value,
        until: &str,
    ) -> (u16, Option<String>, String) {
        let body = body.to_string();
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(ANSWER)).unwrap();
        let session = session.map_or(String::new(), |id| format!("Mcp-Session-Id: {id}\r\n"));
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {HTTP_TOKEN}\r\n\
             Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
             MCP-Protocol-Version: 2025-06-18\r\n{session}Content-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let text = String::from_utf8_lossy(&seen);
            if let Some((head, rest)) = text.split_once("\r\n\r\n")
                && (until.is_empty() || rest.contains(until))
            {
                let status = head
                    .split(' ')
                    .nth(1)
                    .and_then(|code| code.parse().ok())
                    .unwrap_or_else(|| panic!("no status line: {head}"));
                let id = head.lines().find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("mcp-session-id")
                        .then(|| value.trim().to_owned())
                });
                return (status, id, rest.to_owned());
            }
            match stream.read(&mut buf) {
                Ok(0) => {
                    let head = text.split("\r\n").next().unwrap_or_default().to_owned();
                    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok());
                    return (status.unwrap_or(0), None, text.into_owned());
                }
                Ok(n) => seen.extend_from_slice(&buf[..n]),
                Err(err) => panic!("reading the answer: {err}"),
            }
        }
    }

    fn initialize(&self, host: &str) -> (u16, Option<String>) {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}});
        let (status, id, _) = self.post(host, None, &init, "");
        (status, id)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn http_refuses_a_host_that_is_not_loopback_or_the_listen_address() {
    let server = HttpServer::start();
    let port = server.port;
    for evil in ["evil.example", &format!("evil.example:{port}"), "10.0.0.1"] {
        let (status, id) = server.initialize(evil);
        assert_eq!((status, id), (403, None), "{evil}");
    }
    let (status, session) = server.initialize(&format!("localhost:{port}"));
    assert_eq!(status, 200);
    let session = session.expect("no session id");
    let host = format!("127.0.0.1:{port}");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(server.post(&host, Some(&session), &initialized, "").0, 202);
    // A page that rebinds its own name to 127.0.0.1 reaches the server with its own Host:
    // its call runs nothing, even in a live session.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": "touch pwned"}}});
    let (status, _, _) = server.post(&format!("evil.example:{port}"), Some(&session), &call, "");
    assert_eq!(status, 403);
    let pwned = server.ws.dir.path().join("pwned");
    assert!(!pwned.exists());
    // The same call with the loopback Host runs.
    let (status, _, body) = server.post(&host, Some(&session), &call, "\"result\"");
    assert_eq!(status, 200, "{body}");
    wait_for("the allowed call to run", || pwned.exists());
}

#[test]
fn http_refuses_more_than_64_sessions() {
    let server = HttpServer::start();
    let host = format!("127.0.0.1:{}", server.port);
    let mut sessions = std::collections::HashSet::new();
    for n in 0..tackle_mcp::http::MAX_SESSIONS {
        let (status, id) = server.initialize(&host);
        assert_eq!(status, 200, "session {n}");
        sessions.insert(id.expect("no session id"));
    }
    assert_eq!(sessions.len(), 64);
    let (status, id) = server.initialize(&host);
    assert_eq!((status, id), (503, None));
    // The live sessions go on.
    let session = sessions.iter().next().unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(server.post(&host, Some(session), &initialized, "").0, 202);
}
