//! The hang suite: commands that wait for input, a pager, an editor, a background job, an
//! endless writer, a TERM-ignoring process and a (bounded, process-limited) fork bomb. Each call
//! returns within its timeout plus the grace period, and afterwards no process of the command's
//! group is alive — checked by group id in `/proc`. Every command prints `$$` first: the shell
//! leads the session, so its pid is the group id.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tackle_builtins::bash::{BashOptions, FORCE_KILL_AFTER};
use tackle_tool_core::{Context, Halt, ToolError, ToolOutput};

use crate::bash_support::{SLACK, Setup, bash, group_members, settle, settle_with, text};

/// "At once": long before the call's timeout ([`LONG_TIMEOUT_MS`]), with room for a loaded
/// machine to start the shell and its command.
const AT_ONCE: Duration = Duration::from_secs(10);

/// A timeout that a command which returns at once is nowhere near.
const LONG_TIMEOUT_MS: u64 = 60_000;

/// The group id printed as the first output line (of the model text, which carries the
/// output however large it is).
fn group_of(out: &ToolOutput) -> i32 {
    let output = text(out);
    let first = output.lines().next().unwrap();
    first
        .strip_prefix("pgid=")
        .unwrap_or_else(|| panic!("no pgid line in {output:?}"))
        .parse()
        .unwrap()
}

/// Runs `command` with `timeout_ms`, checks the time bound and that its group is empty.
async fn returns_and_leaves_nothing(command: &str, timeout_ms: u64) -> Value {
    let bash = bash();
    let started = Instant::now();
    let out = settle(
        &bash.tool,
        json!({"command": format!("echo pgid=$$; {command}"), "timeout": timeout_ms}),
    )
    .await
    .unwrap();
    let elapsed = started.elapsed();
    let bound = Duration::from_millis(timeout_ms) + FORCE_KILL_AFTER + SLACK;
    assert!(elapsed < bound, "{command}: {elapsed:?} >= {bound:?}");
    let group = group_of(&out);
    let alive = group_members(group);
    assert!(
        alive.is_empty(),
        "{command}: group {group} still has {alive:?}"
    );
    out.structured
}

#[tokio::test]
async fn cat_reads_end_of_file_at_once() {
    let started = Instant::now();
    let out = returns_and_leaves_nothing("cat", LONG_TIMEOUT_MS).await;
    assert!(started.elapsed() < AT_ONCE);
    assert_eq!(out["exitCode"], 0);
}

#[tokio::test]
async fn read_fails_at_once() {
    let started = Instant::now();
    let out = returns_and_leaves_nothing("read x; echo read=$?", LONG_TIMEOUT_MS).await;
    assert!(started.elapsed() < AT_ONCE);
    assert!(out["output"].as_str().unwrap().contains("read=1"));
}

#[tokio::test]
async fn vi_is_refused_with_a_hint_and_an_editor_that_waits_is_stopped() {
    let bash = bash();
    let result = settle(&bash.tool, json!({"command": "vi notes.txt"})).await;
    match result {
        Err(ToolError::Failure(failure)) => {
            assert!(
                failure.message.contains("interactive"),
                "{}",
                failure.message
            );
        }
        other => panic!("{other:?}"),
    }
    // Started with a command, vi is not refused; it still cannot hang the call.
    returns_and_leaves_nothing("vi -c 'sleep 100' notes.txt", 1000).await;
}

