//! `cargo xtask bench edit`: an exact edit and a rung-3 (indentation-shifted) edit in a
//! 100k-line file, each a full `edit` call (resolve, permission, read, match, atomic write with
//! fsync, diff); `sed -i` doing the exact substitution on the same file is the peer.
//!
//! Target: under 50 ms per edit (median).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{median, ms, verdict};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::{Value, json};
use tackle_builtins::{DiffStatus, FileDiff, FileMutation};
use tackle_tool_core::{Call, Context, Tool};

const LINES: usize = 100_000;
const ITERATIONS: usize = 11;
const TARGET_MS: f64 = 50.0;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.py"), source()).unwrap();
    let tool = edit_tool(dir.path(), data.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let ctx = Context::new("bench");

    // Exact: one unique line in the middle, flipped back and forth.
    let exact = |from: &str, to: &str| json!({"path": "big.py", "oldString": format!("        total_15000 = {from}"), "newString": format!("        total_15000 = {to}")});
    // Rung 3: a method body copied 4 columns shallower than the file has it.
    let indented = |from: &str, to: &str| json!({"path": "big.py", "oldString": format!("def method_30000(self, value):\n    total_30000 = {from}\n    return total_30000"), "newString": format!("def method_30000(self, value):\n    total_30000 = {to}\n    return total_30000")});
    let exact_ms = measure(&runtime, &tool, &ctx, exact, "exact");
    let rung3_ms = measure(&runtime, &tool, &ctx, indented, "indentation");

    let file = dir.path().join("big.py");
    let mut sed_times = Vec::new();
    for i in 0..ITERATIONS {
        let (from, to) = if i % 2 == 0 {
            ("value + 1", "value + 2")
        } else {
            ("value + 2", "value + 1")
        };
        let script = format!("s/        total_15000 = {from}$/        total_15000 = {to}/");
        let start = Instant::now();
        let status = Command::new("sed")
            .args(["-i", &script])
            .arg(&file)
            .status()
            .unwrap();
        sed_times.push(start.elapsed());
        assert!(status.success());
    }
    let sed_ms = ms(median(&mut sed_times));

    let (write_ms, diff_ms) = components(&runtime, &file);

    println!("edit in a {LINES}-line file ({ITERATIONS} iterations, median, full tool call)");
    println!(
        "  exact edit  : {exact_ms:>7.2} ms (target < {TARGET_MS} ms): {}",
        verdict(exact_ms < TARGET_MS)
    );
    println!(
        "  rung-3 edit : {rung3_ms:>7.2} ms (target < {TARGET_MS} ms): {}",
        verdict(rung3_ms < TARGET_MS)
    );
    println!("  sed -i      : {sed_ms:>7.2} ms (exact substitution, no fsync, no diff)");
    println!("  ratio exact/sed: {:.2}x", exact_ms / sed_ms);
    println!("  of which: atomic write + fsync {write_ms:.2} ms, line diff {diff_ms:.2} ms");
}

/// Medians of two parts of an edit on their own: the atomic write and the line diff.
fn components(runtime: &tokio::runtime::Runtime, file: &Path) -> (f64, f64) {
    let files = FileMutation::new();
    let before = std::fs::read_to_string(file).unwrap();
    let after = before.replacen("total_15000 = value + ", "total_15000 = value * ", 1);
    let mut writes = Vec::new();
    let mut diffs = Vec::new();
    for _ in 0..ITERATIONS {
        let start = Instant::now();
        runtime
            .block_on(files.write(file, after.clone().into_bytes()))
            .unwrap();
        writes.push(start.elapsed());
        let start = Instant::now();
        let diff = FileDiff::new("big.py", DiffStatus::Modified, &before, &after);
        diffs.push(start.elapsed());
        assert_eq!((diff.additions, diff.deletions), (1, 1));
    }
    (ms(median(&mut writes)), ms(median(&mut diffs)))
}

fn measure(
    runtime: &tokio::runtime::Runtime,
    tool: &Tool,
    ctx: &Context,
    input: impl Fn(&str, &str) -> Value,
    rung: &str,
) -> f64 {
    let mut times = Vec::new();
    for i in 0..ITERATIONS {
        let (from, to) = if i % 2 == 0 {
            ("value + 1", "value + 2")
        } else {
            ("value + 2", "value + 1")
        };
        let call = Call::new("bench", "edit", input(from, to));
        let start = Instant::now();
        let output = runtime.block_on(tool.run_unbounded(&call, ctx)).unwrap();
        times.push(start.elapsed());
        assert_eq!(
            output.structured["matchedWith"],
            json!(rung),
            "{}",
            output.structured
        );
    }
    ms(median(&mut times))
}

/// A Python module of 100k lines: classes of 3-line methods with unique bodies.
fn source() -> String {
    let mut out = String::with_capacity(LINES * 40);
    let (mut n, mut lines) = (0, 0);
    while lines < LINES {
        if n % 100 == 0 {
            out.push_str(&format!("class Block{}:\n", n / 100));
            lines += 1;
        }
        out.push_str(&format!(
            "    def method_{n}(self, value):\n        total_{n} = value + 1\n        return total_{n}\n"
        ));
        lines += 3;
        n += 1;
    }
    out
}

fn edit_tool(dir: &Path, data: &Path) -> Tool {
    common::builtin("edit", dir, data)
}
