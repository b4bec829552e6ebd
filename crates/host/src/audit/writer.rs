//! The audit log's writer thread: numbers records, appends them in batches under an exclusive
//! lock on the file (so several processes can share one log), repairs a torn last line, and
//! rotates by size.

use std::fs::{File, OpenOptions};
use std::io::{self, Read as _, Seek as _, SeekFrom, Write as _};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Duration;

use serde_json::{Map, Value};
use tackle_output_store::OutputStore;

use super::Health;
use super::facts::{Entry, Pools};
use super::record;

/// Records taken from the queue per write.
const BATCH: usize = 256;

/// While calls keep coming, the writer looks at the queue this often instead of being woken
/// for each record (a wake-up is a system call the caller would pay).
const POLL: Duration = Duration::from_millis(1);

/// Empty looks after which the writer sleeps until the next record wakes it: an idle host
/// costs nothing.
const IDLE_POLLS: u32 = 20;

/// How far back from the end of the file the last record's number is looked for.
const TAIL: u64 = 64 * 1024;

/// Where and how the log is written.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) path: PathBuf,
    pub(crate) max_bytes: u64,
    pub(crate) keep: u32,
}

pub(crate) struct Writer {
    target: Target,
    /// Redacts the host's secret values from every string of a record.
    store: OutputStore,
    /// Records the queue had no room for; shared with the senders.
    dropped: Arc<AtomicU64>,
    /// Where emptied slots go back to.
    pools: Arc<Pools>,
    /// Told of each failed and successful write (what a required log admits calls by).
    health: Arc<Health>,
    /// Records lost to a failed write, told in the next gap record.
    lost: u64,
    file: Option<File>,
    next_seq: u64,
    /// The file's length after our last write: another length means another process wrote.
    known_len: Option<u64>,
    warned: bool,
}

impl Writer {
    pub(crate) fn new(
        target: Target,
        store: OutputStore,
        dropped: Arc<AtomicU64>,
        pools: Arc<Pools>,
        health: Arc<Health>,
    ) -> Self {
        Self {
            target,
            store,
            dropped,
            pools,
            health,
            lost: 0,
            file: None,
            next_seq: 1,
            known_len: None,
            warned: false,
        }
    }

    /// Writes what arrives until every sender is gone.
    pub(crate) fn run(mut self, queue: &Receiver<Entry>) {
        let mut idle = 0;
        let mut entries = Vec::with_capacity(BATCH);
        loop {
            let first = if idle >= IDLE_POLLS {
                match queue.recv() {
                    Ok(entry) => entry,
                    Err(_) => break,
                }
            } else {
                match queue.try_recv() {
                    Ok(entry) => entry,
                    Err(TryRecvError::Empty) => {
                        idle += 1;
                        std::thread::sleep(POLL);
                        continue;
                    }
                    Err(TryRecvError::Disconnected) => break,
                }
            };
            idle = 0;
            entries.push(first);
            while entries.len() < BATCH {
                match queue.try_recv() {
                    Ok(entry) => entries.push(entry),
                    Err(_) => break,
                }
            }
            self.write(&mut entries);
            self.pools.give(entries.drain(..), super::QUEUE);
        }
        // The queue may have refused records after the last write.
        if self.dropped.load(Ordering::Relaxed) > 0 || self.lost > 0 {
            self.write(&mut Vec::new());
        }
    }

    fn write(&mut self, entries: &mut [Entry]) {
        let count = entries.len() as u64;
        match self.append(entries) {
            Ok(()) => self.health.recovered(),
            Err(err) => {
                self.health.failed(&err.to_string());
                self.lost += count;
                // The file is reopened next time: the disk may have room again, the directory
                // may be back.
                self.file = None;
                self.known_len = None;
                if !self.warned {
                    self.warned = true;
                    tracing::warn!(
                        path = %self.target.path.display(),
                        %err,
                        "cannot write the audit log; calls go on, and the records lost are counted \
                         in a gap record once it can be written again"
                    );
                }
            }
        }
    }

