//! `cargo xtask bench bound`: bounding a 100 MB, 1,000,000-line text.
//!
//! Peer: `std::fs::write` of the same bytes to a file on the same filesystem, in the same run.
//! Targets: `bound` within 1.3x of the copy's time, and peak memory under 2.5x the input.
//!
//! Time: several alternating rounds, median of each side. The store is configured with a spill
//! cap above the input so both sides write the same 100 MB (the default 64 MiB cap, which
//! writes less, is reported for information). The input is cloned before each timed `bound`
//! (which consumes it), outside the timing.
//!
//! Memory: each side runs once in a child process of this binary (`--child tackle|copy`), so
//! peaks do not mix; the child reports its peak resident set (`VmHWM` from
//! `/proc/self/status`, Linux) after generating the input and after the operation.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a bench may panic on broken setup

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_tool_core::{OutputContent, ToolOutput};

const LINES: usize = 1_000_000;
const LINE_BYTES: usize = 100;
const ROUNDS: usize = 7;

/// 1,000,000 lines of 100 bytes (newline included): 100,000,000 bytes, varied content.
fn input() -> String {
    const FILLER: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ-+=";
    let mut text = String::with_capacity(LINES * LINE_BYTES);
    for i in 0..LINES {
        let prefix = format!("{i:08} ");
        text.push_str(&prefix);
        for j in 0..LINE_BYTES - 1 - prefix.len() {
            text.push(char::from(FILLER[(i + j) % FILLER.len()]));
        }
        text.push('\n');
    }
    text
}

fn output(text: String) -> ToolOutput {
    ToolOutput::new(Value::Null, vec![OutputContent::Text { text }])
}

fn store(dir: &std::path::Path, full_spill: bool) -> OutputStore {
    let mut config = StoreConfig::in_data_dir(dir);
    if full_spill {
        config.spill_cap = u64::MAX;
        config.quota = u64::MAX;
    }
    OutputStore::new(config)
}

fn time_bound(text: &str, full_spill: bool) -> Duration {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = store(dir.path(), full_spill);
    let owned = text.to_owned();
    let start = Instant::now();
    let bounded = store.bound("bench", "call", output(owned)).expect("bound");
    let elapsed = start.elapsed();
    assert!(bounded.truncated && bounded.references.len() == 1);
    black_box(bounded);
    elapsed
}

fn time_copy(text: &str) -> Duration {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("copy");
    let start = Instant::now();
    std::fs::write(&path, text.as_bytes()).expect("write");
    start.elapsed()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Peak resident set of this process in KiB (`VmHWM`), on Linux.
fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Child mode: build the input, run one side once, print `before after` peak KiB.
fn child(side: &str) {
    let text = input();
    let before = peak_kib().expect("VmHWM");
    let dir = tempfile::tempdir().expect("temp dir");
    match side {
        "tackle" => {
            let bounded = store(dir.path(), true)
                .bound("bench", "call", output(text))
                .expect("bound");
            black_box(bounded);
        }
        "copy" => {
            std::fs::write(dir.path().join("copy"), text.as_bytes()).expect("write");
            black_box(text);
        }
        other => panic!("unknown side {other}"),
    }
    let after = peak_kib().expect("VmHWM");
    println!("{before} {after}");
}

fn peak_of(side: &str) -> Option<(u64, u64)> {
    let exe = std::env::current_exe().ok()?;
    let out = Command::new(exe).args(["--child", side]).output().ok()?;
    assert!(
        out.status.success(),
        "child {side} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).ok()?;
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>());
    Some((fields.next()?.ok()?, fields.next()?.ok()?))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--child") {
        child(&args[at + 1]);
        return;
    }

    let text = input();
    let mb = text.len() as f64 / 1e6;
    // Warm up: page cache, allocator, code.
    time_copy(&text);
    time_bound(&text, true);

    let (mut tackle, mut copy, mut capped) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        // Alternate the order so neither side always follows the other's writeback.
        if round % 2 == 0 {
            tackle.push(time_bound(&text, true));
            copy.push(time_copy(&text));
        } else {
            copy.push(time_copy(&text));
            tackle.push(time_bound(&text, true));
        }
        capped.push(time_bound(&text, false));
    }
    let (tackle, copy, capped) = (median(tackle), median(copy), median(capped));
    let ratio = tackle.as_secs_f64() / copy.as_secs_f64();
    println!("bound: {mb:.0} MB, {LINES} lines, median of {ROUNDS} rounds");
    println!("  tackle OutputStore::bound (full spill): {tackle:.1?}");
    println!("  std::fs::write of the same bytes:       {copy:.1?}");
    println!(
        "  ratio bound / fs::write: {ratio:.2}x (target <= 1.3x: {})",
        if ratio <= 1.3 { "met" } else { "MISSED" }
    );
    println!("  (default 64 MiB spill cap, writes head and tail only: {capped:.1?})");

    match (peak_of("tackle"), peak_of("copy")) {
        (Some((t_before, t_after)), Some((c_before, c_after))) => {
            let input_kib = text.len() as f64 / 1024.0;
            let t_ratio = t_after as f64 / input_kib;
            let c_ratio = c_after as f64 / input_kib;
            println!(
                "  peak RSS, tackle: {:.1} MB = {t_ratio:.2}x input (after building input: {:.1} MB)",
                t_after as f64 / 1024.0,
                t_before as f64 / 1024.0
            );
            println!(
                "  peak RSS, fs::write: {:.1} MB = {c_ratio:.2}x input (after building input: {:.1} MB)",
                c_after as f64 / 1024.0,
                c_before as f64 / 1024.0
            );
            println!(
                "  peak memory target < 2.5x input: {}",
                if t_ratio < 2.5 { "met" } else { "MISSED" }
            );
        }
        _ => println!("  peak RSS: not available (needs /proc/self/status)"),
    }
}
