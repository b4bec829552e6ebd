//! `kill -9` of a real `tackle call write` in the middle of its write: the file keeps its old or
//! its new content, glob and grep list no temporary file, and none is left once the next write
//! in the directory ran.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::Workspace;

const SIZE: usize = 8 << 20;
const ROUNDS: usize = 4;

/// A file of `SIZE` bytes of lines of `fill`.
fn content(fill: char) -> String {
    let line: String = std::iter::repeat_n(fill, 63).chain(['\n']).collect();
    line.repeat(SIZE / line.len())
}

/// Whether process `pid` has an anonymous (or named temporary) file of `dir` open: it is in
/// the middle of a write.
fn writing(pid: u32, dir: &Path) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.filter_map(Result::ok)
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .any(|open| {
            let name = open.file_name().unwrap_or_default().to_string_lossy();
            open.parent() == Some(dir) && (name.starts_with('#') || name.starts_with(".tackle-"))
        })
}

#[test]
fn a_killed_write_leaves_the_old_or_new_file_and_no_temporary_file() {
    let ws = Workspace::new();
    let dir = std::fs::canonicalize(ws.dir.path()).unwrap();
    let (old, new) = (content('a'), content('b'));
    ws.write("big.txt", &old);
    let input =
        serde_json::to_vec(&serde_json::json!({"path": "big.txt", "content": new})).unwrap();
    let exe = assert_cmd::cargo::cargo_bin("tackle");
    let mut interrupted = 0;
    for round in 0..ROUNDS {
        let mut child = Command::new(&exe)
            .args(["call", "write", "-", "--yes", "--dir"])
            .arg(&dir)
            .arg("--data-dir")
            .arg(ws.data.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let feed = {
            let input = input.clone();
            std::thread::spawn(move || {
                // The pipe breaks when the child is killed first.
                let _ = stdin.write_all(&input);
            })
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if writing(child.id(), &dir) {
                interrupted += 1;
                break;
            }
            if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        feed.join().unwrap();
        let seen = std::fs::read_to_string(dir.join("big.txt")).unwrap();
        assert!(
            seen == old || seen == new,
            "round {round}: a file of {} bytes",
            seen.len()
        );
        // glob and grep never list a temp file, even one a kill between link and rename left.
        for (tool, input) in [
            ("glob", r#"{"pattern":"**/*"}"#),
            ("grep", r#"{"pattern":"^a+$","limit":1}"#),
        ] {
            let out = ws.tackle(&["call", tool, input]).assert().code(0);
            let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
            assert!(!text.contains(".tackle-"), "round {round}: {tool}: {text}");
        }
        // The next write in the directory sweeps any temp file of a dead writer.
        ws.tackle(&[
            "call",
            "write",
            r#"{"path":"note.txt","content":"n\n"}"#,
            "--yes",
        ])
        .assert()
        .code(0);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["big.txt", "note.txt"], "round {round}: left behind");
        if seen == new {
            std::fs::write(dir.join("big.txt"), &old).unwrap();
        }
    }
    // Every round should catch the write (its sync alone takes milliseconds); one is proof.
    assert!(interrupted > 0, "no round killed a write in progress");
}

/// A temp file a killed writer left behind (by an older version, or on a filesystem without
/// anonymous files) is never listed by glob or grep.
#[test]
fn search_never_lists_temporary_files() {
    let ws = Workspace::new();
    ws.write("kept.txt", "needle\n");
    ws.write(".kept", "needle\n");
    ws.write(".tackle-1234-0-0.tmp", "needle\n");
    // glob lists hidden names only for a pattern that names them.
    let listed = ws
        .tackle(&["call", "glob", r#"{"pattern":".*"}"#])
        .assert()
        .code(0);
    let listed = String::from_utf8(listed.get_output().stdout.clone()).unwrap();
    assert!(
        listed.contains(".kept") && !listed.contains(".tackle-"),
        "{listed}"
    );
    let found = ws
        .tackle(&["call", "grep", r#"{"pattern":"needle"}"#])
        .assert()
        .code(0);
    let found = String::from_utf8(found.get_output().stdout.clone()).unwrap();
    assert!(
        found.contains("kept.txt") && !found.contains(".tackle-"),
        "{found}"
    );
}
