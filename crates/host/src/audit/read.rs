//! Reading the audit log back (`tackle audit`): complete records only. A line a killed writer
//! left unfinished, or anything else that is not a whole record, is reported as such and
//! never read as a record.

use std::io::{self, BufRead as _};
use std::path::Path;

use serde_json::{Map, Value};

/// One line of the log.
#[derive(Debug, Clone, PartialEq)]
pub enum AuditLine {
    /// A complete record, with its number.
    Record {
        /// The record's `seq`.
        seq: u64,
        /// The record.
        record: Map<String, Value>,
    },
    /// A line that is not a complete record (a torn write), skipped.
    Skipped {
        /// Its line number in the file, from 1.
        line: usize,
        /// Why it was skipped.
        reason: String,
    },
}

/// Every line of the log file `path`, in order. A missing file is an empty log.
pub fn read_log(path: &Path) -> io::Result<Vec<AuditLine>> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err),
    };
    let mut reader = io::BufReader::new(file);
    let mut lines = Vec::new();
    let mut buf = Vec::new();
    let mut number = 0;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        number += 1;
        if buf.last() != Some(&b'\n') {
            lines.push(AuditLine::Skipped {
                line: number,
                reason: "unfinished last line (its writer stopped mid-write)".into(),
            });
            break;
        }
        lines.push(parse_line(&buf[..buf.len() - 1], number));
    }
    Ok(lines)
}

/// One complete line of the log (without its line break), numbered `number` from 1: a record,
/// or why it is not one. For a reader that follows the file as it grows.
pub fn parse_line(line: &[u8], number: usize) -> AuditLine {
    if line.is_empty() {
        return AuditLine::Skipped {
            line: number,
            reason: "empty line".into(),
        };
    }
    match serde_json::from_slice::<Map<String, Value>>(line) {
        Ok(record) => match record.get("seq").and_then(Value::as_u64) {
            Some(seq) => AuditLine::Record { seq, record },
            None => AuditLine::Skipped {
                line: number,
                reason: "a JSON object without a seq number".into(),
            },
        },
        Err(_) => AuditLine::Skipped {
            line: number,
            reason: "not a complete record (a write was cut short)".into(),
        },
    }
}
