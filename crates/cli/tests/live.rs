//! Live progress: at a terminal (a real pty), `tackle call bash` shows the command's output as
//! it runs, on stderr, and still prints the model's result; a search that has run over a second
//! shows a progress line, cleared before the result; piped, it shows nothing extra.

use std::io::{Read as _, Write as _};
use std::process::Stdio;
use std::time::Duration;

use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};

use crate::Workspace;

const COMMAND: &str = r#"{"command":"for i in 1 2 3; do echo tick$i; sleep 0.2; done"}"#;

/// Runs `tackle call <args> --dir <ws>` with a real pseudo-terminal as its stdin, stdout and
/// stderr, typing `answer` (when given) after `delay`; returns what the terminal showed.
fn at_a_terminal(ws: &Workspace, args: &[&str], answer: Option<(Duration, &str)>) -> String {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let terminal = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .unwrap();
    let stdin = match answer {
        Some(_) => Stdio::from(terminal.try_clone().unwrap()),
        None => Stdio::null(),
    };
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tackle"))
        .arg("--data-dir")
        .arg(ws.data.path())
        .env("HOME", ws.data.path())
        .env_remove("RUST_LOG")
        .env_remove("TACKLE_LOG")
        .arg("call")
        .args(args)
        .arg("--dir")
        .arg(ws.dir.path())
        .stdin(stdin)
        .stdout(terminal.try_clone().unwrap())
        .stderr(terminal)
        .spawn()
        .unwrap();
    let mut master = std::fs::File::from(master);
    let typist = answer.map(|(delay, text)| {
        let mut keyboard = master.try_clone().unwrap();
        let text = text.to_owned();
        std::thread::spawn(move || {
            std::thread::sleep(delay);
            keyboard.write_all(text.as_bytes()).unwrap();
        })
    });
    // Read everything the terminal shows until the child is done with it.
    let reader = std::thread::spawn(move || {
        let mut shown = Vec::new();
        let mut buf = [0u8; 4096];
        // The read fails (EIO) once no process holds the terminal any more.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            shown.extend_from_slice(&buf[..n]);
        }
        shown
    });
    assert!(child.wait().unwrap().success());
    if let Some(typist) = typist {
        typist.join().unwrap();
    }
    String::from_utf8_lossy(&reader.join().unwrap()).into_owned()
}

#[test]
fn at_a_terminal_a_command_s_output_streams_as_it_runs() {
    let ws = Workspace::new();
    let shown = at_a_terminal(&ws, &["bash", COMMAND, "--yes"], None);
    // Once as it ran (stderr), once in the model's result (stdout).
    assert_eq!(shown.matches("tick1").count(), 2, "{shown}");
    assert_eq!(shown.matches("tick3").count(), 2, "{shown}");
    // All of the live output comes before the result.
    let live_end = shown.find("tick3").unwrap();
    let result_start = shown.match_indices("tick1").nth(1).unwrap().0;
    assert!(live_end < result_start, "{shown}");
}

/// A tree for grep: 200 files, every other one with a match.
fn haystack(ws: &Workspace) {
    for i in 0..200 {
        let text = if i % 2 == 0 { "hay\nneedle\n" } else { "hay\n" };
        ws.write(&format!("f{i}.txt"), text);
    }
}

const GREP: &str = r#"{"pattern":"needle"}"#;

#[test]
fn at_a_terminal_a_search_over_a_second_shows_a_progress_line_cleared_before_the_result() {
    let ws = Workspace::new();
    haystack(&ws);
    // The call waits for the person's answer for over a second, then searches.
    let shown = at_a_terminal(
        &ws,
        &["grep", GREP, "--set", r#"permission.grep="ask""#],
        Some((Duration::from_millis(1500), "y\n")),
    );
    let line = shown
        .find("files searched, 100 matches")
        .unwrap_or_else(|| panic!("no progress line: {shown}"));
    let result = shown.find("Found 100 matches").unwrap();
    assert!(line < result, "{shown}");
    // The line is erased before the result is printed.
    let cleared =
        shown[line..result].contains("\x1b[2K") || shown[line..result].contains("\r\x1b[");
    assert!(cleared, "{shown:?}");
}

#[test]
fn a_quick_search_at_a_terminal_shows_no_progress_line() {
    let ws = Workspace::new();
    haystack(&ws);
    let shown = at_a_terminal(&ws, &["grep", GREP, "--yes"], None);
    assert!(shown.contains("Found 100 matches"), "{shown}");
    assert!(!shown.contains("files searched"), "{shown}");
}

#[test]
fn piped_a_search_shows_no_progress_line() {
    let ws = Workspace::new();
    haystack(&ws);
    let out = ws
        .tackle(&["call", "grep", GREP, "--yes"])
        .env_remove("RUST_LOG")
        .env_remove("TACKLE_LOG")
        .timeout(Duration::from_secs(60))
        .assert()
        .code(0);
    assert_eq!(String::from_utf8_lossy(&out.get_output().stderr), "");
}

#[test]
fn piped_there_is_no_live_output() {
    let ws = Workspace::new();
    let out = ws
        .tackle(&["call", "bash", COMMAND, "--yes"])
        .env_remove("RUST_LOG")
        .env_remove("TACKLE_LOG")
        .timeout(Duration::from_secs(60))
        .assert()
        .code(0);
    let output = out.get_output();
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout)
            .matches("tick1")
            .count(),
        1
    );
}
