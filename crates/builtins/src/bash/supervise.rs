//! The blocking side of one command: a single thread polls the output pipes, the main
//! process's exit (a pidfd on Linux), the call's wake pipe and the clock, and takes the
//! command's processes — its group and every process that left it ([`Tree`]) — from running
//! to gone.
//!
//! Phases: run until the main process exits, the timeout passes or the call goes away (the
//! wake pipe becomes readable or hangs up), walking the process tree now and then meanwhile;
//! then, if anything of the call still runs, TERM it and KILL what is left after [`GRACE`],
//! reaping the call's orphans; then read what the pipes still hold, for at most [`DRAIN`].
//! The thread always finishes these phases, so a call that is abandoned still terminates its
//! processes.

use std::io;
use std::os::fd::OwnedFd;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use process_wrap::std::ChildWrapper;
use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Pid, Signal};

use tackle_tool_core::{OutputStream, Progress, ProgressSink};

use super::capture::Capture;
use super::capture::Captured;
use super::group::Member;
use super::group::{self, GRACE, GroupGuard};
use super::guardian::Guardian;
use super::live::Live;
use super::tree::Tree;

/// How long the pipes are still read after the command's group is gone.
pub(crate) const DRAIN: Duration = Duration::from_millis(500);

/// How long to wait for the main process to be reaped after KILL.
const REAP: Duration = Duration::from_secs(2);

/// How often the group is checked while it is being terminated, and the exit polled where no
/// pidfd is available.
const SLICE: Duration = Duration::from_millis(10);

/// The first interval between two walks of the process tree while the command runs; it
/// doubles up to [`TRACK_MAX`]. A process that detaches without the call's marker is found
/// while its parent still runs.
const TRACK_FIRST: Duration = Duration::from_millis(5);

/// The longest interval between two walks of the process tree.
const TRACK_MAX: Duration = Duration::from_millis(100);

/// Size of one pipe read.
const READ_CHUNK: usize = 64 * 1024;

/// A read smaller than this, while the command runs, is followed by a short pause.
const COALESCE_BELOW: usize = 16 * 1024;

/// That pause: short next to a pipe's 64 KiB, long next to one wakeup.
const COALESCE: Duration = Duration::from_micros(50);

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The main process exited by itself.
    Exited(ExitStatus),
    /// The timeout passed; the group was terminated.
    TimedOut,
}

/// One finished command.
#[derive(Debug)]
pub(crate) struct Finished {
    pub(crate) ending: Ending,
    pub(crate) stdout: Captured,
    pub(crate) stderr: Captured,
    /// Processes of the group (besides the main one) that were still running and had to be
    /// terminated.
    pub(crate) terminated: Vec<Member>,
    /// Some of them ignored TERM and were killed after the grace period.
    pub(crate) killed: bool,
    /// Reading stopped before end of file: a process outside the group still held a pipe.
    pub(crate) unread: bool,
}

/// Everything the supervising thread owns.
pub(crate) struct Watch {
    pub(crate) child: Box<dyn ChildWrapper>,
    pub(crate) leader: Pid,
    /// Every process of the call.
    pub(crate) tree: Tree,
    /// stdout and stderr.
    pub(crate) streams: [Option<OwnedFd>; 2],
    /// Readable once the main process has exited (a pidfd), where available.
    pub(crate) exit: Option<OwnedFd>,
    /// Readable or hung up once the call is cancelled or abandoned.
    pub(crate) wake: OwnedFd,
    pub(crate) timeout: Duration,
    pub(crate) capture_limit: usize,
    /// Receives the output as it is read.
    pub(crate) progress: ProgressSink,
    /// Terminates the group if this watch is dropped without being run.
    pub(crate) guard: GroupGuard,
    /// A background job's shared output, which also gets every byte read.
    pub(crate) tap: Option<Arc<Live>>,
    /// The job's guardian, if it has one: dropped (told the job ended) once supervision is
    /// over.
    pub(crate) guardian: Option<Guardian>,
}

/// How supervision ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    Finished(Finished),
    /// The call went away; the group has been terminated.
    Abandoned,
    /// The main process could not be waited for.
    Failed(io::Error),
}

/// What one poll saw.
#[derive(Debug, Default, Clone, Copy)]
struct Events {
    exit: bool,
    woke: bool,
}

