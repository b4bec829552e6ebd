//! The registry, the servers' paths and the waits the tests share.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tackle_mcp_client::{
    Gate, GateFuture, GateRequest, Options, ServerConfig, ServerStatus, Servers, State,
};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_registry::{ApplicationTools, Materialization, Settlement, ToolRegistry};
use tackle_tool_core::{Call, Context, ShowAll};
use tempfile::TempDir;

/// Generous: two loaded cores, and `node` or Python starting.
pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The entry point of an npm reference server installed by `.ci/mcp-clients.sh`.
pub(crate) fn node_server(package: &str) -> Vec<String> {
    let script = repo_root()
        .join("target/mcp-node/node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    assert!(
        script.exists(),
        "the MCP server {package} is not installed at {}: run .ci/mcp-clients.sh once",
        script.display()
    );
    vec!["node".to_owned(), script.display().to_string()]
}

/// The Python SDK's interpreter (its venv from `.ci/mcp-clients.sh`).
pub(crate) fn python() -> String {
    let python = repo_root().join("target/mcp-venv/bin/python");
    assert!(
        python.exists(),
        "the MCP Python SDK is not installed at {}: run .ci/mcp-clients.sh once",
        python.display()
    );
    python.display().to_string()
}

/// Every call the gate saw: registered name, tool, destructive.
#[derive(Debug, Default)]
pub(crate) struct RecordingGate {
    pub(crate) seen: Mutex<Vec<(String, String, bool)>>,
}

impl Gate for RecordingGate {
    fn check<'a>(&'a self, request: GateRequest<'a>, _ctx: &'a Context) -> GateFuture<'a> {
        self.seen.lock().unwrap().push((
            request.name.to_owned(),
            request.tool.to_owned(),
            request.destructive,
        ));
        Box::pin(async { Ok(()) })
    }
}

/// A Location registry with some builtins' names reserved, and its servers.
pub(crate) struct Fixture {
    pub(crate) registry: ToolRegistry,
    pub(crate) servers: Servers,
    pub(crate) gate: Arc<RecordingGate>,
    pub(crate) store: OutputStore,
    pub(crate) dir: TempDir,
    _data: TempDir,
}

impl Fixture {
    pub(crate) fn start(servers: Vec<(&str, ServerConfig)>) -> Self {
        let dir = TempDir::new().unwrap();
        let data = TempDir::new().unwrap();
        let store = OutputStore::new(StoreConfig::in_data_dir(data.path()));
        let registry = ToolRegistry::new(&ApplicationTools::default(), store.clone());
        let gate = Arc::new(RecordingGate::default());
        let options = Options::new(gate.clone())
            .reserving(["read", "apply_patch", "bash"].map(str::to_owned))
            .with_backoff(Duration::from_millis(100), Duration::from_millis(400))
            .with_store(store.clone());
        let servers = Servers::start(
            servers
                .into_iter()
                .map(|(name, config)| (name.to_owned(), config))
                .collect(),
            &registry.tools(),
            options,
        );
        Self {
            registry,
            servers,
            gate,
            store,
            dir,
            _data: data,
        }
    }

    pub(crate) async fn ready(&self) {
        tokio::time::timeout(PATIENCE, self.servers.ready())
            .await
            .expect("servers tried within the patience");
    }

    pub(crate) fn snapshot(&self) -> Materialization {
        self.registry.materialize(&ShowAll)
    }

    pub(crate) fn names(&self) -> BTreeSet<String> {
        self.snapshot()
            .definitions()
            .iter()
            .map(|d| d.name.clone())
            .collect()
    }

    pub(crate) fn status(&self, server: &str) -> ServerStatus {
        self.servers.server(server).unwrap()
    }

    /// Waits until `check` holds of the server's status.
    pub(crate) async fn wait_for(&self, server: &str, check: impl Fn(&ServerStatus) -> bool) {
        let start = Instant::now();
        loop {
            let status = self.status(server);
            if check(&status) {
                return;
            }
            assert!(start.elapsed() < PATIENCE, "gave up waiting: {status:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub(crate) fn connected(&self, server: &str) -> ServerStatus {
        let status = self.status(server);
        assert_eq!(status.state, State::Connected, "{status:?}");
        status
    }
}

/// Settles `name` with `input` on `snapshot`, as a host does.
pub(crate) async fn settle(snapshot: &Materialization, name: &str, input: Value) -> Settlement {
    let call = Call::new("call_1", name, input);
    snapshot
        .settle(&call, &Context::new("ses_test").for_call("call_1"))
        .await
        .unwrap()
}

/// The one text of a settled result.
pub(crate) fn text(settlement: &Settlement) -> String {
    match settlement.result() {
        tackle_tool_core::ResultValue::Text(text) | tackle_tool_core::ResultValue::Error(text) => {
            text
        }
        other => panic!("not one text: {other:?}"),
    }
}
