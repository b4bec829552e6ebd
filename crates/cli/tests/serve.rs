//! `tackle serve`: the MCP server as a real process, driven over stdio by raw JSON-RPC and by
//! the official MCP client SDKs (installed by `.ci/mcp-clients.sh`).

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::Workspace;

/// Generous: two loaded cores.
const ANSWER: Duration = Duration::from_secs(60);

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python SDK's venv; CI creates it with `.ci/mcp-clients.sh`.
fn python() -> PathBuf {
    let python = repo_root().join("target/mcp-venv/bin/python");
    assert!(
        python.exists(),
        "the MCP Python client is not installed at {}: run .ci/mcp-clients.sh once",
        python.display()
    );
    python
}

/// Runs one scenario of `tests/mcp/python_client.py` against this build's `tackle serve`.
fn python_scenario(scenario: &str) {
    let ws = Workspace::new();
    ws.write("hello.txt", "hello world\n");
    let mut client = Command::new(python());
    client.arg(client_script("python_client.py")).arg(scenario);
    run_client(client, &ws, &format!("python client scenario {scenario}"));
}

fn client_script(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp")
        .join(name)
}

/// Runs an MCP client given `tackle`, the Location and the data directory as its last
/// arguments; it must succeed and end its output with `ok`.
fn run_client(mut client: Command, ws: &Workspace, what: &str) {
    let output = client
        .arg(env!("CARGO_BIN_EXE_tackle"))
        .arg(ws.dir.path())
        .arg(ws.data.path())
        .env("HOME", ws.data.path())
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.trim_end().ends_with("ok"),
        "{what} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn python_sdk_lists_validates_and_calls_read_grep_edit_bash() {
    python_scenario("basics");
}

#[test]
fn python_sdk_without_elicitation_reads_the_needs_approval_failure() {
    python_scenario("deny");
}

#[test]
fn python_sdk_cancels_a_sleep_and_no_process_is_left() {
    python_scenario("cancel");
}

#[test]
fn python_sdk_answers_permission_asks_through_elicitation() {
    python_scenario("elicitation");
}

#[test]
fn python_sdk_gets_bash_progress_with_each_line_before_the_result() {
    python_scenario("progress");
}

#[test]
fn python_sdk_roots_list_changed_moves_the_session_and_calls_in_flight_finish() {
    python_scenario("roots");
}

/// `tackle serve` with raw pipes: every stdout line arrives on a channel.
pub(crate) struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    _ws: Workspace,
}

impl Server {
    fn start(extra: &[&str]) -> Self {
        let ws = Workspace::new();
        ws.write("hello.txt", "hello world\n");
        Self::start_in(ws, extra, &[])
    }

    /// [`Server::start`] in `ws`, with `env` added to tackle's environment.
    pub(crate) fn start_in(ws: Workspace, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tackle"))
            .arg("--data-dir")
            .arg(ws.data.path())
            .arg("serve")
            .arg("--dir")
            .arg(ws.dir.path())
            .args(extra)
            .env("HOME", ws.data.path())
            .env_remove("XDG_CONFIG_HOME")
            // A test run inside a server tackle started must not look nested.
            .env_remove("TACKLE_MCP_DEPTH")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
            _ws: ws,
        }
    }

    pub(crate) fn send(&mut self, message: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(message.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next stdout line, which must be one JSON-RPC message.
    fn recv(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(ANSWER)
            .expect("no answer from tackle serve");
        let value: Value = serde_json::from_str(&line)
            .unwrap_or_else(|err| panic!("stdout line is not JSON ({err}): {line:?}"));
        assert_eq!(value["jsonrpc"], "2.0", "not JSON-RPC: {line}");
        value
    }

    /// The answer to request `id`, skipping notifications.
    pub(crate) fn answer(&self, id: u64) -> Value {
        loop {
            let message = self.recv();
            if message["id"] == id {
                return message;
            }
        }
    }

    pub(crate) fn initialize(&mut self) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}}})
            .to_string(),
        );
        let answer = self.answer(0);
        assert_eq!(answer["result"]["serverInfo"]["name"], "tackle", "{answer}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    pub(crate) fn call(&mut self, id: u64, name: &str, arguments: &Value) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}})
            .to_string(),
        );
    }

    /// Closes stdin and waits for the process to exit.
    pub(crate) fn close(&mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + ANSWER;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "tackle serve did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmdline).contains(marker)
        {
            found.push(name);
        }
    }
    found
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + ANSWER;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn stdout_carries_only_protocol_even_when_a_command_prints() {
    let mut server = Server::start(&["--ask", "allow-once"]);
    server.initialize();
    server.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    assert!(
        server.answer(1)["result"]["tools"]
            .as_array()
            .unwrap()
            .len()
            >= 6
    );
    // A command writing to its stdout and stderr, and a failing one.
    server.call(
        2,
        "bash",
        &json!({"command": "echo to-stdout; echo to-stderr >&2; printf 'no newline'"}),
    );
    let answer = server.answer(2);
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("to-stdout") && text.contains("to-stderr"),
        "{text}"
    );
    server.call(3, "read", &json!({"path": "missing.txt"}));
    assert_eq!(server.answer(3)["result"]["isError"], true);
    // Every line so far parsed as JSON-RPC (recv asserts it); after EOF nothing else arrives.
    let lines = std::mem::replace(&mut server.lines, channel().1);
    assert!(server.close().success());
    for line in lines.try_iter() {
        let value: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["jsonrpc"], "2.0", "{line}");
    }
}