struct Supervisor {
    child: Box<dyn ChildWrapper>,
    leader: Pid,
    tree: Tree,
    streams: [Option<OwnedFd>; 2],
    captures: [Capture; 2],
    exit: Option<OwnedFd>,
    wake: OwnedFd,
    status: Option<ExitStatus>,
    buffer: Vec<u8>,
    progress: ProgressSink,
    tap: Option<Arc<Live>>,
}

/// Runs the phases above; returns when the group is gone and the pipes are read.
pub(crate) fn supervise(watch: Watch) -> Outcome {
    let Watch {
        child,
        leader,
        tree,
        streams,
        exit,
        wake,
        timeout,
        capture_limit,
        progress,
        mut guard,
        tap,
        guardian,
    } = watch;
    // Dropped last, after everything of the job is gone.
    let _guardian = guardian;
    let mut supervisor = Supervisor {
        child,
        leader,
        tree,
        streams,
        captures: [Capture::new(capture_limit), Capture::new(capture_limit)],
        exit,
        wake,
        status: None,
        buffer: vec![0; READ_CHUNK],
        progress,
        tap,
    };
    let outcome = supervisor.run(timeout);
    // Every path of `run` ends with the group terminated.
    guard.disarm();
    outcome
}

impl Supervisor {
    fn run(&mut self, timeout: Duration) -> Outcome {
        // A job without a timeout gets a deadline that never comes.
        let deadline = Instant::now()
            .checked_add(timeout)
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(u64::from(u32::MAX)));
        let mut abandoned = false;
        let mut timed_out = false;
        let mut check_exit = true;
        let mut track_every = TRACK_FIRST;
        let mut track_at = Instant::now() + track_every;
        loop {
            if check_exit {
                match self.reap() {
                    Ok(true) => break,
                    Ok(false) => {}
                    Err(err) => {
                        self.terminate();
                        return Outcome::Failed(err);
                    }
                }
            }
            if Instant::now() >= deadline {
                timed_out = true;
                break;
            }
            let now = Instant::now();
            if now >= track_at {
                self.tree.observe();
                track_every = (track_every * 2).min(TRACK_MAX);
                track_at = now + track_every;
            }
            let events = self.pump(deadline.min(track_at), true, true);
            if events.woke {
                abandoned = true;
                break;
            }
            check_exit = events.exit;
        }

        let mut terminated = Vec::new();
        let mut killed = false;
        self.tree.observe();
        let escaped = self.tree.running();
        if timed_out || abandoned || !escaped.is_empty() || group::running(self.leader) {
            let leader = self.leader.as_raw_nonzero().get();
            terminated = group::members(self.leader);
            terminated.retain(|member| member.pid != leader);
            terminated.extend(escaped);
            terminated.sort_by_key(|member| member.pid);
            terminated.dedup_by_key(|member| member.pid);
            killed = self.terminate();
        } else {
            // Orphans that exited by themselves are reaped here, not left as zombies.
            self.tree.reap();
        }
        if abandoned {
            return Outcome::Abandoned;
        }

