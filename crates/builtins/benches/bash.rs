//! `cargo xtask bench bash`: what running a command through the tool costs.
//!
//! 1. `true` and `seq 1 100000` settled through the bash tool (permission allowed by a rule,
//!    so no asking) against `sh -c` run directly with its output read, alternating in the same
//!    run. Target: the tool at most 1.2x the direct run.
//! 2. `yes | head -c 1000000000` through the tool, in a child process whose peak resident
//!    memory is reset just before the call (`/proc/self/clear_refs`): the tool-side memory is
//!    the peak minus the resident size before. Target: under 16 MiB.

#![allow(clippy::expect_used)] // a bench may panic on broken setup

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tackle_builtins::Location;
use tackle_builtins::{FileMutation, LocationServices, builtin_tool};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{AnswerAll, Effect, Permission, Reply, Rule, Ruleset, SavedApprovals};
use tackle_tool_core::{Call, Context, Tool};

const MEMORY_CHILD: &str = "--memory-child";
const BIG: &str = "yes | head -c 1000000000";

fn tool(dir: &std::path::Path) -> Tool {
    let permission = Permission::new(
        Ruleset::new(vec![Rule::new("bash", "*", Effect::Allow)]),
        SavedApprovals::in_memory(),
        Arc::new(AnswerAll(Reply::Once)),
    );
    let location = Location::new(dir).expect("location");
    // A raw run never spills, so the store's directory is never created.
    let store = OutputStore::new(StoreConfig::in_data_dir(dir.join(".unused-data")));
    let services = LocationServices::new(location, permission, store, FileMutation::new());
    builtin_tool(&services, "bash").expect("bash is built")
}

async fn through_tool(tool: &Tool, command: &str) -> Duration {
    let call = Call::new("call_1", "bash", json!({ "command": command }));
    let ctx = Context::new("ses_bench");
    let start = Instant::now();
    let out = tool.run_unbounded(&call, &ctx).await.expect("settle");
    let elapsed = start.elapsed();
    assert_eq!(
        out.structured["exitCode"], 0,
        "{command}: {}",
        out.structured
    );
    elapsed
}

fn directly(dir: &std::path::Path, command: &str) -> Duration {
    let start = Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("sh -c");
    let elapsed = start.elapsed();
    assert!(out.status.success(), "{command}");
    elapsed
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("status field")
}

/// The child of part 2: prints `<rss before KiB> <peak KiB> <elapsed ms> <dropped bytes>`.
fn memory_child() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let tool = tool(dir.path());
    runtime.block_on(async {
        // Warm up everything that allocates once (parser, runtime threads, schemas).
        through_tool(&tool, "true").await;
        std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM");
        let before = status_kib("VmRSS:");
        let call = Call::new("call_1", "bash", json!({ "command": BIG }));
        let start = Instant::now();
        let out = tool
            .run_unbounded(&call, &Context::new("ses_bench"))
            .await
            .expect("settle");
        let elapsed = start.elapsed();
        let peak = status_kib("VmHWM:");
        println!(
            "{before} {peak} {} {}",
            elapsed.as_millis(),
            out.structured["stdoutDroppedBytes"]
        );
    });
}

fn main() {
    if std::env::args().any(|arg| arg == MEMORY_CHILD) {
        return memory_child();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let tool = tool(dir.path());

    println!("bash: through the tool vs `sh -c` directly (median of alternating runs)");
    for (command, runs) in [("true", 60), ("seq 1 100000", 40)] {
        // Warm-up of both paths.
        runtime.block_on(through_tool(&tool, command));
        directly(dir.path(), command);
        let mut ours = Vec::with_capacity(runs);
        let mut peer = Vec::with_capacity(runs);
        for _ in 0..runs {
            ours.push(runtime.block_on(through_tool(&tool, command)));
            peer.push(directly(dir.path(), command));
        }
        let (ours, peer) = (median(ours), median(peer));
        let ratio = ours.as_secs_f64() / peer.as_secs_f64();
        println!(
            "  {command:<14} tool {:>8.2} ms   sh -c {:>8.2} ms   ratio {ratio:.2}x   (target <= 1.20x) {}",
            ours.as_secs_f64() * 1e3,
            peer.as_secs_f64() * 1e3,
            if ratio <= 1.2 { "ok" } else { "MISSED" }
        );
    }

    let exe = std::env::current_exe().expect("current exe");
    let out = Command::new(exe)
        .arg(MEMORY_CHILD)
        .output()
        .expect("memory child");
    assert!(
        out.status.success(),
        "memory child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<u64> = line
        .split_whitespace()
        .map(|f| f.parse().expect("number"))
        .collect();
    let (before, peak, millis, dropped) = (fields[0], fields[1], fields[2], fields[3]);
    let grown = peak.saturating_sub(before);
    println!(
        "  {BIG}: {millis} ms, {dropped} bytes counted and dropped; peak RSS {:.1} MiB, \
         before {:.1} MiB: tool-side {:.1} MiB   (target < 16 MiB) {}",
        peak as f64 / 1024.0,
        before as f64 / 1024.0,
        grown as f64 / 1024.0,
        if grown < 16 * 1024 { "ok" } else { "MISSED" }
    );
}
