//! Helpers shared by the builtins benches (each bench includes this module).

#![allow(dead_code)] // each bench uses its own subset

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tackle_builtins::{FileMutation, Location, LocationServices, builtin_tools};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{AnswerAll, Effect, Permission, Reply, Rule, Ruleset, SavedApprovals};
use tackle_tool_core::Tool;

/// "met" or "MISSED", for a target line.
pub(crate) fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}

/// Milliseconds, for printing.
pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The median of `times` (sorted in place).
pub(crate) fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// The builtin tool `name` for the Location `dir`, with every permission allowed and the
/// output store under `data`.
pub(crate) fn builtin(name: &str, dir: &Path, data: &Path) -> Tool {
    let permission = Permission::new(
        Ruleset::new(vec![Rule::new("*", "*", Effect::Allow)]),
        SavedApprovals::in_memory(),
        Arc::new(AnswerAll(Reply::Once)),
    );
    let services = LocationServices::new(
        Location::new(dir).expect("bench location"),
        permission,
        OutputStore::new(StoreConfig::in_data_dir(data)),
        FileMutation::new(),
    );
    builtin_tools(&services)
        .into_iter()
        .find(|(tool, _)| tool == name)
        .map(|(_, tool)| tool)
        .expect("a builtin of that name")
}

/// The project-owned directory where the benches also look for a peer that is not on the PATH:
/// `target/bench-peers` in the workspace. Benches never install anything; when a peer is
/// missing, they say how to put it here (or on the PATH) and skip its comparison.
pub(crate) fn peers_dir() -> PathBuf {
    // CARGO_MANIFEST_DIR is <workspace>/crates/builtins.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2);
    workspace
        .unwrap_or(Path::new("."))
        .join("target/bench-peers")
}

/// The file `name` in the first PATH directory that has one.
pub(crate) fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    })
}

/// Patch scenarios and the codex peer.
pub(crate) mod patch;
