//! Starting one command so that it cannot hang the call or outlive it.
//!
//! - The shell leads a new process group, with stdin from `/dev/null` and the given
//!   environment, and never has a controlling terminal (opening `/dev/tty` fails at once): when
//!   the host has one, the shell also starts a new session. (`setsid` costs milliseconds on
//!   kernels with scheduler autogroups, and forces fork instead of posix_spawn, so it is only
//!   paid when there is a terminal to leave.)
//! - Its stdout and stderr pipes are widened to hold what the capture keeps (Linux), so a fast
//!   writer is not paused every 64 KiB until this process gets to read.
//! - This process becomes a child subreaper first, and the command carries the call's marker
//!   variable, so processes that leave the group are still found ([`tree`](super::tree)).
//! - A blocking thread ([`supervise`](super::supervise)) then owns the command: it reads
//!   stdout and stderr into bounded captures, returns when the main process exits (terminating
//!   what is left of its group and every other process of the call), enforces the timeout
//!   (TERM, KILL after 3 s), and terminates them all when the call is cancelled or its future
//!   dropped.

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use process_wrap::std::{CommandWrap, ProcessGroup, ProcessSession};
use rustix::fs::{Mode, OFlags};
use rustix::pipe::{PipeFlags, pipe_with};
use rustix::process::Pid;
use tackle_tool_core::ProgressSink;
use tokio_util::sync::CancellationToken;

use super::containment::JobContainment;
use super::group::GroupGuard;
use super::guardian::Guardian;
use super::live::Live;
use super::supervise::{Ending, Finished, Outcome, Watch, supervise};
use super::tree::{self, Tree};
use super::{namespace, pdeath};
use crate::blocking::blocking;

/// What to run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Job<'a> {
    pub(crate) shell: &'a Path,
    pub(crate) command: &'a str,
    pub(crate) cwd: &'a Path,
    pub(crate) env: &'a [(OsString, OsString)],
    pub(crate) timeout: Duration,
    /// Bytes kept per stream.
    pub(crate) capture_limit: usize,
    /// Where the output goes as it arrives, besides the captures.
    pub(crate) progress: &'a ProgressSink,
}

/// Why a command could not be run to an ending.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    #[error("cannot start {shell}: {source}")]
    Spawn {
        shell: String,
        #[source]
        source: io::Error,
    },
    #[error("cannot wait for the command: {0}")]
    Wait(#[source] io::Error),
    /// The call was cancelled; the group is being terminated.
    #[error("the command was cancelled")]
    Cancelled,
}

/// Runs `job` to its end, its timeout, or `cancel`.
pub(crate) async fn run(job: Job<'_>, cancel: &CancellationToken) -> Result<Finished, RunError> {
    let started = Instant::now();
    let command = job.command;
    let (watch, wake_sender) = start(job, None, None)?;
    let pid = watch.leader.as_raw_nonzero().get();
    let ended = |exit: &dyn std::fmt::Display| {
        tracing::info!(
            pid,
            command,
            exit = %exit,
            duration_ms = started.elapsed().as_secs_f64() * 1000.0,
            "process ended"
        );
    };
    // The supervisor starts now and, being a blocking job, outlives this future: a cancelled
    // call returns at once and leaves it to end the process group (see below).
    let supervised = blocking(move || supervise(watch));
    // `wake_sender` lives until this returns or is dropped; either way the supervisor then
    // sees the wake pipe hang up and, unless already done, terminates the group.
    let outcome = tokio::select! {
        joined = supervised => joined,
        () = cancel.cancelled() => {
            ended(&"cancelled");
            return Err(RunError::Cancelled);
        }
    };
    drop(wake_sender);
    match &outcome {
        Ok(Outcome::Finished(finished)) => match finished.ending {
            Ending::Exited(status) => ended(&status),
            Ending::TimedOut => ended(&"timed out"),
        },
        Ok(Outcome::Abandoned) => ended(&"cancelled"),
        Ok(Outcome::Failed(err)) => ended(err),
        Err(stopped) => ended(stopped),
    }
    match outcome {
        Ok(Outcome::Finished(finished)) => Ok(finished),
        Ok(Outcome::Abandoned) => Err(RunError::Cancelled),
        Ok(Outcome::Failed(err)) => Err(RunError::Wait(err)),
        Err(stopped) => Err(RunError::Wait(io::Error::other(stopped))),
    }
}

