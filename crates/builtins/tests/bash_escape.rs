//! Processes that leave the command's process group — `setsid`, double forks, `nohup`,
//! `disown`, a job in its own group, daemons — are terminated with the call all the same, and
//! reaped; a host's own children are left alone.
//!
//! Each command starts `payload.sh`, which writes its pid to a file and becomes `sleep 1000`,
//! and waits until the file is written, so the escaped process exists before the shell exits.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::bash_support::{Bash, bash, settle};

/// Long before the escaped `sleep 1000` would end, with room for a loaded machine.
const AT_ONCE: Duration = Duration::from_secs(10);

/// Kills `pid` when dropped, so a failing test leaves nothing behind.
struct Cleanup(Vec<i32>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for pid in &self.0 {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// The payload in the Location, and the file it writes its pid to.
fn payload(bash: &Bash) -> (PathBuf, PathBuf) {
    let script = bash.root.join("payload.sh");
    fs::write(
        &script,
        "#!/bin/sh\necho $$ > \"$1.tmp\"\nmv \"$1.tmp\" \"$1\"\nexec sleep 1000\n",
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    (script, bash.root.join("pid"))
}

/// Whether `pid` exists at all: running, or a zombie nobody reaped.
fn exists(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Runs `start` (with `PAYLOAD` and `PIDFILE` replaced by absolute paths), waits in the same
/// command for the pid file, and checks that the call returns at once and the escaped process
/// is gone — terminated and reaped — when it does.
async fn is_terminated_with_the_call(start: &str) -> Value {
    let bash = bash();
    let (script, pidfile) = payload(&bash);
    let start = start
        .replace("PAYLOAD", &script.display().to_string())
        .replace("PIDFILE", &pidfile.display().to_string());
    let command = format!(
        "{start}\nuntil [ -s {pid} ]; do sleep 0.01; done; echo started",
        pid = pidfile.display()
    );
    let started = Instant::now();
    let out = settle(&bash.tool, json!({"command": command, "timeout": 60_000}))
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let pid: i32 = fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _cleanup = Cleanup(vec![pid]);
    let output = out.structured["output"].as_str().unwrap_or_default();
    assert!(elapsed < AT_ONCE, "{start}: {elapsed:?}: {output}");
    assert!(output.contains("started"), "{start}: {output}");
    assert!(
        !exists(pid),
        "{start}: pid {pid} survived the call: {:?}",
        fs::read_to_string(format!("/proc/{pid}/stat"))
    );
    let terminated = out.structured["terminated"].as_array().unwrap();
    assert!(
        terminated.iter().any(|t| t["pid"] == pid),
        "{start}: {pid} not reported in {terminated:?}"
    );
    out.structured
}

#[tokio::test]
async fn setsid_in_the_background() {
    is_terminated_with_the_call("setsid PAYLOAD PIDFILE &").await;
}

#[tokio::test]
async fn setsid_fork() {
    is_terminated_with_the_call("setsid -f PAYLOAD PIDFILE >/dev/null 2>&1").await;
}

#[tokio::test]
async fn a_background_subshell_started_in_the_background() {
    is_terminated_with_the_call("(PAYLOAD PIDFILE &) &").await;
}

#[tokio::test]
async fn nohup_in_the_background() {
    is_terminated_with_the_call("nohup PAYLOAD PIDFILE >/dev/null 2>&1 &").await;
}

#[tokio::test]
async fn disowned_by_bash() {
    is_terminated_with_the_call("bash -c 'setsid PAYLOAD PIDFILE & disown; exit 0' &").await;
}

#[tokio::test]
async fn a_double_fork_through_sh_c() {
    is_terminated_with_the_call(
        "sh -c 'setsid PAYLOAD PIDFILE </dev/null >/dev/null 2>&1 & exit 0'",
    )
    .await;
}

#[tokio::test]
async fn a_daemon_that_double_forks_and_closes_its_descriptors() {
    // The classic daemon: fork, setsid, fork, chdir /, close every descriptor, exec.
    is_terminated_with_the_call(
        "perl -MPOSIX -e 'fork and exit; POSIX::setsid(); fork and exit; chdir q(/); \
         POSIX::close($_) for 0..63; exec @ARGV' PAYLOAD PIDFILE",
    )
    .await;
}

#[tokio::test]
async fn start_stop_daemon_in_the_background() {
    if Command::new("start-stop-daemon")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_err()
    {
        // Debian's; the perl daemon above is the same pattern.
        eprintln!("start-stop-daemon is not installed; covered by the perl daemon");
        return;
    }
    is_terminated_with_the_call("start-stop-daemon --start --background --exec PAYLOAD -- PIDFILE")
        .await;
}

#[tokio::test]
async fn a_job_in_its_own_group() {
    // `set -m` gives every job its own process group, even without a terminal.
    is_terminated_with_the_call(
        "bash -c 'set -m; PAYLOAD PIDFILE & until [ -s PIDFILE ]; do sleep 0.01; done' 2>/dev/null",
    )
    .await;
}

#[tokio::test]
async fn an_unmarked_detached_process_is_found_through_its_living_parent() {
    // No marker (`env -i`), its own session, no output pipe: found by walking the tree while
    // its parent still runs.
    is_terminated_with_the_call(
        "sh -c 'env -i setsid PAYLOAD PIDFILE </dev/null >/dev/null 2>&1 & sleep 1' &",
    )
    .await;
}

#[tokio::test]
async fn an_orphan_that_exits_by_itself_is_reaped() {
    let bash = bash();
    let marker = bash.root.join("orphan");
    // It lives long enough to be seen (the tree is walked at least every 100 ms), then exits
    // while the command still runs; the command waits until it is a zombie.
    let command = format!(
        "(setsid sh -c 'echo $$ > {m}.tmp; mv {m}.tmp {m}; sleep 0.5' &) ; \
         until [ -s {m} ]; do sleep 0.01; done; p=$(cat {m}); \
         until grep -q '^State:.*Z' /proc/$p/status; do sleep 0.01; done",
        m = marker.display()
    );
    let out = settle(&bash.tool, json!({"command": command}))
        .await
        .unwrap();
    assert_eq!(out.structured["exitCode"], 0, "{}", out.structured);
    let pid: i32 = fs::read_to_string(&marker).unwrap().trim().parse().unwrap();
    // Reparented to this process (a subreaper) when its parent exited; a zombie left here
    // would count.
    assert!(!exists(pid), "{pid} was left as a zombie");
}

#[tokio::test]
async fn the_hosts_own_children_and_their_orphans_are_left_alone() {
    // Make this process a subreaper first, so the host's orphan below is reparented here.
    let bash = bash();
    settle(&bash.tool, json!({"command": "true"}))
        .await
        .unwrap();
    let mut child = Command::new("sleep").arg("30").spawn().unwrap();
    let spawner = Command::new("sh")
        .args(["-c", "setsid sleep 30 >/dev/null 2>&1 & echo $!"])
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    let orphan: i32 = String::from_utf8(spawner.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let child_pid = i32::try_from(child.id()).unwrap();
    let _cleanup = Cleanup(vec![child_pid, orphan]);

    let (script, pidfile) = payload(&bash);
    let command = format!(
        "setsid {} {} & until [ -s {} ]; do sleep 0.01; done",
        script.display(),
        pidfile.display(),
        pidfile.display()
    );
    let out = settle(&bash.tool, json!({"command": command}))
        .await
        .unwrap();
    let payload: i32 = fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let terminated: Vec<i64> = out.structured["terminated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["pid"].as_i64().unwrap())
        .collect();
    assert!(terminated.contains(&i64::from(payload)), "{terminated:?}");
    assert!(!exists(payload));
    for pid in [child_pid, orphan] {
        assert!(!terminated.contains(&i64::from(pid)), "{terminated:?}");
        assert!(exists(pid), "{pid}");
    }
    // The host still gets its child's exit status.
    child.kill().unwrap();
    assert!(child.wait().unwrap().code().is_none());
}

#[tokio::test]
async fn an_unmarked_orphan_in_its_own_session_is_found_through_the_output_pipe() {
    // No marker (`env -i`), its own session and group, and no living parent (`setsid -f`
    // forks and its first process exits at once, so the orphan is reparented to this
    // process): only the call's output pipe, still open as its stdout, leads to it.
    is_terminated_with_the_call("env -i setsid -f PAYLOAD PIDFILE </dev/null 2>/dev/null").await;
}