        let drain_until = Instant::now() + DRAIN;
        while self.streams.iter().any(Option::is_some) && Instant::now() < drain_until {
            self.pump(drain_until, false, false);
        }
        let unread = self.streams.iter().any(Option::is_some);
        let [stdout, stderr] =
            std::mem::replace(&mut self.captures, [Capture::new(0), Capture::new(0)]);
        let ending = match (timed_out, self.status) {
            (false, Some(status)) => Ending::Exited(status),
            _ => Ending::TimedOut,
        };
        Outcome::Finished(Finished {
            ending,
            stdout: stdout.finish(),
            stderr: stderr.finish(),
            terminated,
            killed,
            unread,
        })
    }

    /// TERM the group and the call's other processes, KILL them after the grace period if
    /// anything survives, and reap the main process and the call's orphans; output keeps being
    /// read meanwhile. True if KILL was needed.
    fn terminate(&mut self) -> bool {
        group::signal(self.leader, Signal::TERM);
        self.tree.signal(None, Signal::TERM);
        let kill_at = Instant::now() + GRACE;
        let mut killed = false;
        loop {
            let reaped = self.reap().unwrap_or(true);
            // Processes forked meanwhile, or orphaned by a death, get TERM too.
            let found = self.tree.observe();
            self.tree.signal(Some(&found), Signal::TERM);
            self.tree.reap();
            if reaped && !group::running(self.leader) && self.tree.running().is_empty() {
                break;
            }
            let now = Instant::now();
            if now >= kill_at {
                killed = group::signal(self.leader, Signal::KILL);
                killed |= self.tree.signal(None, Signal::KILL);
                break;
            }
            self.pump(kill_at.min(now + SLICE), !reaped, false);
        }
        let reap_until = Instant::now() + REAP;
        loop {
            let reaped = self.reap().unwrap_or(true);
            let found = self.tree.observe();
            self.tree.signal(Some(&found), Signal::KILL);
            self.tree.reap();
            let done = reaped && self.tree.running().is_empty();
            if done || Instant::now() >= reap_until {
                break;
            }
            self.pump(reap_until.min(Instant::now() + SLICE), !reaped, false);
        }
        killed
    }

    /// Reaps the main process if it has exited; true once it has.
    fn reap(&mut self) -> io::Result<bool> {
        if self.status.is_none() {
            // Waited for by pid, not by group: the main process is our only child, and this
            // still finds it if it moved to another group.
            self.status = self.child.inner_mut().try_wait()?;
        }
        Ok(self.status.is_some())
    }

    /// One poll, until `until` at the latest; reads what the pipes hold.
    fn pump(&mut self, until: Instant, watch_exit: bool, watch_wake: bool) -> Events {
        let mut timeout = until.saturating_duration_since(Instant::now());
        if watch_exit && self.exit.is_none() {
            // Without a pidfd the exit is polled.
            timeout = timeout.min(SLICE);
        }
        let wanted = PollFlags::IN;
        let mut ready = [false; 4];
        {
            let mut fds = Vec::with_capacity(4);
            let mut slots = Vec::with_capacity(4);
            for (slot, fd) in self.streams.iter().enumerate() {
                if let Some(fd) = fd {
                    fds.push(PollFd::new(fd, wanted));
                    slots.push(slot);
                }
            }
            if watch_exit && let Some(fd) = &self.exit {
                fds.push(PollFd::new(fd, wanted));
                slots.push(2);
            }
            if watch_wake {
                fds.push(PollFd::new(&self.wake, wanted));
                slots.push(3);
            }
            // Timeouts here are at most the call's (10 minutes): always representable.
            let timespec = Timespec::try_from(timeout).unwrap_or(Timespec {
                tv_sec: 0,
                tv_nsec: 10_000_000,
            });
            if fds.is_empty() {
                std::thread::sleep(timeout);
            } else if poll(&mut fds, Some(&timespec)).is_ok() {
                for (fd, slot) in fds.iter().zip(slots) {
                    ready[slot] = !fd.revents().is_empty();
                }
            }
        }
        let mut small = false;
        for (slot, is_ready) in [ready[0], ready[1]].into_iter().enumerate() {
            if is_ready {
                small |= self.read(slot).is_some_and(|n| n < COALESCE_BELOW);
            }
        }
        if small && watch_wake && !self.progress.is_active() {
            // Output is not streamed anywhere: letting a trickling writer fill the pipe a
            // little costs no latency that matters and saves most wakeups.
            std::thread::sleep(COALESCE);
        }
        Events {
            exit: ready[2] || (watch_exit && self.exit.is_none()),
            woke: ready[3],
        }
    }

    /// Reads once from a ready stream; end of file or an error closes it. The bytes read.
    fn read(&mut self, slot: usize) -> Option<usize> {
        let fd = self.streams[slot].as_ref()?;
        match rustix::io::read(fd, &mut self.buffer[..]) {
            Ok(0) => {
                self.streams[slot] = None;
                None
            }
            Ok(n) => {
                let bytes = &self.buffer[..n];
                self.captures[slot].push(bytes);
                if let Some(tap) = &self.tap {
                    tap.push(bytes);
                }
                let stream = [OutputStream::Stdout, OutputStream::Stderr][slot];
                self.progress.report(Progress::Output { stream, bytes });
                Some(n)
            }
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => None,
            Err(_) => {
                self.streams[slot] = None;
                None
            }
        }
    }
}