/// Starts `job` and returns what supervises it, with the sending end of its wake pipe:
/// dropping that (or writing to it) makes the supervisor terminate everything of the job.
/// `tap` also gets the output; with `die_with_host`, the job is started so that its processes
/// die when the thread calling this ends (a background job's supervising thread, which lives
/// as long as the job), as the [`JobContainment`] says: in a PID namespace of its own
/// ([`namespace`](super::namespace)) where possible, else watched by a
/// [`guardian`](super::guardian), its shell started with a parent death signal.
pub(crate) fn start(
    job: Job<'_>,
    tap: Option<Arc<Live>>,
    die_with_host: Option<JobContainment>,
) -> Result<(Watch, OwnedFd), RunError> {
    tree::become_subreaper();
    let marker = tree::marker();
    let namespace = match die_with_host {
        Some(JobContainment::Namespace) => namespace::namespace(),
        _ => None,
    };
    // Started before the job, so that it covers the job from its first instant.
    let mut guardian = match (die_with_host, namespace) {
        (Some(_), None) => Guardian::start(&marker),
        _ => None,
    };
    // Only a job needs the wrapper: finding it runs it once, which a command must not pay for.
    let mut command = match (namespace, die_with_host.and_then(|_| pdeath::wrapper())) {
        (Some(namespace), _) => {
            let mut command = namespace.command();
            command.arg(job.shell);
            command
        }
        (None, Some(setpriv)) => {
            let mut command = std::process::Command::new(setpriv);
            command.args(pdeath::ARGS).arg(job.shell);
            command
        }
        (None, None) => std::process::Command::new(job.shell),
    };
    command
        .arg("-c")
        .arg(job.command)
        .current_dir(job.cwd)
        .env_clear()
        .envs(job.env.iter().map(|(k, v)| (k, v)))
        .env(tree::MARKER, &marker)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let spawn_error = |source| RunError::Spawn {
        shell: job.shell.display().to_string(),
        source,
    };
    let mut wrapped = CommandWrap::from(command);
    if has_controlling_terminal() {
        wrapped.wrap(ProcessSession);
    } else {
        wrapped.wrap(ProcessGroup::leader());
    }
    let mut child = wrapped.spawn().map_err(spawn_error)?;
    let leader = i32::try_from(child.id())
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| spawn_error(io::Error::other("the child has no process id")))?;
    tracing::debug!(
        pid = leader.as_raw_nonzero().get(),
        command = job.command,
        namespace = namespace.is_some(),
        "process started"
    );
    if let Some(guardian) = &mut guardian {
        guardian.leader(leader);
    }
    // From here on, dropping the guard (with the watch, if it never runs) ends the group.
    let guard = GroupGuard::new(leader);
    let streams = [
        child.stdout().take().map(OwnedFd::from),
        child.stderr().take().map(OwnedFd::from),
    ];
    for stream in streams.iter().flatten() {
        widen_pipe(stream, job.capture_limit);
    }
    let (wake, wake_sender) =
        pipe_with(PipeFlags::CLOEXEC).map_err(|err| RunError::Wait(io::Error::from(err)))?;
    let tree = Tree::new(leader, &marker, &streams);
    let watch = Watch {
        child,
        leader,
        tree,
        streams,
        exit: exit_fd(leader),
        wake,
        timeout: job.timeout,
        capture_limit: job.capture_limit,
        progress: job.progress.clone(),
        guard,
        tap,
        guardian,
    };
    Ok((watch, wake_sender))
}

