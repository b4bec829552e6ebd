//! Live progress for a person at a terminal: a command's output as it runs, and for a search
//! or patch that has run over a second a progress line (`indicatif`: files searched, matches
//! so far), on stderr. The progress line is cleared before the result is printed; the model's
//! result is unchanged, and nothing of this happens when stdout or stderr is not a terminal (a
//! pipe, a file, a program).

use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tackle_tool_core::{Progress, ProgressSink};

/// A call shorter than this shows no progress line: it would only flicker.
const LINE_AFTER: Duration = Duration::from_secs(1);

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
        let started = Instant::now();
        std::thread::Builder::new()
            .name("tackle-live".into())
            .spawn(move || {
                print(&receiver, &printer_dropped, started);
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

/// Writes the reports to stderr until the sink is gone. A step becomes the progress line once
/// the call has run for [`LINE_AFTER`] (the latest step waits until then); the line is cleared
/// before the printer ends, so the result printed next starts on a clean line.
fn print(receiver: &Receiver<Report>, dropped: &AtomicU64, started: Instant) {
    let mut line = StepLine::default();
    loop {
        let report = match line.pending {
            // A step is waiting for its time: wake up then, even if nothing else arrives.
            Some(_) => {
                let wait = LINE_AFTER.saturating_sub(started.elapsed());
                match receiver.recv_timeout(wait) {
                    Ok(report) => Some(report),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
            None => match receiver.recv() {
                Ok(report) => Some(report),
                Err(_) => break,
            },
        };
        let lost = dropped.swap(0, Ordering::Relaxed);
        if lost > 0 {
            line.above(format!("[tackle: {lost} progress reports not shown]\n").as_bytes());
        }
        match report {
            Some(Report::Output(bytes)) => line.above(&bytes),
            Some(Report::Step(step)) => line.pending = Some(step),
            None => {}
        }
        if started.elapsed() >= LINE_AFTER
            && let Some(step) = line.pending.take()
        {
            line.show(step);
        }
    }
    line.clear();
}

/// The progress line, once shown.
#[derive(Default)]
struct StepLine {
    bar: Option<ProgressBar>,
    /// The latest step, not shown yet.
    pending: Option<String>,
}

impl StepLine {
    fn show(&mut self, step: String) {
        let bar = self.bar.get_or_insert_with(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        bar.set_message(step);
    }

    /// Writes `bytes` (a command's output) above the line.
    fn above(&self, bytes: &[u8]) {
        let mut stderr = std::io::stderr();
        let mut write = || {
            let _ = stderr.write_all(bytes);
            let _ = stderr.flush();
        };
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    fn clear(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
