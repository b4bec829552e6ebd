//! Background jobs with real processes: `bash` with `background: true`, `job_output`,
//! `job_kill`, `job_list`, sessions that end their jobs, the per-session limit, and a command
//! kept as a job at its timeout.

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tackle_builtins::LocationServices;
use tackle_builtins::bash::{JOB_OUTPUT_BYTES, JobContainment, JobStore, MAX_RUNNING_JOBS};
use tackle_permission::{Effect, Permission, Reply, Rule, Ruleset, SavedApprovals};
use tackle_tool_core::{Call, Context, Tool, ToolError, ToolOutput};

use crate::bash_support::SLACK;
use crate::interactive_support::{built, services_at};

/// Generous: two loaded cores.
const WAIT: Duration = Duration::from_secs(30);

struct Jobs {
    services: LocationServices,
    root: PathBuf,
    _dir: tempfile::TempDir,
}

impl Jobs {
    fn new() -> Self {
        Self::with_store(JobStore::new())
    }

    fn in_mode(mode: JobContainment) -> Self {
        Self::with_store(JobStore::with_containment(mode))
    }

    fn with_store(store: JobStore) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let permission = Permission::new(
            Ruleset::new(vec![Rule::new("*", "*", Effect::Allow)]),
            SavedApprovals::in_memory(),
            Arc::new(tackle_permission::AnswerAll(Reply::Reject {
                message: None,
            })),
        );
        let services = services_at(&root, permission).with_jobs(store);
        Self {
            services,
            root,
            _dir: dir,
        }
    }

    fn store(&self) -> &JobStore {
        self.services.jobs()
    }

    async fn call(&self, tool: &str, input: Value, session: &str) -> Result<ToolOutput, ToolError> {
        let tool: Tool = built(&self.services, tool);
        tool.run_unbounded(&Call::new("call_1", "x", input), &Context::new(session))
            .await
    }

    async fn ok(&self, tool: &str, input: Value, session: &str) -> ToolOutput {
        self.call(tool, input, session)
            .await
            .unwrap_or_else(|err| panic!("{tool}: {err:?}"))
    }

    /// Starts `command` as a job of `session`; its id.
    async fn start(&self, command: &str, session: &str) -> (String, ToolOutput) {
        let out = self
            .ok(
                "bash",
                json!({"command": command, "background": true}),
                session,
            )
            .await;
        let id = out.structured["jobId"]
            .as_str()
            .unwrap_or_else(|| panic!("no job id: {}", out.structured))
            .to_owned();
        (id, out)
    }
}

fn text(out: &ToolOutput) -> String {
    out.content
        .iter()
        .filter_map(|part| part.as_text())
        .collect::<Vec<_>>()
        .join("")
}

/// Processes whose command line contains `marker` (zombies have none).
fn processes_with(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(cmdline) = fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmdline).contains(marker)
        {
            found.push(pid);
        }
    }
    found
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Kills what a failing test left behind.
struct Cleanup(Vec<String>);

impl Cleanup {
    fn new(markers: &[impl AsRef<str>]) -> Self {
        Self(markers.iter().map(|m| m.as_ref().to_owned()).collect())
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for marker in &self.0 {
            for pid in processes_with(marker) {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// `text` with its markers (`1000.` numbers, the watcher's line) made distinct per mode: the
/// tests of both modes run at once and must not see each other's processes.
fn mark(mode: JobContainment, text: &str) -> String {
    match mode {
        JobContainment::Guardian => text
            .replace("1000.", "1001.")
            .replace("tackle-watch-line", "tackle-guarded-line"),
        _ => text.to_owned(),
    }
}

/// The tests above, once per containment of the jobs.
macro_rules! in_both_modes {
    ($($name:ident),* $(,)?) => {
        mod namespace {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(tackle_builtins::bash::JobContainment::Namespace).await;
                }
            )*
        }
        mod guardian {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(tackle_builtins::bash::JobContainment::Guardian).await;
                }
            )*
        }
    };
}

