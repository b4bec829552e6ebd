//! Managed spill files: the directory, exclusive creation, capped writing, opening for reads.
//!
//! Invariants:
//! - the managed directory is created mode 0700 and is never a symbolic link; it is opened once
//!   per operation (`O_NOFOLLOW | O_DIRECTORY`) and its files are created and opened relative
//!   to that descriptor, so swapping the directory for a link after the check cannot redirect
//!   a spill or a read; files are created exclusively (`O_EXCL`), mode 0600, and never opened
//!   through a symbolic link;
//! - a file of at most `spill_cap` bytes holds exactly the output (layout `f`); a larger output
//!   keeps its head and tail (cut on line boundaries when one is near, otherwise on code-point
//!   boundaries) behind one fixed-length header line that records what was dropped (layout
//!   `c`), so the whole file stays within the cap;
//! - a failed write removes the partial file and returns [`StoreError::Write`].

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use crate::StoreError;
use crate::reference::{Layout, OutputRef};
use crate::text::{ceil_boundary, floor_boundary};

const HEADER_PREFIX: &str = "tackle-spill v1 capped:";

/// What a spill produced.
#[derive(Debug)]
pub(crate) struct Written {
    pub(crate) reference: OutputRef,
    /// Lines of the whole output (not only of what the file kept).
    pub(crate) total_lines: u64,
    /// Size of the file.
    pub(crate) file_bytes: u64,
}

/// Where a capped file cut the output. Positions are in the original output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CapHeader {
    pub(crate) total_bytes: u64,
    pub(crate) total_lines: u64,
    /// The kept head is `[0, head_end)`.
    pub(crate) head_end: u64,
    pub(crate) head_newlines: u64,
    /// The kept tail is `[tail_start, total_bytes)`.
    pub(crate) tail_start: u64,
    pub(crate) newlines_before_tail: u64,
    /// The head ends inside a line.
    pub(crate) head_partial: bool,
    /// The tail starts inside a line.
    pub(crate) tail_partial: bool,
    /// Dropped bytes of the line the head ends in, with its newline (all dropped bytes when the
    /// head and the tail end and start inside the same line).
    pub(crate) head_rest: u64,
    /// Dropped bytes of the line the tail starts in, when that is another line.
    pub(crate) tail_lead: u64,
}

impl CapHeader {
    pub(crate) fn render(&self) -> String {
        format!(
            "{HEADER_PREFIX} the middle of this output was dropped to keep the file within the \
             spill cap. total_bytes={:020} total_lines={:020} head_end={:020} \
             head_newlines={:020} tail_start={:020} newlines_before_tail={:020} \
             head_partial={} tail_partial={} head_rest={:020} tail_lead={:020}\n",
            self.total_bytes,
            self.total_lines,
            self.head_end,
            self.head_newlines,
            self.tail_start,
            self.newlines_before_tail,
            u8::from(self.head_partial),
            u8::from(self.tail_partial),
            self.head_rest,
            self.tail_lead,
        )
    }

    /// Every header has this length (fixed-width fields).
    pub(crate) fn len() -> usize {
        Self::default().render().len()
    }

    fn parse(line: &str) -> Option<Self> {
        let rest = line.strip_prefix(HEADER_PREFIX)?.strip_suffix('\n')?;
        let field = |name: &str| -> Option<u64> {
            let key = format!(" {name}=");
            let at = rest.find(&key)? + key.len();
            let digits = rest[at..].split(' ').next()?;
            digits.parse().ok()
        };
        let header = Self {
            total_bytes: field("total_bytes")?,
            total_lines: field("total_lines")?,
            head_end: field("head_end")?,
            head_newlines: field("head_newlines")?,
            tail_start: field("tail_start")?,
            newlines_before_tail: field("newlines_before_tail")?,
            head_partial: field("head_partial")? == 1,
            tail_partial: field("tail_partial")? == 1,
            head_rest: field("head_rest")?,
            tail_lead: field("tail_lead")?,
        };
        let sane = header.head_end < header.tail_start
            && header.tail_start <= header.total_bytes
            && header.head_newlines <= header.newlines_before_tail
            && header.head_rest + header.tail_lead <= header.tail_start - header.head_end
            && (!header.head_partial || header.head_rest > 0);
        sane.then_some(header)
    }

