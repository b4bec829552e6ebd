//! A scripted HTTP/1.1 server on a loopback address for the webfetch and websearch tests.
//!
//! Each connection serves one request: the server records it, asks the handler for a script
//! of raw writes and pauses, plays it and closes the connection. Raw writes let a test lie
//! about Content-Length, stall in the middle of a body or stream more than a cap.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) method: String,
    /// The request target (path and query).
    pub(crate) target: String,
    /// Header names lower-cased, in order.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Recorded {
    /// The first value of header `name`.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// One step of a response script.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    Write(Vec<u8>),
    Pause(Duration),
}

type Handler = dyn Fn(&Recorded, usize) -> Vec<Step> + Send + Sync;

/// A running server; it stops when dropped.
pub(crate) struct TestServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TestServer {
    /// Serves on 127.0.0.1; `handler` gets each request and its index (from 0).
    pub(crate) async fn start(
        handler: impl Fn(&Recorded, usize) -> Vec<Step> + Send + Sync + 'static,
    ) -> Self {
        Self::start_on("127.0.0.1", handler).await
    }

    /// Serves on `ip` (any loopback address).
    pub(crate) async fn start_on(
        ip: &str,
        handler: impl Fn(&Recorded, usize) -> Vec<Step> + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind((ip, 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let seen = Arc::clone(&requests);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let handler = Arc::clone(&handler);
                let seen = Arc::clone(&seen);
                tokio::spawn(serve(stream, handler, seen));
            }
        });
        Self {
            addr,
            requests,
            task,
        }
    }

    /// `http://<ip>:<port><path>`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The port.
    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request so far.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

async fn serve(mut stream: TcpStream, handler: Arc<Handler>, seen: Arc<Mutex<Vec<Recorded>>>) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let index = {
        let mut seen = seen.lock().unwrap();
        seen.push(request.clone());
        seen.len() - 1
    };
    for step in handler(&request, index) {
        match step {
            // The client may hang up early (a capped body): that is fine.
            Step::Write(bytes) => {
                if stream.write_all(&bytes).await.is_err() {
                    return;
                }
            }
            Step::Pause(duration) => tokio::time::sleep(duration).await,
        }
    }
    let _ = stream.shutdown().await;
}

async fn read_request(stream: &mut TcpStream) -> Option<Recorded> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let target = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..read]);
    }
    Some(Recorded {
        method,
        target,
        headers,
        body,
    })
}

/// A complete response with `status`, `headers` and `body` (Content-Length is added).
pub(crate) fn respond(
    status: &str,
    headers: &[(&str, &str)],
    body: impl Into<Vec<u8>>,
) -> Vec<Step> {
    let body = body.into();
    let mut head = format!(
        "HTTP/1.1 {status}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(&body);
    vec![Step::Write(bytes)]
}

/// A 200 response of `content_type`.
pub(crate) fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Vec<Step> {
    respond("200 OK", &[("Content-Type", content_type)], body)
}

/// A redirect to `location`.
pub(crate) fn redirect(location: &str) -> Vec<Step> {
    respond("302 Found", &[("Location", location)], "")
}
