//! A Location in a temporary directory with services whose permission asks are recorded.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tackle_builtins::{FileMutation, Location, LocationServices, builtin_tools};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{
    Asker, Effect, PendingRequest, Permission, Reply, Request, Rule, Ruleset, SavedApprovals,
};
use tackle_registry::{ApplicationTools, Materialization, Registration, ToolRegistry};
use tackle_tool_core::{Call, Context, OutputContent, ShowAll, Tool, ToolError, ToolOutput};
use tempfile::TempDir;

/// `(action, resources, save)` of one permission request.
pub(crate) type Asked = (String, Vec<String>, Vec<String>);

/// Records every request it is asked and answers each with one reply.
#[derive(Clone)]
pub(crate) struct Recorder {
    asked: Arc<Mutex<Vec<Request>>>,
    reply: Reply,
    /// How long a person takes to answer (zero: at once).
    delay: Duration,
}

impl Asker for Recorder {
    fn ask(&self, request: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        self.asked.lock().unwrap().push(request.request);
        let reply = self.reply.clone();
        // Blocking is fine here: only tests that want a slow answer set a delay.
        std::thread::sleep(self.delay);
        Box::pin(async move { reply })
    }
}

/// A Location (`root`), a directory outside it, and the services of the Location.
pub(crate) struct Fixture {
    pub(crate) root: TempDir,
    pub(crate) outside: TempDir,
    // Holds the output store's directory for the fixture's lifetime.
    _data: TempDir,
    pub(crate) services: LocationServices,
    recorder: Recorder,
}

impl Fixture {
    /// Every request is asked and answered "once".
    pub(crate) fn new() -> Self {
        Self::with(Reply::Once, &[])
    }

    /// Every request is asked and answered `reply`; `denied` actions are blocked by a rule.
    pub(crate) fn with(reply: Reply, denied: &[&str]) -> Self {
        let mut rules = vec![Rule::new("*", "*", Effect::Ask)];
        rules.extend(
            denied
                .iter()
                .map(|action| Rule::new(*action, "*", Effect::Deny)),
        );
        Self::with_rules(reply, rules)
    }

    pub(crate) fn with_rules(reply: Reply, rules: Vec<Rule>) -> Self {
        Self::answering_after(reply, rules, Duration::ZERO)
    }

    /// Every answer comes after `delay` (a person takes time to answer an ask).
    pub(crate) fn answering_after(reply: Reply, rules: Vec<Rule>, delay: Duration) -> Self {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let recorder = Recorder {
            asked: Arc::default(),
            reply,
            delay,
        };
        let permission = Permission::new(
            Ruleset::new(rules),
            SavedApprovals::in_memory(),
            Arc::new(recorder.clone()),
        );
        let services = LocationServices::new(
            Location::new(root.path()).unwrap(),
            permission,
            OutputStore::new(StoreConfig::in_data_dir(data.path())),
            FileMutation::new(),
        );
        Self {
            root,
            outside,
            _data: data,
            services,
            recorder,
        }
    }

    /// The canonical Location directory.
    pub(crate) fn real_root(&self) -> PathBuf {
        std::fs::canonicalize(self.root.path()).unwrap()
    }

    /// The canonical directory outside the Location.
    pub(crate) fn real_outside(&self) -> PathBuf {
        std::fs::canonicalize(self.outside.path()).unwrap()
    }

    /// `rel` inside the Location.
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    /// Writes `bytes` to `rel` inside the Location, creating parents.
    pub(crate) fn put(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    pub(crate) fn bytes(&self, path: impl AsRef<Path>) -> Vec<u8> {
        std::fs::read(self.root.path().join(path)).unwrap()
    }

    /// The builtin tool `name` of this Location.
    pub(crate) fn tool(&self, name: &str) -> Tool {
        builtin_tools(&self.services)
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, tool)| tool)
            .unwrap()
    }

    /// Every builtin of this Location registered in a fresh registry, and that registry's
    /// snapshot, so calls settle as a host settles them. The snapshot's tools stay registered
    /// while the registration lives.
    pub(crate) fn registered(&self) -> (Registration, Materialization) {
        let app = ApplicationTools::new();
        let registry = ToolRegistry::new(&app, self.services.store.clone());
        let registration = registry
            .tools()
            .register(builtin_tools(&self.services))
            .unwrap();
        (registration, registry.materialize(&ShowAll))
    }

    /// Settles `name` with `input` directly (no registry).
    pub(crate) async fn call(&self, name: &str, input: Value) -> Result<ToolOutput, ToolError> {
        let ctx = context();
        self.tool(name)
            .run_unbounded(&Call::new("call_1", name, input), &ctx)
            .await
    }

    /// The model text of a successful call.
    pub(crate) async fn text(&self, name: &str, input: Value) -> String {
        let output = self.call(name, input).await.unwrap();
        text_of(&output)
    }

    /// The message of a failed call.
    pub(crate) async fn failure(&self, name: &str, input: Value) -> String {
        match self.call(name, input).await {
            Err(ToolError::Failure(failure)) => failure.message,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    /// Every permission request asked so far.
    pub(crate) fn asked(&self) -> Vec<Asked> {
        self.recorder
            .asked
            .lock()
            .unwrap()
            .iter()
            .map(|r| (r.action.clone(), r.resources.clone(), r.save.clone()))
            .collect()
    }
}

/// A call context of session `ses_test`.
pub(crate) fn context() -> Context {
    let mut ctx = Context::new("ses_test");
    ctx.agent = "build".to_owned();
    ctx.assistant_message_id = "msg_1".to_owned();
    ctx.tool_call_id = "call_1".to_owned();
    ctx
}

/// The single text part of an output.
pub(crate) fn text_of(output: &ToolOutput) -> String {
    match output.content.as_slice() {
        [OutputContent::Text { text }] => text.clone(),
        other => panic!("expected one text part, got {other:?}"),
    }
}

/// `(action, [resource], [save])`.
pub(crate) fn asked(action: &str, resource: &str, save: &str) -> Asked {
    (
        action.to_owned(),
        vec![resource.to_owned()],
        vec![save.to_owned()],
    )
}

/// A path as a permission resource (`/` separators).
pub(crate) fn slash(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}