    /// Reads and checks the header at the start of `file`.
    pub(crate) fn read(file: &mut File, reference: &OutputRef) -> Result<Self, StoreError> {
        let mut buf = vec![0; Self::len()];
        let corrupt = |problem: &str| StoreError::Corrupt {
            reference: reference.to_string(),
            problem: problem.to_owned(),
        };
        file.read_exact(&mut buf)
            .map_err(|source| match source.kind() {
                io::ErrorKind::UnexpectedEof => corrupt("the file is shorter than its header"),
                _ => StoreError::Read {
                    reference: reference.to_string(),
                    source,
                },
            })?;
        std::str::from_utf8(&buf)
            .ok()
            .and_then(Self::parse)
            .ok_or_else(|| corrupt("the header of a capped output is not readable"))
    }
}

/// Creates the managed directory (mode 0700) if needed and checks it is a real directory.
pub(crate) fn ensure_dir(dir: &Path) -> Result<(), StoreError> {
    if dir_exists(dir)? {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|source| StoreError::Directory {
            path: dir.to_owned(),
            source,
        })?;
    // Whatever raced us into existence must still be a real directory.
    if dir_exists(dir)? {
        Ok(())
    } else {
        Err(StoreError::NotADirectory {
            path: dir.to_owned(),
        })
    }
}

/// Whether the managed directory exists; an error when it is a file or a symbolic link.
pub(crate) fn dir_exists(dir: &Path) -> Result<bool, StoreError> {
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => Err(StoreError::SymlinkedDirectory {
            path: dir.to_owned(),
        }),
        Ok(meta) if meta.is_dir() => Ok(true),
        Ok(_) => Err(StoreError::NotADirectory {
            path: dir.to_owned(),
        }),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(StoreError::Directory {
            path: dir.to_owned(),
            source,
        }),
    }
}

/// Writes `body` to a new managed file in the managed `directory` (`dir`, open).
pub(crate) fn write(
    directory: &OwnedFd,
    dir: &Path,
    session_id: &str,
    call_id: &str,
    body: &[u8],
    spill_cap: u64,
) -> Result<Written, StoreError> {
    let layout = if body.len() as u64 > spill_cap {
        Layout::Capped
    } else {
        Layout::Full
    };
    let (reference, mut file) = create(directory, dir, session_id, call_id, layout)?;
    let result = match layout {
        Layout::Full => write_full(&mut file, body),
        Layout::Capped => write_capped(&mut file, body, spill_cap),
    };
    match result {
        Ok((total_lines, file_bytes)) => Ok(Written {
            reference,
            total_lines,
            file_bytes,
        }),
        Err(source) => {
            drop(file);
            // The partial file is useless and must not count against the quota.
            let _ = rustix::fs::unlinkat(directory, reference.file_name(), AtFlags::empty());
            Err(StoreError::Write {
                call_id: call_id.to_owned(),
                path: dir.join(reference.file_name()),
                source,
            })
        }
    }
}

/// Opens the managed directory (see [`ensure_dir`]) for saving the output of `call_id`: an
/// error says which call's output could not be saved.
pub(crate) fn open_for_saving(dir: &Path, call_id: &str) -> Result<OwnedFd, StoreError> {
    open_dir(dir).map_err(|err| match err {
        StoreError::Directory { path, source } => StoreError::Write {
            call_id: call_id.to_owned(),
            path,
            source,
        },
        other => other,
    })
}

/// Opens the managed directory itself, refusing a symbolic link (`NotFound` when missing).
pub(crate) fn open_dir(dir: &Path) -> Result<OwnedFd, StoreError> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::open(dir, flags, Mode::empty()).map_err(|err| match err {
        Errno::LOOP => StoreError::SymlinkedDirectory {
            path: dir.to_owned(),
        },
        Errno::NOTDIR => match fs::symlink_metadata(dir) {
            Ok(meta) if meta.file_type().is_symlink() => StoreError::SymlinkedDirectory {
                path: dir.to_owned(),
            },
            _ => StoreError::NotADirectory {
                path: dir.to_owned(),
            },
        },
        other => StoreError::Directory {
            path: dir.to_owned(),
            source: other.into(),
        },
    })
}