in_both_modes!(
    an_http_server_started_as_a_job_answers_a_second_call,
    a_watcher_printing_forever_keeps_only_the_ring,
    job_kill_leaves_no_process_not_even_detached_ones,
    deleting_a_session_kills_its_jobs_and_only_them,
    a_session_runs_a_limited_number_of_jobs_and_shutdown_ends_them_all,
    a_job_finds_and_stops_its_own_processes_by_name,
);

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn an_http_server_started_as_a_job_answers_a_second_call(mode: JobContainment) {
    let jobs = Jobs::in_mode(mode);
    fs::write(jobs.root.join("page.txt"), "served by the job\n").unwrap();
    let port = free_port();
    let (id, started) = jobs
        .start(
            &format!("python3 -u -m http.server {port} --bind 127.0.0.1"),
            "ses_1",
        )
        .await;
    assert_eq!(
        started.structured.get("exitCode"),
        None,
        "{}",
        started.structured
    );
    assert!(
        text(&started).contains(&format!("Started background job {id}")),
        "{}",
        text(&started)
    );

    // It says when it is ready (in the first output, or later); the second call fetches
    // from it.
    if !text(&started).contains("Serving HTTP") {
        let ready = jobs
            .ok(
                "job_output",
                json!({"id": id, "wait_ms": 20_000, "filter": "Serving HTTP"}),
                "ses_1",
            )
            .await;
        assert!(text(&ready).contains("Serving HTTP"), "{}", text(&ready));
    }
    let fetched = jobs
        .ok(
            "bash",
            json!({"command": format!(
                "for i in $(seq 100); do curl -sf http://127.0.0.1:{port}/page.txt && exit 0; \
                 sleep 0.2; done; exit 1"
            )}),
            "ses_1",
        )
        .await;
    assert_eq!(fetched.structured["exitCode"], 0, "{}", text(&fetched));
    assert!(
        text(&fetched).contains("served by the job"),
        "{}",
        text(&fetched)
    );

    // The request shows in the job's log, then the job is killed and its port is free again.
    let log = jobs
        .ok(
            "job_output",
            json!({"id": id, "wait_ms": 10_000, "filter": "GET /page.txt"}),
            "ses_1",
        )
        .await;
    assert!(
        log.structured["output"]
            .as_str()
            .unwrap()
            .contains("GET /page.txt"),
        "{}",
        log.structured
    );
    let killed = jobs.ok("job_kill", json!({"id": id}), "ses_1").await;
    assert_eq!(
        killed.structured["status"], "killed",
        "{}",
        killed.structured
    );
    assert!(
        TcpListener::bind(("127.0.0.1", port)).is_ok(),
        "the server still listens"
    );
}

async fn a_watcher_printing_forever_keeps_only_the_ring(mode: JobContainment) {
    let line = mark(mode, "tackle-watch-line");
    let _cleanup = Cleanup::new(&[&line]);
    let jobs = Jobs::in_mode(mode);
    let (id, _) = jobs.start(&format!("yes {line}"), "ses_1").await;
    // Let it print many times the ring.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let first = jobs.ok("job_output", json!({"id": id}), "ses_1").await;
    let output = first.structured["output"].as_str().unwrap();
    let dropped = first.structured["droppedBytes"].as_u64().unwrap_or(0);
    assert!(output.len() <= JOB_OUTPUT_BYTES, "{}", output.len());
    assert!(dropped > 0, "nothing was dropped: {}", output.len());
    // The ring starts wherever the dropped bytes ended: only the first line may be cut.
    assert!(output.lines().skip(1).all(|printed| printed == line));
    assert!(line.ends_with(output.lines().next().unwrap()));
    assert!(text(&first).contains("bytes of output since the last look were dropped"));
    let list = jobs.ok("job_list", json!({}), "ses_1").await;
    assert_eq!(
        list.structured["jobs"][0]["status"], "running",
        "{}",
        list.structured
    );
    jobs.ok("job_kill", json!({"id": id}), "ses_1").await;
    assert!(processes_with(&line).is_empty());
}

