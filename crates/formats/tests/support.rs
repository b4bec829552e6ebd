//! A Location offering every builtin (a question service, a skill, a search provider), and
//! settlements of each result kind.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Value, json};
use tackle_builtins::question::{QuestionFuture, QuestionRequest, QuestionService};
use tackle_builtins::web::search::{SearchFuture, SearchRequest};
use tackle_builtins::web::{SearchProvider, WebSearchConfig, WebServices};
use tackle_builtins::{FileMutation, Location, LocationServices, builtin_tools};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{
    Asker, Effect, PendingRequest, Permission, Reply, Rule, Ruleset, SavedApprovals,
};
use tackle_registry::{ApplicationTools, Materialization, Registration, Settlement, ToolRegistry};
use tackle_tool_core::{Call, Context, ShowAll, Tool, ToolClass, ToolError, from_fn};
use tempfile::TempDir;

/// The fifteen builtins, in catalog order.
pub(crate) const BUILTINS: [&str; 15] = [
    "bash",
    "read",
    "edit",
    "write",
    "apply_patch",
    "glob",
    "grep",
    "question",
    "skill",
    "todowrite",
    "webfetch",
    "websearch",
    "job_output",
    "job_kill",
    "job_list",
];

/// A 1×1 PNG.
pub(crate) const PNG: &[u8] = &[
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0,
    0, 0, 144, 119, 83, 222, 0, 0, 0, 12, 73, 68, 65, 84, 120, 156, 99, 248, 207, 192, 0, 0, 3, 1,
    1, 0, 201, 254, 146, 239, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

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

/// Finds nothing.
struct NoResults;

impl SearchProvider for NoResults {
    fn name(&self) -> &str {
        "stub"
    }
    fn search<'a>(&'a self, _request: &'a SearchRequest) -> SearchFuture<'a> {
        Box::pin(async { Ok(None) })
    }
}

/// Answers every ask "once".
pub(crate) struct Once;

impl Asker for Once {
    fn ask(&self, _request: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        Box::pin(async { Reply::Once })
    }
}

/// A Location with a text file, a PNG and a skill, and every builtin registered.
pub(crate) struct Fixture {
    pub(crate) root: TempDir,
    _data: TempDir,
    _registration: Registration,
    pub(crate) registry: ToolRegistry,
    _app: ApplicationTools,
}

impl Fixture {
    /// Every rule allows.
    pub(crate) fn new() -> Self {
        Self::with(vec![Rule::new("*", "*", Effect::Allow)], Arc::new(Once))
    }

    /// `rules` decide, `asker` answers what they ask.
    pub(crate) fn with(rules: Vec<Rule>, asker: Arc<dyn Asker>) -> Self {
        let root = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.txt"), "alpha\nbeta\ngamma\n").unwrap();
        std::fs::write(root.path().join("pixel.png"), PNG).unwrap();
        let skill = root.path().join(".tackle/skills/demo");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: demo\ndescription: A demo skill.\n---\nDo the demo.\n",
        )
        .unwrap();
        let permission = Permission::new(Ruleset::new(rules), SavedApprovals::in_memory(), asker);
        let store = OutputStore::new(StoreConfig::in_data_dir(data.path()));
        let mut web = WebServices::default();
        web.search = WebSearchConfig::new().with_provider(NoResults);
        let services = LocationServices::new(
            Location::new(root.path()).unwrap(),
            permission,
            store.clone(),
            FileMutation::new(),
        )
        .with_questions(Arc::new(FirstOption))
        .with_web(web);
        let app = ApplicationTools::new();
        let registry = ToolRegistry::new(&app, store);
        let registration = registry.tools().register(builtin_tools(&services)).unwrap();
        Self {
            root,
            _data: data,
            _registration: registration,
            registry,
            _app: app,
        }
    }

    pub(crate) fn snapshot(&self) -> Materialization {
        self.registry.materialize(&ShowAll)
    }

    /// Replaces the Location's path in `text` with `[root]`.
    pub(crate) fn redact(&self, text: &str) -> String {
        let real = std::fs::canonicalize(self.root.path()).unwrap();
        text.replace(&real.display().to_string(), "[root]")
            .replace(&self.root.path().display().to_string(), "[root]")
    }
}

pub(crate) fn ctx() -> Context {
    Context::new("ses_formats")
}

/// One settled call of each kind a provider answers: text, a structured value, an image
/// beside text, an error.
pub(crate) async fn settled_kinds(fx: &Fixture) -> Vec<(Call, Settlement)> {
    // A tool whose result is only a structured value (no builtin's is).
    let stats = Tool::typed(
        "Counts files",
        from_fn(|_: Value, _ctx: Context| async move {
            Ok::<_, ToolError>(json!({"files": 2, "names": ["a.txt", "pixel.png"]}))
        }),
    )
    .build()
    .with_class(ToolClass::ReadOnly);
    let _stats = fx
        .registry
        .tools()
        .register(vec![("stats".to_owned(), stats)])
        .unwrap();
    let calls = vec![
        Call::new("call_text", "read", json!({"path": "a.txt"})),
        Call::new("call_json", "stats", json!({})),
        Call::new("call_image", "read", json!({"path": "pixel.png"})),
        Call::new("call_error", "read", json!({"path": "missing.txt"})),
        Call::new("call_unknown", "nope", json!({})),
    ];
    let snapshot = fx.snapshot();
    let results = snapshot.settle_batch(&calls, &ctx()).await;
    calls
        .into_iter()
        .zip(results)
        .map(|(call, result)| (call, result.unwrap()))
        .collect()
}

/// `(call, settlement)` pairs as the provider functions take them.
pub(crate) fn pairs(settled: &[(Call, Settlement)]) -> Vec<(&Call, &Settlement)> {
    settled
        .iter()
        .map(|(call, settlement)| (call, settlement))
        .collect()
}

/// Every object schema in `schema`, with its path.
pub(crate) fn objects<'a>(schema: &'a Value, path: &str, out: &mut Vec<(String, &'a Value)>) {
    match schema {
        Value::Object(map) => {
            if map.get("type") == Some(&Value::from("object"))
                || map.get("type") == Some(&Value::from("OBJECT"))
                || map.contains_key("properties")
            {
                out.push((path.to_owned(), schema));
            }
            for (key, child) in map {
                objects(child, &format!("{path}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                objects(item, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Every key used anywhere in `value`.
pub(crate) fn keys(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                out.push(key.clone());
                keys(child, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| keys(item, out)),
        _ => {}
    }
}
