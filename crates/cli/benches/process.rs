//! `cargo xtask bench process`: a whole `tackle call` process against the command a user would
//! run instead, as other agents use tackle (one process per call).
//!
//! 1. `tackle call read` of a two-line file against `cat` of it. Target: at most 2x.
//! 2. `tackle call bash` of `seq 1 100000` against `sh -c 'seq 1 100000'`. Target: at most
//!    1.5x.
//!
//! Each round runs tackle once and the peer once, alternating, so both see the same machine;
//! the medians of all rounds are compared. Output goes to `/dev/null` for both.

#![allow(clippy::expect_used)] // a bench may panic on broken setup

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ROUNDS: usize = 200;

/// One process run to completion, timed from spawn to exit; it must succeed.
fn run(command: &mut Command) -> Duration {
    let start = Instant::now();
    let status = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    let elapsed = start.elapsed();
    assert!(status.success(), "{command:?} failed: {status}");
    elapsed
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn compare(
    name: &str,
    target: f64,
    mut ours: impl FnMut() -> Command,
    mut peer: impl FnMut() -> Command,
) {
    // Warm the page cache and the managed directory first.
    for _ in 0..5 {
        run(&mut ours());
        run(&mut peer());
    }
    let (mut tackle, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        tackle.push(run(&mut ours()));
        theirs.push(run(&mut peer()));
    }
    let (tackle, theirs) = (median(tackle), median(theirs));
    let ratio = tackle.as_secs_f64() / theirs.as_secs_f64();
    let verdict = if ratio <= target { "met" } else { "NOT met" };
    println!(
        "{name}: tackle {:.2} ms, peer {:.2} ms, ratio {ratio:.2}x (target <= {target:.1}x: {verdict})",
        tackle.as_secs_f64() * 1e3,
        theirs.as_secs_f64() * 1e3,
    );
}

fn tackle(dir: &Path, data: &Path, tool: &str, input: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tackle"));
    command
        .args(["call", tool, input, "--dir"])
        .arg(dir)
        .arg("--data-dir")
        .arg(data)
        .arg("--yes");
    command
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = tempfile::tempdir().expect("data dir");
    std::fs::write(dir.path().join("small.txt"), "hello\nworld\n").expect("fixture");
    println!("process: median of {ROUNDS} alternating runs of each");
    compare(
        "read a small file (vs cat)",
        2.0,
        || tackle(dir.path(), data.path(), "read", r#"{"path":"small.txt"}"#),
        || {
            let mut cat = Command::new("cat");
            cat.arg(dir.path().join("small.txt"));
            cat
        },
    );
    compare(
        "bash seq 1 100000 (vs sh -c)",
        1.5,
        || {
            tackle(
                dir.path(),
                data.path(),
                "bash",
                r#"{"command":"seq 1 100000"}"#,
            )
        },
        || {
            let mut sh = Command::new("sh");
            sh.args(["-c", "seq 1 100000"]).current_dir(dir.path());
            sh
        },
    );
}
