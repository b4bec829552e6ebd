//! The process group of one command: signalling it, asking whether it still has members, and
//! naming them for the result.
//!
//! Invariants: a group is signalled only through its id while it is known to exist (a group id
//! cannot be reused while any member lives), and a [`GroupGuard`] that is dropped without being
//! disarmed terminates the group — TERM at once, KILL after the grace period — so a cancelled
//! call never leaves its processes behind.

use std::fs;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};

/// How long a group gets between TERM and KILL (reference `forceKillAfter`).
pub(crate) const GRACE: Duration = Duration::from_secs(3);

/// How often a group being terminated from a drop is checked for survivors.
const POLL: Duration = Duration::from_millis(10);

/// Sends `signal` to every member of `group`; false when the group has no member left.
pub(crate) fn signal(group: Pid, signal: Signal) -> bool {
    kill_process_group(group, signal).is_ok()
}

/// True while `group` has a running member. Zombies do not count: an orphan's zombie waits
/// for init to reap it, which may take a while, yet it is already dead.
pub(crate) fn running(group: Pid) -> bool {
    if test_kill_process_group(group).is_err() {
        return false;
    }
    // Without /proc we cannot tell zombies apart; a member that can be signalled counts.
    !Path::new("/proc/self/stat").exists() || !members(group).is_empty()
}

/// One live member of a group, for reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    pub(crate) pid: i32,
    /// Its command line (or name), shortened.
    pub(crate) command: String,
}

/// Longest command line kept for a member.
const MAX_COMMAND_CHARS: usize = 80;

/// The live (not zombie) members of `group`, by pid. Empty where `/proc` is unavailable.
pub(crate) fn members(group: Pid) -> Vec<Member> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found: Vec<Member> = entries
        .filter_map(|entry| {
            let name = entry.ok()?.file_name();
            let pid: i32 = name.to_str()?.parse().ok()?;
            let (line, stat) = read_stat(pid)?;
            if stat.group != group.as_raw_nonzero().get() || stat.is_dead() {
                return None;
            }
            Some(member(pid, &line))
        })
        .collect();
    found.sort_by_key(|member| member.pid);
    found
}

/// The fields of a `/proc/<pid>/stat` line that supervision needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub(crate) state: char,
    pub(crate) parent: i32,
    pub(crate) group: i32,
    pub(crate) session: i32,
    /// Clock ticks after boot: with the pid, it names one process (pids are reused).
    pub(crate) start: u64,
}

impl Stat {
    /// A zombie (or a process being reaped): dead, though its entry remains.
    pub(crate) fn is_dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
}

/// Parses a `/proc/<pid>/stat` line.
pub(crate) fn parse_stat(stat: &str) -> Option<Stat> {
    // The name is parenthesised and may itself contain spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    // Field 22 of the line; 6 (session) was the fourth after the name.
    let start = fields.nth(15)?.parse().ok()?;
    Some(Stat {
        state,
        parent,
        group,
        session,
        start,
    })
}

/// The stat line of `pid`, if it still exists.
pub(crate) fn read_stat(pid: i32) -> Option<(String, Stat)> {
    let line = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let stat = parse_stat(&line)?;
    Some((line, stat))
}

/// `pid` as a [`Member`], for reports; `line` is its stat line.
pub(crate) fn member(pid: i32, line: &str) -> Member {
    Member {
        pid,
        command: command_line(pid, line),
    }
}

fn command_line(pid: i32, stat: &str) -> String {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let mut line = String::from_utf8_lossy(&raw)
        .split('\0')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if line.is_empty() {
        let name = stat
            .find('(')
            .zip(stat.rfind(')'))
            .map(|(open, close)| &stat[open + 1..close]);
        line = name.unwrap_or("?").to_owned();
    }
    if line.chars().count() > MAX_COMMAND_CHARS {
        line = line.chars().take(MAX_COMMAND_CHARS - 3).collect::<String>() + "...";
    }
    line
}

/// Terminates its group when dropped, unless disarmed: TERM now, KILL after [`GRACE`] from a
/// helper thread (a drop cannot wait, and the call's runtime may be shutting down).
#[derive(Debug)]
pub(crate) struct GroupGuard {
    group: Option<Pid>,
}

impl GroupGuard {
    pub(crate) fn new(group: Pid) -> Self {
        Self { group: Some(group) }
    }

    /// The group is known to be gone (or handed over): dropping does nothing.
    pub(crate) fn disarm(&mut self) {
        self.group = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        let Some(group) = self.group.take() else {
            return;
        };
        if !signal(group, Signal::TERM) {
            return;
        }
        let escalate = move || {
            let deadline = Instant::now() + GRACE;
            while Instant::now() < deadline {
                if !running(group) {
                    return;
                }
                thread::sleep(POLL);
            }
            signal(group, Signal::KILL);
        };
        // If no thread can be started, KILL at once rather than leave the group running.
        if thread::Builder::new()
            .name("tackle-bash-kill".to_owned())
            .spawn(escalate)
            .is_err()
        {
            signal(group, Signal::KILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_parse_with_odd_names() {
        let line = "4242 (my (odd) name) S 1 4240 4239 0 -1 4194560 103 0 0 0 0 0 0 0 20 0 1 0 \
                    2822351 3133440 389";
        let stat = parse_stat(line).unwrap();
        assert_eq!(
            stat,
            Stat {
                state: 'S',
                parent: 1,
                group: 4240,
                session: 4239,
                start: 2_822_351
            }
        );
        assert!(!stat.is_dead());
        assert_eq!(parse_stat("1 (init) Z 0 1 1"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn members_of_a_group_that_does_not_exist() {
        // Above pid_max: no process, so no group, can have this id.
        let nobody = Pid::from_raw(i32::MAX - 1).unwrap();
        assert!(members(nobody).is_empty());
        assert!(!running(nobody));
        assert!(!signal(nobody, Signal::TERM));
    }
}
