//! The live side of a background job: its merged stdout and stderr in a bounded ring, and how
//! it ended, shared between the thread that supervises it and the calls that look at it.
//!
//! Invariants: the ring never holds more than its limit (the newest bytes win); every byte the
//! job wrote is counted (`total`), so what a reader missed is known exactly; each change
//! (output, the ending) is announced on a `watch` channel, so a reader waits without polling.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;

/// How a job stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum State {
    /// Its main process runs.
    Running,
    /// Its main process ended by itself (what it left running was terminated).
    Exited {
        code: Option<i32>,
        signal: Option<i32>,
    },
    /// It was killed (`job_kill`, its session deleted, the host gone).
    Killed,
    /// It could not be waited for.
    Failed(String),
}

impl State {
    pub(crate) fn is_running(&self) -> bool {
        matches!(self, Self::Running)
    }
}

/// What a reader gets: the bytes after its cursor that the ring still holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Since {
    /// Bytes after the cursor that the ring no longer held.
    pub(crate) dropped: u64,
    pub(crate) bytes: Vec<u8>,
    /// The cursor after these bytes.
    pub(crate) end: u64,
    pub(crate) state: State,
}

/// One job's shared output and state.
#[derive(Debug)]
pub(crate) struct Live {
    inner: Mutex<Inner>,
    changed: watch::Sender<u64>,
}

#[derive(Debug)]
struct Inner {
    ring: VecDeque<u8>,
    limit: usize,
    /// Every byte written so far.
    total: u64,
    state: State,
}

impl Live {
    /// A running job whose ring keeps the last `limit` bytes.
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            inner: Mutex::new(Inner {
                ring: VecDeque::new(),
                limit,
                total: 0,
                state: State::Running,
            }),
            changed: watch::Sender::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn announce(&self) {
        self.changed.send_modify(|version| *version += 1);
    }

    /// Appends output; the oldest bytes make room.
    pub(crate) fn push(&self, bytes: &[u8]) {
        {
            let mut inner = self.lock();
            inner.total += bytes.len() as u64;
            let limit = inner.limit;
            if inner.ring.capacity() == 0 {
                // Once, exactly: the ring then never reallocates.
                inner.ring.reserve_exact(limit);
            }
            let keep = &bytes[bytes.len().saturating_sub(limit)..];
            let over = (inner.ring.len() + keep.len()).saturating_sub(limit);
            inner.ring.drain(..over);
            inner.ring.extend(keep);
        }
        self.announce();
    }

    /// Records how the job ended.
    pub(crate) fn finish(&self, state: State) {
        self.lock().state = state;
        self.announce();
    }

    /// How the job stands.
    pub(crate) fn state(&self) -> State {
        self.lock().state.clone()
    }

    /// Every byte written so far.
    pub(crate) fn total(&self) -> u64 {
        self.lock().total
    }

    /// A receiver that sees every later change.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// What came after `cursor` (a count of bytes written), as far as the ring still holds it.
    pub(crate) fn since(&self, cursor: u64) -> Since {
        let inner = self.lock();
        let start = inner.total - inner.ring.len() as u64;
        let from = cursor.clamp(start, inner.total);
        let skip = usize::try_from(from - start).unwrap_or(usize::MAX);
        Since {
            dropped: from.saturating_sub(cursor),
            bytes: inner.ring.iter().skip(skip).copied().collect(),
            end: inner.total,
            state: inner.state.clone(),
        }
    }

    /// Bytes the ring holds and the most it may (for tests of the bound).
    #[cfg(test)]
    fn held(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.ring.len(), inner.ring.capacity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_newest_bytes_and_counts_what_a_reader_missed() {
        let live = Live::new(8);
        live.push(b"0123");
        let first = live.since(0);
        assert_eq!(
            (first.bytes.as_slice(), first.dropped, first.end),
            (&b"0123"[..], 0, 4)
        );
        live.push(b"456789ab");
        let next = live.since(first.end);
        assert_eq!(next.bytes, b"456789ab");
        assert_eq!(next.dropped, 0);
        live.push(b"cdefghijklmnop");
        let late = live.since(next.end);
        assert_eq!(late.bytes, b"ijklmnop");
        assert_eq!(late.dropped, 6);
        assert_eq!(late.end, 26);
        assert!(live.since(late.end).bytes.is_empty());
    }

    #[test]
    fn memory_stays_at_the_limit_however_much_is_written() {
        let live = Live::new(4096);
        let chunk = vec![b'x'; 1000];
        live.push(&chunk);
        let (_, capacity) = live.held();
        for _ in 0..10_000 {
            live.push(&chunk);
        }
        live.push(&vec![b'y'; 100_000]);
        let (len, after) = live.held();
        assert_eq!(len, 4096);
        assert_eq!(after, capacity, "the ring never reallocates");
        assert!(capacity < 2 * 4096);
        assert_eq!(live.total(), 10_001 * 1000 + 100_000);
    }

    #[test]
    fn readers_are_told_of_output_and_of_the_end() {
        let live = Live::new(16);
        let mut rx = live.subscribe();
        live.push(b"x");
        assert!(rx.has_changed().unwrap());
        rx.borrow_and_update();
        live.finish(State::Killed);
        assert!(rx.has_changed().unwrap());
        assert_eq!(live.state(), State::Killed);
    }
}
