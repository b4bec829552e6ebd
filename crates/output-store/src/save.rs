//! Saving a stream as a managed output without holding it in memory: redacted a chunk at a
//! time into a full file, which is re-cut into the capped layout (40% head, 60% tail, the
//! same header) when it passes the spill cap.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::AtFlags;

use crate::StoreError;
use crate::redact::Redactor;
use crate::reference::{Layout, OutputRef};
use crate::spill::{self, CapHeader, Written, head_cut, head_window, tail_cut, tail_window};

const CHUNK: usize = 256 * 1024;

/// Writes `source`, redacted, as a new managed output in the managed `directory` (`dir`,
/// open).
pub(crate) fn write(
    directory: &OwnedFd,
    dir: &Path,
    session_id: &str,
    call_id: &str,
    source: &mut impl Read,
    spill_cap: u64,
    redactor: &Redactor,
) -> Result<Written, StoreError> {
    let failed = |reference: &OutputRef, source: io::Error| {
        let _ = rustix::fs::unlinkat(directory, reference.file_name(), AtFlags::empty());
        StoreError::Write {
            call_id: call_id.to_owned(),
            path: dir.join(reference.file_name()),
            source,
        }
    };
    let (full, file) = spill::create(directory, dir, session_id, call_id, Layout::Full)?;
    let mut counted = Counting::new(BufWriter::new(file));
    let written = redactor
        .stream(source, &mut counted)
        .and_then(|()| counted.inner.flush());
    if let Err(err) = written {
        return Err(failed(&full, err));
    }
    let (bytes, newlines, last) = (counted.bytes, counted.newlines, counted.last);
    let total_lines = newlines + u64::from(last.is_some_and(|b| b != b'\n'));
    if bytes <= spill_cap {
        return Ok(Written {
            reference: full,
            total_lines,
            file_bytes: bytes,
        });
    }
    // Too large for one file: keep its head and tail in a capped one, then drop the full one.
    let mut whole = spill::open(dir, &full)?;
    let (capped, mut out) = match spill::create(directory, dir, session_id, call_id, Layout::Capped)
    {
        Ok(created) => created,
        Err(err) => {
            let _ = rustix::fs::unlinkat(directory, full.file_name(), AtFlags::empty());
            return Err(err);
        }
    };
    let result = recut(&mut whole, bytes, &mut out, spill_cap);
    let _ = rustix::fs::unlinkat(directory, full.file_name(), AtFlags::empty());
    match result {
        Ok(file_bytes) => Ok(Written {
            reference: capped,
            total_lines,
            file_bytes,
        }),
        Err(err) => Err(failed(&capped, err)),
    }
}

/// Counts what passes through.
struct Counting<W> {
    inner: W,
    bytes: u64,
    newlines: u64,
    last: Option<u8>,
}

impl<W> Counting<W> {
    fn new(inner: W) -> Self {
        Self {
            inner,
            bytes: 0,
            newlines: 0,
            last: None,
        }
    }
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        self.newlines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
        if n > 0 {
            self.last = Some(buf[n - 1]);
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn read_at(file: &mut File, from: u64, len: u64) -> io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(from))?;
    let mut buf = Vec::new();
    file.take(len).read_to_end(&mut buf)?;
    Ok(buf)
}

/// Streams `[from, to)` of `file` to `out` (when given), calling `each` on every chunk with
/// its offset.
fn pass(
    file: &mut File,
    from: u64,
    to: u64,
    mut out: Option<&mut BufWriter<&mut File>>,
    mut each: impl FnMut(u64, &[u8]),
) -> io::Result<()> {
    file.seek(SeekFrom::Start(from))?;
    let mut buf = vec![0; CHUNK];
    let mut at = from;
    while at < to {
        let want = usize::try_from((to - at).min(CHUNK as u64)).unwrap_or(CHUNK);
        file.read_exact(&mut buf[..want])?;
        each(at, &buf[..want]);
        if let Some(out) = out.as_deref_mut() {
            out.write_all(&buf[..want])?;
        }
        at += want as u64;
    }
    Ok(())
}

/// Writes the capped layout of `whole` (`len` bytes, over `spill_cap`) to `out`; the file's
/// size.
fn recut(whole: &mut File, len: u64, out: &mut File, spill_cap: u64) -> io::Result<u64> {
    let header_len = CapHeader::len() as u64;
    let room = spill_cap.saturating_sub(header_len);
    let head_max = room * 2 / 5;
    let tail_max = room - head_max;
    let as_index = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    // The same cuts as a spill's, read from the file a window at a time.
    let head = head_window(as_index(head_max));
    let bytes = read_at(whole, head.start as u64, head.len() as u64)?;
    let head_end = (head.start + head_cut(&bytes)) as u64;
    let tail = tail_window(as_index(len), as_index(tail_max));
    let bytes = read_at(whole, tail.start as u64, tail.len() as u64)?;
    let tail_start = (tail.start + tail_cut(&bytes)) as u64;
    let byte_at = |file: &mut File, at: u64| read_at(file, at, 1).map(|b| b.first().copied());
    let head_partial = head_end > 0 && byte_at(whole, head_end - 1)? != Some(b'\n');
    let tail_partial = byte_at(whole, tail_start - 1)? != Some(b'\n');
    let last = byte_at(whole, len - 1)?;
    out.write_all(CapHeader::default().render().as_bytes())?;
    let mut writer = BufWriter::new(&mut *out);
    let mut head_newlines = 0;
    pass(whole, 0, head_end, Some(&mut writer), |_, chunk| {
        head_newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
    })?;
    let (mut dropped_newlines, mut first, mut final_nl) = (0, None, None);
    pass(whole, head_end, tail_start, None, |at, chunk| {
        dropped_newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        if first.is_none() {
            first = memchr::memchr(b'\n', chunk).map(|i| at + i as u64);
        }
        if let Some(i) = memchr::memrchr(b'\n', chunk) {
            final_nl = Some(at + i as u64);
        }
    })?;
    let mut tail_newlines = 0;
    pass(whole, tail_start, len, Some(&mut writer), |_, chunk| {
        tail_newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
    })?;
    writer.flush()?;
    drop(writer);
    let dropped = tail_start - head_end;
    let (head_rest, tail_lead) = match (first, final_nl) {
        (Some(first), Some(final_nl)) => (
            if head_partial {
                first - head_end + 1
            } else {
                0
            },
            if tail_partial {
                tail_start - final_nl - 1
            } else {
                0
            },
        ),
        _ if head_partial => (dropped, 0),
        _ => (0, dropped),
    };
    let header = CapHeader {
        total_bytes: len,
        total_lines: head_newlines
            + dropped_newlines
            + tail_newlines
            + u64::from(last.is_some_and(|b| b != b'\n')),
        head_end,
        head_newlines,
        tail_start,
        newlines_before_tail: head_newlines + dropped_newlines,
        head_partial,
        tail_partial,
        head_rest,
        tail_lead,
    };
    out.seek(SeekFrom::Start(0))?;
    out.write_all(header.render().as_bytes())?;
    out.flush()?;
    Ok(header_len + head_end + (len - tail_start))
}
