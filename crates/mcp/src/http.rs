//! `tackle serve --http`: MCP over streamable HTTP, behind a bearer token.
//!
//! rmcp's streamable HTTP service does the protocol and checks `Host` (DNS rebinding),
//! `Origin` (against the allow-list) and the body size; this module listens, and before rmcp
//! sees a request it checks the bearer token (a wrong or missing one is 401 and nothing runs)
//! and the number of live sessions (a new one over the limit is 503).
//!
//! Before any of that, a connection must earn its place: at most [`MAX_CONNECTIONS`] are open at
//! once (one over the cap is answered 503 and closed at once, without a byte read or a task
//! spawned), and a connection must send a whole request head within [`HEADER_READ_TIMEOUT`] of
//! opening, or of its previous response ending, else it is closed. So a client that trickles
//! its headers, or connects and says nothing, holds a slot for a bounded time. A response that
//! streams (a session's event stream, a call's progress) is not bounded by it: hyper starts
//! that clock only while it waits for a request head.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::error::ServeError;
use crate::server::SessionSlot;
use crate::{McpServer, ServeOptions};

/// Largest request body (a JSON-RPC message) accepted.
pub const MAX_BODY_BYTES: usize = 4 << 20;
/// Live sessions at once; a new session over it is refused with 503.
pub const MAX_SESSIONS: usize = 64;
/// Connections open at once; one over it is answered 503 and closed. Room for every session
/// to hold its event stream and a few requests at the same time.
pub const MAX_CONNECTIONS: usize = 4 * MAX_SESSIONS;
/// How long a connection may take to send a request head, counted from its opening or from the
/// end of its previous response (so it also bounds a connection that sends nothing).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The token file's name in the data directory when no `--token-file` is given.
pub const TOKEN_FILE: &str = "mcp-token";

/// Where and how the HTTP server listens.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The address to listen on.
    pub addr: SocketAddr,
    /// The bearer token every request must carry.
    pub token: String,
    /// Browser origins allowed to call (`Origin`); requests without `Origin` pass.
    pub allowed_origins: Vec<String>,
    /// Host names (or `host:port`) accepted in `Host`, besides the loopback names.
    pub allowed_hosts: Vec<String>,
    /// Largest request body.
    pub max_body_bytes: usize,
    /// Live sessions at once.
    pub max_sessions: usize,
    /// Connections open at once.
    pub max_connections: usize,
    /// How long a connection may take to send a request head (see [`HEADER_READ_TIMEOUT`]).
    pub header_read_timeout: Duration,
}

impl HttpOptions {
    /// Options for `addr` and `token` with the default limits, loopback hosts and no browser
    /// origin.
    pub fn new(addr: SocketAddr, token: String) -> Self {
        Self {
            addr,
            token,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_body_bytes: MAX_BODY_BYTES,
            max_sessions: MAX_SESSIONS,
            max_connections: MAX_CONNECTIONS,
            header_read_timeout: HEADER_READ_TIMEOUT,
        }
    }
}

/// A fresh token (256 random bits, hex), written to `<data_dir>/mcp-token` (mode 0600,
/// replacing an older one); returns it and the file.
pub fn generate_token(data_dir: &Path) -> Result<(String, PathBuf), ServeError> {
    let mut random = [0u8; 32];
    getrandom::fill(&mut random).map_err(|err| ServeError::Token(err.to_string()))?;
    let token: String = random.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::create_dir_all(data_dir).map_err(|err| ServeError::Token(err.to_string()))?;
    let path = data_dir.join(TOKEN_FILE);
    let mut file = tempfile::Builder::new()
        .prefix(".mcp-token")
        .tempfile_in(data_dir)
        .map_err(|err| ServeError::Token(err.to_string()))?;
    std::io::Write::write_all(&mut file, token.as_bytes())
        .map_err(|err| ServeError::Token(err.to_string()))?;
    // tempfile creates the file 0600: only this user can read the token.
    file.persist(&path)
        .map_err(|err| ServeError::Token(err.to_string()))?;
    Ok((token, path))
}

/// Reads a token from `file` (surrounding whitespace trimmed; it must not be empty).
pub fn read_token(file: &Path) -> Result<String, ServeError> {
    let text = std::fs::read_to_string(file)
        .map_err(|err| ServeError::Token(format!("{}: {err}", file.display())))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(ServeError::Token(format!("{} is empty", file.display())));
    }
    Ok(token.to_owned())
}