#[test]
fn malformed_json_and_unknown_methods_get_errors_and_the_session_goes_on() {
    let mut server = Server::start(&[]);
    server.initialize();
    // rmcp drops a line that is not JSON at all (nothing to answer: no id can be read); JSON
    // that is no JSON-RPC message is an "Invalid request".
    server.send("{this is not json");
    server.send(r#"{"neither": "request nor notification"}"#);
    let error = server.recv();
    assert_eq!(error["error"]["code"], -32600, "{error}");
    server.send(r#"{"jsonrpc":"2.0","id":7,"method":"no/such/method"}"#);
    let unknown = server.answer(7);
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    server.call(8, "read", &json!({"path": "hello.txt"}));
    let read = server.answer(8);
    assert_eq!(read["result"]["isError"], false, "{read}");
}

#[test]
fn a_call_before_initialize_is_refused_and_runs_nothing() {
    let mut server = Server::start(&["--ask", "allow-once"]);
    server.call(
        1,
        "bash",
        &json!({"command": "touch ran-before-initialize"}),
    );
    // The server answers with an error or closes the connection; either way nothing ran.
    let answer = server.lines.recv_timeout(ANSWER);
    if let Ok(line) = &answer {
        let value: Value = serde_json::from_str(line).unwrap();
        assert!(value.get("error").is_some(), "{value}");
    }
    let dir = server._ws.dir.path().to_owned();
    server.close();
    assert!(!dir.join("ran-before-initialize").exists());
}

#[test]
fn a_client_that_disappears_mid_call_leaves_no_process() {
    let marker = "100.5151";
    let mut server = Server::start(&["--ask", "allow-once"]);
    server.initialize();
    server.call(1, "bash", &json!({"command": format!("sleep {marker}")}));
    wait_for("the command to start", || {
        !processes_with(marker).is_empty()
    });
    let status = server.close();
    assert!(status.success(), "{status}");
    wait_for("the command to die", || processes_with(marker).is_empty());
}

#[test]
fn notifications_cancelled_kills_the_command() {
    let marker = "100.6161";
    let mut server = Server::start(&["--ask", "allow-once"]);
    server.initialize();
    server.call(1, "bash", &json!({"command": format!("sleep {marker}")}));
    wait_for("the command to start", || {
        !processes_with(marker).is_empty()
    });
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#);
    wait_for("the command to die", || processes_with(marker).is_empty());
    // The session goes on.
    server.call(2, "read", &json!({"path": "hello.txt"}));
    assert_eq!(server.answer(2)["result"]["isError"], false);
}

#[test]
fn python_sdk_over_http_with_token_origin_and_body_checks() {
    python_scenario("http");
}

/// One session reads every hostile file that once ended all sessions (PDFs that recurse,
/// repeat or inflate without end, terminal output that pads itself, a huge pattern) while a
/// second session of the same server keeps reading.
#[test]
fn python_sdk_a_session_fed_hostile_files_leaves_the_other_working() {
    python_scenario("hostile");
}

#[test]
fn http_on_a_non_loopback_address_needs_listen_and_a_token_file() {
    let ws = Workspace::new();
    let output = ws
        .tackle(&["serve", "--http", "0.0.0.0:0"])
        .timeout(ANSWER)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--listen") && stderr.contains("--token-file"),
        "{stderr}"
    );
    let output = ws
        .tackle(&["serve", "--listen", "0.0.0.0:0"])
        .timeout(ANSWER)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

#[test]
fn python_sdk_pages_a_large_result_as_a_resource_of_its_session_only() {
    python_scenario("resources");
}

#[test]
fn typescript_sdk_lists_and_calls_over_stdio() {
    let prefix = repo_root().join("target/mcp-node");
    assert!(
        prefix
            .join("node_modules/@modelcontextprotocol/sdk")
            .exists(),
        "the MCP TypeScript client is not installed under {}: run .ci/mcp-clients.sh once",
        prefix.display()
    );
    let ws = Workspace::new();
    ws.write("hello.txt", "hello world\n");
    let mut client = Command::new("node");
    client.arg(client_script("ts_client.cjs")).arg(&prefix);
    run_client(client, &ws, "TypeScript client");
}

/// Starts a background job through `server` and waits for its processes (`markers`).
fn start_job(server: &mut Server, command: &str, markers: &[&str]) {
    server.call(1, "bash", &json!({"command": command, "background": true}));
    let answer = server.answer(1);
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("Started background job job_"), "{answer}");
    wait_for("the job to start", || {
        markers.iter().all(|m| !processes_with(m).is_empty())
    });
}

#[test]
fn jobs_live_across_calls_and_end_when_the_client_disconnects() {
    let markers = ["1000.8181", "1000.8282"];
    let mut server = Server::start(&["--ask", "allow-once"]);
    server.initialize();
    // A detached process too: it must not outlive the session.
    start_job(
        &mut server,
        "setsid sleep 1000.8181 & exec sleep 1000.8282",
        &markers,
    );
    server.call(2, "job_list", &json!({}));
    let list = server.answer(2);
    assert_eq!(
        list["result"]["structuredContent"]["jobs"][0]["status"], "running",
        "{list}"
    );
    let status = server.close();
    assert!(status.success(), "{status}");
    // The server waited for them before it exited.
    for marker in markers {
        assert!(
            processes_with(marker).is_empty(),
            "{marker} outlived tackle serve"
        );
    }
}

/// Starts a job that leaves processes every way it can (a `&` child, a `setsid` one, a
/// double-forking daemon, a pipeline, one that also clears its environment), kills `tackle
/// serve` with SIGKILL, and waits until none of them runs. `serial` makes the markers unique.
fn a_killed_tackle_leaves_no_job_process(flags: &[&str], serial: u32, hidden: bool) {
    let markers: Vec<String> = (1..=6).map(|n| format!("300.{serial}{n}")).collect();
    let [a, b, c, d, e, f] = markers.clone().try_into().unwrap();
    let mut command = format!(
        "sleep {a} & setsid sleep {b} & sh -c '(sleep {c} &)' & setsid sh -c 'sleep {d} & exit' & \
         sleep {e} | cat & "
    );
    let mut expected = markers.clone();
    if hidden {
        command.push_str(&format!("setsid env -i sleep {f} & "));
    } else {
        expected.pop();
    }
    command.push_str("echo started; wait");
    let mut args = vec!["--ask", "allow-once"];
    args.extend_from_slice(flags);
    let mut server = Server::start(&args);
    server.initialize();
    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    start_job(&mut server, &command, &expected);
    server.child.kill().unwrap(); // SIGKILL
    server.child.wait().unwrap();
    let killed = std::time::Instant::now();
    // Nothing of tackle runs any more: the kernel (and the guardian, without a namespace)
    // must end them all.
    let cleanup = || {
        for marker in &expected {
            for pid in processes_with(marker) {
                let _ = Command::new("kill").args(["-KILL", &pid]).status();
            }
        }
    };
    let deadline = killed + ANSWER;
    while expected.iter().any(|m| !processes_with(m).is_empty()) {
        if std::time::Instant::now() > deadline {
            let left: Vec<&&str> = expected
                .iter()
                .filter(|m| !processes_with(m).is_empty())
                .collect();
            cleanup();
            panic!("{left:?} outlived tackle serve killed with SIGKILL");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    eprintln!("the job was gone {:?} after tackle", killed.elapsed());
}

#[test]
fn a_job_does_not_outlive_tackle_serve_killed_with_sigkill() {
    a_killed_tackle_leaves_no_job_process(&[], 1231, true);
}

#[test]
fn without_a_namespace_a_guardian_ends_the_job_of_a_killed_tackle() {
    a_killed_tackle_leaves_no_job_process(&["--no-job-namespace"], 1241, false);
}

#[test]
fn serve_ends_a_job_that_ignores_term_and_exits_within_its_wait() {
    let marker = "1000.9393";
    let mut server = Server::start(&["--ask", "allow-once"]);
    server.initialize();
    start_job(
        &mut server,
        &format!("trap '' TERM; sleep {marker} & wait"),
        &[marker],
    );
    let closed = Instant::now();
    let status = server.close();
    let waited = closed.elapsed();
    eprintln!("tackle serve exited {waited:?} after its client left");
    assert!(status.success(), "{status}");
    // At most the 10 s it waits for jobs, with slack for a loaded machine.
    assert!(waited < Duration::from_secs(15), "{waited:?}");
    assert!(
        processes_with(marker).is_empty(),
        "the job outlived tackle serve"
    );
}

#[test]
fn the_programs_that_start_jobs_are_never_taken_from_path() {
    let ws = Workspace::new();
    let fake = ws.data.path().join("fake-bin");
    std::fs::create_dir(&fake).unwrap();
    for name in ["setpriv", "unshare", "timeout"] {
        let used = fake.join(format!("used-{name}"));
        let script = fake.join(name);
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\ntouch '{}'\nexec /usr/bin/{name} \"$@\"\n",
                used.display()
            ),
        )
        .unwrap();
        let mut permissions = std::fs::metadata(&script).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&script, permissions).unwrap();
    }
    let path = format!("{}:/usr/bin:/bin", fake.display());
    let marker = "1000.6464";
    let mut server = Server::start_in(ws, &["--ask", "allow-once"], &[("PATH", &path)]);
    server.initialize();
    start_job(&mut server, &format!("sleep {marker}"), &[marker]);
    server.call(2, "bash", &json!({"command": "echo blocking"}));
    let answer = server.answer(2);
    assert!(answer.to_string().contains("blocking"), "{answer}");
    let used: Vec<_> = std::fs::read_dir(&fake)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("used-"))
        .collect();
    assert!(server.close().success());
    assert!(used.is_empty(), "taken from PATH: {used:?}");
    assert!(processes_with(marker).is_empty());
}
