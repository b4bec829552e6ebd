//! `cargo xtask bench apply_patch`: tackle's `apply_patch` against the `codex` CLI's
//! `apply_patch` (npm `@openai/codex`, whose native binary answers as `apply_patch` when invoked
//! under that name), in the same run, on the same trees and patches.
//!
//! Scenarios: one patch of 1,000 chunks on a 100,000-line file; one patch touching 200 files
//! of 1,000 lines each (5 chunks per file). Each iteration starts from a fresh copy of the
//! input (not timed); tackle is timed from the call to its settled result (parse, permission,
//! read, plan, diff, atomic commit), codex from spawn to exit (its CLI is a process). Both
//! results are checked against the expected tree. The peer is the `codex` on the PATH, else a
//! copy in the project's `target/bench-peers` (`npm install --prefix target/bench-peers
//! @openai/codex`); without either, the bench says how to get one and times tackle alone.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tackle_builtins::{FileMutation, Location, LocationServices};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{AnswerAll, Effect, Permission, Reply, Rule, Ruleset, SavedApprovals};
use tackle_tool_core::{Call, Context, Tool};

use common::patch::{Scenario, big_file, check, codex_apply_patch, lay_out, many_files, run_codex};

const ITERATIONS: usize = 7;
/// Target: no slower than the incumbent CLI on either scenario.
const TARGET_RATIO: f64 = 1.0;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn tackle(scenario: &Scenario, work: &Path, runtime: &tokio::runtime::Runtime) -> Duration {
    let mut times = Vec::new();
    for _ in 0..ITERATIONS {
        lay_out(work, &scenario.input);
        let permission = Permission::new(
            Ruleset::new(vec![Rule::new("*", "*", Effect::Allow)]),
            SavedApprovals::in_memory(),
            Arc::new(AnswerAll(Reply::Once)),
        );
        let tool = patch_tool(Location::new(work).unwrap(), permission);
        let call = Call::new(
            "bench",
            "apply_patch",
            json!({ "patchText": scenario.patch }),
        );
        let started = Instant::now();
        let output = runtime.block_on(tool.run_unbounded(&call, &Context::new("bench")));
        times.push(started.elapsed());
        if let Err(err) = output {
            panic!("tackle failed: {err:?}");
        }
        check(work, &scenario.expected, "tackle").unwrap();
    }
    median(times)
}

fn codex(scenario: &Scenario, work: &Path, binary: &Path) -> Result<Duration, String> {
    let mut times = Vec::new();
    for _ in 0..ITERATIONS {
        lay_out(work, &scenario.input);
        let started = Instant::now();
        let output = run_codex(binary, work, &scenario.patch)?;
        times.push(started.elapsed());
        if !output.status.success() {
            return Err(format!(
                "codex apply_patch exited with {}: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        check(work, &scenario.expected, "codex")?;
    }
    Ok(median(times))
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let peer = codex_apply_patch(&scratch.path().join("peer"));
    if let Err(why) = &peer {
        println!("peer: codex CLI unavailable, no ratio: {why}");
    }
    println!(
        "apply_patch: median of {ITERATIONS} runs; target: tackle/codex <= {TARGET_RATIO:.1}x"
    );
    for scenario in [big_file(), many_files()] {
        let work = scratch.path().join("work");
        println!(
            "{} (patch {} KiB):",
            scenario.name,
            scenario.patch.len() / 1024
        );
        let ours = tackle(&scenario, &work, &runtime);
        println!("  tackle apply_patch: {}", ms(ours));
        match &peer {
            Ok(binary) => match codex(&scenario, &work, binary) {
                Ok(theirs) => {
                    let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
                    let verdict = if ratio <= TARGET_RATIO {
                        "met"
                    } else {
                        "MISSED"
                    };
                    println!("  codex apply_patch:  {}", ms(theirs));
                    println!(
                        "  ratio tackle/codex: {ratio:.2}x (target <= {TARGET_RATIO:.1}x: {verdict})"
                    );
                }
                Err(why) => println!("  codex apply_patch: failed: {why}"),
            },
            Err(_) => println!("  codex apply_patch: not measured (see above)"),
        }
    }
}

/// The `apply_patch` tool of `location`, asking `permission`. apply_patch never spills, so its
/// output store's directory is never created.
fn patch_tool(location: Location, permission: Permission) -> Tool {
    let store = OutputStore::new(StoreConfig::in_data_dir(
        location.root().join(".unused-data"),
    ));
    let services = LocationServices::new(location, permission, store, FileMutation::new());
    tackle_builtins::builtin_tool(&services, "apply_patch").expect("apply_patch is built")
}
