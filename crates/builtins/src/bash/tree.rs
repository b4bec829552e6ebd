//! Every process a command started, wherever it went: `setsid`, a double fork, `nohup`,
//! `disown`, a job with its own group (`set -m`) or a daemon leave the command's process group,
//! and their parents may exit at once, yet they are still the call's and end with it.
//!
//! How they are found: this process is a child subreaper (Linux), so an orphan of the command
//! is reparented here rather than to init. A process belongs to the call when it is a
//! descendant of the command's shell seen while tracking (the tree is walked while the command
//! runs, through `/proc/<pid>/task/*/children`), or a child of this process that is in the
//! command's group or session, carries the call's marker variable ([`MARKER`]) or holds one
//! of its output pipes, or a descendant of any of those. A background job in a PID namespace
//! of its own ([`namespace`](super::namespace)) needs none of that: its orphans go to the
//! namespace's init, below the job's leader, so the walk from the leader finds them.
//!
//! Limits: a process that leaves the group and the session, drops the marker and its pipes,
//! and whose parent exits before the next walk, is not recognised (while it runs, the pipes,
//! marker or group usually still name it); one that does all that and dies before it is seen
//! stays a zombie of the host, indistinguishable from the host's own children. A process
//! handed to another reaper (a service manager, a container runtime) is out of reach.
//!
//! Invariants: a process is only signalled or reaped once it is known to belong to the call,
//! identified by pid and start time and acted on through a pidfd (a reused pid is never hit);
//! only zombies that are this process's children and belong to the call are reaped, so a
//! host's own children keep their exit status; the shell itself is reaped by its `Child`.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::os::fd::OwnedFd;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::process::{Pid, Signal};

use super::group::{self, Member, Stat};

/// The variable that marks the processes of one call (`<pid>-<serial>`): an orphan that
/// still carries it is recognised after its parent is gone.
pub(crate) const MARKER: &str = "TACKLE_BASH_CALL";

/// A fresh marker value, unique within this process.
pub(crate) fn marker() -> String {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
    format!("{}-{serial}", std::process::id())
}

/// Makes this process a child subreaper (once); true if it is one. Process-wide: orphans of
/// the host's other children are reparented here too (and left alone).
pub(crate) fn become_subreaper() -> bool {
    static SUBREAPER: OnceLock<bool> = OnceLock::new();
    *SUBREAPER.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok()
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    })
}

/// The processes of one call.
#[derive(Debug)]
pub(crate) struct Tree {
    me: i32,
    leader: i32,
    /// `TACKLE_BASH_CALL=<value>`, as it appears in `/proc/<pid>/environ`.
    marker: Vec<u8>,
    /// `pipe:[<inode>]` of stdout and stderr, as `/proc/<pid>/fd/*` links read.
    pipes: Vec<String>,
    /// The call's processes, by pid, with their start time.
    owned: HashMap<i32, u64>,
    /// Children of this process found not to be the call's.
    foreign: HashSet<(i32, u64)>,
}

impl Tree {
    /// The tree of the command led by `leader`, marked with `marker`, writing to `streams`.
    pub(crate) fn new(leader: Pid, marker: &str, streams: &[Option<OwnedFd>]) -> Self {
        let leader = leader.as_raw_nonzero().get();
        let pipes = streams
            .iter()
            .flatten()
            .filter_map(|fd| rustix::fs::fstat(fd).ok())
            .map(|stat| format!("pipe:[{}]", stat.st_ino))
            .collect();
        let mut owned = HashMap::new();
        if let Some((_, stat)) = group::read_stat(leader) {
            owned.insert(leader, stat.start);
        }
        Self {
            me: i32::try_from(std::process::id()).unwrap_or(0),
            leader,
            marker: format!("{MARKER}={marker}").into_bytes(),
            pipes,
            owned,
            foreign: HashSet::new(),
        }
    }

