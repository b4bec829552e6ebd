//! Crash safety: a writer killed mid-write leaves the old or the new content, never a mix, and
//! no temporary file.
//!
//! The parent test starts this test binary again, running only `child_writer`, which (with
//! `TACKLE_CRASH_TARGET` set in its environment by the parent) rewrites the target forever
//! through `FileMutation`; the parent kills it at varying moments and inspects the directory.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use tackle_builtins::FileMutation;

const SIZE: usize = 8 * 1024 * 1024;
const ROUNDS: u64 = 12;

fn content(fill: u8) -> Vec<u8> {
    vec![fill; SIZE]
}

fn temp_files(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".tackle-")
        })
        .collect()
}

/// Whether process `pid` has a temporary file of `dir` open (an anonymous one shows as
/// `<dir>/#<inode> (deleted)`), i.e. is in the middle of a write.
fn writing(pid: u32, dir: &Path) -> bool {
    let dir = std::fs::canonicalize(dir).unwrap();
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.filter_map(Result::ok)
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .any(|open| open.starts_with(&dir) && !open.ends_with("target.bin") && open != dir)
}

/// As the crash test's child: rewrite the target with `a`s and `b`s until killed. On its own:
/// one such cycle, checked.
#[test]
fn child_writer() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let files = FileMutation::new();
    match std::env::var_os("TACKLE_CRASH_TARGET") {
        Some(target) => runtime.block_on(async {
            let target = Path::new(&target);
            loop {
                for fill in [b'a', b'b'] {
                    files.write(target, content(fill)).await.unwrap();
                }
            }
        }),
        None => runtime.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().join("t.bin");
            for fill in [b'a', b'b'] {
                files.write(&target, content(fill)).await.unwrap();
                assert!(std::fs::read(&target).unwrap() == content(fill));
            }
        }),
    }
}

#[test]
fn a_killed_writer_leaves_old_or_new_content() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.bin");
    std::fs::write(&target, content(b'a')).unwrap();
    let (old, new) = (content(b'a'), content(b'b'));
    let exe = std::env::current_exe().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut interrupted = 0;
    for round in 0..ROUNDS {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "files::crash::child_writer",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("TACKLE_CRASH_TARGET", &target)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(150 + (round * 53) % 250));
        if writing(child.id(), dir.path()) {
            interrupted += 1;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let seen = std::fs::read(&target).unwrap();
        assert!(
            seen == old || seen == new,
            "round {round}: a partial file of {} bytes",
            seen.len()
        );
        // A kill in the microseconds between linking the temp file and renaming it leaves it
        // named; the next write in the directory sweeps it (its writer is gone). A service
        // sweeps one directory at most once a minute, so each round's write uses a new one.
        runtime
            .block_on(FileMutation::new().write(&dir.path().join("other.bin"), b"x".to_vec()))
            .unwrap();
        let leftovers = temp_files(dir.path());
        assert!(leftovers.is_empty(), "round {round}: left {leftovers:?}");
    }
    // The kills must really have hit writes in progress, or this test proves nothing.
    assert!(interrupted > 0, "no round interrupted a write");
}