/// Makes the host process non-dumpable (Linux `PR_SET_DUMPABLE` 0), so that commands, which
/// run as the same user, cannot read its environment, memory or open files through
/// `/proc/<pid>` (`cat /proc/$PPID/environ`) or attach a debugger to it. Commands themselves
/// are unaffected: `exec` makes them dumpable again.
///
/// The `tackle` binary calls this at startup; a host embedding the `bash` tool should too,
/// before its first call. It is not done behind the host's back because it changes the whole
/// process: no core dumps, no debugger attaching without `CAP_SYS_PTRACE`, and `/proc/<pid>`
/// files owned by root. A process with `CAP_SYS_PTRACE` (root, usually) can still read
/// everything. Elsewhere than on Linux it does nothing.
///
/// # Errors
///
/// The operating system refused the change.
pub fn make_host_non_dumpable() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{DumpableBehavior, set_dumpable_behavior};
        set_dumpable_behavior(DumpableBehavior::NotDumpable)?;
    }
    Ok(())
}

/// The most a command's output pipe is widened to.
const PIPE_CAPACITY: usize = 1024 * 1024;

/// Lets the pipe hold as much as one stream's capture keeps (at most [`PIPE_CAPACITY`]), so a
/// command writing a lot in little time is not stopped at every 64 KiB to wait until this
/// process is scheduled and reads (on a loaded machine each stop costs a scheduler slice).
/// The kernel allocates the pages only as they are written, and they are read at once. Best
/// effort: the kernel may refuse (the user's pipe budget, `fs.pipe-max-size`); the default
/// size then stays.
#[cfg(target_os = "linux")]
fn widen_pipe(stream: &OwnedFd, capture_limit: usize) {
    let wanted = capture_limit.min(PIPE_CAPACITY);
    if rustix::pipe::fcntl_getpipe_size(stream).is_ok_and(|size| size < wanted) {
        let _ = rustix::pipe::fcntl_setpipe_size(stream, wanted);
    }
}

#[cfg(not(target_os = "linux"))]
fn widen_pipe(_stream: &OwnedFd, _capture_limit: usize) {}

/// A descriptor that becomes readable when the main process exits (Linux pidfd).
#[cfg(target_os = "linux")]
fn exit_fd(leader: Pid) -> Option<OwnedFd> {
    rustix::process::pidfd_open(leader, rustix::process::PidfdFlags::empty()).ok()
}

/// Elsewhere the exit is polled.
#[cfg(not(target_os = "linux"))]
fn exit_fd(_leader: Pid) -> Option<OwnedFd> {
    None
}

/// True when this process has a controlling terminal, which a child in the same session
/// could open.
fn has_controlling_terminal() -> bool {
    rustix::fs::open(
        "/dev/tty",
        OFlags::RDONLY | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .is_ok()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use rustix::pipe::{fcntl_getpipe_size, pipe};

    use super::*;

    #[tokio::test]
    async fn a_command_starts_its_shell_without_looking_for_the_job_wrapper() {
        // Looking for it runs `setpriv` twice: a cost only jobs may pay. (nextest runs each
        // test in a process of its own; where another test looked first, there is no check.)
        if pdeath::looked_for() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let progress = ProgressSink::default();
        let job = Job {
            shell: Path::new("/bin/sh"),
            command: "echo ok",
            cwd: dir.path(),
            env: &[],
            timeout: Duration::from_secs(30),
            capture_limit: 1024,
            progress: &progress,
        };
        let finished = run(job, &CancellationToken::new()).await.unwrap();
        assert!(matches!(finished.ending, Ending::Exited(status) if status.success()));
        assert_eq!(finished.stdout.head, b"ok\n");
        assert!(
            !pdeath::looked_for(),
            "a command looked for the job wrapper"
        );
    }

    #[test]
    fn output_pipes_hold_what_the_capture_keeps() {
        let (read, _write) = pipe().unwrap();
        widen_pipe(&read, 256 * 1024);
        assert!(fcntl_getpipe_size(&read).unwrap() >= 256 * 1024);
        // Never past the cap, and never narrowed below the default.
        widen_pipe(&read, 64 * 1024 * 1024);
        assert!(fcntl_getpipe_size(&read).unwrap() <= PIPE_CAPACITY);
        let (small, _write) = pipe().unwrap();
        let default = fcntl_getpipe_size(&small).unwrap();
        widen_pipe(&small, 4096);
        assert_eq!(fcntl_getpipe_size(&small).unwrap(), default);
    }
}