async fn job_kill_leaves_no_process_not_even_detached_ones(mode: JobContainment) {
    let markers = ["1000.4242", "1000.4343", "1000.4444", "1000.4545"].map(|m| mark(mode, m));
    let _cleanup = Cleanup::new(&markers);
    let jobs = Jobs::in_mode(mode);
    let (id, started) = jobs
        .start(
            &mark(
                mode,
                "setsid sleep 1000.4242 & sleep 1000.4343 & sh -c 'setsid sleep 1000.4444 &'; \
                 (trap '' TERM; exec sleep 1000.4545) & echo started; wait",
            ),
            "ses_1",
        )
        .await;
    assert!(text(&started).contains("started"), "{}", text(&started));
    wait_until("every process to start", || {
        markers.iter().all(|m| !processes_with(m).is_empty())
    });
    let begun = Instant::now();
    let killed = jobs.ok("job_kill", json!({"id": id}), "ses_1").await;
    assert_eq!(
        killed.structured["status"], "killed",
        "{}",
        killed.structured
    );
    // TERM, the grace period for the one ignoring it, KILL.
    assert!(
        begun.elapsed() < Duration::from_secs(3) + SLACK,
        "{:?}",
        begun.elapsed()
    );
    for marker in &markers {
        assert!(
            processes_with(marker).is_empty(),
            "{marker} survived job_kill"
        );
    }
    // Its end was reported: the job is gone from the list.
    let list = jobs.ok("job_list", json!({}), "ses_1").await;
    assert_eq!(list.structured["jobs"], json!([]), "{}", list.structured);
    let again = jobs.call("job_kill", json!({"id": id}), "ses_1").await;
    assert!(again.is_err());
}

async fn deleting_a_session_kills_its_jobs_and_only_them(mode: JobContainment) {
    let [m1, m2, m3] = ["1000.5151", "1000.5252", "1000.5353"].map(|m| mark(mode, m));
    let _cleanup = Cleanup::new(&[&m1, &m2, &m3]);
    let jobs = Jobs::in_mode(mode);
    let (a, _) = jobs
        .start(&format!("setsid sleep {m1} & exec sleep {m2}"), "ses_a")
        .await;
    let (b, _) = jobs.start(&format!("exec sleep {m3}"), "ses_b").await;
    wait_until("the jobs to start", || {
        [&m1, &m2, &m3]
            .iter()
            .all(|m| !processes_with(m).is_empty())
    });
    // Another session's job is not found, exactly like a missing one.
    let foreign = jobs.call("job_output", json!({"id": a}), "ses_b").await;
    let missing = jobs
        .call("job_output", json!({"id": "job_999999"}), "ses_b")
        .await;
    let (foreign, missing) = (
        foreign.unwrap_err().to_string(),
        missing.unwrap_err().to_string(),
    );
    assert_eq!(
        foreign.replace(&a, "ID"),
        missing.replace("job_999999", "ID")
    );

    jobs.store().delete_session("ses_a");
    wait_until("session a's jobs to die", || {
        processes_with(&m1).is_empty() && processes_with(&m2).is_empty()
    });
    assert!(
        !processes_with(&m3).is_empty(),
        "session b's job was killed"
    );
    assert_eq!(jobs.store().running("ses_b"), 1);
    jobs.ok("job_kill", json!({"id": b}), "ses_b").await;
    assert!(processes_with(&m3).is_empty());
}

