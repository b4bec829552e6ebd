//! A user configuration whose MCP server is `tackle serve` on the same configuration: the
//! nesting stops at depth one with a clear message, the processes stay bounded, and nothing
//! outlives the top server.

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::Workspace;
use crate::serve::Server;

const ANSWER: Duration = Duration::from_secs(60);

/// The workspace's user configuration: the server `nested` is `tackle serve` with this same
/// home, so it reads this configuration and would start itself again.
fn configure_itself(ws: &Workspace) {
    let config = json!({
        "mcp": {"nested": {
            "type": "local",
            "command": [
                env!("CARGO_BIN_EXE_tackle"), "--data-dir", ws.data.path(),
                "serve", "--dir", ws.dir.path(), "--ask", "allow-once"
            ],
            "environment": {"TACKLE_MCP_DEPTH": "0"},
            "timeout": 60000
        }},
        "permission": {"nested_*": "allow"}
    });
    let dir = ws.data.path().join(".config/tackle");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tackle.json"), config.to_string()).unwrap();
}

/// The pids of the processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let running = std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|stat| {
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
        });
        if running
            && let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmdline).contains(marker)
        {
            found.push(pid);
        }
    }
    found
}

/// Counts the processes holding `marker` until `stop` (the most at once in `most`); past `bound` it kills them all (they
/// are this test's: the marker is its temporary directory), so a runaway ends here.
fn watch(
    marker: String,
    bound: usize,
    stop: Arc<AtomicBool>,
    most: Arc<AtomicUsize>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Acquire) {
            let pids = processes_with(&marker);
            most.fetch_max(pids.len(), Ordering::Relaxed);
            if pids.len() > bound {
                let deadline = Instant::now() + Duration::from_secs(30);
                loop {
                    let pids = processes_with(&marker);
                    if pids.is_empty() || Instant::now() > deadline {
                        break;
                    }
                    let _ = Command::new("kill")
                        .arg("-KILL")
                        .args(pids.iter().map(u32::to_string))
                        .status();
                    std::thread::sleep(Duration::from_millis(20));
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    })
}

/// Failed before: the servers started one another without end (the watcher counted far
/// more than two and ended them).
#[test]
fn a_configuration_that_serves_itself_nests_once_and_nothing_outlives_the_top() {
    let ws = Workspace::new();
    configure_itself(&ws);
    let marker = ws.data.path().display().to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let most = Arc::new(AtomicUsize::new(0));
    let watcher = watch(marker.clone(), 2, Arc::clone(&stop), Arc::clone(&most));
    let mut top = Server::start_in(ws, &["--ask", "allow-once"], &[]);
    top.initialize();
    top.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let listed = top.answer(1);
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    // The nested server serves its builtins; its own `nested` was not started.
    assert!(names.contains(&"nested_read"), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("nested_nested")),
        "{names:?}"
    );

    // A command of the nested server, in flight when the top goes: it must go too.
    let sleeper = format!("300.{}", std::process::id());
    top.call(
        2,
        "nested_bash",
        &json!({"command": format!("sleep {sleeper}")}),
    );
    let deadline = Instant::now() + ANSWER;
    while processes_with(&sleeper).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the nested command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Closing its input ends the top server's session, and the server.
    top.close();
    stop.store(true, Ordering::Release);
    watcher.join().unwrap();
    assert_eq!(
        most.load(Ordering::Relaxed),
        2,
        "processes of this configuration at once (top and nested)"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<u32> = processes_with(&marker)
            .into_iter()
            .chain(processes_with(&sleeper))
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "left after the top exited: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn inside_a_server_tackle_started_no_local_server_is_started() {
    let ws = Workspace::new();
    configure_itself(&ws);
    let output = ws
        .tackle(&["mcp", "list"])
        .env("TACKLE_MCP_DEPTH", "1")
        .timeout(ANSWER)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}

#[test]
fn tackle_serve_nested_deeper_than_one_refuses_to_start() {
    let ws = Workspace::new();
    for depth in ["2", "deep"] {
        let output = ws
            .tackle(&["serve"])
            .env("TACKLE_MCP_DEPTH", depth)
            .timeout(ANSWER)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        assert!(output.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&output.stderr);
        if depth == "2" {
            insta::assert_snapshot!(stderr);
        } else {
            assert!(stderr.contains("nested deeper than 1"), "{stderr}");
        }
    }
}
