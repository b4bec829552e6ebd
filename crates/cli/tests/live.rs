//! Live progress: at a terminal (a real pty), `tackle call bash` shows the command's output as
//! it runs, on stderr, and still prints the model's result; piped, it shows nothing extra.

use std::io::Read as _;
use std::process::Stdio;
use std::time::Duration;

use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};

use crate::Workspace;

const COMMAND: &str = r#"{"command":"for i in 1 2 3; do echo tick$i; sleep 0.2; done"}"#;

#[test]
fn at_a_terminal_a_command_s_output_streams_as_it_runs() {
    let ws = Workspace::new();
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let terminal = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tackle"))
        .arg("--data-dir")
        .arg(ws.data.path())
        .env("HOME", ws.data.path())
        .env_remove("RUST_LOG")
        .env_remove("TACKLE_LOG")
        .args(["call", "bash", COMMAND, "--yes", "--dir"])
        .arg(ws.dir.path())
        .stdin(Stdio::null())
        .stdout(terminal.try_clone().unwrap())
        .stderr(terminal)
        .spawn()
        .unwrap();
    // Read everything the terminal shows until the child is done with it.
    let reader = std::thread::spawn(move || {
        let mut master = std::fs::File::from(master);
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
    let shown = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    // Once as it ran (stderr), once in the model's result (stdout).
    assert_eq!(shown.matches("tick1").count(), 2, "{shown}");
    assert_eq!(shown.matches("tick3").count(), 2, "{shown}");
    // All of the live output comes before the result.
    let live_end = shown.find("tick3").unwrap();
    let result_start = shown.match_indices("tick1").nth(1).unwrap().0;
    assert!(live_end < result_start, "{shown}");
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