    /// Walks the tree and adopts what belongs to the call; returns the pids newly found.
    pub(crate) fn observe(&mut self) -> Vec<i32> {
        // Forget what is gone (or is another process under a reused pid), and zombies that
        // are not ours to reap.
        let me = self.me;
        self.owned.retain(|&pid, start| {
            group::read_stat(pid).is_some_and(|(_, stat)| {
                stat.start == *start && (!stat.is_dead() || stat.parent == me)
            })
        });
        let mut found = Vec::new();
        for pid in children(self.me) {
            if self.owned.contains_key(&pid) {
                continue;
            }
            let Some((_, stat)) = group::read_stat(pid) else {
                continue;
            };
            if self.foreign.contains(&(pid, stat.start)) {
                continue;
            }
            match self.belongs(pid, &stat) {
                Some(true) => {
                    self.owned.insert(pid, stat.start);
                    found.push(pid);
                }
                Some(false) => {
                    self.foreign.insert((pid, stat.start));
                }
                // Asked again at the next walk.
                None => {}
            }
        }
        // Everything below a process of the call is the call's.
        let mut queue: Vec<i32> = self.owned.keys().copied().collect();
        while let Some(parent) = queue.pop() {
            for pid in children(parent) {
                if self.owned.contains_key(&pid) {
                    continue;
                }
                if let Some((_, stat)) = group::read_stat(pid)
                    && stat.parent == parent
                {
                    self.owned.insert(pid, stat.start);
                    found.push(pid);
                    queue.push(pid);
                }
            }
        }
        found
    }

    /// Whether `pid`, a child of this process that is not the shell, is the call's; `None`
    /// while that cannot be told yet. A process in the middle of an exec (or just exited) shows
    /// an empty environment: judged foreign then, a daemon that escaped by double fork and
    /// exec would be left running for good.
    fn belongs(&self, pid: i32, stat: &Stat) -> Option<bool> {
        if stat.group == self.leader || stat.session == self.leader {
            return Some(true);
        }
        let environ = fs::read(format!("/proc/{pid}/environ"))
            .ok()
            .filter(|environ| !environ.is_empty());
        let marked = environ.as_ref().is_some_and(|environ| {
            environ
                .split(|&byte| byte == 0)
                .any(|entry| entry == self.marker.as_slice())
        });
        if marked || self.holds_a_pipe(pid) {
            return Some(true);
        }
        environ.map(|_| false)
    }

    fn holds_a_pipe(&self, pid: i32) -> bool {
        if self.pipes.is_empty() {
            return false;
        }
        let Ok(entries) = fs::read_dir(format!("/proc/{pid}/fd")) else {
            return false;
        };
        entries.flatten().any(|entry| {
            fs::read_link(entry.path()).is_ok_and(|target| {
                self.pipes
                    .iter()
                    .any(|pipe| target.as_os_str() == pipe.as_str())
            })
        })
    }

    /// The call's running processes other than the shell, by pid.
    pub(crate) fn running(&self) -> Vec<Member> {
        let mut found: Vec<Member> = self
            .owned
            .iter()
            .filter(|&(&pid, _)| pid != self.leader)
            .filter_map(|(&pid, &start)| {
                let (line, stat) = group::read_stat(pid)?;
                (stat.start == start && !stat.is_dead()).then(|| group::member(pid, &line))
            })
            .collect();
        found.sort_by_key(|member| member.pid);
        found
    }

    /// Sends `signal` to the call's processes among `pids` (all of them when `None`), the
    /// shell excepted (its group is signalled with it); true if any was signalled.
    pub(crate) fn signal(&self, pids: Option<&[i32]>, signal: Signal) -> bool {
        let mut any = false;
        for (&pid, &start) in &self.owned {
            if pid == self.leader || pids.is_some_and(|pids| !pids.contains(&pid)) {
                continue;
            }
            any |= send(pid, start, signal);
        }
        any
    }

