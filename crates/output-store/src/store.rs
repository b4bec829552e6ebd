//! The store handle: configuration, spilling with quota upkeep, reading, cleanup.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use tackle_tool_core::ToolOutput;

use crate::cleanup::{self, CleanupReport};
use crate::page::{self, Page, PageLimits};
use crate::redact::Redactor;
use crate::reference::{Layout, OutputRef};
use crate::spill::{self, CapHeader, Written};
use crate::sweep_record::{self, SweepRecord};
use crate::{StoreConfig, StoreError};

/// A full sweep (retention and quota) runs at most this often on the spill path.
const SWEEP_INTERVAL: Duration = Duration::from_secs(60 * 60);

/// A snapshot of the values a store redacts ([`OutputStore::redactions`]).
#[derive(Clone, Debug)]
pub struct Redactions(Arc<Redactor>);

impl Redactions {
    /// `text` with every value replaced by [`REDACTED`](crate::REDACTED); borrowed when none
    /// occurs in it.
    pub fn text<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        self.0.redacted(text)
    }

    /// Replaces every value in the strings and keys of `value`, as a bounded result's
    /// structured value is redacted.
    pub fn value(&self, value: &mut serde_json::Value) {
        self.0.value(value);
    }

    /// Whether some string of `json` (compact JSON as `serde_json` writes it) may hold a
    /// value. `false` is a promise: no string of it needs redacting.
    pub fn may_occur_in_json(&self, json: &[u8]) -> bool {
        self.0.may_occur_in_json(json)
    }
}

/// The output store: bounds tool outputs and keeps the full text of large ones as managed
/// outputs. A cheap `Clone` handle; all clones share one state. The API is synchronous (it
/// does file I/O on the spill path only); async hosts call it from a blocking context.
#[derive(Clone, Debug)]
pub struct OutputStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: StoreConfig,
    /// Every value redacted (the configuration's, then those added), and their matcher.
    redactor: RwLock<(Vec<String>, Arc<Redactor>)>,
    /// Serialises this process's upkeep (the record is read, updated and written back).
    upkeep: Mutex<()>,
}

