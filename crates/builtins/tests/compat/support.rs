//! A Location offering every builtin, settled through a registry, and a transcript of calls.

use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;
use tackle_builtins::question::{QuestionFuture, QuestionRequest, QuestionService};
use tackle_builtins::{FileMutation, Location, LocationServices, builtin_tools};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{
    Asker, Effect, PendingRequest, Permission, Reply, Rule, Ruleset, SavedApprovals,
};
use tackle_registry::{ApplicationTools, Materialization, Registration, ToolRegistry};
use tackle_tool_core::{Call, Context, ResultValue, Tool};
use tempfile::TempDir;

/// Answers every question with its first option.
struct FirstOption;

impl QuestionService for FirstOption {
    fn ask(&self, request: QuestionRequest) -> QuestionFuture {
        let answers = request
            .questions
            .iter()
            .map(|q| q.options.iter().take(1).map(|o| o.label.clone()).collect())
            .collect();
        Box::pin(async move { Ok(answers) })
    }
}

/// Never asked: every rule allows.
struct Unasked;

impl Asker for Unasked {
    fn ask(&self, _request: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        Box::pin(async { Reply::Once })
    }
}

/// A Location with a file, a skill and every builtin registered.
pub(crate) struct Compat {
    pub(crate) root: TempDir,
    _data: TempDir,
    pub(crate) services: LocationServices,
    _registration: Registration,
    pub(crate) snapshot: Materialization,
    _app: ApplicationTools,
    _registry: ToolRegistry,
}

impl Compat {
    pub(crate) fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.txt"), "alpha\nbeta\ngamma\n").unwrap();
        std::fs::write(root.path().join("notes.md"), "# todo: write notes\n").unwrap();
        let skill = root.path().join(".tackle/skills/demo");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: demo\ndescription: A demo skill.\n---\nDo the demo.\n",
        )
        .unwrap();
        let permission = Permission::new(
            Ruleset::new(vec![Rule::new("*", "*", Effect::Allow)]),
            SavedApprovals::in_memory(),
            Arc::new(Unasked),
        );
        let store = OutputStore::new(StoreConfig::in_data_dir(data.path()));
        let services = LocationServices::new(
            Location::new(root.path()).unwrap(),
            permission,
            store.clone(),
            FileMutation::new(),
        )
        .with_questions(Arc::new(FirstOption));
        let app = ApplicationTools::new();
        let registry = ToolRegistry::new(&app, store);
        let registration = registry.tools().register(builtin_tools(&services)).unwrap();
        let snapshot = registry.materialize(&tackle_tool_core::ShowAll);
        Self {
            root,
            _data: data,
            services,
            _registration: registration,
            snapshot,
            _app: app,
            _registry: registry,
        }
    }

    /// The builtin `name`.
    pub(crate) fn tool(&self, name: &str) -> Tool {
        builtin_tools(&self.services)
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, tool)| tool)
            .unwrap_or_else(|| panic!("{name} is not offered"))
    }

    /// Settles each `(name, input)` in turn and writes what the model reads, with the
    /// Location's path as `[root]`.
    pub(crate) async fn transcript(&self, calls: &[(&str, Value)]) -> String {
        let mut out = String::new();
        for (name, input) in calls {
            let call = Call::new("call_1", *name, input.clone());
            let settled = self
                .snapshot
                .settle(&call, &Context::new("ses_compat"))
                .await
                .unwrap();
            let shown = match settled.result() {
                ResultValue::Text(text) => format!("text: {text}"),
                ResultValue::Error(text) => format!("error: {text}"),
                ResultValue::Json(value) => format!("json: {value}"),
                other => format!("{other:?}"),
            };
            let _ = writeln!(out, "> {name} {input}");
            if let Some(as_name) = settled.settled_as() {
                let _ = writeln!(out, "(settled as {as_name})");
            }
            let _ = write!(out, "{shown}\n\n");
        }
        self.redact(&out)
    }

    fn redact(&self, text: &str) -> String {
        let real = std::fs::canonicalize(self.root.path()).unwrap();
        text.replace(&real.to_string_lossy().into_owned(), "[root]")
            .replace(&self.root.path().to_string_lossy().into_owned(), "[root]")
    }
}

/// What `tool` (called `name`) would run with for each input, or the failure the model reads.
#[cfg(feature = "web")]
pub(crate) fn decoded(tool: &Tool, name: &str, inputs: &[Value]) -> String {
    let mut out = String::new();
    for input in inputs {
        let shown = match tool.check_input(input) {
            Ok(value) => format!("runs with: {value}"),
            Err(failure) => format!("error: {}", failure.message),
        };
        let _ = write!(out, "> {name} {input}\n{shown}\n\n");
    }
    out
}
