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

/// Starts `tackle audit tail -f -n 0 --file <log>`; its stdout's lines arrive on the receiver.
fn follower(
    ws: &Workspace,
    log: &Path,
) -> (
    std::process::Child,
    std::sync::mpsc::Receiver<serde_json::Value>,
) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tackle"))
        .arg("--data-dir")
        .arg(ws.data.path())
        .env("HOME", ws.data.path())
        .args(["audit", "tail", "-f", "-n", "0", "--file"])
        .arg(log)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Following once it holds the log open: a record appended before would be skipped (`-n 0`).
    let fds = format!("/proc/{}/fd", child.id());
    let log = std::fs::canonicalize(log).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_dir(&fds)
        .unwrap()
        .any(|fd| std::fs::read_link(fd.unwrap().path()).is_ok_and(|target| target == log))
    {
        assert!(
            Instant::now() < deadline,
            "the follower never opened {log:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let stdout = child.stdout.take().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead as _;
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(serde_json::from_str(&line).unwrap()).is_err() {
                break;
            }
        }
    });
    (child, receiver)
}

/// The next record the follower prints, within a generous time.
fn next(receiver: &std::sync::mpsc::Receiver<serde_json::Value>) -> serde_json::Value {
    receiver
        .recv_timeout(Duration::from_secs(30))
        .expect("the follower printed no record")
}

#[test]
fn tail_f_prints_records_as_other_processes_append_them_across_a_rotation() {
    let ws = Workspace::new();
    let log = ws.data.path().join("audit.jsonl");
    call(&ws, &log, "before", "{}");
    let (mut child, records) = follower(&ws, &log);
    // `-n 0`: nothing of what was there; the follower reads from the end.
    call(&ws, &log, "first", "{}");
    let first = next(&records);
    assert_eq!(first["tool"], "first");
    assert_eq!(first["seq"], 2);
    // This call's process rotates the log right after writing its record.
    ws.tackle(&["call", "second", "{}", "--yes"])
        .arg("--set")
        .arg(format!("audit.path={}", log.display()))
        .arg("--set")
        .arg("audit.max_bytes=1")
        .assert()
        .code(1);
    assert!(tackle_host::audit::rotated_path(&log, 1).exists());
    assert_eq!(next(&records)["tool"], "second");
    // The next record starts a new file: the follower reopens it.
    call(&ws, &log, "third", "{}");
    let third = next(&records);
    assert_eq!(third["tool"], "third");
    assert_eq!(third["seq"], 4);
    // SIGTERM ends it cleanly.
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(records.try_recv().is_err(), "nothing more was printed");
}

#[test]
fn tail_f_ends_when_its_reader_goes_away() {
    let ws = Workspace::new();
    let log = ws.data.path().join("audit.jsonl");
    call(&ws, &log, "before", "{}");
    let (mut child, records) = follower(&ws, &log);
    // The reading end of its stdout closes (the reader thread ends with the receiver).
    drop(records);
    call(&ws, &log, "after", "{}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(Instant::now() < deadline, "the follower kept running");
        std::thread::sleep(Duration::from_millis(50));
    }
}
