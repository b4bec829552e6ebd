//! `cargo xtask bench process`: a whole `tackle call` process against the command a user would
//! run instead, as other agents use tackle (one process per call).
//!
//! 1. `tackle call read` of a two-line file against `cat` of it. Target: at most 2x.
//! 2. `tackle call bash` of `seq 1 100000` against `sh -c 'seq 1 100000'`. Target: at most
//!    1.5x.
//! 3. `tackle call apply_patch` of 1,000 chunks on a 100,000-line file against the codex CLI's
//!    `apply_patch` on the same tree and patch (both read the patch from stdin; the tree is laid
//!    out afresh before each run, untimed, and checked after it). Target: at most 0.8x. The peer
//!    is found as the apply_patch bench finds it; without it, tackle is timed alone.
//! 4. `tackle call write` of 200 MiB of content read from stdin: the process's peak memory
//!    (RSS high-water mark, from GNU `time`) against the content's size. Target: at most 2.5x
//!    (the JSON input, its decoded string and the file's bytes may not all be copied again).
//!
//! tackle is the binary as `cargo xtask install` builds it (see `installed`). Each round runs
//! tackle once and the peer once, alternating, so both see the same machine; the medians of all
//! rounds are compared. Output goes to `/dev/null` for both.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a bench may panic on broken setup

// The builtins benches' helpers: the patch scenarios and the codex peer.
#[path = "../../builtins/benches/common/mod.rs"]
mod common;
mod installed;

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::patch::{big_file, check, codex_apply_patch, lay_out};

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

fn tackle(binary: &Path, dir: &Path, data: &Path, tool: &str, input: &str) -> Command {
    let mut command = Command::new(binary);
    command
        .args(["call", tool, input, "--dir"])
        .arg(dir)
        .arg("--data-dir")
        .arg(data)
        .arg("--yes");
    command
}

/// Rounds of the apply_patch case: each rewrites a 100,000-line file.
const PATCH_ROUNDS: usize = 11;

/// Runs `command` with `input` on stdin, timed from spawn to exit; it must succeed.
fn run_with_input(mut command: Command, input: &[u8]) -> Duration {
    let start = Instant::now();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    // A separate writer, so a large input cannot deadlock against the child's output.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().expect("wait");
    let elapsed = start.elapsed();
    writer.join().expect("writer").expect("write stdin");
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    elapsed
}

fn apply_patch(binary: &Path, data: &Path) {
    let scenario = big_file();
    let scratch = tempfile::tempdir().expect("scratch");
    let work = scratch.path().join("work");
    let peer = codex_apply_patch(&scratch.path().join("peer"));
    let input = serde_json::json!({ "patchText": scenario.patch }).to_string();
    let (mut tackle_times, mut codex_times) = (Vec::new(), Vec::new());
    for _ in 0..PATCH_ROUNDS {
        lay_out(&work, &scenario.input);
        let mut ours = tackle(binary, &work, data, "apply_patch", "-");
        ours.current_dir(&work);
        tackle_times.push(run_with_input(ours, input.as_bytes()));
        check(&work, &scenario.expected, "tackle").unwrap();
        if let Ok(codex) = &peer {
            lay_out(&work, &scenario.input);
            let mut theirs = Command::new(codex);
            theirs.current_dir(&work);
            codex_times.push(run_with_input(theirs, scenario.patch.as_bytes()));
            check(&work, &scenario.expected, "codex").unwrap();
        }
    }
    let ours = median(tackle_times);
    match peer {
        Ok(_) => {
            let theirs = median(codex_times);
            let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
            let verdict = if ratio <= 0.8 { "met" } else { "NOT met" };
            println!(
                "apply_patch 1,000 chunks on 100k lines (vs codex apply_patch): tackle {:.1} ms, \
                 peer {:.1} ms, ratio {ratio:.2}x (target <= 0.8x: {verdict})",
                ours.as_secs_f64() * 1e3,
                theirs.as_secs_f64() * 1e3,
            );
        }
        Err(why) => println!(
            "apply_patch 1,000 chunks on 100k lines: tackle {:.1} ms; no ratio: {why}",
            ours.as_secs_f64() * 1e3
        ),
    }
}

/// The write of 200 MiB: tackle's peak RSS over the content's size, through GNU time.
fn write_peak(binary: &Path, data: &Path) {
    const SIZE: usize = 200 << 20;
    const TIME: &str = "/usr/bin/time";
    if !Path::new(TIME).exists() {
        println!("write 200 MiB: no measurement: GNU time ({TIME}) is not installed");
        return;
    }
    let scratch = tempfile::tempdir().expect("scratch");
    let line = format!("{}\n", "0123456789abcdef".repeat(4));
    let content = line.repeat(SIZE / line.len());
    let input = serde_json::json!({ "path": "big.txt", "content": content }).to_string();
    let mut command = Command::new(TIME);
    command
        .args(["-f", "%M"])
        .arg(binary)
        .args(["call", "write", "-"])
        .arg("--dir")
        .arg(scratch.path())
        .arg("--data-dir")
        .arg(data)
        .arg("--yes")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("wait");
    writer.join().expect("writer").expect("write stdin");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{command:?} failed: {stderr}");
    let written = std::fs::metadata(scratch.path().join("big.txt")).expect("written file");
    assert_eq!(
        written.len(),
        content.len() as u64,
        "the file holds the content"
    );
    let peak_kib: u64 = stderr
        .lines()
        .rev()
        .find_map(|line| line.trim().parse().ok())
        .expect("GNU time's %M");
    let ratio = (peak_kib * 1024) as f64 / content.len() as f64;
    let verdict = if ratio <= 2.5 { "met" } else { "NOT met" };
    println!(
        "write 200 MiB (peak RSS over content): tackle {} MiB, ratio {ratio:.2}x (target <= 2.5x: \
         {verdict})",
        peak_kib / 1024
    );
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = tempfile::tempdir().expect("data dir");
    std::fs::write(dir.path().join("small.txt"), "hello\nworld\n").expect("fixture");
    let binary = installed::tackle();
    println!("process: median of {ROUNDS} alternating runs of each");
    compare(
        "read a small file (vs cat)",
        2.0,
        || {
            tackle(
                &binary,
                dir.path(),
                data.path(),
                "read",
                r#"{"path":"small.txt"}"#,
            )
        },
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
                &binary,
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
    apply_patch(&binary, data.path());
    write_peak(&binary, data.path());
}