#[tokio::test]
async fn git_log_does_not_start_a_pager() {
    let bash = Setup {
        options: {
            let mut value = BashOptions::default();
            value.env = Some(vec![
                ("PATH".into(), std::env::var_os("PATH").unwrap()),
                ("HOME".into(), std::env::temp_dir().into()),
                ("PAGER".into(), "less".into()),
                ("GIT_PAGER".into(), "less".into()),
            ]);
            value
        },
        ..Setup::default()
    }
    .build();
    let command = "echo pgid=$$; git init -q . && git -c user.name=t -c user.email=t@e \
                   commit -q --allow-empty -m first-commit && git -p log --oneline";
    let started = Instant::now();
    // A pager would wait until the timeout; git itself may be slow on a loaded machine.
    let out = settle(
        &bash.tool,
        json!({"command": command, "timeout": LONG_TIMEOUT_MS}),
    )
    .await
    .unwrap();
    assert!(started.elapsed() < Duration::from_millis(LONG_TIMEOUT_MS) + FORCE_KILL_AFTER + SLACK);
    let output = out.structured["output"].as_str().unwrap();
    assert!(output.contains("first-commit"), "{output}");
    assert_eq!(out.structured["exitCode"], 0, "{output}");
    assert!(group_members(group_of(&out)).is_empty());
}

#[tokio::test]
async fn a_background_job_does_not_hold_the_call_and_is_terminated() {
    let started = Instant::now();
    // The shell waits until the job runs `sleep` (until then it is a copy of the shell, named
    // like it), so the report names what the test expects.
    let command = "sleep 1000 & until [ \"$(cat /proc/$!/comm)\" = sleep ]; do sleep 0.01; done; \
                   echo started";
    let out = returns_and_leaves_nothing(command, LONG_TIMEOUT_MS).await;
    assert!(started.elapsed() < AT_ONCE);
    assert_eq!(out["exitCode"], 0);
    assert_eq!(out["terminated"][0]["command"], "sleep 1000");
    let output = out["output"].as_str().unwrap();
    assert!(
        output.contains(
            "[terminated 1 process still running after the command exited: sleep 1000 (pid "
        ),
        "{output}"
    );
}

