//! apply_patch fixture scenarios (codex's apply-patch scenario format): every directory under
//! `tests/fixtures/apply_patch/NNN_name/` holds `patch.txt`, `input/` (absent: an empty tree)
//! and `expected/` (absent: an empty tree), and optionally `readonly.txt` naming input files
//! made read-only first. The runner copies `input/` into a fresh Location, settles
//! `apply_patch` with the patch, and compares the whole tree with `expected/`: every file's
//! bytes and every directory. What the model read for each scenario is one insta snapshot.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use tackle_builtins::{FileMutation, Location, LocationServices};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{AnswerAll, Effect, Permission, Reply, Rule, Ruleset, SavedApprovals};
use tackle_tool_core::{Call, Context, Tool, ToolError};

#[derive(Debug, PartialEq, Eq)]
enum Entry {
    File(Vec<u8>),
    Directory,
}

/// Every file and directory under `root`, by relative path.
fn tree(root: &Path) -> BTreeMap<String, Entry> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let name = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                out.insert(name, Entry::Directory);
                walk(root, &path, out);
            } else {
                out.insert(name, Entry::File(fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn copy_tree(from: &Path, to: &Path) {
    let Ok(entries) = fs::read_dir(from) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            fs::create_dir_all(&target).unwrap();
            copy_tree(&path, &target);
        } else {
            fs::copy(&path, &target).unwrap();
        }
    }
}

/// The `apply_patch` tool of `location`, asking `permission`. apply_patch never spills, so its
/// output store's directory is never created.
pub(crate) fn patch_tool(location: Location, permission: Permission) -> Tool {
    let store = OutputStore::new(StoreConfig::in_data_dir(
        location.root().join(".unused-data"),
    ));
    let services = LocationServices::new(location, permission, store, FileMutation::new());
    tackle_builtins::builtin_tool(&services, "apply_patch").expect("apply_patch is built")
}

pub(crate) fn allow_all() -> Permission {
    Permission::new(
        Ruleset::new(vec![Rule::new("*", "*", Effect::Allow)]),
        SavedApprovals::in_memory(),
        Arc::new(AnswerAll(Reply::Once)),
    )
}

/// What the model reads from settling `patch` with `tool`: the text, or `error: ...`.
pub(crate) async fn settle(tool: &Tool, patch: &str) -> String {
    let call = Call::new("call_1", "apply_patch", json!({ "patchText": patch }));
    match tool.run_unbounded(&call, &Context::new("session")).await {
        Ok(output) => output.content[0].as_text().unwrap().to_owned(),
        Err(ToolError::Failure(failure)) => format!("error: {}", failure.message),
        Err(other) => format!("{other:?}"),
    }
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apply_patch")
}

#[tokio::test]
async fn fixture_scenarios() {
    let mut names: Vec<String> = fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 30, "only {} scenarios", names.len());
    let mut outputs = String::new();
    let mut mismatches = Vec::new();
    for name in &names {
        let scenario = fixtures_dir().join(name);
        let work = tempfile::tempdir().unwrap();
        copy_tree(&scenario.join("input"), work.path());
        if let Ok(list) = fs::read_to_string(scenario.join("readonly.txt")) {
            for file in list.lines() {
                fs::set_permissions(work.path().join(file), fs::Permissions::from_mode(0o444))
                    .unwrap();
            }
        }
        let patch = fs::read_to_string(scenario.join("patch.txt")).unwrap();
        let tool = patch_tool(Location::new(work.path()).unwrap(), allow_all());
        let text = settle(&tool, &patch).await;
        let _ = write!(outputs, "## {name}\n{text}\n\n");
        let expected = tree(&scenario.join("expected"));
        let actual = tree(work.path());
        if expected != actual {
            mismatches.push(format!(
                "{name}:\n  expected {expected:?}\n  actual   {actual:?}\n  said {text}"
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    insta::assert_snapshot!("fixture_outputs", outputs);
}
