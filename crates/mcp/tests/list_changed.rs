//! `notifications/tools/list_changed` with the official Python SDK as the client: a tool
//! registered in (or dropped from) the session, the Location or the application layer while
//! the client is connected is announced, and the next `tools/list` shows the change.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rmcp::ServiceExt as _;
use serde_json::{Value, json};
use tackle_host::{Environment, Host};
use tackle_mcp::{AskPolicy, McpServer, ServeOptions};
use tackle_registry::{ApplicationTools, Registration, ToolRegistry};
use tackle_tool_core::{Context, Tool, ToolError};
use tokio::io::AsyncReadExt as _;

/// The Python SDK's venv; CI creates it with `.ci/mcp-clients.sh`.
fn python() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-venv/bin/python");
    assert!(
        python.exists(),
        "the MCP Python client is not installed at {}: run .ci/mcp-clients.sh once",
        python.display()
    );
    python
}

fn tool(description: &str, run: impl Fn(Value, Context) -> Value + Send + Sync + 'static) -> Tool {
    let run = Arc::new(run);
    Tool::dynamic(
        description,
        json!({"type": "object", "properties": {"layer": {"type": "string"}}}),
        move |input, ctx| {
            let run = Arc::clone(&run);
            async move { Ok::<_, ToolError>(run(input, ctx)) }
        },
    )
    .build()
    .unwrap()
}

/// `add_tool` registers `extra` in the layer its input names (`other`: another session's);
/// `drop_tools` drops every registration it made.
fn changers(
    app: &ApplicationTools,
    registry: Arc<OnceLock<ToolRegistry>>,
    held: Arc<Mutex<Vec<Registration>>>,
) -> Vec<(String, Tool)> {
    let app = app.clone();
    let holder = Arc::clone(&held);
    let add = tool("Registers a tool", move |input, ctx| {
        let registry = registry.get().expect("the host was built");
        let extra = vec![(
            "extra".to_owned(),
            tool("An extra tool", |_, _| json!("extra")),
        )];
        let registration = match input["layer"].as_str() {
            Some("session") => registry.session_tools(&ctx.session_id).register(extra),
            Some("location") => registry.tools().register(extra),
            Some("application") => app.register(extra),
            _ => registry.session_tools("another-session").register(extra),
        }
        .unwrap();
        holder.lock().unwrap().push(registration);
        json!("added")
    });
    let drop_all = tool("Drops the registered tools", move |_, _| {
        held.lock().unwrap().clear();
        json!("dropped")
    });
    vec![("add_tool".into(), add), ("drop_tools".into(), drop_all)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_hears_tools_list_changed_for_its_session_in_every_layer() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let app = ApplicationTools::new();
    let registry = Arc::new(OnceLock::new());
    let held = Arc::new(Mutex::new(Vec::new()));
    let _changers = app
        .register(changers(&app, Arc::clone(&registry), Arc::clone(&held)))
        .unwrap();
    let (data_dir, application) = (data.path().to_owned(), app.clone());
    let build = Arc::new(move |location: &Path, asker| {
        let host = Host::builder(location)
            .data_dir(&data_dir)
            .env(Environment::from_vars([("HOME", &data_dir)]))
            .application_tools(&application)
            .asker(asker)
            .build()?;
        let _ = registry.set(host.registry().clone());
        Ok(host)
    });
    let mut options = ServeOptions::new(build);
    options.dir = Some(dir.path().to_owned());
    options.ask = AskPolicy::AllowOnce;

    let mut client = tokio::process::Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/list_changed.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let transport = (client.stdout.take().unwrap(), client.stdin.take().unwrap());
    let mut stderr = client.stderr.take().unwrap();
    let running = McpServer::new(options).serve(transport).await.unwrap();
    let status = tokio::time::timeout(Duration::from_secs(90), client.wait())
        .await
        .expect("the client finished")
        .unwrap();
    let mut said = String::new();
    stderr.read_to_string(&mut said).await.unwrap();
    assert!(
        status.success() && said.trim_end().ends_with("ok"),
        "the Python client failed ({status}):\n{said}"
    );
    let _ = running.cancel().await;
    drop(held);
}
