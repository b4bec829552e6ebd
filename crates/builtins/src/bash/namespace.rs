//! A PID namespace per background job, so that nothing of a job outlives the host process,
//! whatever its processes do (`&`, `setsid`, double forks, a cleared environment).
//!
//! The chain, each link started by the one before and dying with it:
//! host thread → `setpriv --pdeathsig KILL` (execs) `unshare` → (`--kill-child`) `timeout`,
//! the namespace's init → the job's shell. When the host dies the kernel kills `unshare`,
//! which kills the init; when a PID namespace's init dies, the kernel kills every process in
//! the namespace. `unshare` execs nothing itself: it stays the job's leader (the host's
//! child, leading the job's process group) and exits as the init does, so the supervisor
//! still sees the job's group, tree and exit status from outside, with host pids.
//!
//! The init is coreutils' `timeout --foreground 0` (no time limit, no group of its own), not
//! the job's shell: a namespace's init receives from outside only the signals it handles, so
//! a shell as init would ignore the TERM that `job_kill` sends first; `timeout` handles TERM
//! (and INT, HUP, ...) and passes it on. A job whose shell dies of a signal reports the exit
//! code 128 + the signal's number, as a shell would: an init cannot re-raise it on itself.
//!
//! `--mount-proc` gives the job a `/proc` of its own namespace, so `ps`, `pgrep` and `kill`
//! inside the job agree on pids. The job keeps the user, network, files, working directory
//! and environment it would have had. Without the privilege to make a PID namespace, a user
//! namespace that maps only the current user and group (`--user --map-current-user`) is
//! used: files keep their owners, but other groups show as `nogroup`, and set-user-ID
//! programs (`sudo`) cannot raise privileges inside it.
//!
//! Probed once per process with the same chain (a process that must see its own namespace
//! pid in its own `/proc` and exit with a given code); the programs are found at fixed paths
//! ([`pdeath::system_program`]), never through `PATH`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::pdeath;

/// The programs that put a job in a namespace of its own.
#[derive(Debug)]
pub(crate) struct Namespace {
    setpriv: &'static Path,
    unshare: PathBuf,
    timeout: PathBuf,
    /// A user namespace too (without the privilege to make a PID namespace directly).
    user: bool,
}

impl Namespace {
    /// A command that runs the program given next in a namespace of its own.
    pub(crate) fn command(&self) -> Command {
        let mut command = Command::new(self.setpriv);
        command.args(pdeath::ARGS).arg(&self.unshare);
        if self.user {
            command.args(["--user", "--map-current-user"]);
        }
        command
            .args(["--pid", "--fork", "--kill-child", "--mount-proc", "--"])
            .arg(&self.timeout)
            .args(["--foreground", "0"]);
        command
    }
}

/// The namespace chain that works on this system, if one does.
pub(crate) fn namespace() -> Option<&'static Namespace> {
    static FOUND: OnceLock<Option<Namespace>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            if !cfg!(target_os = "linux") {
                return None;
            }
            let setpriv = pdeath::wrapper()?;
            let unshare = pdeath::system_program("unshare")?;
            let timeout = pdeath::system_program("timeout")?;
            [false, true]
                .into_iter()
                .map(|user| Namespace {
                    setpriv,
                    unshare: unshare.clone(),
                    timeout: timeout.clone(),
                    user,
                })
                .find(works)
        })
        .as_ref()
}

/// Exits with this code only inside a working namespace.
const PROBE_CODE: i32 = 7;

/// The shell program of the probe: its pid, read from its own `/proc`, is the namespace's
/// second (the init is the first).
const PROBE: &str = "read -r pid rest < /proc/self/stat && [ \"$pid\" = 2 ] && exit 7";

/// How long the probe may take.
const PROBE_WAIT: Duration = Duration::from_secs(5);

fn works(namespace: &Namespace) -> bool {
    let Ok(mut child) = namespace
        .command()
        .args(["/bin/sh", "-c", PROBE])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.code() == Some(PROBE_CODE),
            Ok(None) if started.elapsed() < PROBE_WAIT => {
                std::thread::sleep(Duration::from_millis(2));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_job_in_the_namespace_keeps_its_directory_and_environment() {
        let Some(namespace) = namespace() else {
            // The fallback (the guardian) is tested on its own.
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let output = namespace
            .command()
            .args(["/bin/sh", "-c", "echo $$ $KEPT; pwd; id -u"])
            .current_dir(dir.path())
            .env_clear()
            .env("KEPT", "yes")
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        let uid = rustix::process::getuid().as_raw();
        let expected = format!(
            "2 yes\n{}\n{uid}\n",
            std::fs::canonicalize(dir.path()).unwrap().display()
        );
        assert_eq!(text, expected, "{output:?}");
    }

    /// The user namespace variant, as a user without privileges runs it (CI may run as any
    /// user): the same uid and gid inside, pid 2 in its own `/proc`.
    #[test]
    fn an_unprivileged_user_keeps_its_ids_in_the_user_namespace() {
        let Some(found) = namespace() else {
            return;
        };
        let variant = Namespace {
            setpriv: found.setpriv,
            unshare: found.unshare.clone(),
            timeout: found.timeout.clone(),
            user: true,
        };
        let root = rustix::process::getuid().is_root();
        let as_user = |script: &str| {
            let mut inner = variant.command();
            inner.args(["/bin/sh", "-c", script]);
            let mut command = Command::new(found.setpriv);
            if root {
                command.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
            } else {
                command.arg("--");
            }
            command
                .arg(inner.get_program())
                .args(inner.get_args())
                .current_dir("/")
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .stdin(Stdio::null())
                .output()
                .unwrap()
        };
        let probe = as_user(PROBE);
        if probe.status.code() != Some(PROBE_CODE) {
            // Unprivileged user namespaces are restricted here: such a user gets the guardian.
            eprintln!("no user namespace for an unprivileged user: {probe:?}");
            return;
        }
        let ids = as_user("echo $$ $(id -u) $(id -g)");
        let (uid, gid) = if root {
            (65534, 65534)
        } else {
            (
                rustix::process::getuid().as_raw(),
                rustix::process::getgid().as_raw(),
            )
        };
        assert_eq!(
            String::from_utf8_lossy(&ids.stdout),
            format!("2 {uid} {gid}\n"),
            "{ids:?}"
        );
    }
}
