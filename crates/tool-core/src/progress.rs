//! Live progress of a running call, for the people and clients watching it (a terminal, an MCP
//! client's progress notifications, a log). The model never reads it: what a tool reports here
//! changes nothing in its result, and a call settles the same with or without a sink.
//!
//! A sink is called on the tool's own thread (a command's supervising thread, a search worker)
//! while the call runs, so it must return quickly and never block: hand the report to a channel
//! or drop it.

use std::fmt;
use std::sync::Arc;

/// Which output stream of a command some bytes came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// One report of a running call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Progress<'a> {
    /// Bytes a running command wrote, as they arrive: raw, unbounded by the call's output
    /// limits, possibly cut inside a line or a UTF-8 sequence.
    Output {
        /// The stream they were written to.
        stream: OutputStream,
        /// The bytes, in the order written.
        bytes: &'a [u8],
    },
    /// Work done so far, such as files scanned.
    Step {
        /// Units done.
        done: u64,
        /// Units in all, when known.
        total: Option<u64>,
        /// What the units are and what was found, for a person ("files scanned, 3 matches").
        message: &'a str,
    },
}

type Report = dyn Fn(Progress<'_>) + Send + Sync;

/// Where a call's [`Progress`] goes; by default nowhere. Cloning shares the sink.
#[derive(Clone, Default)]
pub struct ProgressSink(Option<Arc<Report>>);

impl ProgressSink {
    /// A sink that hands every report to `report`.
    pub fn new(report: impl Fn(Progress<'_>) + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(report)))
    }

    /// True when reports go somewhere; a tool may skip preparing one otherwise.
    pub fn is_active(&self) -> bool {
        self.0.is_some()
    }

    /// Reports `progress`, or does nothing without a sink.
    pub fn report(&self, progress: Progress<'_>) {
        if let Some(report) = &self.0 {
            report(progress);
        }
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ProgressSink")
            .field(&if self.is_active() { "active" } else { "none" })
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn a_sink_receives_reports_and_the_default_drops_them() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let seen = Arc::clone(&seen);
            ProgressSink::new(move |progress| {
                if let Progress::Output { bytes, .. } = progress {
                    seen.lock().unwrap().extend_from_slice(bytes);
                }
            })
        };
        let shared = sink.clone();
        shared.report(Progress::Output {
            stream: OutputStream::Stdout,
            bytes: b"hello",
        });
        assert!(sink.is_active());
        assert_eq!(seen.lock().unwrap().as_slice(), b"hello");
        let none = ProgressSink::default();
        assert!(!none.is_active());
        none.report(Progress::Step {
            done: 1,
            total: None,
            message: "files",
        });
        assert_eq!(format!("{none:?}"), r#"ProgressSink("none")"#);
    }
}
