//! MCP servers configured for a host: their tools reach the model only through the registry's
//! snapshot and settle, under the permission rules, with the host's bounds.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tackle_host::{Host, HostError, McpState};
use tackle_permission::{AnswerAll, Reply};
use tackle_tool_core::{Call, ResultValue};

use crate::Fixture;

/// A server written with the official Python SDK: `ping`, `env` (one variable of its
/// environment), `echo` and `lines` (many lines), none annotated (so destructive by the protocol's
/// default), and `peek`, marked read-only.
const SERVER: &str = r#"
import os
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
srv = MCPServer("py")

@srv.tool()
def ping(word: str) -> str:
    return f"pong {word}"

@srv.tool()
def env(name: str) -> str:
    return os.environ.get(name, "<unset>")

@srv.tool()
def lines(count: int) -> str:
    return "".join(f"line {i}\n" for i in range(count))

@srv.tool()
def echo(text: str) -> str:
    return text

@srv.tool(annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False))
def peek() -> str:
    return "peeked"

srv.run()
"#;

fn python() -> PathBuf {
    let python =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-venv/bin/python");
    assert!(
        python.exists(),
        "the MCP Python SDK is not installed at {}: run .ci/mcp-clients.sh once",
        python.display()
    );
    python
}

/// The user's configuration with the server `py` and `extra` settings merged in.
fn configure(fx: &Fixture, extra: serde_json::Value) {
    let script = fx.write("server.py", SERVER);
    let mut config = json!({
        "mcp": {"py": {
            "type": "local",
            "command": [python(), script],
            "environment": {"GREETING": "hello {env:WHO}"},
            "timeout": 60000
        }}
    });
    if let (Some(config), serde_json::Value::Object(extra)) = (config.as_object_mut(), extra) {
        config.extend(extra);
    }
    fx.write_user(&config.to_string());
}

async fn host(fx: &Fixture, reply: Reply) -> Host {
    let host = Host::builder(fx.location())
        .data_dir(fx.data.path())
        .env(fx.env())
        .asker(Arc::new(AnswerAll(reply)))
        .build()
        .unwrap();
    tokio::time::timeout(Duration::from_secs(60), host.mcp_ready())
        .await
        .unwrap();
    host
}

