//! Messages over the stdio line limit: rmcp drops a line over 16 MiB without a word, so the
//! call it answers would wait for its timeout. A pump between the server's standard output and
//! rmcp passes every line within the limit through unchanged and streams a longer one to an
//! anonymous file while [`scan`] finds its `id` and decodes its text; rmcp then reads a small
//! answer in its place whose `_meta` names the spill, and the call takes the file from
//! [`Spills`]. Nothing beyond the limit (one line being read) and a preview is held.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Seek as _, Write as _};
use std::sync::{Mutex, PoisonError};

use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};

pub(crate) mod scan;

use scan::{Scan, Sink};

/// The longest line passed through: rmcp's own limit, so every line it accepts still reaches
/// it unchanged.
pub(crate) const LIMIT: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;
/// How much of the start and of the end of an oversized text is kept for its preview.
pub(crate) const KEEP: usize = 64 * 1024;
/// The key of the small answer's `_meta` that names its spill.
pub(crate) const META_KEY: &str = "tackle/oversized";
/// Spills not taken by a call (the answer was to another request) are forgotten past this.
const MAX_HELD: usize = 8;

/// The text of one oversized answer, saved.
#[derive(Debug)]
pub(crate) struct Oversized {
    /// The decoded text of its content parts (joined by newlines), from its start.
    pub(crate) file: File,
    /// Its first bytes and its last bytes (at most [`KEEP`] each; equal when short).
    pub(crate) head: Vec<u8>,
    pub(crate) tail: Vec<u8>,
    pub(crate) text_bytes: u64,
    pub(crate) message_bytes: u64,
    /// The server said `isError`.
    pub(crate) is_error: bool,
}

/// The oversized answers of one connection, until their calls take them.
#[derive(Debug, Default)]
pub(crate) struct Spills {
    held: Mutex<(u64, BTreeMap<u64, Oversized>)>,
}

impl Spills {
    fn put(&self, oversized: Oversized) -> u64 {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.0 += 1;
        let token = held.0;
        held.1.insert(token, oversized);
        while held.1.len() > MAX_HELD {
            held.1.pop_first();
        }
        token
    }

    /// The spill `token` names, once.
    pub(crate) fn take(&self, token: u64) -> Option<Oversized> {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .1
            .remove(&token)
    }
}

/// Where an oversized line's text goes: the file, and the ends kept for the preview.
struct Spilling {
    file: BufWriter<File>,
    head: Vec<u8>,
    tail: Vec<u8>,
    bytes: u64,
}

impl Sink for Spilling {
    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)?;
        self.bytes += bytes.len() as u64;
        let room = KEEP.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
        let recent = &bytes[bytes.len().saturating_sub(KEEP)..];
        self.tail.extend_from_slice(recent);
        if self.tail.len() > 2 * KEEP {
            self.tail.drain(..self.tail.len() - KEEP);
        }
        Ok(())
    }
}

/// One oversized line being read.
struct Reading {
    scan: Scan,
    sink: Spilling,
    bytes: u64,
}

impl Reading {
    fn start() -> io::Result<Self> {
        Ok(Self {
            scan: Scan::new(),
            sink: Spilling {
                file: BufWriter::with_capacity(256 * 1024, tempfile::tempfile()?),
                head: Vec::new(),
                tail: Vec::new(),
                bytes: 0,
            },
            bytes: 0,
        })
    }

    fn feed(&mut self, chunk: &[u8]) -> io::Result<()> {
        self.bytes += chunk.len() as u64;
        self.scan.feed(chunk, &mut self.sink)
    }

    /// The line that replaces the oversized one, if any (a request or a message without an id
    /// is dropped: nobody waits for it).
    fn finish(self, server: &str, spills: &Spills) -> io::Result<Option<Vec<u8>>> {
        let found = self.scan.finish();
        let Some(id) = found.id.filter(|_| !found.method) else {
            tracing::warn!(
                server,
                bytes = self.bytes,
                "dropped an MCP message over the line limit that answers nothing"
            );
            return Ok(None);
        };
        let id = String::from_utf8_lossy(&id).into_owned();
        if found.error {
            let message = serde_json::json!(format!(
                "the server's error answer of {} bytes was over the {LIMIT}-byte limit of one message",
                self.bytes
            ));
            return Ok(Some(
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":{message}}}}}"#
                )
                .into_bytes(),
            ));
        }
        let mut file = self
            .sink
            .file
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        file.flush()?;
        file.rewind()?;
        let mut tail = self.sink.tail;
        tail.drain(..tail.len().saturating_sub(KEEP));
        let token = spills.put(Oversized {
            file,
            head: self.sink.head,
            tail,
            text_bytes: self.sink.bytes,
            message_bytes: self.bytes,
            is_error: found.is_error,
        });
        Ok(Some(
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"_meta":{{"{META_KEY}":{token}}}}}}}"#)
                .into_bytes(),
        ))
    }
}

/// Copies the server's output `from` to rmcp's side `to`, line by line, replacing each line
/// over [`LIMIT`] (see the module). Ends at the end of `from` or when `to` is gone.
pub(crate) async fn pump(
    from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    spills: &Spills,
    server: &str,
) -> io::Result<()> {
    let mut from = BufReader::with_capacity(64 * 1024, from);
    let mut line: Vec<u8> = Vec::new();
    let mut reading: Option<Reading> = None;
    loop {
        let available = from.fill_buf().await?;
        if available.is_empty() {
            // A last line without its newline is passed on as it is.
            to.write_all(&line).await?;
            return to.shutdown().await;
        }
        let newline = memchr::memchr(b'\n', available);
        let take = newline.map_or(available.len(), |i| i + 1);
        let chunk = &available[..take];
        if reading.is_none() && line.len() + take > LIMIT {
            let mut started = Reading::start()?;
            started.feed(&line)?;
            // The held part of the line is freed at once.
            line = Vec::new();
            reading = Some(started);
        }
        match &mut reading {
            Some(oversized) => oversized.feed(chunk)?,
            None => line.extend_from_slice(chunk),
        }
        from.consume(take);
        if newline.is_none() {
            continue;
        }
        if let Some(oversized) = reading.take() {
            if let Some(mut answer) = oversized.finish(server, spills)? {
                answer.push(b'\n');
                to.write_all(&answer).await?;
            }
        } else {
            to.write_all(&line).await?;
            line.clear();
            if line.capacity() > 1 << 20 {
                line.shrink_to(64 * 1024);
            }
        }
        to.flush().await?;
    }
}