    /// Reaps the call's zombies that are this process's children.
    pub(crate) fn reap(&mut self) {
        let me = self.me;
        let leader = self.leader;
        self.owned.retain(|&pid, &mut start| {
            if pid == leader {
                return true;
            }
            match group::read_stat(pid) {
                Some((_, stat)) if stat.start == start && stat.is_dead() && stat.parent == me => {
                    !reap(pid, start)
                }
                _ => true,
            }
        });
    }
}

/// The children of `pid`, from every one of its threads.
fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for task in tasks.flatten() {
        if let Ok(list) = fs::read_to_string(task.path().join("children")) {
            found.extend(
                list.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    }
    found
}

/// A pidfd for `pid` if it is still the process that started at `start`.
#[cfg(target_os = "linux")]
fn pidfd(pid: i32, start: u64) -> Option<OwnedFd> {
    let fd = rustix::process::pidfd_open(Pid::from_raw(pid)?, rustix::process::PidfdFlags::empty())
        .ok()?;
    // Checked after opening: the descriptor now pins this process, whatever happens to the pid.
    group::read_stat(pid)
        .is_some_and(|(_, stat)| stat.start == start)
        .then_some(fd)
}

/// Signals `pid` if it is still the process that started at `start`.
#[cfg(target_os = "linux")]
fn send(pid: i32, start: u64, signal: Signal) -> bool {
    pidfd(pid, start).is_some_and(|fd| rustix::process::pidfd_send_signal(&fd, signal).is_ok())
}

/// Reaps the zombie `pid` if it is still the process that started at `start`; true if reaped.
#[cfg(target_os = "linux")]
fn reap(pid: i32, start: u64) -> bool {
    use rustix::process::{WaitId, WaitIdOptions, waitid};
    pidfd(pid, start).is_some_and(|fd| {
        waitid(
            WaitId::PidFd(std::os::fd::AsFd::as_fd(&fd)),
            WaitIdOptions::EXITED | WaitIdOptions::NOHANG,
        )
        .is_ok_and(|status| status.is_some())
    })
}

/// Without pidfds a pid is checked, then signalled: a narrow window for reuse remains.
#[cfg(not(target_os = "linux"))]
fn send(pid: i32, start: u64, signal: Signal) -> bool {
    let same = group::read_stat(pid).is_some_and(|(_, stat)| stat.start == start);
    same && Pid::from_raw(pid).is_some_and(|pid| rustix::process::kill_process(pid, signal).is_ok())
}

#[cfg(not(target_os = "linux"))]
fn reap(_pid: i32, _start: u64) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_unique() {
        assert_ne!(marker(), marker());
        assert!(marker().starts_with(&format!("{}-", std::process::id())));
    }

    #[test]
    fn a_process_that_does_not_exist_has_no_children() {
        assert!(children(i32::MAX - 1).is_empty());
        assert!(!send(i32::MAX - 1, 0, Signal::TERM));
    }

    /// A pid is signalled only while it is the process that started at the recorded time: a
    /// process that took over the pid (here: the same pid with another start time) is never
    /// hit, and the process itself is.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_pid_is_signalled_only_while_it_is_the_process_recorded() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let start = group::read_stat(pid).unwrap().1.start;
        for other in [start + 1, start.saturating_sub(1)] {
            assert!(pidfd(pid, other).is_none());
            assert!(!send(pid, other, Signal::KILL));
            assert!(!reap(pid, other));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            child.try_wait().unwrap().is_none(),
            "another process was hit"
        );
        // A descriptor opened while the pid is the recorded process pins it: the signal
        // reaches that process even once it is a zombie, never a successor.
        let pinned = pidfd(pid, start).unwrap();
        assert!(send(pid, start, Signal::KILL));
        let status = child.wait().unwrap();
        assert!(!status.success(), "{status:?}");
        assert!(rustix::process::pidfd_send_signal(&pinned, Signal::KILL).is_err());
    }
}
