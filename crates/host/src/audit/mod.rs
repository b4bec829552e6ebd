//! The audit log: an opt-in, append-only JSON Lines file with one record per settled call and
//! per permission decision (`audit.path` in the configuration).
//!
//! - Off the call's critical path: a call copies its raw facts (names, ids, numbers, its input's
//!   compact JSON when short) into a reused slot and offers it to a bounded queue ([`QUEUE`]
//!   records), allocating and formatting nothing in the common case; one writer thread builds
//!   the records, numbers them, redacts the host's secret values and appends them. The writer
//!   polls the queue while calls keep coming, so a busy caller never pays for waking it. A full queue drops the record and counts it; the
//!   next write starts with a `gap` record saying how many were dropped, so a gap is never
//!   silent. Memory stays bounded whatever the disk does.
//! - A write that fails (a full disk, a vanished directory, the log replaced by a symbolic
//!   link) is reported once (a `tracing` warning); the records it lost are counted in the next
//!   gap record. By default calls go on. With `audit.required`, no record, no call: before a
//!   call runs, the log must be openable (never through a link, a regular file) and the last
//!   write must have succeeded; otherwise the call settles as an error saying why, unrun.
//! - The log is opened with `O_NOFOLLOW`, and each batch checks that the path still names the
//!   file held open (`lstat`, so a link put in its place is a replacement): a replaced log is
//!   reopened, and a link in its place fails that reopening.
//! - Every record has a `seq` number, increasing across processes sharing the file (each
//!   batch is appended under an exclusive lock, continuing from the file's last record, or
//!   from the newest rotated file's when the file is fresh).
//! - A writer killed mid-line leaves a torn last line: the next writer ends it first, and
//!   readers ([`read_log`]) skip it with a note instead of misreading it.
//! - Rotated by size (`max_bytes`) to `<path>.1` ... `<path>.<keep>`.
//! - Never file contents: the inputs of the tools that write files keep their paths and the
//!   size of everything else, long strings elsewhere only their size; results are recorded by
//!   type and size only.

mod facts;
mod read;
mod record;
mod shape;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use tackle_output_store::OutputStore;
use tackle_permission::{Decision, DecisionObserver};
use tackle_registry::{SettleObserver, SettleRecord};
use tackle_tool_core::{Call, Context};

use crate::config::Config;
use facts::{Entry, Pools};

pub use read::{AuditLine, parse_line, read_log};
pub use writer::rotated as rotated_path;

/// Records waiting for the writer at most; more are dropped and counted.
pub const QUEUE: usize = 4096;

/// The size past which the log is rotated, by default.
pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;

/// Rotated files kept, by default.
pub const DEFAULT_KEEP: u32 = 5;

/// How long dropping the log waits for the writer to finish what is queued.
const FLUSH_WAIT: Duration = Duration::from_secs(5);

/// Where the audit log of `config` goes (`audit.path`, relative to `data_dir`), if it is on.
pub fn configured_path(config: &Config, data_dir: &Path) -> Option<PathBuf> {
    let path = config.settings.audit.as_ref()?.path.as_ref()?;
    Some(data_dir.join(path))
}

/// The audit log of one host; clones share the writer. Dropping the last one waits (up to a
/// few seconds) for the queued records to be written.
#[derive(Clone)]
pub struct AuditLog {
    shared: Arc<Shared>,
}

struct Shared {
    queue: Option<SyncSender<Entry>>,
    /// `audit.required`: a call runs only when its record can be written.
    required: bool,
    /// Why the last write failed, until one succeeds; shared with the writer.
    health: Arc<Health>,
    dropped: Arc<AtomicU64>,
    /// Slots the writer emptied, for the next calls.
    pools: Arc<Pools>,
    writer: Option<JoinHandle<()>>,
    path: PathBuf,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.shared.path)
            .finish_non_exhaustive()
    }
}

impl AuditLog {
    /// The log `config` asks for (none when `audit.path` is unset); `store` redacts the host's
    /// secret values from every record. Nothing is written before the first record.
    pub fn from_config(config: &Config, data_dir: &Path, store: &OutputStore) -> Option<Self> {
        let path = configured_path(config, data_dir)?;
        let audit = config.settings.audit.clone().unwrap_or_default();
        let target = writer::Target {
            path,
            max_bytes: audit.max_bytes.unwrap_or(DEFAULT_MAX_BYTES),
            keep: audit.keep.unwrap_or(DEFAULT_KEEP),
        };
        Self::start(target, store.clone(), audit.required.unwrap_or(false))
    }