async fn a_session_runs_a_limited_number_of_jobs_and_shutdown_ends_them_all(mode: JobContainment) {
    let marker = mark(mode, "1000.6161");
    let _cleanup = Cleanup::new(&[&marker]);
    let jobs = Jobs::in_mode(mode);
    for _ in 0..MAX_RUNNING_JOBS {
        jobs.start(&format!("exec sleep {marker}"), "ses_1").await;
    }
    let refused = jobs
        .call(
            "bash",
            json!({"command": format!("exec sleep {marker}"), "background": true}),
            "ses_1",
        )
        .await
        .unwrap_err();
    insta::assert_snapshot!(refused.to_string(), @"This session already runs 8 background jobs, the most it may. Stop one with job_kill (job_list shows them) before starting another.");
    // Another session has its own limit.
    jobs.start(&format!("exec sleep {marker}"), "ses_2").await;
    // The sleeps themselves, not the programs that started them in their namespaces.
    let sleeps = processes_with(&marker)
        .into_iter()
        .filter(|pid| fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c == "sleep\n"))
        .count();
    assert_eq!(sleeps, MAX_RUNNING_JOBS + 1);
    assert!(jobs.store().shutdown(WAIT).await, "the jobs did not end");
    assert!(processes_with(&marker).is_empty());
}