impl OutputStore {
    /// A store for `config`. Nothing is created until the first spill.
    pub fn new(config: StoreConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                redactor: RwLock::new((
                    config.redact.clone(),
                    Arc::new(Redactor::new(&config.redact)),
                )),
                config,
                upkeep: Mutex::new(()),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &StoreConfig {
        &self.inner.config
    }

    /// The current redactions.
    fn redactor(&self) -> Arc<Redactor> {
        let held = self
            .inner
            .redactor
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        Arc::clone(&held.1)
    }

    /// Adds `secrets` to the values redacted from everything bounded or saved from now on, by
    /// every clone of this store (values a host learns after building it: a session's MCP
    /// server configuration).
    pub fn add_redactions(&self, secrets: impl IntoIterator<Item = String>) {
        let mut held = self
            .inner
            .redactor
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let before = held.0.len();
        for secret in secrets {
            if !held.0.contains(&secret) {
                held.0.push(secret);
            }
        }
        if held.0.len() != before {
            held.1 = Arc::new(Redactor::new(&held.0));
        }
    }

    /// Replaces every configured secret value in `output` (text parts, file names, structured
    /// value) with [`REDACTED`](crate::REDACTED). [`bound`](Self::bound) does it first; a host
    /// that measures an output before bounding it redacts it first too.
    pub fn redact(&self, output: &mut ToolOutput) {
        self.redactor().output(output);
    }

    /// Replaces every configured secret value in `text` (an error message, for example).
    pub fn redact_text(&self, text: &mut String) {
        self.redactor().text(text);
    }

    /// The values redacted now, for redacting many strings in a row (a batch of log records)
    /// without looking the list up for each one. Values added later are not in it.
    pub fn redactions(&self) -> Redactions {
        Redactions(self.redactor())
    }

    /// Replaces every configured secret value in raw bytes.
    pub(crate) fn redact_bytes(&self, bytes: &mut Vec<u8>) {
        self.redactor().bytes(bytes);
    }

    /// Saves `body` as a new managed output and keeps the directory within its quota.
    pub(crate) fn spill(
        &self,
        session_id: &str,
        call_id: &str,
        body: &[u8],
    ) -> Result<Written, StoreError> {
        let config = &self.inner.config;
        spill::ensure_dir(&config.directory)?;
        // One handle on the directory for the output and the upkeep after it.
        let directory = spill::open_for_saving(&config.directory, call_id)?;
        let written = spill::write(
            &directory,
            &config.directory,
            session_id,
            call_id,
            body,
            config.spill_cap,
        )?;
        self.upkeep(&directory, &written);
        Ok(written)
    }

    /// Saves everything `source` yields as a new managed output of `session_id`, its secrets
    /// redacted, holding only a chunk of it in memory at a time: for output too large to bound
    /// in memory (an MCP server's oversized message). Past the spill cap the file keeps its
    /// head and tail, as every spill does.
    pub fn save_stream(
        &self,
        session_id: &str,
        call_id: &str,
        source: &mut impl Read,
    ) -> Result<OutputRef, StoreError> {
        let config = &self.inner.config;
        config.validate()?;
        spill::ensure_dir(&config.directory)?;
        let directory = spill::open_for_saving(&config.directory, call_id)?;
        let written = crate::save::write(
            &directory,
            &config.directory,
            session_id,
            call_id,
            source,
            config.spill_cap,
            &self.redactor(),
        )?;
        self.upkeep(&directory, &written);
        Ok(written.reference)
    }

    /// Retention and quota after a spill: a full sweep when the directory's sweep record (shared
    /// by every process spilling there) is missing or an hour old, or when the bytes it records
    /// pass the quota; otherwise the record just counts the new output.
    fn upkeep(&self, directory: &OwnedFd, written: &Written) {
        let config = &self.inner.config;
        let _serial = self
            .inner
            .upkeep
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let now = SystemTime::now();
        let mut counted = false;
        sweep_record::update(directory, |record| {
            let record =
                record.filter(|record| record.age(now).is_some_and(|age| age < SWEEP_INTERVAL))?;
            let bytes = record.bytes.saturating_add(written.file_bytes);
            counted = bytes <= config.quota;
            counted.then_some(SweepRecord { bytes, ..record })
        });
        if counted {
            return;
        }
        // The output is saved; a failed sweep must not lose it. The next spill (or the host's
        // own `cleanup`) retries and reports.
        let _ = self.sweep(now, Some(&written.reference));
    }

    /// Retention then quota over the whole directory; records the sweep for every process.
    fn sweep(
        &self,
        now: SystemTime,
        protect: Option<&OutputRef>,
    ) -> Result<CleanupReport, StoreError> {
        let config = &self.inner.config;
        let report = cleanup::sweep(
            &config.directory,
            now,
            config.retention,
            config.quota,
            protect,
        )?;
        let record = SweepRecord {
            swept_at: now,
            bytes: report.kept_bytes,
        };
        if let Ok(directory) = spill::open_dir(&config.directory) {
            sweep_record::write(&directory, record);
        }
        Ok(report)
    }

    /// The page of a managed output starting at the 1-based line `offset`, within `limits`
    /// (the reader's, which knows the frame it adds around the lines).
    pub fn read_page(
        &self,
        reference: &OutputRef,
        offset: usize,
        limits: PageLimits,
    ) -> Result<Page, StoreError> {
        self.read_page_at(reference, offset, 1, limits)
    }

    /// The page of a managed output starting at the 1-based character `column` of the 1-based
    /// line `offset`: how a line too long for one page is read on (a page that ends inside a
    /// line says where to continue in [`Page::next_column`]).
    pub fn read_page_at(
        &self,
        reference: &OutputRef,
        offset: usize,
        column: usize,
        limits: PageLimits,
    ) -> Result<Page, StoreError> {
        if column == 0 {
            return Err(StoreError::InvalidPage {
                problem: "column is 1-based and must be at least 1",
            });
        }
        if offset == 0 {
            return Err(StoreError::InvalidPage {
                problem: "offset is 1-based and must be at least 1",
            });
        }
        if limits.lines == 0 {
            return Err(StoreError::InvalidPage {
                problem: "limit must be at least 1",
            });
        }
        let config = &self.inner.config;
        config.validate()?;
        let file = spill::open(&config.directory, reference)?;
        page::read(file, reference, offset, column, limits)
    }

    /// Opens a managed output for reading its stored bytes. For a capped output these are its
    /// head followed directly by its tail; [`ManagedOutput::dropped`] says where the gap is.
    pub fn open(&self, reference: &OutputRef) -> Result<ManagedOutput, StoreError> {
        let mut file = spill::open(&self.inner.config.directory, reference)?;
        let read_error = |source| StoreError::Read {
            reference: reference.to_string(),
            source,
        };
        let len = file.metadata().map_err(read_error)?.len();
        let (dropped, stored) = match reference.layout() {
            Layout::Full => (None, len),
            Layout::Capped => {
                let cap = CapHeader::read(&mut file, reference)?;
                let gap = DroppedBytes {
                    at: cap.head_end,
                    bytes: cap.tail_start - cap.head_end,
                };
                (Some(gap), len.saturating_sub(CapHeader::len() as u64))
            }
        };
        Ok(ManagedOutput {
            reader: file.take(stored),
            stored_bytes: stored,
            dropped,
        })
    }

    /// Removes managed outputs older than the retention, then the oldest ones until the
    /// directory is within its quota. Files the store did not create, and symbolic links, are
    /// left alone. A missing directory is empty.
    pub fn cleanup(&self) -> Result<CleanupReport, StoreError> {
        let _serial = self
            .inner
            .upkeep
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.sweep(SystemTime::now(), None)
    }

    /// Removes every managed output stored for `session_id` (when the host deletes a session).
    pub fn remove_session(&self, session_id: &str) -> Result<CleanupReport, StoreError> {
        let directory = &self.inner.config.directory;
        let report = cleanup::remove_session(directory, session_id)?;
        let _serial = self
            .inner
            .upkeep
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Ok(directory) = spill::open_dir(directory) {
            sweep_record::update(&directory, |record| {
                record.map(|record| SweepRecord {
                    bytes: record.bytes.saturating_sub(report.freed_bytes),
                    ..record
                })
            });
        }
        Ok(report)
    }
}

/// The stored bytes of a managed output, from [`OutputStore::open`].
#[derive(Debug)]
pub struct ManagedOutput {
    reader: io::Take<File>,
    stored_bytes: u64,
    dropped: Option<DroppedBytes>,
}

/// Where a capped output's stored bytes skip over the part the spill cap dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DroppedBytes {
    /// Offset, in the stored bytes (and in the original output), where the gap is.
    pub at: u64,
    /// Bytes of the original output missing there.
    pub bytes: u64,
}

impl ManagedOutput {
    /// How many bytes [`Read`] yields.
    pub fn stored_bytes(&self) -> u64 {
        self.stored_bytes
    }

    /// The gap, for an output that exceeded the spill cap.
    pub fn dropped(&self) -> Option<DroppedBytes> {
        self.dropped
    }

    /// Rewinds to the first stored byte.
    pub fn rewind(&mut self) -> io::Result<()> {
        let start = match self.dropped {
            Some(_) => CapHeader::len() as u64,
            None => 0,
        };
        self.reader.get_mut().seek(SeekFrom::Start(start))?;
        self.reader.set_limit(self.stored_bytes);
        Ok(())
    }
}

impl Read for ManagedOutput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }
}
