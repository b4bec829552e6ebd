//! Step progress of long work (files searched, matches so far, chunks applied) for whoever
//! watches a call: a running count reported through the call's progress sink, from any thread.
//!
//! Built only when the call has a sink, so work nobody watches pays one `Option` check per
//! unit. Counting is two relaxed atomic additions; a report (which formats its message) is
//! made for the first unit, then at most every [`INTERVAL`], and once at the end.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tackle_tool_core::{Progress, ProgressSink};

/// The shortest time between two reports.
pub(crate) const INTERVAL: Duration = Duration::from_millis(100);

/// The running count of one call's work.
pub(crate) struct Steps {
    sink: ProgressSink,
    started: Instant,
    total: Option<u64>,
    /// Units done.
    done: AtomicU64,
    /// Things found so far (matches, files).
    found: AtomicU64,
    /// When the last report was made, in milliseconds since `started`, plus one (0: never).
    reported: AtomicU64,
    /// A unit was counted since the last report.
    changed: AtomicBool,
    /// The report's message for a count of things found.
    describe: fn(u64) -> String,
}

impl std::fmt::Debug for Steps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Steps")
            .field("done", &self.done)
            .field("found", &self.found)
            .finish_non_exhaustive()
    }
}

impl Steps {
    /// Counting toward `total` (when known) for `sink`; `None` when no sink is attached.
    pub(crate) fn new(
        sink: &ProgressSink,
        total: Option<u64>,
        describe: fn(u64) -> String,
    ) -> Option<Self> {
        sink.is_active().then(|| Self {
            sink: sink.clone(),
            started: Instant::now(),
            total,
            done: AtomicU64::new(0),
            found: AtomicU64::new(0),
            reported: AtomicU64::new(0),
            changed: AtomicBool::new(false),
            describe,
        })
    }

    /// `done` more units, with `found` more things found; reports when it is time.
    pub(crate) fn advance(&self, done: u64, found: u64) {
        self.done.fetch_add(done, Ordering::Relaxed);
        if found > 0 {
            self.found.fetch_add(found, Ordering::Relaxed);
        }
        self.changed.store(true, Ordering::Relaxed);
        let now = u64::try_from(self.started.elapsed().as_millis())
            .unwrap_or(u64::MAX - 1)
            .saturating_add(1);
        let last = self.reported.load(Ordering::Relaxed);
        let due = last == 0 || now.saturating_sub(last) >= INTERVAL.as_millis() as u64;
        // One thread wins the report; the others go on counting.
        if due
            && self
                .reported
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.report();
        }
    }

    /// The final count, unless the last report already showed it.
    pub(crate) fn finish(&self) {
        if self.changed.load(Ordering::Relaxed) {
            self.report();
        }
    }

    fn report(&self) {
        self.changed.store(false, Ordering::Relaxed);
        let message = (self.describe)(self.found.load(Ordering::Relaxed));
        self.sink.report(Progress::Step {
            done: self.done.load(Ordering::Relaxed),
            total: self.total,
            message: &message,
        });
    }
}
