//! A Location in a scratch directory with real services, and a way to call one builtin.
//!
//! The scratch directory is `$TACKLE_FUZZ_SCRATCH` (which `cargo xtask fuzz` creates and
//! removes around each run), else a temporary directory on `/dev/shm` when there is one (the
//! file tools sync every write; on tmpfs that costs nothing).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tackle_builtins::{FileMutation, Location, LocationServices, builtin_tool};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{AnswerAll, Effect, Permission, Reply, Rule, Ruleset, SavedApprovals};
use tackle_tool_core::{Budget, Call, Context, Tool, ToolError, ToolOutput};
use tokio::runtime::Runtime;

/// The one runtime of a fuzz process.
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// A fresh directory under the scratch directory. It is never removed by the process (libFuzzer
/// exits without running destructors); the scratch directory is.
pub fn scratch_dir(prefix: &str) -> PathBuf {
    let base = std::env::var_os("TACKLE_FUZZ_SCRATCH")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .or_else(|| Some(PathBuf::from("/dev/shm")).filter(|p| p.is_dir()))
        .unwrap_or_else(std::env::temp_dir);
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(base)
        .expect("a scratch directory");
    std::fs::canonicalize(dir.keep()).expect("a canonical scratch directory")
}

/// Rules that allow every tool inside the Location and deny everything outside it, so a fuzzed
/// path can never reach a file of the machine the fuzzer runs on.
pub fn inside_only(extra: &[Rule]) -> Ruleset {
    let mut rules = vec![
        Rule::new("*", "*", Effect::Allow),
        Rule::new("external_directory", "*", Effect::Deny),
    ];
    rules.extend_from_slice(extra);
    Ruleset::new(rules)
}

/// A Location (`root`, inside `scratch/loc`) with its services.
#[derive(Debug)]
pub struct Place {
    /// The scratch directory that holds the Location and the output store.
    pub scratch: PathBuf,
    /// The canonical Location directory.
    pub root: PathBuf,
    pub services: LocationServices,
}

impl Place {
    /// A Location whose permission follows `rules`; an ask is answered `reply`.
    pub fn new(prefix: &str, rules: Ruleset, reply: Reply) -> Self {
        Self::with_store(prefix, rules, reply, |config| config)
    }

    /// As [`Place::new`], with the output store's configuration adjusted by `store`.
    pub fn with_store(
        prefix: &str,
        rules: Ruleset,
        reply: Reply,
        store: impl FnOnce(StoreConfig) -> StoreConfig,
    ) -> Self {
        let scratch = scratch_dir(prefix);
        let root = scratch.join("loc");
        std::fs::create_dir(&root).expect("the Location directory");
        let permission = Permission::new(
            rules,
            SavedApprovals::in_memory(),
            Arc::new(AnswerAll(reply)),
        );
        let config = store(StoreConfig::in_data_dir(scratch.join("data")));
        let services = LocationServices::new(
            Location::new(&root).expect("a Location"),
            permission,
            OutputStore::new(config),
            FileMutation::new(),
        );
        Self {
            scratch,
            root,
            services,
        }
    }

    /// The builtin `name` of this Location.
    pub fn tool(&self, name: &str) -> Tool {
        builtin_tool(&self.services, name).expect("the builtin is built")
    }

    /// Removes everything in the Location.
    pub fn clear(&self) {
        let entries = std::fs::read_dir(&self.root).expect("the Location is readable");
        for entry in entries.flatten() {
            let path = entry.path();
            let removed = if entry.file_type().is_ok_and(|t| t.is_dir()) {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.expect("a scratch entry can be removed");
        }
    }

    /// Writes `bytes` to `rel` inside the Location, creating its parents. Fails when the
    /// path cannot be a file (`a/` , `.`, or a file where a parent directory should be).
    pub fn try_put(&self, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, bytes)
    }

    /// [`Place::try_put`] for a path that can always be a file.
    pub fn put(&self, rel: &str, bytes: &[u8]) {
        self.try_put(rel, bytes).expect("a scratch file");
    }

    /// Every file under the scratch directory except the output store's: path (relative to
    /// the scratch directory) to bytes. Symbolic links are recorded by their target.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        walk(&self.scratch, &self.scratch, &mut files);
        files.retain(|path, _| !path.starts_with("data"));
        files
    }
}

fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = path.strip_prefix(base).unwrap_or(&path).to_path_buf();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(base, &path, out),
            Ok(t) if t.is_symlink() => {
                let target = std::fs::read_link(&path).unwrap_or_default();
                out.insert(rel, format!("symlink -> {}", target.display()).into_bytes());
            }
            _ => {
                out.insert(rel, std::fs::read(&path).unwrap_or_default());
            }
        }
    }
}

/// Runs `tool` once with `input` and `budget`, on the process's runtime.
pub fn call(tool: &Tool, input: Value, budget: Budget) -> Result<ToolOutput, ToolError> {
    let mut ctx = Context::new("fuzz");
    ctx.tool_call_id = "call_1".to_owned();
    ctx.budget = budget;
    let call = Call::new("call_1", "fuzz", input);
    runtime().block_on(tool.run_unbounded(&call, &ctx))
}

/// The text parts of `output`, joined.
pub fn text(output: &ToolOutput) -> String {
    output
        .content
        .iter()
        .filter_map(|part| part.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A model-visible failure is an expected answer; a halt or a defect is a finding.
pub fn expect_failure_or_ok(result: &Result<ToolOutput, ToolError>, what: &str) {
    if let Err(err @ (ToolError::Halt(_) | ToolError::Defect(_))) = result {
        panic!("{what}: unexpected {err:?}");
    }
}