pub(crate) fn create(
    directory: &OwnedFd,
    dir: &Path,
    session_id: &str,
    call_id: &str,
    layout: Layout,
) -> Result<(OutputRef, File), StoreError> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    // 100 random bits make a collision practically impossible; retry a few times anyway.
    let mut attempts = 0;
    loop {
        let reference = OutputRef::generate(session_id, layout)?;
        let name = reference.file_name();
        match rustix::fs::openat(directory, name.as_str(), flags, Mode::from_raw_mode(0o600)) {
            Ok(fd) => return Ok((reference, File::from(fd))),
            Err(Errno::EXIST) if attempts < 3 => attempts += 1,
            Err(err) => {
                return Err(StoreError::Write {
                    call_id: call_id.to_owned(),
                    path: dir.join(name),
                    source: err.into(),
                });
            }
        }
    }
}

/// Bodies at least this large have their newlines counted on a second thread while the first
/// writes them (for 100 MB: about 7 ms instead of 13 ms on top of the write).
const PARALLEL_BYTES: usize = 8 << 20;

fn newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// Runs `write` and counts the newlines of each of `parts`, concurrently for large bodies.
fn counting<const N: usize>(
    parts: [&[u8]; N],
    write: impl FnOnce() -> io::Result<()>,
) -> io::Result<[u64; N]> {
    let total: usize = parts.iter().map(|part| part.len()).sum();
    if total < PARALLEL_BYTES {
        let counts = parts.map(newlines);
        write()?;
        return Ok(counts);
    }
    std::thread::scope(|scope| {
        let counter = std::thread::Builder::new().spawn_scoped(scope, move || parts.map(newlines));
        let written = write();
        let counts = match counter {
            Ok(handle) => handle
                .join()
                .map_err(|_| io::Error::other("the line counter failed"))?,
            // No thread to spare: count here.
            Err(_) => parts.map(newlines),
        };
        written.map(|()| counts)
    })
}

pub(crate) fn last_line(bytes: &[u8]) -> u64 {
    u64::from(bytes.last().is_some_and(|b| *b != b'\n'))
}

/// (total lines, file bytes).
pub(crate) fn write_full(file: &mut impl Write, body: &[u8]) -> io::Result<(u64, u64)> {
    let [newlines] = counting([body], || {
        file.write_all(body)?;
        file.flush()
    })?;
    Ok((newlines + last_line(body), body.len() as u64))
}

/// (total lines, file bytes) for an output larger than `spill_cap`.
pub(crate) fn write_capped(
    file: &mut (impl Write + Seek),
    body: &[u8],
    spill_cap: u64,
) -> io::Result<(u64, u64)> {
    let header_len = CapHeader::len();
    let room = usize::try_from(spill_cap)
        .unwrap_or(usize::MAX)
        .saturating_sub(header_len);
    let (head_end, tail_start) = cut_points(body, room);
    let (head, dropped, tail) = (
        &body[..head_end],
        &body[head_end..tail_start],
        &body[tail_start..],
    );
    let [head_newlines, dropped_newlines, tail_newlines] = counting([head, dropped, tail], || {
        // The header's numbers are known only after counting: write a placeholder first.
        file.write_all(CapHeader::default().render().as_bytes())?;
        file.write_all(head)?;
        file.write_all(tail)
    })?;
    let head_partial = head_end > 0 && body[head_end - 1] != b'\n';
    let tail_partial = body[tail_start - 1] != b'\n';
    let (head_rest, tail_lead) = match (
        memchr::memchr(b'\n', dropped),
        memchr::memrchr(b'\n', dropped),
    ) {
        (Some(first), Some(last)) => (
            if head_partial { first + 1 } else { 0 },
            if tail_partial {
                dropped.len() - last - 1
            } else {
                0
            },
        ),
        // No newline in the gap: one line runs from the head into the tail.
        _ if head_partial => (dropped.len(), 0),
        _ => (0, dropped.len()),
    };
    let header = CapHeader {
        total_bytes: body.len() as u64,
        total_lines: head_newlines + dropped_newlines + tail_newlines + last_line(body),
        head_end: head_end as u64,
        head_newlines,
        tail_start: tail_start as u64,
        newlines_before_tail: head_newlines + dropped_newlines,
        head_partial,
        tail_partial,
        head_rest: head_rest as u64,
        tail_lead: tail_lead as u64,
    };
    file.seek(SeekFrom::Start(0))?;
    file.write_all(header.render().as_bytes())?;
    file.flush()?;
    let file_bytes = (header_len + head.len() + tail.len()) as u64;
    Ok((header.total_lines, file_bytes))
}