    fn append(&mut self, entries: &mut [Entry]) -> io::Result<()> {
        self.lock_file()?;
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| io::Error::other("no file"))?;
        let len = file.metadata()?.len();
        let mut text = Vec::new();
        if self.known_len != Some(len) {
            // First write, or another process wrote since: continue its numbering, and end a
            // line a killed writer left unfinished so no record joins it.
            let (mut last, torn) = last_seq(file, len)?;
            if last == 0 {
                // A fresh file after a rotation (perhaps by another process): numbering goes on
                // from the newest rotated file, so a new process never starts again at 1.
                last = last_rotated_seq(&self.target.path);
            }
            self.next_seq = self.next_seq.max(last + 1);
            if torn {
                text.push(b'\n');
            }
        }
        let dropped = self.dropped.swap(0, Ordering::Relaxed) + std::mem::take(&mut self.lost);
        if dropped > 0 {
            record::gap(&mut text, self.take_seq(), dropped);
        }
        // One look at the redaction list for the whole batch.
        let redactions = self.store.redactions();
        for entry in entries.iter_mut() {
            let seq = self.take_seq();
            match entry {
                Entry::Call(facts) => record::call(&mut text, seq, facts, &redactions),
                Entry::Decision(facts) => record::decision(&mut text, seq, facts, &redactions),
            }
        }
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| io::Error::other("no file"))?;
        let written = file.write_all(&text);
        if let Err(err) = written {
            // A partial write is a torn line; the next writer ends it.
            self.known_len = None;
            return Err(err);
        }
        let end = len + text.len() as u64;
        self.known_len = Some(end);
        if end >= self.target.max_bytes {
            self.rotate()?;
        }
        // Dropping the lock with the batch written.
        if let Some(file) = &self.file {
            file.unlock()?;
        }
        Ok(())
    }

    /// The next record's number.
    fn take_seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq - 1
    }

    /// The log, open for appending and locked; reopened when it was rotated or replaced.
    fn lock_file(&mut self) -> io::Result<()> {
        loop {
            if self.file.is_none() {
                self.file = Some(open(&self.target.path)?);
                self.known_len = None;
            }
            let Some(file) = self.file.as_mut() else {
                continue;
            };
            file.lock()?;
            // Another process may have rotated it while we waited for the lock, or someone
            // replaced it: by the link itself (`lstat`), so a link put in its place, even to
            // this very file, is a replacement, and reopening it fails.
            let current = std::fs::symlink_metadata(&self.target.path).ok();
            let ours = file.metadata()?;
            if current.is_some_and(|m| m.ino() == ours.ino() && m.dev() == ours.dev()) {
                return Ok(());
            }
            self.file = None;
        }
    }

    /// `<path>` becomes `<path>.1`, `.1` becomes `.2`, ..., and what passes `keep` goes.
    fn rotate(&mut self) -> io::Result<()> {
        let path = &self.target.path;
        let keep = self.target.keep;
        if keep == 0 {
            std::fs::remove_file(path)?;
        } else {
            let _ = std::fs::remove_file(rotated(path, keep));
            for n in (1..keep).rev() {
                let from = rotated(path, n);
                if from.exists() {
                    std::fs::rename(&from, rotated(path, n + 1))?;
                }
            }
            std::fs::rename(path, rotated(path, 1))?;
        }
        if let Some(file) = self.file.take() {
            file.unlock()?;
        }
        self.known_len = None;
        Ok(())
    }
}

/// `<path>.<n>`: the `n`th newest rotated log.
pub fn rotated(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// Opens the log for appending: created 0600, never through a symbolic link, and only a
/// regular file (a FIFO or a device in its place would hang or swallow the records).
fn open(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir)?;
    }
    let file = OpenOptions::new()
        .append(true)
        .read(true)
        .create(true)
        .mode(0o600)
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
        .open(path)
        .map_err(|err| match err.raw_os_error() {
            Some(code) if code == rustix::io::Errno::LOOP.raw_os_error() => {
                io::Error::other("it is a symbolic link")
            }
            _ => err,
        })?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("it is not a regular file"));
    }
    Ok(file)
}

/// Whether a record could be appended now: the log opens as the writer opens it.
pub(crate) fn probe(path: &Path) -> io::Result<()> {
    open(path).map(drop)
}

/// The number of the file's last complete record (0 if none), and whether its last line is
/// unfinished.
fn last_seq(file: &mut File, len: u64) -> io::Result<(u64, bool)> {
    let start = len.saturating_sub(TAIL);
    file.seek(SeekFrom::Start(start))?;
    let mut tail = Vec::new();
    file.take(TAIL).read_to_end(&mut tail)?;
    let torn = tail.last().is_some_and(|&b| b != b'\n');
    let complete = match tail.iter().rposition(|&b| b == b'\n') {
        Some(end) => &tail[..end],
        None => &[][..],
    };
    let last = complete
        .split(|&b| b == b'\n')
        .rev()
        .find_map(|line| {
            let record: Map<String, Value> = serde_json::from_slice(line).ok()?;
            record.get("seq")?.as_u64()
        })
        .unwrap_or(0);
    Ok((last, torn))
}

