//! Opening one connection: the process or HTTP endpoint, and the MCP handshake.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use process_wrap::tokio::{CommandWrap, ProcessGroup};
use rmcp::ServiceExt as _;
use rmcp::handler::client::ClientHandler;
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::AsyncReadExt as _;
use tokio::sync::mpsc;

use crate::config::{ServerConfig, Transport};
use crate::error::McpClientError;
use crate::nesting;
use crate::oversize::Spills;
use crate::stdio::ChildTransport;

/// How much of a server's standard error is kept to explain why it went away.
const STDERR_TAIL: usize = 2048;

/// The client side of one connection: it only forwards `tools/list_changed`.
pub(crate) struct Handler {
    list_changed: mpsc::UnboundedSender<()>,
}

impl ClientHandler for Handler {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        // The supervisor may be gone already; then nobody needs to hear it.
        let _ = self.list_changed.send(());
        std::future::ready(())
    }
}

/// A live connection.
pub(crate) struct Connection {
    pub(crate) service: RunningService<RoleClient, Handler>,
    pub(crate) list_changed: mpsc::UnboundedReceiver<()>,
    /// The end of the server's standard error (local servers).
    pub(crate) stderr: Arc<Mutex<String>>,
    /// The answers too large for one message (local servers), until their calls take them.
    pub(crate) spills: Arc<Spills>,
}

impl Connection {
    /// The end of what the server wrote to its standard error, trimmed.
    pub(crate) fn tail(stderr: &Mutex<String>) -> String {
        stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .trim()
            .to_owned()
    }
}

/// Starts the server and completes the handshake (the caller bounds it with the timeout).
pub(crate) async fn connect(
    name: &str,
    config: &ServerConfig,
    depth: u32,
) -> Result<Connection, McpClientError> {
    let spills = Arc::new(Spills::default());
    let (tx, list_changed) = mpsc::unbounded_channel();
    let handler = Handler { list_changed: tx };
    let stderr = Arc::new(Mutex::new(String::new()));
    let service = match &config.transport {
        Transport::Local {
            command,
            base_env,
            environment,
            cwd,
        } => {
            let Some((program, args)) = command.split_first() else {
                return Err(McpClientError::Config("the command is empty".to_owned()));
            };
            let mut cmd = tokio::process::Command::new(program);
            if let Some(base) = base_env {
                cmd.env_clear().envs(base.iter().map(|(k, v)| (k, v)));
            }
            // Last, so neither the base nor the configured environment can lower it.
            cmd.args(args)
                .envs(environment)
                .env(nesting::DEPTH_VARIABLE, nesting::child_depth(depth));
            if let Some(cwd) = cwd {
                cmd.current_dir(cwd);
            }
            // Its own process group, so stopping it also stops what it started (`npx` runs
            // the server as a child).
            let mut wrapped = CommandWrap::from(cmd);
            wrapped.wrap(ProcessGroup::leader());
            wrapped
                .command_mut()
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let spawn_error = |source| McpClientError::Spawn {
                command: program.clone(),
                source,
            };
            let child = wrapped.spawn().map_err(spawn_error)?;
            let (transport, err) =
                ChildTransport::new(child, name, Arc::clone(&spills)).map_err(spawn_error)?;
            if let Some(mut err) = err {
                let tail = Arc::clone(&stderr);
                tokio::spawn(async move {
                    let mut buf = vec![0; 4096];
                    while let Ok(n) = err.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
                        tail.push_str(&String::from_utf8_lossy(&buf[..n]));
                        if tail.len() > STDERR_TAIL {
                            let mut cut = tail.len() - STDERR_TAIL;
                            while !tail.is_char_boundary(cut) {
                                cut += 1;
                            }
                            tail.drain(..cut);
                        }
                    }
                });
            }
            handler
                .serve(transport)
                .await
                .map_err(|err| McpClientError::Protocol(err.to_string()))?
        }
        Transport::Remote { url, headers } => {
            let mut custom = HashMap::new();
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            for (key, value) in headers {
                if key.eq_ignore_ascii_case("authorization")
                    && let Some(token) = value.strip_prefix("Bearer ")
                {
                    config = config.auth_header(token);
                    continue;
                }
                let name = http::HeaderName::try_from(key.as_str())
                    .map_err(|err| McpClientError::Config(format!("header {key}: {err}")))?;
                let value = http::HeaderValue::try_from(value.as_str())
                    .map_err(|err| McpClientError::Config(format!("header {key}: {err}")))?;
                custom.insert(name, value);
            }
            let transport =
                StreamableHttpClientTransport::from_config(config.custom_headers(custom.clone()));
            match handler.serve(transport).await {
                Ok(service) => service,
                Err(err) => {
                    let error = err.to_string();
                    return Err(if legacy_sse(url, custom).await {
                        McpClientError::LegacySse(url.clone())
                    } else {
                        McpClientError::Protocol(error)
                    });
                }
            }
        }
    };
    Ok(Connection {
        service,
        list_changed,
        stderr,
        spills,
    })
}

/// True when `url` answers a GET with an event stream whose first event is `endpoint`: the
/// HTTP+SSE transport of protocol versions before 2025-03-26, which rmcp (so this client) does
/// not implement; only streamable HTTP is. Asked only after the handshake failed, to say so.
async fn legacy_sse(url: &str, headers: HashMap<http::HeaderName, http::HeaderValue>) -> bool {
    /// Enough for the first event of any such server.
    const FIRST_EVENT: usize = 4096;
    let probe = async {
        let client = reqwest::Client::builder().build().ok()?;
        let mut request = client
            .get(url)
            .header(http::header::ACCEPT, "text/event-stream");
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let mut response = request.send().await.ok()?;
        let stream = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !response.status().is_success() || !stream {
            return Some(false);
        }
        let mut seen = Vec::new();
        while seen.len() < FIRST_EVENT {
            let chunk = response.chunk().await.ok()??;
            seen.extend_from_slice(&chunk);
            let text = String::from_utf8_lossy(&seen);
            if text.contains("\n\n") || text.contains("\r\n\r\n") {
                break;
            }
        }
        let text = String::from_utf8_lossy(&seen);
        Some(text.lines().any(|line| line.trim() == "event: endpoint"))
    };
    tokio::time::timeout(std::time::Duration::from_secs(5), probe)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}
