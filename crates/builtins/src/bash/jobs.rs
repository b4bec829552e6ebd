//! Background jobs: commands `bash` started with `background: true`, kept per session in a
//! [`JobStore`] the host owns, and looked at or stopped with `job_output`, `job_kill` and
//! `job_list`.
//!
//! Invariants:
//! - A job belongs to the session that started it; another session's job id is "not found",
//!   exactly like a missing one.
//! - A job's whole process tree (its group and every process that left it) is terminated
//!   when it is killed, when its session is deleted and when the store is dropped: each job's
//!   supervising thread holds the read end of a wake pipe whose other end only the store
//!   holds, so losing it, however, ends the job (TERM, then KILL after the grace period).
//! - Each job's output is a ring of [`JOB_OUTPUT_BYTES`]: memory stays there however long it
//!   prints, and what a reader missed is counted.
//! - At most [`MAX_RUNNING_JOBS`] run per session; ended jobs are kept until they are looked
//!   at after their end, or until [`MAX_KEPT_JOBS`] ended ones push out the oldest.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tackle_tool_core::ProgressSink;
use tokio::sync::watch;

use super::containment::JobContainment;
use super::live::{Live, State};
use super::process::{self, Job, RunError};
use super::supervise::{Ending, Outcome, supervise};

/// Bytes of a job's merged stdout and stderr kept in memory (the newest).
pub const JOB_OUTPUT_BYTES: usize = 256 * 1024;
/// Jobs that may run at once in one session.
pub const MAX_RUNNING_JOBS: usize = 8;
/// Ended jobs kept per session for their output and exit code.
pub const MAX_KEPT_JOBS: usize = 8;

/// A job has no timeout: it runs until it ends, is killed or its session goes.
const NO_TIMEOUT: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// The sessions' background jobs. Cheap to clone (clones share the jobs); dropping the last
/// clone kills every job.
#[derive(Clone, Default)]
pub struct JobStore {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Why this host refuses background jobs, if it does.
    refusal: Option<String>,
    containment: JobContainment,
    sessions: Mutex<HashMap<String, Vec<Entry>>>,
    next: AtomicU64,
    /// How many jobs' threads are still supervising (a job's thread outlives its entry
    /// while it terminates the processes).
    threads: Arc<watch::Sender<usize>>,
}

impl fmt::Debug for JobStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobStore")
            .field("refusal", &self.inner.refusal)
            .field("containment", &self.inner.containment)
            .finish_non_exhaustive()
    }
}

/// One job as its session sees it.
pub(crate) struct Entry {
    pub(crate) id: String,
    pub(crate) command: String,
    pub(crate) started: Instant,
    pub(crate) live: Arc<Live>,
    /// Dropping it ends the job.
    kill: Option<OwnedFd>,
    /// What the session has read (bytes written before it).
    pub(crate) cursor: u64,
    /// The end was reported to the session.
    pub(crate) end_seen: bool,
}

/// What starting a job needs, owned: it moves to the job's thread.
pub(crate) struct Spec {
    pub(crate) shell: PathBuf,
    pub(crate) command: String,
    pub(crate) cwd: PathBuf,
    pub(crate) env: Vec<(OsString, OsString)>,
}

/// Why a job was not started.
#[derive(Debug)]
pub(crate) enum StartError {
    /// The store refuses jobs, or the session has too many: the message says which.
    Refused(String),
    Run(RunError),
}

impl JobStore {
    /// A store for a host that keeps running between calls.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store whose jobs are contained as `containment` says.
    pub fn with_containment(containment: JobContainment) -> Self {
        Self {
            inner: Arc::new(Inner {
                containment,
                ..Inner::default()
            }),
        }
    }

    /// A store that starts no job and fails `background` calls with `message` (a host whose
    /// process ends with the call, say, where the job would end at once).
    pub fn refusing(message: impl Into<String>) -> Self {
        Self {
            inner: Arc::new(Inner {
                refusal: Some(message.into()),
                ..Inner::default()
            }),
        }
    }

    /// True when `background` calls are refused.
    pub fn refuses(&self) -> bool {
        self.inner.refusal.is_some()
    }

    /// Why `background` calls are refused, if they are.
    pub(crate) fn refusal(&self) -> Option<&str> {
        self.inner.refusal.as_deref()
    }

    /// Kills every job of the session `id` and forgets them. It returns at once; each job's
    /// thread terminates its processes (TERM, then KILL after the grace period).
    pub fn delete_session(&self, id: &str) {
        let removed = self.lock().remove(id);
        drop(removed);
    }

    /// Kills every job of every session and waits, `wait` at most, until each job's
    /// processes are gone; true if they all are. A host calls it before its process exits:
    /// the jobs' threads, which terminate the processes, end with the process.
    pub async fn shutdown(&self, wait: Duration) -> bool {
        let removed = std::mem::take(&mut *self.lock());
        drop(removed);
        let mut threads = self.inner.threads.subscribe();
        tokio::time::timeout(wait, threads.wait_for(|count| *count == 0))
            .await
            .is_ok_and(|waited| waited.is_ok())
    }

