//! Live progress for a person at a terminal: a command's output as it runs, and a running
//! count for long work, on stderr. The model's result, printed at the end, is unchanged, and
//! nothing of this happens when stdout is not a terminal (a pipe, a file, a program).

use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::time::Duration;

use tackle_tool_core::{Progress, ProgressSink};

/// Reports waiting for the terminal at most; more are dropped and counted.
const QUEUE: usize = 1024;

enum Report {
    Output(Vec<u8>),
    Step(String),
}

/// Progress shown on stderr while one call runs.
pub(crate) struct Live {
    sink: ProgressSink,
    /// Disconnected once the printer has shown everything and ended.
    printed: Receiver<()>,
}

/// How long [`Live::finish`] waits for the printer: a command's last output is shown before the
/// result, unless a report is stuck behind a terminal that does not read.
const FINISH_WAIT: Duration = Duration::from_secs(1);

impl Live {
    /// Progress on stderr when stdout and stderr are terminals; `None` otherwise. The reports
    /// are handed to a printer thread, so a slow terminal never slows the call.
    pub(crate) fn start() -> Option<Self> {
        if !(std::io::stdout().is_terminal() && std::io::stderr().is_terminal()) {
            return None;
        }
        let (sender, receiver) = std::sync::mpsc::sync_channel(QUEUE);
        let (done, printed) = std::sync::mpsc::channel::<()>();
        let dropped = Arc::new(AtomicU64::new(0));
        let printer_dropped = Arc::clone(&dropped);
        std::thread::Builder::new()
            .name("tackle-live".into())
            .spawn(move || {
                print(&receiver, &printer_dropped);
                drop(done);
            })
            .ok()?;
        let sink = ProgressSink::new(move |progress| offer(&sender, &dropped, progress));
        Some(Self { sink, printed })
    }

    /// The sink a call's context reports to.
    pub(crate) fn sink(&self) -> ProgressSink {
        self.sink.clone()
    }

    /// Waits until what the call reported is shown, so the result printed next comes after it.
    /// Every clone of the sink (the call's context) must be dropped first.
    pub(crate) fn finish(self) {
        drop(self.sink);
        let _ = self.printed.recv_timeout(FINISH_WAIT);
    }
}

fn offer(sender: &SyncSender<Report>, dropped: &AtomicU64, progress: Progress<'_>) {
    let report = match progress {
        Progress::Output { bytes, .. } => Report::Output(bytes.to_vec()),
        Progress::Step {
            done,
            total,
            message,
        } => Report::Step(match total {
            Some(total) => format!("{done}/{total} {message}"),
            None => format!("{done} {message}"),
        }),
        _ => return,
    };
    if let Err(TrySendError::Full(_)) = sender.try_send(report) {
        dropped.fetch_add(1, Ordering::Relaxed);
    }
}

/// Writes the reports to stderr until the sink is gone.
fn print(receiver: &Receiver<Report>, dropped: &AtomicU64) {
    let mut stderr = std::io::stderr();
    let mut step_shown = false;
    while let Ok(report) = receiver.recv() {
        let lost = dropped.swap(0, Ordering::Relaxed);
        if lost > 0 {
            let _ = writeln!(stderr, "\n[tackle: {lost} progress reports not shown]");
        }
        let _ = match report {
            Report::Output(bytes) => {
                if step_shown {
                    step_shown = false;
                    let _ = stderr.write_all(b"\r\x1b[2K");
                }
                stderr.write_all(&bytes)
            }
            Report::Step(line) => {
                step_shown = true;
                write!(stderr, "\r\x1b[2K{line}")
            }
        };
        let _ = stderr.flush();
    }
    if step_shown {
        let _ = stderr.write_all(b"\r\x1b[2K");
    }
}