/// The number of the last complete record of `<path>.1`, 0 when there is none.
fn last_rotated_seq(path: &Path) -> u64 {
    let Ok(mut file) = File::open(rotated(path, 1)) else {
        return 0;
    };
    let len = file.metadata().map_or(0, |m| m.len());
    last_seq(&mut file, len).map_or(0, |(last, _)| last)
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::sync_channel;

    use serde_json::json;
    use tackle_output_store::{REDACTED, StoreConfig};

    use super::super::facts::CallFacts;
    use super::*;

    fn writer(dir: &Path, path: PathBuf, dropped: &Arc<AtomicU64>) -> Writer {
        let store = OutputStore::new(
            StoreConfig::in_data_dir(dir).with_redactions(["s3cret-value".to_owned()]),
        );
        let target = Target {
            path,
            max_bytes: u64::MAX,
            keep: 1,
        };
        Writer::new(
            target,
            store,
            Arc::clone(dropped),
            Arc::default(),
            Arc::default(),
        )
    }

    /// A call's facts as a caller hands them over: raw, unredacted.
    fn call(id: &str) -> Box<CallFacts> {
        let json = br#"{"command":"echo s3cret-value"}"#.to_vec();
        Box::new(CallFacts {
            session: "s".into(),
            call_id: id.into(),
            tool: "bash".into(),
            bytes_in: json.len() as u64,
            json,
            result: "text",
            ..CallFacts::default()
        })
    }

    fn lines(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    #[test]
    fn records_the_queue_refused_become_one_gap_record_before_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("audit.jsonl");
        let dropped = Arc::new(AtomicU64::new(3));
        let (sender, receiver) = sync_channel(4);
        sender.send(Entry::Call(call("c1"))).unwrap();
        drop(sender);
        writer(dir.path(), log.clone(), &dropped).run(&receiver);
        let lines = lines(&log);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0]["kind"], "gap");
        assert_eq!(lines[0]["dropped"], 3);
        assert_eq!(lines[0]["seq"], 1);
        assert_eq!(lines[1]["kind"], "call");
        assert_eq!(lines[1]["seq"], 2);
        // The writer builds and redacts the record from the raw facts.
        assert_eq!(
            lines[1]["input"],
            json!({"command": format!("echo {REDACTED}")})
        );
        assert_eq!(lines[1]["bytes_in"], 31);
    }

    #[test]
    fn a_failed_write_is_counted_in_a_gap_once_the_log_can_be_written() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the log's directory should be: every write fails.
        let blocker = dir.path().join("logs");
        std::fs::write(&blocker, "").unwrap();
        let log = blocker.join("audit.jsonl");
        let dropped = Arc::new(AtomicU64::new(0));
        let mut writer = writer(dir.path(), log.clone(), &dropped);
        writer.write(&mut [Entry::Call(call("a"))]);
        writer.write(&mut [Entry::Call(call("b"))]);
        assert!(writer.warned);
        assert_eq!(writer.lost, 2);
        std::fs::remove_file(&blocker).unwrap();
        writer.write(&mut [Entry::Call(call("c"))]);
        let lines = lines(&log);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0]["kind"], "gap");
        assert_eq!(lines[0]["dropped"], 2);
        assert_eq!(lines[1]["call_id"], "c");
    }

    #[test]
    fn a_log_replaced_by_a_link_to_itself_is_not_written_through_the_old_handle() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("audit.jsonl");
        let dropped = Arc::new(AtomicU64::new(0));
        let health = Arc::new(Health::default());
        let mut writer = writer(dir.path(), log.clone(), &dropped);
        writer.health = Arc::clone(&health);
        writer.write(&mut [Entry::Call(call("a"))]);
        assert!(health.failure().is_none());
        // The same file, now reached through a link at the log's path.
        let moved = dir.path().join("moved.jsonl");
        std::fs::rename(&log, &moved).unwrap();
        std::os::unix::fs::symlink(&moved, &log).unwrap();
        writer.write(&mut [Entry::Call(call("b"))]);
        assert_eq!(writer.lost, 1);
        assert_eq!(health.failure().as_deref(), Some("it is a symbolic link"));
        assert_eq!(lines(&moved).len(), 1);
        assert!(probe(&log).is_err());
    }
}
