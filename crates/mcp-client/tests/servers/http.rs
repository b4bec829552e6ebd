//! A remote server over streamable HTTP: the "everything" server's HTTP transport on loopback.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::json;
use tackle_mcp_client::{ServerConfig, Transport};

use super::support::{Fixture, node_server, settle, text};

/// The server process, killed when the test ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_server_s_tools_settle_over_streamable_http() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let command = node_server("server-everything");
    let mut child = Command::new(&command[0])
        .arg(&command[1])
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let server = Killed(child);
    // It says when it listens; everything after is drained so it never blocks on a pipe.
    let mut lines = BufReader::new(stderr).lines();
    for line in lines.by_ref() {
        if line.unwrap().contains("listening on port") {
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));

    let mut config = ServerConfig::remote(format!("http://127.0.0.1:{port}/mcp"));
    if let Transport::Remote { headers, .. } = &mut config.transport {
        headers.insert("Authorization".to_owned(), "Bearer not-checked".to_owned());
        headers.insert("X-Tackle-Test".to_owned(), "1".to_owned());
    }
    let fx = Fixture::start(vec![("web", config)]);
    fx.ready().await;
    fx.connected("web");
    let echo = settle(&fx.snapshot(), "web_echo", json!({"message": "over http"})).await;
    assert_eq!(text(&echo), "Echo: over http");
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_speaking_only_legacy_sse_is_reported_as_such() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let command = node_server("server-everything");
    let mut child = Command::new(&command[0])
        .arg(&command[1])
        .arg("sse")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let server = Killed(child);
    let mut lines = BufReader::new(stderr).lines();
    for line in lines.by_ref() {
        if line.unwrap().contains("running on port") {
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));

    let url = format!("http://127.0.0.1:{port}/sse");
    let fx = Fixture::start(vec![(
        "old",
        ServerConfig::remote(url.clone()).with_timeout(std::time::Duration::from_secs(30)),
    )]);
    fx.ready().await;
    let status = fx.status("old");
    assert_eq!(status.state, tackle_mcp_client::State::Failed, "{status:?}");
    let error = status.last_error.unwrap();
    assert!(
        error.starts_with(&format!(
            "the server at {url} speaks only the legacy HTTP+SSE transport"
        )),
        "{error}"
    );
    drop(server);
}