/// Serves MCP over HTTP on `http.addr` until the process is stopped.
pub async fn serve_http(options: ServeOptions, http: HttpOptions) -> Result<(), ServeError> {
    let listener = tokio::net::TcpListener::bind(http.addr)
        .await
        .map_err(|err| ServeError::Listen(err.to_string()))?;
    serve_on(listener, options, http).await
}

/// Serves on an already bound listener (tests bind port 0).
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    options: ServeOptions,
    http: HttpOptions,
) -> Result<(), ServeError> {
    let live = Arc::new(AtomicUsize::new(0));
    let mut config = StreamableHttpServerConfig::default();
    config
        .allowed_hosts
        .extend(http.allowed_hosts.iter().cloned());
    config.allowed_origins = http.allowed_origins.clone();
    config.max_request_body_bytes = http.max_body_bytes;
    // An empty allow-list still checks `Origin`: a browser page may not call at all.
    let config = config.enforce_origin_validation();
    let factory_live = Arc::clone(&live);
    let service = StreamableHttpService::new(
        move || {
            Ok(McpServer::with_slot(
                options.clone(),
                SessionSlot::new(&factory_live),
            ))
        },
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let gate = Arc::new(Gate {
        service,
        token: http.token.clone(),
        live,
        max_sessions: http.max_sessions,
    });
    // The timer is what makes the header timeout take effect; without it hyper ignores it.
    let mut connection = hyper::server::conn::http1::Builder::new();
    connection
        .timer(TokioTimer::new())
        .header_read_timeout(http.header_read_timeout);
    let slots = Arc::new(tokio::sync::Semaphore::new(http.max_connections));
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) => {
                // Out of descriptors, say: pause rather than spin on the same error.
                tracing::warn!(%err, "accept failed");
                tokio::time::sleep(ACCEPT_RETRY).await;
                continue;
            }
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            tracing::debug!(%peer, "connection refused: too many open connections");
            refuse(&stream);
            continue;
        };
        let gate = Arc::clone(&gate);
        let connection = connection.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let gate = Arc::clone(&gate);
                async move { Ok::<_, Infallible>(gate.handle(request).await) }
            });
            if let Err(err) = connection
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(%err, %peer, "connection ended");
            }
            drop(slot);
        });
    }
}

/// The pause after a failed accept.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// What a connection over the cap is told before it is closed.
const TOO_MANY_CONNECTIONS: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
content-type: text/plain\r\ncontent-length: 21\r\nretry-after: 1\r\nconnection: close\r\n\r\n\
too many connections\n";

/// Answers 503 to a connection over the cap, only as far as the socket takes it now (a client
/// that does not read gets nothing and holds nothing); it is closed when dropped.
fn refuse(stream: &tokio::net::TcpStream) {
    let _ = stream.try_write(TOO_MANY_CONNECTIONS);
}

struct Gate {
    service: StreamableHttpService<McpServer, LocalSessionManager>,
    token: String,
    live: Arc<AtomicUsize>,
    max_sessions: usize,
}

type Body = BoxBody<Bytes, Infallible>;

impl Gate {
    async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        if !self.authorized(&request) {
            return plain(
                StatusCode::UNAUTHORIZED,
                "a valid bearer token is required (Authorization: Bearer <token>)",
            );
        }
        let opens_session = !request.headers().contains_key("mcp-session-id");
        if opens_session && self.live.load(Ordering::Acquire) >= self.max_sessions {
            return plain(StatusCode::SERVICE_UNAVAILABLE, "too many MCP sessions");
        }
        self.service.handle(request).await
    }

    fn authorized(&self, request: &Request<Incoming>) -> bool {
        let Some(given) = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
        else {
            return false;
        };
        constant_time_eq(given.trim().as_bytes(), self.token.as_bytes())
    }
}

/// Compares without stopping at the first difference, so timing says nothing of the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(!constant_time_eq(b"", b"a"));
    }

    #[test]
    fn the_refusal_is_a_whole_response() {
        let text = std::str::from_utf8(TOO_MANY_CONNECTIONS).unwrap_or_default();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or_default();
        assert!(head.starts_with("HTTP/1.1 503 "));
        assert!(head.contains(&format!("content-length: {}\r\n", body.len())));
        assert_eq!(body, "too many connections\n");
    }

    #[test]
    fn a_generated_token_is_private_and_readable_back() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
        let (token, path) = generate_token(dir.path()).unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(token.len(), 64);
        let mode = std::fs::metadata(&path)
            .unwrap_or_else(|err| panic!("{err}"))
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(read_token(&path).unwrap_or_default(), token);
    }
}
