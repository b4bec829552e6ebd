//! Stopping a local server with everything it started. Killing its process group is not
//! enough: what it started in groups of their own (a nested `tackle serve`'s servers and
//! commands, a daemon) would be orphaned and live on.
//!
//! The tree is frozen from the top: a stopped process neither forks nor reaps, so once a
//! parent is stopped its children keep their pids (alive or zombie) until it dies, and the
//! walk cannot signal a stranger that took a reused pid. Then every frozen process is killed,
//! children before parents. The root is this process's child, not yet reaped, so its pid is
//! safe too.
//!
//! Limits: a process that left the tree (its parent exited) before the walk is not found; the
//! caller still kills the server's process group after. Linux only (`/proc`); elsewhere only
//! the group is killed.

/// Stops `root` and every descendant, then kills them all.
#[cfg(target_os = "linux")]
pub(crate) fn kill(root: u32) {
    use rustix::process::Signal;

    let Some(root) = i32::try_from(root).ok() else {
        return;
    };
    let mut frozen = vec![root];
    signal(root, Signal::STOP);
    let mut next = 0;
    while let Some(&parent) = frozen.get(next) {
        next += 1;
        for child in children(parent) {
            if !frozen.contains(&child) {
                signal(child, Signal::STOP);
                frozen.push(child);
            }
        }
    }
    for &pid in frozen.iter().rev() {
        signal(pid, Signal::KILL);
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn kill(_root: u32) {}

#[cfg(target_os = "linux")]
fn signal(pid: i32, signal: rustix::process::Signal) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        // Gone already is fine: there is nothing left to stop.
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// The children of `pid`, from every one of its threads.
#[cfg(target_os = "linux")]
fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for task in tasks.flatten() {
        if let Ok(list) = std::fs::read_to_string(task.path().join("children")) {
            found.extend(
                list.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    }
    found
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    fn alive(pid: i32) -> bool {
        // A zombie has finished: only a running (or stopped) process counts.
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
    }

    /// Failed before: killing the group left the process that moved to a session of its own.
    #[test]
    fn a_descendant_in_another_group_and_session_is_killed_too() {
        let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
        let pidfile = dir.path().join("escaped.pid");
        let script = format!(
            "setsid -w sh -c 'echo $$ > {0}.tmp; mv {0}.tmp {0}; exec sleep 300' & exec sleep 300",
            pidfile.display()
        );
        let mut root = std::process::Command::new("sh")
            .args(["-c", &script])
            .spawn()
            .unwrap_or_else(|err| panic!("{err}"));
        let deadline = Instant::now() + Duration::from_secs(10);
        let escaped: i32 = loop {
            if let Ok(text) = std::fs::read_to_string(&pidfile)
                && let Ok(pid) = text.trim().parse()
            {
                break pid;
            }
            assert!(
                Instant::now() < deadline,
                "the escaping process never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        kill(root.id());
        let _ = root.wait();
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(escaped) {
            if Instant::now() > deadline {
                signal(escaped, rustix::process::Signal::KILL);
                panic!("the escaped process {escaped} lived on");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
