//! A directory whose writes fail for lack of space, made for real and chosen at run time.
//!
//! In order of preference (each test prints which one it used):
//! 1. `tmpfs`: a tmpfs of [`SIZE`] bytes mounted on a temporary directory, in this process (needs
//!    the right to mount, as root in a container has): a write past it fails with `ENOSPC`.
//! 2. `namespace`: the same tmpfs, mounted by a re-run of the test in its own user and mount
//!    namespace (`unshare --user --map-root-user --mount`), as an unprivileged user can on most
//!    Linux systems.
//! 3. `file-size-limit`: a re-run of the test with `RLIMIT_FSIZE` at [`SIZE`] and `SIGXFSZ`
//!    ignored: a write past it fails with `EFBIG`. It limits each file rather than the disk,
//!    so the tests size their writes for both: every failing write makes one file larger than
//!    [`SIZE`] (and, with the files already there, more than the tmpfs holds).
//!
//! A re-run executes only the one test (`--exact`), with `TACKLE_SMALL_FS` naming the
//! mechanism; its failure fails the parent test.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The size of the filesystem (or the file size limit).
pub(crate) const SIZE: u64 = 256 * 1024;

const CHILD: &str = "TACKLE_SMALL_FS";

/// How the full disk is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mechanism {
    Tmpfs,
    Namespace,
    FileSizeLimit,
}

impl Mechanism {
    fn name(self) -> &'static str {
        match self {
            Self::Tmpfs => "tmpfs",
            Self::Namespace => "namespace",
            Self::FileSizeLimit => "file-size-limit",
        }
    }

    /// The system's words for a failed write under this mechanism.
    pub(crate) fn error_text(self) -> &'static str {
        match self {
            Self::Tmpfs | Self::Namespace => "No space left on device (os error 28)",
            Self::FileSizeLimit => "File too large (os error 27)",
        }
    }
}

/// A directory on the small filesystem.
pub(crate) struct SmallFs {
    pub(crate) dir: PathBuf,
    pub(crate) mechanism: Mechanism,
}

impl SmallFs {
    /// `text` with this mechanism's error in the neutral words snapshots use, and `dir` as
    /// `[FS]`.
    pub(crate) fn redact(&self, text: &str) -> String {
        text.replace(
            self.mechanism.error_text(),
            "[the system's out-of-space error]",
        )
        .replace(&self.dir.display().to_string(), "[FS]")
    }
}

/// Unmounts on drop.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let done = Command::new("umount").arg(&self.0).status();
        if !done.is_ok_and(|status| status.success()) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

fn mount_tmpfs(dir: &Path) -> bool {
    Command::new("mount")
        .args(["-t", "tmpfs", "-o"])
        .arg(format!("size={SIZE},mode=0755"))
        .arg("tmpfs")
        .arg(dir)
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Runs `body` with a small filesystem; `test` is the test's full name, for a re-run.
pub(crate) fn run<F, Fut>(test: &str, body: F)
where
    F: FnOnce(SmallFs) -> Fut,
    Fut: Future<Output = ()>,
{
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let base = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(base.path()).unwrap();
    match std::env::var(CHILD).ok().as_deref() {
        Some("namespace") => {
            assert!(mount_tmpfs(&dir), "cannot mount a tmpfs in the namespace");
            let _mounted = Mounted(dir.clone());
            let mechanism = Mechanism::Namespace;
            runtime.block_on(body(SmallFs { dir, mechanism }));
        }
        Some("file-size-limit") => {
            use rustix::process::{Resource, Rlimit, setrlimit};
            let limit = Rlimit {
                current: Some(SIZE),
                maximum: Some(SIZE),
            };
            setrlimit(Resource::Fsize, limit).unwrap();
            let mechanism = Mechanism::FileSizeLimit;
            runtime.block_on(body(SmallFs { dir, mechanism }));
        }
        Some(other) => panic!("unknown {CHILD}={other}"),
        None if mount_tmpfs(&dir) => {
            let _mounted = Mounted(dir.clone());
            println!(
                "small filesystem: tmpfs of {SIZE} bytes at {}",
                dir.display()
            );
            let mechanism = Mechanism::Tmpfs;
            runtime.block_on(body(SmallFs { dir, mechanism }));
        }
        None => {
            let namespaces = Command::new("unshare")
                .args(["--user", "--map-root-user", "--mount", "true"])
                .output()
                .is_ok_and(|out| out.status.success());
            let mechanism = if namespaces {
                Mechanism::Namespace
            } else {
                Mechanism::FileSizeLimit
            };
            println!(
                "small filesystem: {} (no right to mount here), in a re-run of the test",
                mechanism.name()
            );
            rerun(test, mechanism);
        }
    }
}

/// Runs `test` again in a child process under `mechanism`, which must pass.
fn rerun(test: &str, mechanism: Mechanism) {
    let exe = std::env::current_exe().unwrap();
    let args = ["--exact", test, "--nocapture", "--test-threads=1"];
    let mut command = match mechanism {
        Mechanism::Namespace => {
            let mut command = Command::new("unshare");
            command
                .args(["--user", "--map-root-user", "--mount"])
                .arg(&exe);
            command
        }
        // An ignored signal stays ignored across exec, so the limit gives EFBIG, not a kill.
        Mechanism::FileSizeLimit | Mechanism::Tmpfs => {
            let mut command = Command::new("/bin/sh");
            command
                .args(["-c", "trap '' XFSZ; exec \"$0\" \"$@\""])
                .arg(&exe);
            command
        }
    };
    let Output {
        status,
        stdout,
        stderr,
    } = command
        .args(args)
        .env(CHILD, mechanism.name())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&stdout);
    println!("{stdout}");
    assert!(
        status.success() && stdout.contains("1 passed"),
        "the re-run under {} failed: {status}\n{stdout}\n{}",
        mechanism.name(),
        String::from_utf8_lossy(&stderr)
    );
}
