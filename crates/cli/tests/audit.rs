//! `tackle audit`: a log written by real `tackle call` processes, one of them killed with
//! SIGKILL in the middle of its call, read back with `tail` and `show`.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::{Workspace, tackle_in};

/// Settles a call of `tool`, a name no tool has: an error result.
fn call(ws: &Workspace, log: &Path, tool: &str, input: &str) {
    ws.tackle(&["call", tool, input, "--yes"])
        .arg("--set")
        .arg(format!("audit.path={}", log.display()))
        .assert()
        .code(1);
}

fn audit(ws: &Workspace, args: &[&str], log: &Path) -> (i32, String, String) {
    let out = tackle_in(ws.data.path())
        .arg("audit")
        .args(args)
        .arg("--file")
        .arg(log)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn seqs(stdout: &str) -> Vec<u64> {
    stdout
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

#[test]
fn a_killed_call_leaves_a_log_that_reads_back_whole() {
    let ws = Workspace::new();
    let log = ws.data.path().join("audit.jsonl");
    call(&ws, &log, "nope", "{}");
    // A call killed while its command runs: its decision is logged, its result never is.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tackle"))
        .args(["--data-dir"])
        .arg(ws.data.path())
        .env("HOME", ws.data.path())
        .args(["call", "bash", r#"{"command":"sleep 5"}"#, "--yes", "--dir"])
        .arg(ws.dir.path())
        .arg("--set")
        .arg(format!("audit.path={}", log.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&log)
        .unwrap()
        .contains(r#""kind":"decision""#)
    {
        assert!(Instant::now() < deadline, "the decision was never logged");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // What a kill in the middle of a write leaves: the last record cut in half.
    let text = std::fs::read(&log).unwrap();
    let cut = text.len() - 10;
    std::fs::write(&log, &text[..cut]).unwrap();

    let (code, stdout, stderr) = audit(&ws, &["tail"], &log);
    assert_eq!(code, 0);
    assert_eq!(seqs(&stdout), [1], "the torn record is not shown: {stdout}");
    assert!(stderr.contains("line 2 skipped"), "{stderr}");

    // The next process ends the torn line and goes on numbering after the last whole record.
    call(&ws, &log, "nope", "{}");
    let (_, stdout, stderr) = audit(&ws, &["tail", "-n", "5"], &log);
    assert_eq!(seqs(&stdout), [1, 2], "{stdout}");
    assert!(stderr.contains("line 2 skipped"), "{stderr}");
    let (code, stdout, _) = audit(&ws, &["show", "2"], &log);
    assert_eq!(code, 0);
    let record: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(record["tool"], "nope");
    assert_eq!(record["result"], "error");
    let (code, _, stderr) = audit(&ws, &["show", "9"], &log);
    assert_eq!(code, 1);
    assert!(stderr.contains("no record 9"), "{stderr}");
}

#[test]
fn without_a_configured_log_audit_says_how_to_turn_it_on() {
    let ws = Workspace::new();
    ws.tackle(&["audit", "tail"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("set audit.path"));
}