/// Where to cut a body longer than `room` so head and tail fit in it: 40% head, 60% tail, on
/// a line boundary when one lies near the cut (see [`head_window`] and [`tail_window`]).
fn cut_points(body: &[u8], room: usize) -> (usize, usize) {
    let len = body.len();
    let head_max = room * 2 / 5;
    let tail_max = room - head_max;
    let head = head_window(head_max);
    let tail = tail_window(len, tail_max);
    (
        head.start + head_cut(&body[head.clone()]),
        tail.start + tail_cut(&body[tail]),
    )
}

/// How far from a cut a line boundary is looked for, at most: a streamed save reads no more
/// than this around each cut.
const NEAR: usize = 64 * 1024;

/// Where the head's last newline is looked for: the outer half of the head, up to [`NEAR`]
/// bytes before its limit. The head ends after that newline, else on a code point.
pub(crate) fn head_window(head_max: usize) -> std::ops::Range<usize> {
    head_max - (head_max / 2).min(NEAR)..head_max
}

/// Where, within the bytes of its [`head_window`], the head ends: after the last newline, else
/// between characters at the window's end.
pub(crate) fn head_cut(window: &[u8]) -> usize {
    memchr::memrchr(b'\n', window).map_or_else(
        || floor_boundary(window, window.len().saturating_sub(1)),
        |i| i + 1,
    )
}

/// Where, within the bytes of its [`tail_window`], the tail starts: after the first newline,
/// else between characters after the window's first byte.
pub(crate) fn tail_cut(window: &[u8]) -> usize {
    memchr::memchr(b'\n', window).map_or_else(|| ceil_boundary(window, 1, window.len()), |i| i + 1)
}

/// Where the tail's first line start is looked for: from the byte before its limit (a newline
/// there starts the tail on a line), over the outer half of the tail, up to [`NEAR`] bytes.
pub(crate) fn tail_window(len: usize, tail_max: usize) -> std::ops::Range<usize> {
    let start = len - tail_max - 1;
    start..start + (tail_max / 2).min(NEAR)
}

/// Opens a managed file for reading, refusing symbolic links and anything but a regular file.
pub(crate) fn open(dir: &Path, reference: &OutputRef) -> Result<File, StoreError> {
    let not_found = || StoreError::NotFound {
        reference: reference.to_string(),
    };
    if !dir_exists(dir)? {
        return Err(not_found());
    }
    let directory = match open_dir(dir) {
        Ok(directory) => directory,
        Err(StoreError::Directory { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            return Err(not_found());
        }
        Err(err) => return Err(err),
    };
    let read_error = |source| StoreError::Read {
        reference: reference.to_string(),
        source,
    };
    // NONBLOCK: a planted FIFO must not hang the reader; it has no effect on regular files.
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = match rustix::fs::openat(
        &directory,
        reference.file_name().as_str(),
        flags,
        Mode::empty(),
    ) {
        Ok(fd) => File::from(fd),
        Err(Errno::NOENT) => return Err(not_found()),
        Err(err) => return Err(read_error(err.into())),
    };
    let meta = file.metadata().map_err(read_error)?;
    if !meta.is_file() {
        return Err(StoreError::Corrupt {
            reference: reference.to_string(),
            problem: "it is not a regular file".to_owned(),
        });
    }
    Ok(file)
}

#[cfg(test)]
#[path = "spill_tests.rs"]
mod tests;