    fn start(target: writer::Target, store: OutputStore, required: bool) -> Option<Self> {
        let (sender, receiver) = std::sync::mpsc::sync_channel(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let pools = Arc::new(Pools::default());
        let health = Arc::new(Health::default());
        let path = target.path.clone();
        let writer = writer::Writer::new(
            target,
            store,
            Arc::clone(&dropped),
            Arc::clone(&pools),
            Arc::clone(&health),
        );
        let spawned = std::thread::Builder::new()
            .name("tackle-audit".into())
            .spawn(move || writer.run(&receiver));
        let (queue, handle) = match spawned {
            Ok(handle) => (Some(sender), Some(handle)),
            Err(err) if required => {
                // No writer, no record: every call is refused rather than run unrecorded.
                health.failed(&format!("its writer cannot start: {err}"));
                (None, None)
            }
            Err(err) => {
                tracing::warn!(%err, "cannot start the audit log's writer; no audit log");
                return None;
            }
        };
        Some(Self {
            shared: Arc::new(Shared {
                queue,
                required,
                health,
                dropped,
                pools,
                writer: handle,
                path,
            }),
        })
    }

    /// Whether a call may run: always without `audit.required`; with it, only while the log
    /// can be opened for appending (never through a link), its last write succeeded and no
    /// record was dropped since. The error is what the model reads.
    pub fn admit(&self) -> Result<(), String> {
        if !self.shared.required {
            return Ok(());
        }
        let dropped = self.shared.dropped.load(Ordering::Relaxed);
        let problem = match self.shared.health.failure() {
            Some(failure) => failure,
            // Records the full queue refused are lost until a gap record counts them.
            None if dropped > 0 => format!("{dropped} records waiting for it were dropped"),
            None => match writer::probe(&self.shared.path) {
                Ok(()) => return Ok(()),
                Err(err) => err.to_string(),
            },
        };
        Err(refusal(&self.shared.path, &problem))
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// Offers `entry` to the writer; a full queue drops it (counted).
    fn offer(&self, entry: Entry) {
        let Some(sender) = self.shared.queue.as_ref() else {
            return;
        };
        match sender.try_send(entry) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.shared.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl SettleObserver for AuditLog {
    fn settled(&self, record: &SettleRecord<'_>) {
        let mut slot = self.shared.pools.calls.take();
        slot.fill(record);
        self.offer(Entry::Call(slot));
    }

    fn admit(&self, _: &Call, _: &Context) -> Result<(), String> {
        AuditLog::admit(self)
    }
}

/// Why the log cannot be written, while it cannot.
#[derive(Debug, Default)]
pub(crate) struct Health {
    failure: Mutex<Option<String>>,
}

impl Health {
    pub(crate) fn failed(&self, why: &str) {
        *self.failure.lock().unwrap_or_else(PoisonError::into_inner) = Some(why.to_owned());
    }

    pub(crate) fn recovered(&self) {
        *self.failure.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    pub(crate) fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// What a call refused by a required audit log settles as.
fn refusal(path: &Path, problem: &str) -> String {
    format!(
        "The call was not run: the audit log {} cannot be written ({problem}), and this \
         configuration runs no call it cannot record (audit.required). Tell the user; retrying \
         will not help until the log is fixed.",
        path.display()
    )
}

impl DecisionObserver for AuditLog {
    fn decided(&self, decision: &Decision) {
        let mut slot = self.shared.pools.decisions.take();
        slot.fill(decision);
        self.offer(Entry::Decision(slot));
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // No more records: the writer drains the queue and ends.
        self.queue.take();
        let Some(handle) = self.writer.take() else {
            return;
        };
        // Waits for the writer, but not forever: a hung disk must not hang the host's exit.
        let (done, finished) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let _ = handle.join();
            let _ = done.send(());
        });
        if finished.recv_timeout(FLUSH_WAIT).is_ok() {
            let _ = waiter.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use tackle_output_store::StoreConfig;

    use super::*;

    fn required_log(dir: &Path) -> AuditLog {
        let target = writer::Target {
            path: dir.join("audit.jsonl"),
            max_bytes: DEFAULT_MAX_BYTES,
            keep: DEFAULT_KEEP,
        };
        let store = OutputStore::new(StoreConfig::in_data_dir(dir));
        AuditLog::start(target, store, true).unwrap()
    }

    #[test]
    fn a_required_log_refuses_calls_while_dropped_records_are_uncounted() {
        let dir = tempfile::tempdir().unwrap();
        let log = required_log(dir.path());
        assert_eq!(log.admit(), Ok(()));
        log.shared.dropped.store(3, Ordering::Relaxed);
        let refused = log.admit().unwrap_err();
        assert!(
            refused.contains("3 records waiting for it were dropped"),
            "{refused}"
        );
        // The writer's next batch writes the gap record, and calls run again.
        log.offer(Entry::Call(Box::new(facts::CallFacts {
            call_id: "c".into(),
            ..facts::CallFacts::default()
        })));
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while log.admit().is_err() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(log.admit(), Ok(()));
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert!(text.contains(r#""dropped":3"#), "{text}");
    }
}
