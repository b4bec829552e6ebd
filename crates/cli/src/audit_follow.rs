//! `tackle audit tail -f`: the last records, then every record as it is appended, across
//! rotations, until SIGINT, SIGTERM or a closed stdout ends it (exit 0).
//!
//! Only whole lines are read: a line still being written waits for its end, so a record is
//! never shown cut. When the log is rotated (the path names another file, or the file shrank)
//! the rest of the old file is read first, then the new file from its start.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags};
use tackle_host::audit::{AuditLine, parse_line};
use tokio::signal::unix::{SignalKind, signal};

use crate::error::CliError;

/// How often the log is looked at for new records.
const POLL: Duration = Duration::from_millis(100);

/// Prints the last `lines` records of `path`, then follows it.
pub(crate) async fn follow(path: &Path, lines: usize) -> Result<ExitCode, CliError> {
    let mut interrupt = signal(SignalKind::interrupt()).map_err(CliError::Output)?;
    let mut terminate = signal(SignalKind::terminate()).map_err(CliError::Output)?;
    let mut log = Followed::new(path);
    let mut last = VecDeque::new();
    for record in log.read_new() {
        if lines == 0 {
            continue;
        }
        if last.len() == lines {
            last.pop_front();
        }
        last.push_back(record);
    }
    if !emit(&Vec::from(last)) {
        return Ok(ExitCode::SUCCESS);
    }
    let mut tick = tokio::time::interval(POLL);
    loop {
        tokio::select! {
            _ = interrupt.recv() => return Ok(ExitCode::SUCCESS),
            _ = terminate.recv() => return Ok(ExitCode::SUCCESS),
            _ = tick.tick() => {
                if !emit(&log.read_new()) || stdout_closed() {
                    return Ok(ExitCode::SUCCESS);
                }
            }
        }
    }
}

/// Prints `records`, one a line; false once stdout is gone.
fn emit(records: &[String]) -> bool {
    if records.is_empty() {
        return true;
    }
    let mut text = String::new();
    for record in records {
        text.push_str(record);
        text.push('\n');
    }
    let mut stdout = io::stdout().lock();
    stdout.write_all(text.as_bytes()).is_ok() && stdout.flush().is_ok()
}

/// True when nobody reads stdout any more (the reading end of its pipe was closed).
fn stdout_closed() -> bool {
    let stdout = io::stdout();
    let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
    let zero = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    rustix::event::poll(&mut fds, Some(&zero)).is_ok()
        && fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP)
}

/// The log file being followed.
struct Followed<'p> {
    path: &'p Path,
    file: Option<File>,
    /// Bytes read so far from `file`.
    offset: u64,
    /// The start of a line whose end has not been written yet.
    partial: Vec<u8>,
    /// Lines read from `file`, for the skipped-line notes.
    line: usize,
}

impl<'p> Followed<'p> {
    fn new(path: &'p Path) -> Self {
        Self {
            path,
            file: None,
            offset: 0,
            partial: Vec::new(),
            line: 0,
        }
    }

    /// The records appended since the last look, as compact JSON.
    fn read_new(&mut self) -> Vec<String> {
        let mut records = Vec::new();
        if self.file.is_none() {
            match File::open(self.path) {
                Ok(file) => self.file = Some(file),
                // Not there (yet, or between a rotation's renames): nothing new.
                Err(_) => return records,
            }
        }
        self.drain(&mut records);
        if self.replaced() {
            // What was appended to the old file before it moved, then the new file.
            self.drain(&mut records);
            if !self.partial.is_empty() {
                eprintln!(
                    "tackle: {} line {} skipped: unfinished last line (its writer stopped mid-write)",
                    self.path.display(),
                    self.line + 1
                );
            }
            *self = Self::new(self.path);
            records.extend(self.read_new());
        }
        records
    }

    /// Reads `file` to its end, keeping the whole lines' records.
    fn drain(&mut self, records: &mut Vec<String>) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let mut bytes = Vec::new();
        if file.read_to_end(&mut bytes).is_err() {
            return;
        }
        self.offset += bytes.len() as u64;
        self.partial.extend_from_slice(&bytes);
        let Some(end) = self.partial.iter().rposition(|&b| b == b'\n') else {
            return;
        };
        let rest = self.partial.split_off(end + 1);
        let whole = std::mem::replace(&mut self.partial, rest);
        for line in whole[..whole.len() - 1].split(|&b| b == b'\n') {
            self.line += 1;
            match parse_line(line, self.line) {
                AuditLine::Record { record, .. } => {
                    if let Ok(text) = serde_json::to_string(&record) {
                        records.push(text);
                    }
                }
                AuditLine::Skipped { line, reason } => {
                    eprintln!(
                        "tackle: {} line {line} skipped: {reason}",
                        self.path.display()
                    );
                }
            }
        }
    }

    /// True when the path now names another file (rotated or replaced) or the file shrank.
    fn replaced(&self) -> bool {
        let Some(file) = &self.file else {
            return false;
        };
        let (Ok(ours), current) = (file.metadata(), std::fs::metadata(self.path)) else {
            return true;
        };
        match current {
            Ok(current) => {
                current.ino() != ours.ino()
                    || current.dev() != ours.dev()
                    || ours.len() < self.offset
            }
            // Renamed away, the new file not created yet: the old one is finished.
            Err(err) => err.kind() == io::ErrorKind::NotFound,
        }
    }
}
