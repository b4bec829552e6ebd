//! A Location in a temp dir with a second temp dir "outside" it, a recording permission
//! service, and the two tools.

use std::fs;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tackle_builtins::search::SearchSettings;
use tackle_permission::{
    Asker, Effect, PendingRequest, Permission, Reply, Request, Rule, Ruleset, SavedApprovals,
};
use tackle_tool_core::{Call, Context, Tool, ToolError, ToolOutput};
use tempfile::TempDir;

/// Answers every request "once" and remembers it.
#[derive(Default)]
pub(crate) struct Recorder {
    asked: Mutex<Vec<Request>>,
}

impl Asker for Recorder {
    fn ask(&self, request: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        self.asked.lock().unwrap().push(request.request);
        Box::pin(async { Reply::Once })
    }
}

pub(crate) struct Fixture {
    _loc: TempDir,
    _outside: TempDir,
    /// Canonical Location root.
    pub(crate) root: PathBuf,
    /// Canonical directory outside the Location.
    pub(crate) outside: PathBuf,
    recorder: Arc<Recorder>,
    pub(crate) glob: Tool,
    pub(crate) grep: Tool,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        Self::with(Vec::new(), SearchSettings::default())
    }

    pub(crate) fn with(rules: Vec<Rule>, settings: SearchSettings) -> Self {
        let loc = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(loc.path()).unwrap();
        let outside_root = fs::canonicalize(outside.path()).unwrap();
        let recorder = Arc::new(Recorder::default());
        let permission = Permission::new(
            Ruleset::new(rules),
            SavedApprovals::in_memory(),
            Arc::clone(&recorder) as Arc<dyn Asker>,
        );
        let services =
            crate::interactive_support::services_at(&root, permission).with_search(settings);
        Self {
            glob: crate::interactive_support::built(&services, "glob"),
            grep: crate::interactive_support::built(&services, "grep"),
            _loc: loc,
            _outside: outside,
            root,
            outside: outside_root,
            recorder,
        }
    }

    pub(crate) fn deny(action: &str) -> Self {
        Self::with(
            vec![Rule::new(action, "*", Effect::Deny)],
            SearchSettings::default(),
        )
    }

    pub(crate) fn budget(budget: Duration) -> Self {
        Self::with(Vec::new(), {
            let mut value = SearchSettings::default();
            value.budget = budget;
            value
        })
    }

    /// Writes `content` to `rel` under the Location, creating parents.
    pub(crate) fn write(&self, rel: &str, content: &str) -> PathBuf {
        write_at(&self.root, rel, content)
    }

    /// Writes a file and sets its mtime `age` seconds in the past.
    pub(crate) fn write_aged(&self, rel: &str, content: &str, age: u64) -> PathBuf {
        let path = self.write(rel, content);
        age_file(&path, age);
        path
    }

    /// Creates the symlink `rel` (under the Location) pointing at `target`.
    pub(crate) fn link(&self, rel: &str, target: impl AsRef<Path>) {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, path).unwrap();
    }

    pub(crate) fn asked(&self) -> Vec<Request> {
        self.recorder.asked.lock().unwrap().clone()
    }

    pub(crate) async fn call(&self, tool: &str, input: Value) -> Result<ToolOutput, ToolError> {
        let which = if tool == "glob" {
            &self.glob
        } else {
            &self.grep
        };
        which
            .run_unbounded(&Call::new("call_1", tool, input), &Context::new("session"))
            .await
    }

    /// The model text with the temp paths replaced by `[ROOT]` and `[OUTSIDE]`.
    pub(crate) fn text(&self, output: &ToolOutput) -> String {
        assert_eq!(output.content.len(), 1, "one text part");
        let text = output.content[0].as_text().unwrap();
        self.redact(text)
    }

    pub(crate) fn redact(&self, text: &str) -> String {
        text.replace(&*self.root.to_string_lossy(), "[ROOT]")
            .replace(&*self.outside.to_string_lossy(), "[OUTSIDE]")
    }

    /// The failure message of a call that must fail.
    pub(crate) async fn failure(&self, tool: &str, input: Value) -> String {
        match self.call(tool, input).await {
            Err(ToolError::Failure(failure)) => self.redact(&failure.message),
            other => panic!("expected a failure, got {other:?}"),
        }
    }
}

pub(crate) fn write_at(dir: &Path, rel: &str, content: &str) -> PathBuf {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, content).unwrap();
    path
}

pub(crate) fn age_file(path: &Path, age: u64) {
    let when = SystemTime::now() - Duration::from_secs(age);
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}
