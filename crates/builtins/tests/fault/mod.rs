//! Fault injection on real filesystems and processes: a disk that fills up mid-write, the
//! output store's directory deleted or broken mid-run, and files swapped while an approval is
//! pending.

#[cfg(feature = "apply-patch")]
mod approval;
mod disk_full;
mod small_fs;
#[cfg(feature = "bash")]
mod store_dir;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tackle_builtins::{FileMutation, Location, LocationServices, builtin_tools};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{
    Asker, Effect, PendingRequest, Permission, Reply, Rule, Ruleset, SavedApprovals,
};
use tackle_registry::{ApplicationTools, Registration, Settlement, ToolRegistry};
use tackle_tool_core::{Call, Context, ResultValue, ShowAll};

/// Runs while the user is being asked; the request's action is given.
type Hook = Box<dyn Fn(&str) + Send + Sync>;

/// Answers every ask "once", after running the hook (the user thinking it over).
struct HookAsker {
    hook: Hook,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Asker for HookAsker {
    fn ask(&self, pending: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        (self.hook)(&pending.request.action);
        self.asked.lock().unwrap().push(pending.request.action);
        Box::pin(async { Reply::Once })
    }
}

/// A Location at `root`, an output store in `data`, every tool registered, every ask
/// answered "once" after the hook.
pub(crate) struct Host {
    pub(crate) root: PathBuf,
    registry: ToolRegistry,
    _registration: Registration,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Host {
    pub(crate) fn new(root: &Path, data: &Path, hook: Hook) -> Self {
        std::fs::create_dir_all(root).unwrap();
        let root = std::fs::canonicalize(root).unwrap();
        let asked = Arc::default();
        let asker = HookAsker {
            hook,
            asked: Arc::clone(&asked),
        };
        let permission = Permission::new(
            Ruleset::new(vec![Rule::new("*", "*", Effect::Ask)]),
            SavedApprovals::in_memory(),
            Arc::new(asker),
        );
        let store = OutputStore::new(StoreConfig::in_data_dir(data).with_paging(
            tackle_builtins::read::paging_hint(&StoreConfig::in_data_dir(data).budget()),
        ));
        let services = LocationServices::new(
            Location::new(&root).unwrap(),
            permission,
            store.clone(),
            FileMutation::new(),
        );
        let app = ApplicationTools::new();
        let registry = ToolRegistry::new(&app, store);
        let registration = registry.tools().register(builtin_tools(&services)).unwrap();
        Self {
            root,
            registry,
            _registration: registration,
            asked,
        }
    }

    /// Settles one call through the registry, as a host does.
    pub(crate) async fn settle(&self, name: &str, input: Value) -> Settlement {
        let mut ctx = Context::new("ses_fault").for_call("call_1");
        ctx.agent = "build".to_owned();
        self.registry
            .materialize(&ShowAll)
            .settle(&Call::new("call_1", name, input), &ctx)
            .await
            .unwrap()
    }

    /// The text of a success.
    pub(crate) async fn text(&self, name: &str, input: Value) -> String {
        match self.settle(name, input).await.into_result() {
            ResultValue::Text(text) => text,
            other => panic!("expected text, got {other:?}"),
        }
    }

    /// The message of an error result.
    pub(crate) async fn error(&self, name: &str, input: Value) -> String {
        match self.settle(name, input).await.into_result() {
            ResultValue::Error(message) => message,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    /// The actions asked so far.
    pub(crate) fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }

    /// `text` with the Location as `[ROOT]`.
    pub(crate) fn redact(&self, text: &str) -> String {
        text.replace(&self.root.display().to_string(), "[ROOT]")
    }
}

/// No hook: asks are answered at once.
pub(crate) fn no_hook() -> Hook {
    Box::new(|_| {})
}

/// The names in `dir` that look like a writer's temporary file.
pub(crate) fn temp_files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in walk(dir) {
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with(".tackle-") {
            found.push(entry.display().to_string());
        }
    }
    found
}

/// Every path below `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}
