//! Shared helpers of the question/skill/todowrite/webfetch/websearch tests: a permission
//! service that records what it is asked, contexts and settling.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tackle_builtins::{FileMutation, Location, LocationServices, builtin_tool, builtin_tools};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{
    Asker, Effect, PendingRequest, Permission, Reply, Request, Rule, Ruleset, SavedApprovals,
};
use tackle_tool_core::{Call, Context, Tool, ToolError, ToolOutput};

/// Records every request it is asked and answers each with one reply.
#[derive(Clone)]
pub(crate) struct Recorder {
    asked: Arc<Mutex<Vec<Request>>>,
    reply: Reply,
}

impl Recorder {
    /// The requests asked so far, in order.
    pub(crate) fn asked(&self) -> Vec<Request> {
        self.asked.lock().unwrap().clone()
    }

    /// `(action, resources, save)` of every request asked so far.
    pub(crate) fn summary(&self) -> Vec<(String, Vec<String>, Vec<String>)> {
        self.asked()
            .into_iter()
            .map(|r| (r.action, r.resources, r.save))
            .collect()
    }
}

impl Asker for Recorder {
    fn ask(&self, request: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        self.asked.lock().unwrap().push(request.request);
        let reply = self.reply.clone();
        Box::pin(async move { reply })
    }
}

/// A service that asks about everything and answers `reply`, plus configured `denied`
/// actions, which are blocked without asking.
pub(crate) fn permission_with(reply: Reply, denied: &[&str]) -> (Permission, Recorder) {
    let mut rules = vec![Rule::new("*", "*", Effect::Ask)];
    rules.extend(
        denied
            .iter()
            .map(|action| Rule::new(*action, "*", Effect::Deny)),
    );
    permission_ruled(reply, rules)
}

/// A service with `rules` that answers every ask `reply`.
pub(crate) fn permission_ruled(reply: Reply, rules: Vec<Rule>) -> (Permission, Recorder) {
    let recorder = Recorder {
        asked: Arc::default(),
        reply,
    };
    let permission = Permission::new(
        Ruleset::new(rules),
        SavedApprovals::in_memory(),
        Arc::new(recorder.clone()),
    );
    (permission, recorder)
}

/// Asks about everything and allows it once.
pub(crate) fn allowing() -> (Permission, Recorder) {
    permission_with(Reply::Once, &[])
}

/// Blocks `action` by configuration.
pub(crate) fn denying(action: &str) -> (Permission, Recorder) {
    permission_with(Reply::Once, &[action])
}

/// The context every test call uses.
pub(crate) fn ctx(session: &str) -> Context {
    let mut ctx = Context::new(session).for_call("call_1");
    ctx.agent = "build".to_owned();
    ctx.assistant_message_id = "msg_1".to_owned();
    ctx
}

/// Settles `input` on `tool` in session `s`.
pub(crate) async fn settle(tool: &Tool, name: &str, input: Value) -> Result<ToolOutput, ToolError> {
    settle_in(tool, name, input, "s").await
}

/// Settles `input` on `tool` in `session`.
pub(crate) async fn settle_in(
    tool: &Tool,
    name: &str,
    input: Value,
    session: &str,
) -> Result<ToolOutput, ToolError> {
    tool.run_unbounded(&Call::new("call_1", name, input), &ctx(session))
        .await
}

// The model text of a success and the message of a failure: shared with the bash tests.
/// The model text of a successful settlement.
pub(crate) fn text(output: &ToolOutput) -> String {
    assert_eq!(output.content.len(), 1, "{output:?}");
    output.content[0].as_text().unwrap().to_owned()
}

/// The message of a failure.
pub(crate) fn failure(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Err(ToolError::Failure(failure)) => failure.message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// The services of a Location at `root` asking through `permission`. A raw run never spills,
/// so the store's directory is never created.
pub(crate) fn services_at(root: &std::path::Path, permission: Permission) -> LocationServices {
    let store = OutputStore::new(StoreConfig::in_data_dir(root.join(".unused-data")));
    LocationServices::new(
        Location::new(root).unwrap(),
        permission,
        store,
        FileMutation::new(),
    )
}

/// Services whose Location does not matter to the tool (question, todowrite, the web tools).
pub(crate) fn services(permission: Permission) -> LocationServices {
    services_at(&std::env::temp_dir(), permission)
}

/// The builtin `name` of `services`, when they offer it.
pub(crate) fn builtin(services: &LocationServices, name: &str) -> Option<Tool> {
    builtin_tool(services, name)
}

/// The builtin `name` of `services`, which must offer it.
pub(crate) fn built(services: &LocationServices, name: &str) -> Tool {
    builtin(services, name).unwrap_or_else(|| panic!("{name} is not offered"))
}

/// The names of every builtin `services` offer.
pub(crate) fn offered(services: &LocationServices) -> Vec<String> {
    builtin_tools(services)
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}