#[tokio::test]
async fn an_endless_writer_is_stopped_at_the_timeout_with_counted_output() {
    let out = returns_and_leaves_nothing("yes", 1000).await;
    assert_eq!(out["timedOut"], true);
    assert_eq!(out["stdoutTruncated"], true);
    assert!(out["stdoutDroppedBytes"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn a_process_ignoring_term_is_killed_after_the_grace_period() {
    let started = Instant::now();
    let out = returns_and_leaves_nothing("trap '' TERM; sleep 1000; :", 500).await;
    assert!(
        started.elapsed() >= FORCE_KILL_AFTER,
        "killed before the grace period"
    );
    assert_eq!(out["timedOut"], true);
    assert!(
        out["output"]
            .as_str()
            .unwrap()
            .contains("some ignored TERM and were killed")
    );
}

/// Processes the fork bomb may add to its user's count: the structural bound (255 shells and
/// their 255 sleeps) with room to spare.
const BOMB_PROCESSES: usize = 600;

#[tokio::test]
async fn a_fork_bomb_is_stopped_by_the_timeout() {
    // Exponential and TERM-proof, but bounded twice, so that the machine survives a failing
    // test (pid_max is shared with everything else running here): by its depth (2^8 shells),
    // and by the kernel, through the process limit of `under_process_limit`.
    let bomb = "trap \"\" TERM; b() { if [ $1 -gt 0 ]; then b $(($1-1)) & b $(($1-1)) & fi; \
                sleep 1000; }; b 7";
    let out = returns_and_leaves_nothing(&under_process_limit(bomb, BOMB_PROCESSES), 1500).await;
    assert_eq!(out["timedOut"], true, "{out}");
    assert!(out["terminated"].as_array().unwrap().len() > 50, "{out}");
}

/// `script` (free of single quotes) run by a bash that may start at most `extra` processes
/// beyond what its user runs now: `ulimit -u` (RLIMIT_NPROC, which bash has and the tool's
/// `sh` may not) counts every task of the real user; a limit that cannot be set ends the
/// command before the script runs. Root is exempt from that limit, so as root the script runs
/// as `nobody` (by `setpriv`). Both `exec`: the pid, and so the group, stay the same.
fn under_process_limit(script: &str, extra: usize) -> String {
    const NOBODY: u32 = 65_534;
    assert!(!script.contains('\''), "{script}");
    let me = real_uid(std::process::id()).unwrap();
    let user = if me == 0 { NOBODY } else { me };
    // Only ever lowered: a soft limit already below stays.
    let limit = (tasks_of(user) + extra).min(process_limit().unwrap_or(usize::MAX));
    let limited = format!("bash -c 'ulimit -S -u {limit} || exit 97; {script}'");
    if me == 0 {
        // Without setpriv (util-linux) or the right to change user, the output says so.
        format!("exec setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups -- {limited}")
    } else {
        format!("exec {limited}")
    }
}

/// The real user id of process `pid`, from `/proc`.
fn real_uid(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// This process's soft RLIMIT_NPROC, from `/proc`; `None` if unlimited.
fn process_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let line = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max processes"))
        .unwrap();
    line.split_whitespace().next()?.parse().ok()
}

/// The tasks (threads included, as RLIMIT_NPROC counts them) whose real user is `user`.
fn tasks_of(user: u32) -> usize {
    let mut tasks = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if real_uid(pid) != Some(user) {
            continue;
        }
        tasks += std::fs::read_dir(format!("/proc/{pid}/task")).map_or(1, Iterator::count);
    }
    tasks
}

#[tokio::test]
async fn a_cancelled_call_halts_and_its_group_is_terminated() {
    let bash = bash();
    let ctx = Context::new("ses_1");
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        cancel.cancel();
    });
    let marker = bash.root.join("pgid");
    let command = format!("echo $$ > {}; trap '' TERM; sleep 1000", marker.display());
    let started = Instant::now();
    let result = settle_with(&bash.tool, json!({"command": command}), &ctx).await;
    assert!(
        matches!(result, Err(ToolError::Halt(Halt::Cancelled))),
        "{result:?}"
    );
    // Cancelled at 0.5 s, the call halts before the group's KILL (0.5 s + the grace period)
    // would even be sent: it does not wait for the TERM-ignoring group.
    assert!(started.elapsed() < FORCE_KILL_AFTER);
    let group: i32 = std::fs::read_to_string(&marker)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // TERM is ignored: KILL follows after the grace period.
    let deadline = Instant::now() + FORCE_KILL_AFTER + SLACK;
    while !group_members(group).is_empty() {
        assert!(
            Instant::now() < deadline,
            "group {group} survived cancellation"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_process_that_leaves_the_group_cannot_hold_the_call() {
    let bash = bash();
    let started = Instant::now();
    let out = settle(
        &bash.tool,
        // The shell waits until the child has left (its session is its own pid): a child still in
        // the group when the shell exits is killed with it, which is not the case under test.
        json!({"command": "setsid sleep 30 & p=$!; \
            until [ \"$(cut -d' ' -f6 /proc/$p/stat)\" = \"$p\" ]; do sleep 0.01; done; \
            echo escaped=$p"}),
    )
    .await
    .unwrap();
    // Far less than the escaped `sleep 30`, which held the output pipes open.
    assert!(started.elapsed() < AT_ONCE);
    let output = out.structured["output"].as_str().unwrap().to_owned();
    let pid: i32 = output
        .lines()
        .find_map(|l| l.strip_prefix("escaped="))
        .unwrap()
        .parse()
        .unwrap();
    // It left the group, yet it is the call's: terminated (and reaped), so the pipes closed
    // and the output is complete.
    let alive = std::path::Path::new(&format!("/proc/{pid}")).exists();
    if alive {
        let _ = std::process::Command::new("kill")
            .arg(pid.to_string())
            .status();
    }
    assert!(!alive, "{pid} survived the call");
    // Named `setsid sleep 30` if it is seen between setsid and exec.
    let command = out.structured["terminated"][0]["command"].as_str().unwrap();
    assert!(command.ends_with("sleep 30"), "{command}");
    assert!(out.structured.get("outputIncomplete").is_none(), "{output}");
    assert!(!output.contains("[output reading stopped"), "{output}");
}