/// A job finds its own processes by name and signals them (`pkill` reads `/proc`, then signals
/// the pids it read: in a namespace, both must be the namespace's).
async fn a_job_finds_and_stops_its_own_processes_by_name(mode: JobContainment) {
    let marker = mark(mode, "1000.8787");
    let _cleanup = Cleanup::new(&[&marker]);
    let jobs = Jobs::in_mode(mode);
    // Neither the pattern nor the shell's command line (nor the programs starting it) hold
    // the other.
    let pattern = format!("sleep {}", marker.replacen('.', "[.]", 1));
    let (id, started) = jobs
        .start(
            &format!(
                "m={marker}; sleep $m & sleep 0.3; pkill -f '{pattern}' && echo stopped; wait; sleep 3"
            ),
            "ses_1",
        )
        .await;
    let mut end = jobs
        .ok("job_output", json!({"id": id, "wait_ms": 20_000}), "ses_1")
        .await;
    // What the start returned, then what came after.
    let mut output = text(&started);
    output.push_str(end.structured["output"].as_str().unwrap_or(""));
    while end.structured["status"] == "running" {
        end = jobs
            .ok("job_output", json!({"id": id, "wait_ms": 20_000}), "ses_1")
            .await;
        output.push_str(end.structured["output"].as_str().unwrap_or(""));
    }
    assert_eq!(end.structured["exitCode"], 0, "{}", end.structured);
    assert!(output.contains("stopped\n"), "{output}");
    assert!(processes_with(&marker).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_output_waits_for_a_matching_line_then_for_the_end() {
    let jobs = Jobs::new();
    let (id, _) = jobs
        .start(
            // After the first look (which would show these lines), quiet at first.
            "sleep 2; for i in 1 2 3; do echo step $i; done; echo ready; sleep 0.5; echo bye; \
             exit 3",
            "ses_1",
        )
        .await;
    let ready = jobs
        .ok(
            "job_output",
            json!({"id": id, "wait_ms": 20_000, "filter": "^ready$"}),
            "ses_1",
        )
        .await;
    assert_eq!(
        ready.structured["output"], "ready\n",
        "{}",
        ready.structured
    );
    assert_eq!(ready.structured["skippedLines"], 3, "{}", ready.structured);
    let end = jobs
        .ok("job_output", json!({"id": id, "wait_ms": 20_000}), "ses_1")
        .await;
    let end = if end.structured["status"] == "running" {
        jobs.ok("job_output", json!({"id": id, "wait_ms": 20_000}), "ses_1")
            .await
    } else {
        end
    };
    assert_eq!(end.structured["status"], "exited", "{}", end.structured);
    assert_eq!(end.structured["exitCode"], 3, "{}", end.structured);
    assert!(
        text(&end).ends_with(&format!("Job {id} exited with code 3.")),
        "{}",
        text(&end)
    );
    let bad = jobs
        .call("job_output", json!({"id": id, "filter": "("}), "ses_1")
        .await
        .unwrap_err();
    assert!(bad.to_string().starts_with("Invalid filter \"(\""), "{bad}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_still_running_at_its_timeout_can_be_kept_as_a_job() {
    let jobs = Jobs::new();
    let out = jobs
        .ok(
            "bash",
            json!({"command": "echo begun; sleep 2; echo finished", "timeout": 500,
                   "background_on_timeout": true}),
            "ses_1",
        )
        .await;
    let id = out.structured["jobId"].as_str().unwrap().to_owned();
    let shown = text(&out);
    assert!(shown.starts_with("begun"), "{shown}");
    assert!(
        shown.contains(&format!(
            "Command exceeded timeout of 500 ms and keeps running as background job {id}."
        )),
        "{shown}"
    );
    let deadline = Instant::now() + WAIT;
    let mut output = String::new();
    loop {
        let look = jobs
            .ok("job_output", json!({"id": id, "wait_ms": 5_000}), "ses_1")
            .await;
        output.push_str(look.structured["output"].as_str().unwrap());
        if look.structured["status"] != "running" {
            assert_eq!(look.structured["exitCode"], 0);
            break;
        }
        assert!(Instant::now() < deadline);
    }
    assert_eq!(output, "finished\n");

    // A command that ends in time is an ordinary result.
    let quick = jobs
        .ok(
            "bash",
            json!({"command": "echo quick", "timeout": 20_000, "background_on_timeout": true}),
            "ses_1",
        )
        .await;
    assert_eq!(quick.structured.get("jobId"), None);
    assert_eq!(quick.structured["exitCode"], 0);
    assert_eq!(text(&quick), "quick\n\nCommand exited with code 0.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_refuses_jobs_says_why_before_anything_runs() {
    let jobs = Jobs::with_store(JobStore::refusing("no jobs here"));
    let marker: &Path = &jobs.root.join("ran");
    let refused = jobs
        .call(
            "bash",
            json!({"command": format!("touch {}", marker.display()), "background": true}),
            "ses_1",
        )
        .await
        .unwrap_err();
    assert_eq!(refused.to_string(), "no jobs here");
    assert!(!marker.exists());
    // The job tools are not offered.
    assert!(tackle_builtins::builtin_tool(&jobs.services, "job_output").is_none());
    assert!(tackle_builtins::builtin_tool(&jobs.services, "job_list").is_none());
}

/// `background: true` passes the same permission checks as a blocking call before anything
/// starts: a denied command, one hidden behind an allowed one, and a declined ask start no
/// job and run nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_or_declined_background_command_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let permission = Permission::new(
        Ruleset::new(vec![
            Rule::new("*", "*", Effect::Allow),
            Rule::new("bash", "touch *", Effect::Deny),
            Rule::new("bash", "sh *", Effect::Ask),
        ]),
        SavedApprovals::in_memory(),
        Arc::new(tackle_permission::AnswerAll(Reply::Reject {
            message: None,
        })),
    );
    let jobs = Jobs {
        services: services_at(&root, permission).with_jobs(JobStore::new()),
        root: root.clone(),
        _dir: dir,
    };
    for (command, outcome) in [
        ("touch ran-denied", "Permission denied"),
        ("echo ok && touch ran-behind", "Permission denied"),
        ("sh -c 'echo > ran-asked'", "declined"),
    ] {
        let refused = jobs
            .call(
                "bash",
                json!({"command": command, "background": true}),
                "ses_1",
            )
            .await
            .unwrap_err();
        let message = refused.to_string();
        match outcome {
            "declined" => assert!(
                matches!(refused, ToolError::Halt(tackle_tool_core::Halt::Declined)),
                "{command}: {message}"
            ),
            _ => assert!(message.contains(outcome), "{command}: {message}"),
        }
    }
    assert_eq!(jobs.store().running("ses_1"), 0);
    // Time for anything that had started to leave a trace.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let left: Vec<_> = fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .filter(|name| name.to_string_lossy().starts_with("ran-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let listed = jobs.ok("job_list", json!({}), "ses_1").await;
    assert!(!text(&listed).contains("ran-"), "{}", text(&listed));
}