    /// How many jobs of session `id` are running.
    pub fn running(&self, id: &str) -> usize {
        self.lock().get(id).map_or(0, |jobs| {
            jobs.iter()
                .filter(|job| job.live.state().is_running())
                .count()
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Vec<Entry>>> {
        self.inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the session's jobs.
    pub(crate) fn with_session<T>(&self, session: &str, f: impl FnOnce(&mut Vec<Entry>) -> T) -> T {
        let mut sessions = self.lock();
        let jobs = sessions.entry(session.to_owned()).or_default();
        let result = f(jobs);
        if jobs.is_empty() {
            sessions.remove(session);
        }
        result
    }

    /// The job `id` of `session`: its shared state and the session's cursor.
    pub(crate) fn find(&self, session: &str, id: &str) -> Option<(Arc<Live>, String, u64)> {
        self.with_session(session, |jobs| {
            jobs.iter()
                .find(|job| job.id == id)
                .map(|job| (Arc::clone(&job.live), job.command.clone(), job.cursor))
        })
    }

    /// Moves the session's cursor of job `id` to `end`; once the end is reported, an ended
    /// job is forgotten.
    pub(crate) fn advance(&self, session: &str, id: &str, end: u64, ended: bool) {
        self.with_session(session, |jobs| {
            if let Some(job) = jobs.iter_mut().find(|job| job.id == id) {
                job.cursor = job.cursor.max(end);
                job.end_seen |= ended;
            }
            jobs.retain(|job| !(job.end_seen && job.cursor >= job.live.total()));
        });
    }

    /// Ends job `id` of `session` (its thread terminates it); false if there is none.
    pub(crate) fn kill(&self, session: &str, id: &str) -> bool {
        self.with_session(session, |jobs| {
            jobs.iter_mut()
                .find(|job| job.id == id)
                .map(|job| drop(job.kill.take()))
                .is_some()
        })
    }

    /// Starts `spec` as a job of `session`; its id and shared state.
    pub(crate) async fn start(
        &self,
        session: &str,
        spec: Spec,
    ) -> Result<(String, Arc<Live>), StartError> {
        if let Some(refusal) = self.refusal() {
            return Err(StartError::Refused(refusal.to_owned()));
        }
        let limit = |running: usize| {
            StartError::Refused(format!(
                "This session already runs {running} background jobs, the most it may. Stop one \
                 with job_kill (job_list shows them) before starting another."
            ))
        };
        let running = self.running(session);
        if running >= MAX_RUNNING_JOBS {
            return Err(limit(running));
        }
        let command = spec.command.clone();
        let live = Live::new(JOB_OUTPUT_BYTES);
        let kill = spawn(
            spec,
            Arc::clone(&live),
            Arc::clone(&self.inner.threads),
            self.inner.containment,
        )
        .await
        .map_err(StartError::Run)?;
        let id = format!(
            "job_{}",
            self.inner.next.fetch_add(1, Ordering::Relaxed) + 1
        );
        self.with_session(session, |jobs| {
            // Checked again under the lock: two calls may have started at once. Returning
            // drops `kill`, which ends the job just started.
            let running = jobs
                .iter()
                .filter(|job| job.live.state().is_running())
                .count();
            if running >= MAX_RUNNING_JOBS {
                return Err(limit(running));
            }
            jobs.push(Entry {
                id: id.clone(),
                command,
                started: Instant::now(),
                live: Arc::clone(&live),
                kill: Some(kill),
                cursor: 0,
                end_seen: false,
            });
            // Ended jobs beyond the cap go, oldest first.
            let ended = jobs
                .iter()
                .filter(|job| !job.live.state().is_running())
                .count();
            let mut excess = ended.saturating_sub(MAX_KEPT_JOBS);
            jobs.retain(|job| {
                let gone = excess > 0 && !job.live.state().is_running();
                excess -= usize::from(gone);
                !gone
            });
            Ok(())
        })?;
        Ok((id, live))
    }
}

/// Starts `spec` on a thread of its own, which supervises it to its end: the parent death
/// signal is tied to the starting thread, so that thread must live as long as the job.
async fn spawn(
    spec: Spec,
    live: Arc<Live>,
    threads: Arc<watch::Sender<usize>>,
    containment: JobContainment,
) -> Result<OwnedFd, RunError> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let shell = spec.shell.display().to_string();
    let counted = Counted::new(threads);
    let spawned = std::thread::Builder::new()
        .name("tackle-job".to_owned())
        .spawn(move || {
            let _counted = counted;
            // The job outlives the call that started it; its output goes to the ring only.
            let silent = ProgressSink::default();
            let job = Job {
                shell: &spec.shell,
                command: &spec.command,
                cwd: &spec.cwd,
                env: &spec.env,
                timeout: NO_TIMEOUT,
                // Only the ring keeps output; the captures just count.
                capture_limit: 0,
                progress: &silent,
            };
            let (watch, kill) =
                match process::start(job, Some(Arc::clone(&live)), Some(containment)) {
                    Ok(started) => started,
                    Err(err) => {
                        let _ = sender.send(Err(err));
                        return;
                    }
                };
            // If the caller is gone, the returned `kill` is dropped here: the job ends at once.
            let _ = sender.send(Ok(kill));
            let state = match supervise(watch) {
                Outcome::Finished(finished) => match finished.ending {
                    Ending::Exited(status) => exited(status),
                    Ending::TimedOut => State::Killed,
                },
                Outcome::Abandoned => State::Killed,
                Outcome::Failed(err) => State::Failed(err.to_string()),
            };
            live.finish(state);
        });
    if let Err(source) = spawned {
        return Err(RunError::Spawn { shell, source });
    }
    receiver.await.unwrap_or_else(|_| {
        Err(RunError::Wait(std::io::Error::other(
            "the job's thread ended before starting it",
        )))
    })
}

fn exited(status: std::process::ExitStatus) -> State {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => State::Exited {
            code: Some(code),
            signal: None,
        },
        (None, signal) => State::Exited {
            code: signal.map(|signal| 128 + signal),
            signal,
        },
    }
}

/// Counts one job thread while it lives.
struct Counted(Arc<watch::Sender<usize>>);

impl Counted {
    fn new(threads: Arc<watch::Sender<usize>>) -> Self {
        threads.send_modify(|count| *count += 1);
        Self(threads)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.send_modify(|count| *count = count.saturating_sub(1));
    }
}