fn text(result: ResultValue) -> String {
    match result {
        ResultValue::Text(text) | ResultValue::Error(text) => text,
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_server_s_tools_settle_with_the_permission_rules() {
    let mut fx = Fixture::new();
    fx.var("WHO", "the-whole-wide-world");
    configure(&fx, json!({"permission": {"py_*": "allow"}}));
    let host = host(&fx, Reply::Reject { message: None }).await;
    let status = host.mcp_status();
    assert_eq!(status.len(), 1);
    assert_eq!(status[0].state, McpState::Connected, "{status:?}");
    assert_eq!(status[0].tools.len(), 5);

    let session = host.create_session();
    let pong = session
        .settle(&Call::new("c1", "py_ping", json!({"word": "hi"})))
        .await
        .unwrap();
    assert_eq!(text(pong.into_result()), "pong hi");
    // `{env:WHO}` comes from the host's environment, and is a secret the model never reads.
    let greeting = session
        .settle(&Call::new("c2", "py_env", json!({"name": "GREETING"})))
        .await
        .unwrap();
    assert_eq!(text(greeting.into_result()), "[REDACTED]");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_starts_without_the_host_s_credentials_and_its_configured_ones_are_redacted() {
    let mut fx = Fixture::new();
    fx.var("GITHUB_TOKEN", "ghp_0123456789abcdefghijklmnopqrstuvwxyz");
    fx.var("PLAIN_SETTING", "kept-as-it-is");
    fx.var("WHO", "someone-secret");
    configure(&fx, json!({"permission": {"py_*": "allow"}}));
    let host = host(&fx, Reply::Once).await;
    let session = host.create_session();
    let env = async |name: &str| {
        let settled = session
            .settle(&Call::new("c", "py_env", json!({"name": name})))
            .await
            .unwrap();
        text(settled.into_result())
    };
    // Scrubbed as bash scrubs a command's environment; the rest passes.
    assert_eq!(env("GITHUB_TOKEN").await, "<unset>");
    assert_eq!(env("PLAIN_SETTING").await, "kept-as-it-is");
    // The value `{env:WHO}` put in the server's hands never comes back, whole or in part.
    assert_eq!(env("GREETING").await, "[REDACTED]");
    let lines = session
        .settle(&Call::new(
            "c",
            "py_echo",
            json!({"text": "x someone-secret y"}),
        ))
        .await
        .unwrap();
    assert_eq!(text(lines.into_result()), "x [REDACTED] y");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_hides_a_server_s_tools_and_the_default_asks() {
    let fx = Fixture::new();
    configure(&fx, json!({"permission": {"py_lines": "deny"}}));
    // Every ask is declined.
    let host = host(&fx, Reply::Reject { message: None }).await;
    let snapshot = host.materialize();
    assert!(snapshot.contains("py_ping"));
    assert!(!snapshot.contains("py_lines"));
    let session = host.create_session();
    let hidden = session
        .settle(&Call::new("c1", "py_lines", json!({"count": 1})))
        .await
        .unwrap();
    assert_eq!(text(hidden.into_result()), "Unknown tool: py_lines");
    // Nothing allows `py_ping`: the default rule asks, and the declined ask halts the call.
    let asked = session
        .settle(&Call::new("c2", "py_ping", json!({"word": "x"})))
        .await;
    assert!(asked.is_err(), "{asked:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_catch_all_allow_does_not_cover_destructive_tools() {
    let fx = Fixture::new();
    configure(
        &fx,
        json!({"permission": {"*": "allow", "py_env": "allow"}}),
    );
    let host = host(&fx, Reply::Reject { message: None }).await;
    let session = host.create_session();
    // Read-only by the server's word: the catch-all allows it.
    let peek = session
        .settle(&Call::new("c1", "py_peek", json!({})))
        .await
        .unwrap();
    assert_eq!(text(peek.into_result()), "peeked");
    // Destructive (no annotations): asked despite `"*": "allow"`, and declined.
    let ping = session
        .settle(&Call::new("c2", "py_ping", json!({"word": "x"})))
        .await;
    assert!(ping.is_err(), "{ping:?}");
    // A rule naming the tool allows it.
    let env = session
        .settle(&Call::new("c3", "py_env", json!({"name": "HOME"})))
        .await
        .unwrap();
    assert!(!env.is_error());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_are_bounded_by_the_host_s_output_limits() {
    let fx = Fixture::new();
    configure(
        &fx,
        json!({"permission": {"py_*": "allow"}, "output": {"max_lines": 50}}),
    );
    let host = host(&fx, Reply::Once).await;
    let settled = host
        .create_session()
        .settle(&Call::new("c1", "py_lines", json!({"count": 5000})))
        .await
        .unwrap();
    assert!(settled.truncated());
    assert!(!settled.references().is_empty());
    assert!(text(settled.into_result()).lines().count() <= 50);
}

#[test]
fn an_untrusted_project_cannot_add_servers() {
    let fx = Fixture::new();
    fx.write(
        "tackle.json",
        r#"{"mcp": {"evil": {"type": "local", "command": ["/bin/false"]}}}"#,
    );
    let host = Host::builder(fx.location())
        .data_dir(fx.data.path())
        .env(fx.env())
        .build()
        .unwrap();
    assert!(host.mcp_status().is_empty());
    assert!(
        host.config().warnings.iter().any(|w| w.contains("mcp")),
        "{:?}",
        host.config().warnings
    );
}

#[test]
fn a_server_without_its_command_is_a_configuration_error() {
    let fx = Fixture::new();
    fx.write_user(r#"{"mcp": {"broken": {"type": "local"}}}"#);
    let err = Host::builder(fx.location())
        .data_dir(fx.data.path())
        .env(fx.env())
        .build()
        .unwrap_err();
    let HostError::Config(err) = err else {
        panic!("{err:?}")
    };
    assert_eq!(err.path, "mcp.broken.command");
    assert_eq!(err.message, "a local server needs a command");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_s_own_server_is_seen_only_there_and_stops_with_it() {
    let mut fx = Fixture::new();
    fx.var("WHO", "someone-in-session");
    let script = fx.write(
        "session_server.py",
        &format!("import os, sys\nopen(sys.argv[1], 'w').write(str(os.getpid()))\n{SERVER}"),
    );
    let pid_file = fx.data.path().join("server.pid");
    fx.write_user(&json!({"permission": {"own_*": "allow"}}).to_string());
    let host = host(&fx, Reply::Reject { message: None }).await;
    let session = host.create_session();
    let other = host.create_session();
    let servers: std::collections::BTreeMap<String, tackle_host::config::McpServerConfig> =
        serde_json::from_value(json!({"own": {
            "type": "local",
            "command": [python(), script, pid_file],
            "environment": {"GREETING": "hi {env:WHO}"},
            "timeout": 60000
        }}))
        .unwrap();
    session.add_mcp_servers(&servers).unwrap();
    tokio::time::timeout(Duration::from_secs(60), session.mcp_ready())
        .await
        .unwrap();
    let status = session.mcp_status();
    assert_eq!(status[0].state, McpState::Connected, "{status:?}");
    // In this session's catalog only.
    assert!(session.materialize().contains("own_ping"));
    assert!(!other.materialize().contains("own_ping"));
    assert!(!host.materialize().contains("own_ping"));
    assert!(other.mcp_status().is_empty() && host.mcp_status().is_empty());
    let pong = session
        .settle(&Call::new("c1", "own_ping", json!({"word": "mine"})))
        .await
        .unwrap();
    assert_eq!(text(pong.into_result()), "pong mine");
    let unknown = other
        .settle(&Call::new("c1", "own_ping", json!({"word": "theirs"})))
        .await
        .unwrap();
    assert_eq!(text(unknown.into_result()), "Unknown tool: own_ping");
    // What its configuration handed it is redacted, in every session.
    let greeting = session
        .settle(&Call::new("c2", "own_env", json!({"name": "GREETING"})))
        .await
        .unwrap();
    assert_eq!(text(greeting.into_result()), "[REDACTED]");

    // Deleting the session stops the server's process.
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let proc = std::path::PathBuf::from(format!("/proc/{pid}"));
    assert!(proc.exists());
    host.delete_session(session.id()).unwrap();
    let started = std::time::Instant::now();
    while proc.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the session's server {pid} still runs"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_like_literal_handed_to_a_local_server_is_redacted() {
    let fx = Fixture::new();
    let script = fx.write("server.py", SERVER);
    fx.write_user(
        &json!({
            "permission": {"py_*": "allow"},
            "mcp": {"py": {
                "type": "local",
                "command": [python(), script],
                "environment": {
                    "OPENAI_API_KEY": "literal-credential-value-42",
                    "SHAPED": "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
                    "PLAIN_SETTING": "kept-as-it-is"
                },
                "timeout": 60000
            }}
        })
        .to_string(),
    );
    let host = host(&fx, Reply::Once).await;
    let session = host.create_session();
    let settle = async |tool: &str, input: serde_json::Value| {
        let settled = session.settle(&Call::new("c", tool, input)).await.unwrap();
        text(settled.into_result())
    };
    // A credential by its name or by its value's shape, literal in the configuration.
    assert_eq!(
        settle("py_env", json!({"name": "OPENAI_API_KEY"})).await,
        "[REDACTED]"
    );
    assert_eq!(
        settle("py_env", json!({"name": "SHAPED"})).await,
        "[REDACTED]"
    );
    assert_eq!(
        settle(
            "py_echo",
            json!({"text": "a literal-credential-value-42 b ghp_0123456789abcdefghijklmnopqrstuvwxyz"})
        )
        .await,
        "a [REDACTED] b [REDACTED]"
    );
    // An ordinary literal is the server's setting, shown as it is.
    assert_eq!(
        settle("py_env", json!({"name": "PLAIN_SETTING"})).await,
        "kept-as-it-is"
    );
}

/// A remote server over streamable HTTP (the "everything" server on loopback), given its
/// credentials as header values: a result echoing them shows them redacted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_values_handed_to_a_remote_server_are_redacted() {
    use std::io::BufRead as _;

    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../target/mcp-node/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(
        script.exists(),
        "the MCP server everything is not installed at {}: run .ci/mcp-clients.sh once",
        script.display()
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = std::process::Command::new("node")
        .arg(&script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    // Killed when the test ends, however it ends.
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _server = Killed(child);
    let mut lines = std::io::BufReader::new(stderr).lines();
    for line in lines.by_ref() {
        if line.unwrap().contains("listening on port") {
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));

    let fx = Fixture::new();
    fx.write_user(
        &json!({
            "permission": {"web_*": "allow"},
            "mcp": {"web": {
                "type": "remote",
                "url": format!("http://127.0.0.1:{port}/mcp"),
                "headers": {
                    "Authorization": "Bearer header-token-0123456789",
                    "X-Team": "team-header-value-42"
                },
                "timeout": 60000
            }}
        })
        .to_string(),
    );
    let host = host(&fx, Reply::Once).await;
    let status = host.mcp_status();
    assert_eq!(status[0].state, McpState::Connected, "{status:?}");
    let session = host.create_session();
    let echo = session
        .settle(&Call::new(
            "c",
            "web_echo",
            json!({"message": "a header-token-0123456789 b team-header-value-42 c"}),
        ))
        .await
        .unwrap();
    assert_eq!(
        text(echo.into_result()),
        "Echo: a [REDACTED] b [REDACTED] c"
    );
}
