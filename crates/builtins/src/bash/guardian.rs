//! The fallback that ends a background job's processes when the host process dies, where a
//! PID namespace per job ([`namespace`](super::namespace)) cannot be made: a small shell
//! process, started before the job, that holds the read end of a pipe whose write end only
//! the job's supervising thread holds. The thread writes the job's leader pid once it runs,
//! and a line when the job has ended normally; end of file without that line means the host
//! is gone (killed, `SIGKILL` included: the kernel closes its descriptors), and the guardian
//! then stops and kills every process of the job it can still find.
//!
//! What it finds (from `/proc`, repeatedly, until a pass finds nothing new): processes
//! carrying the job's marker variable, processes in the job's process group or session, and
//! every descendant of those. Found processes are stopped first, so they cannot fork while
//! the rest is collected, then killed.
//!
//! Limits: a process that cleared its environment, left the group and the session and was
//! reparented away from every found process before the guardian ran is not found; the job
//! runs as the same user as the guardian and could kill it; the guardian needs `/bin/sh`
//! and `grep` (from `/usr/bin` or `/bin`).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};

use rustix::process::Pid;

use super::tree::MARKER;

/// The guardian's program: `$1` is the job's marker value.
const SCRIPT: &str = r#"
marker=$1
IFS= read -r leader || leader=
case $leader in *[!0-9]*) leader= ;; esac
IFS= read -r ended && exit 0
me=$$
found=' '
add() {
  case $found in *" $1 "*) return 1 ;; esac
  [ "$1" = "$me" ] && return 1
  found="$found$1 "
  kill -s STOP "$1" 2>/dev/null
  return 0
}
pass=0
while [ "$pass" -lt 50 ]; do
  pass=$((pass + 1))
  new=0
  for path in $(grep -lzxF "$MARKER_NAME=$marker" /proc/[0-9]*/environ 2>/dev/null); do
    pid=${path#/proc/}
    pid=${pid%/environ}
    add "$pid" && new=1
  done
  for stat in /proc/[0-9]*/stat; do
    IFS= read -r line < "$stat" 2>/dev/null || continue
    pid=${stat#/proc/}
    pid=${pid%/stat}
    rest=${line##*) }
    set -- $rest
    case $found in *" $2 "*) add "$pid" && new=1; continue ;; esac
    if [ -n "$leader" ] && { [ "$3" = "$leader" ] || [ "$4" = "$leader" ]; }; then
      add "$pid" && new=1
    fi
  done
  [ "$new" = 0 ] && break
done
for pid in $found; do
  kill -s KILL "$pid" 2>/dev/null
done
exit 0
"#;

/// A running guardian. Dropping it tells the guardian the job ended normally and reaps it.
#[derive(Debug)]
pub(crate) struct Guardian {
    child: Child,
    pipe: Option<ChildStdin>,
}

impl Guardian {
    /// Starts the guardian of the job marked `marker`, or `None` where it cannot start (then
    /// the job runs without one).
    pub(crate) fn start(marker: &str) -> Option<Self> {
        let sh = std::path::Path::new("/bin/sh");
        let mut child = Command::new(sh)
            .arg("-c")
            .arg(SCRIPT)
            .arg("tackle-guardian")
            .arg(marker)
            // Not the marker itself: the guardian must not count as one of the job's
            // processes, for the host's tree walk nor for its own scan.
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("MARKER_NAME", MARKER)
            .env("LC_ALL", "C")
            // Its own group: signals to the job's group never reach it.
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let pipe = child.stdin.take();
        Some(Self { child, pipe })
    }

    /// Tells the guardian the job's leader, whose group and session it also covers.
    pub(crate) fn leader(&mut self, leader: Pid) {
        self.say(&leader.as_raw_nonzero().get().to_string());
    }

    fn say(&mut self, line: &str) {
        if let Some(pipe) = &mut self.pipe
            && writeln!(pipe, "{line}").is_err()
        {
            self.pipe = None;
        }
    }
}

#[cfg(test)]
impl Guardian {
    /// Goes away as a killed host would: the pipe closes without the job's end being said.
    fn abandon(mut self) {
        self.pipe = None;
        let _ = self.child.wait();
    }
}

impl Drop for Guardian {
    fn drop(&mut self) {
        // The job has ended: a leader line first if none was sent (the guardian reads two
        // lines), then the line that lets it exit without acting.
        self.say("");
        self.say("ended");
        self.pipe = None;
        let _ = self.child.wait();
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    /// Processes whose command line contains `needle`.
    fn with(needle: &str) -> Vec<i32> {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let pid = entry.file_name().to_str()?.parse().ok()?;
                let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
                String::from_utf8_lossy(&cmdline)
                    .contains(needle)
                    .then_some(pid)
            })
            .collect()
    }

    fn wait_for(what: &str, done: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn job(marker: &str, script: &str) -> std::io::Result<Child> {
        Command::new("/bin/sh")
            .args(["-c", script])
            .env(MARKER, marker)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
    }

    #[test]
    fn a_guardian_left_by_its_host_kills_the_job_and_only_the_job() {
        let marker = super::super::tree::marker();
        let mut guardian = Guardian::start(&marker).unwrap();
        // Escapes of every kind: a detached session, a double fork, one that clears its
        // environment but stays in the group, and a child of an escaped process.
        let mut shell = job(
            &marker,
            "setsid sleep 1000.7171 & (sleep 1000.7272 &) ; env -i sleep 1000.7373 & \
             setsid sh -c 'env -i sleep 1000.7474 & wait' & wait",
        )
        .unwrap();
        guardian.leader(Pid::from_raw(i32::try_from(shell.id()).unwrap()).unwrap());
        let markers = ["1000.7171", "1000.7272", "1000.7373", "1000.7474"];
        // Another process, unmarked: the guardian leaves it alone.
        let mut bystander = Command::new("sleep").arg("1000.7575").spawn().unwrap();
        wait_for("the job to start", || {
            markers.iter().all(|m| !with(m).is_empty())
        });
        let started = Instant::now();
        guardian.abandon();
        wait_for("the job to die", || {
            markers.iter().all(|m| with(m).is_empty())
        });
        eprintln!("the guardian killed the job in {:?}", started.elapsed());
        let _ = shell.wait();
        assert!(
            bystander.try_wait().unwrap().is_none(),
            "the bystander was killed"
        );
        bystander.kill().unwrap();
        bystander.wait().unwrap();
    }

    #[test]
    fn a_guardian_told_the_job_ended_kills_nothing() {
        let marker = super::super::tree::marker();
        let guardian = Guardian::start(&marker).unwrap();
        let mut survivor = job(&marker, "exec sleep 1000.7676").unwrap();
        wait_for("the process to start", || !with("1000.7676").is_empty());
        drop(guardian);
        std::thread::sleep(Duration::from_millis(300));
        assert!(survivor.try_wait().unwrap().is_none(), "it was killed");
        survivor.kill().unwrap();
        survivor.wait().unwrap();
    }
}
