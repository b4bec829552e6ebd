//! `tackle serve --http`'s connection limits on a real server on 127.0.0.1, over real sockets:
//! a connection that trickles its headers or says nothing is closed within the header timeout,
//! one over the connection cap is refused at once (and a client gets in once others drop), and
//! a session's streams outlive the timeout.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tackle_host::{Environment, Host};
use tackle_mcp::{AskPolicy, HttpOptions, ServeOptions};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

const TOKEN: &str = "test-token-0123456789";

/// A server on an ephemeral loopback port, stopped when dropped.
struct Server {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
    _dirs: [tempfile::TempDir; 2],
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(limits: impl FnOnce(&mut HttpOptions)) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().to_owned();
    let build = Arc::new(move |location: &Path, asker| {
        Host::builder(location)
            .data_dir(&data_dir)
            .env(Environment::from_vars([
                ("HOME", data_dir.as_os_str()),
                ("PATH", std::ffi::OsStr::new("/usr/bin:/bin")),
            ]))
            .asker(asker)
            .build()
    });
    let mut options = ServeOptions::new(build);
    options.dir = Some(dir.path().to_owned());
    options.ask = AskPolicy::AllowOnce;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut http = HttpOptions::new(addr, TOKEN.to_owned());
    limits(&mut http);
    let task = tokio::spawn(async move {
        tackle_mcp::http::serve_on(listener, options, http)
            .await
            .unwrap();
    });
    Server {
        addr,
        task,
        _dirs: [dir, data],
    }
}

/// How long the connection stays open from now, reading (and dropping) whatever comes;
/// `None` if it is still open after `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> Option<Duration> {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    let drained = async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(within, drained)
        .await
        .ok()
        .map(|()| start.elapsed())
}

/// An authenticated `POST /mcp` carrying `body`, in `session` when given.
async fn post(addr: SocketAddr, body: &serde_json::Value, session: Option<&str>) -> TcpStream {
    let body = body.to_string();
    let session = session.map_or(String::new(), |id| format!("mcp-session-id: {id}\r\n"));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {TOKEN}\r\n\
         content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         {session}content-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    stream
}

/// Reads until the text read holds `needle`; panics after `within`.
async fn read_until(stream: &mut TcpStream, needle: &str, within: Duration) -> String {
    let mut seen = Vec::new();
    let reading = async {
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&seen).contains(needle) {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(
                n > 0,
                "closed before {needle:?}: {}",
                String::from_utf8_lossy(&seen)
            );
            seen.extend_from_slice(&buf[..n]);
        }
    };
    assert!(
        tokio::time::timeout(within, reading).await.is_ok(),
        "no {needle:?} within {within:?}"
    );
    String::from_utf8_lossy(&seen).into_owned()
}

/// Opens an MCP session (initialize, then initialized); returns its id.
async fn open_session(addr: SocketAddr) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "limits-test", "version": "1"}}});
    let mut stream = post(addr, &init, None).await;
    let head = read_until(&mut stream, "serverInfo", Duration::from_secs(10)).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let id = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {head}"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let mut stream = post(addr, &initialized, Some(&id)).await;
    let head = read_until(&mut stream, "\r\n\r\n", Duration::from_secs(10)).await;
    assert!(head.starts_with("HTTP/1.1 202"), "{head}");
    id
}

/// Failed before the fix: both connections stayed open for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_trickles_its_headers_or_says_nothing_is_closed_within_the_timeout() {
    let timeout = Duration::from_millis(500);
    let server = serve(|http| http.header_read_timeout = timeout).await;
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    let mut slow = TcpStream::connect(server.addr).await.unwrap();
    let head = format!("POST /mcp HTTP/1.1\r\nhost: {}\r\nx-pad: ", server.addr);
    slow.write_all(head.as_bytes()).await.unwrap();
    let trickle = tokio::spawn(async move {
        // One byte every 50 ms, never ending the head, until the server closes.
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(5) {
            if slow.write_all(b"a").await.is_err() {
                return Some(started.elapsed());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            let mut probe = [0u8; 64];
            let read = tokio::time::timeout(Duration::from_millis(1), slow.read(&mut probe));
            if let Ok(Ok(0) | Err(_)) = read.await {
                return Some(started.elapsed());
            }
        }
        None
    });
    let silent_open = closed_within(&mut silent, Duration::from_secs(5)).await;
    let slow_open = trickle.await.unwrap();
    for (what, open) in [("silent", silent_open), ("trickling", slow_open)] {
        let open = open.unwrap_or_else(|| panic!("the {what} connection is still open after 5 s"));
        assert!(
            open < timeout + Duration::from_secs(1),
            "the {what} connection stayed open {open:?}"
        );
    }
}

/// Failed before the fix: the connection over the cap was served (it got no 503).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_over_the_cap_is_refused_at_once_and_a_client_gets_in_once_others_drop() {
    let server = serve(|http| {
        http.max_connections = 3;
        http.header_read_timeout = Duration::from_secs(60);
    })
    .await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(TcpStream::connect(server.addr).await.unwrap());
    }
    // The three are accepted in order before the fourth: give the accept loop a moment.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let mut extra = TcpStream::connect(server.addr).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(2), extra.read_to_end(&mut answer))
        .await
        .expect("the connection over the cap is closed at once")
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.ends_with("too many connections\n"), "{answer}");

    drop(held);
    // The server notices the three closed and frees their slots: a client gets in.
    let deadline = Instant::now() + Duration::from_secs(5);
    let id = loop {
        let probe = TcpStream::connect(server.addr).await.unwrap();
        let mut first = [0u8; 12];
        let refused = tokio::time::timeout(Duration::from_millis(200), probe.peek(&mut first))
            .await
            .is_ok_and(|peeked| peeked.is_ok_and(|n| first[..n].starts_with(b"HTTP/1.1 503")));
        drop(probe);
        if !refused {
            break open_session(server.addr).await;
        }
        assert!(Instant::now() < deadline, "no slot was freed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(!id.is_empty());
}

/// A session's event stream and a call's streamed response live longer than the header
/// timeout: it bounds waiting for a request, not a response.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_and_its_streams_outlive_the_header_timeout() {
    let timeout = Duration::from_millis(300);
    let server = serve(|http| http.header_read_timeout = timeout).await;
    let id = open_session(server.addr).await;

    let mut events = TcpStream::connect(server.addr).await.unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nhost: {}\r\nauthorization: Bearer {TOKEN}\r\n\
         accept: text/event-stream\r\nmcp-session-id: {id}\r\n\r\n",
        server.addr
    );
    events.write_all(get.as_bytes()).await.unwrap();
    let head = read_until(&mut events, "\r\n\r\n", Duration::from_secs(10)).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("text/event-stream"), "{head}");

    // A call that answers after several timeouts, its answer streamed on its own request.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "bash", "arguments": {"command": "sleep 1.5; echo slept-well",
        "description": "waits"}}});
    let mut calling = post(server.addr, &call, Some(&id)).await;
    let answer = read_until(&mut calling, "slept-well", Duration::from_secs(20)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    assert_eq!(
        closed_within(&mut events, timeout * 2).await,
        None,
        "the session's event stream was closed"
    );
}
