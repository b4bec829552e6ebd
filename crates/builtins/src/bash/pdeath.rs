//! The parent death signal of a background job's shell, without `unsafe`: the shell is started
//! through util-linux's `setpriv --pdeathsig KILL`, which sets it (`PR_SET_PDEATHSIG`) and
//! execs the shell, so the job's leader keeps its pid and the flag survives the exec.
//!
//! The kernel sends the signal when the *thread* that started the process ends, which covers
//! the host being killed (`SIGKILL` included); that thread must outlive `setpriv`'s setting
//! of it (a job's thread lives as long as the job). A host killed in the instant between the
//! start and `setpriv`'s `prctl` leaves the shell without it. It only reaches the process started:
//! processes it forks do not inherit the flag, so the rest of a job is ended by its PID
//! namespace ([`namespace`](super::namespace), where `setpriv` starts `unshare`) or its
//! [`guardian`](super::guardian).
//!
//! Found at fixed paths, never through `PATH` (which a project's configuration may set), and
//! tried once: a `setpriv` too old for `--pdeathsig` (util-linux before 2.33), or none, leaves
//! jobs started without the flag.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The arguments before the shell.
pub(crate) const ARGS: &[&str] = &["--pdeathsig", "KILL", "--"];

/// The only directories system programs that start jobs are taken from: a project's
/// configuration may set `PATH`, these are the system's own.
const SYSTEM_DIRS: &[&str] = &["/usr/bin", "/bin"];

/// The system program `name`, from [`SYSTEM_DIRS`], if it is there.
pub(crate) fn system_program(name: &str) -> Option<PathBuf> {
    SYSTEM_DIRS
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|path| path.is_file())
}

/// The `setpriv` found, once looked for.
static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();

/// A `setpriv` that sets the parent death signal, if this system has one.
pub(crate) fn wrapper() -> Option<&'static Path> {
    FOUND
        .get_or_init(|| {
            if !cfg!(target_os = "linux") {
                return None;
            }
            SYSTEM_DIRS
                .iter()
                .map(|dir| Path::new(dir).join("setpriv"))
                .find(|path| works(path))
        })
        .as_deref()
}

/// True once this process has looked for the wrapper (which runs it).
#[cfg(test)]
pub(crate) fn looked_for() -> bool {
    FOUND.get().is_some()
}

/// Whether `setpriv` takes the arguments (running itself again, so nothing else is needed).
fn works(setpriv: &Path) -> bool {
    Command::new(setpriv)
        .args(ARGS)
        .arg(setpriv)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn the_shell_dies_with_the_thread_that_started_it() {
        let Some(setpriv) = wrapper() else {
            // Nothing to check on a system without it; the docs state the fallback.
            return;
        };
        let mut child = std::thread::spawn(move || {
            let child = Command::new(setpriv)
                .args(ARGS)
                .args(["/bin/sh", "-c", "exec sleep 1000"])
                .spawn()
                .unwrap();
            // The thread must outlive setpriv's setting of the flag (a job's thread lives as
            // long as the job): once `sleep` runs, it is set.
            let comm = format!("/proc/{}/comm", child.id());
            while std::fs::read_to_string(&comm).is_ok_and(|name| name.trim() != "sleep") {
                std::thread::sleep(Duration::from_millis(5));
            }
            child
        })
        .join()
        .unwrap();
        let started = Instant::now();
        let state = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| stat[stat.rfind(')')? + 2..].chars().next())
        };
        while state(child.id()) != Some('Z') && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let killed = state(child.id()) == Some('Z');
        let _ = child.kill();
        let status = child.wait().unwrap();
        assert!(
            killed,
            "the sleep outlived the thread that started it: {status:?}"
        );
    }
}
