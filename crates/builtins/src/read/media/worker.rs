//! Where decoding runs: in a worker process of the host's own program ([`MediaWorker`]), or,
//! for an embedder that names none, on a thread of this process.
//!
//! A decoder bug or a hostile file the decoders' own limits miss can abort, exhaust memory or
//! spin; in the worker that ends one child, never the host. The worker is started by its path
//! (never through `PATH`), with a cleared environment, its stdin and stdout as pipes and stderr
//! closed, so it can write nothing where the host speaks its protocol. It limits its own
//! address space, processor time and core dumps before it reads the file, decodes on a thread
//! with a bounded stack (an overflow aborts the worker only), and is killed (SIGKILL) at the
//! call's deadline or when the call is cancelled. The parent reads one reply of at most
//! [`MAX_REPLY_BYTES`], so a worker that lies cannot make it allocate without bound.
//!
//! The request: a 4-byte little-endian length, that many bytes of JSON ([`Request`]), then the
//! file's bytes to the end of the stream. The reply: one JSON [`Decoded`].

use std::io::{self, Read as _, Write as _};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::{ExitCode, ExitStatus, Stdio};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::job::{Decoded, Job, decode};
use crate::read::MAX_MEDIA_BYTES;
use crate::read_options::MediaWorker;

/// The address space a worker may map: the largest image read decodes (512 MiB) plus one
/// 8-bit copy of it (half that again), the file itself (20 MiB), the resized copies and the
/// program. A page past the PDF limits is refused long before.
pub(crate) const WORKER_ADDRESS_SPACE: u64 = 1536 * 1024 * 1024;
/// The stack of the decoding thread, in the worker and in-process alike: the PDF limits keep
/// the extractor's recursion far shallower; the rest is margin for the decoders' own.
pub(crate) const DECODE_STACK: usize = 64 * 1024 * 1024;
/// The largest reply the parent reads: an image sent is at most 5 MiB (base64 makes it 6.7),
/// a notebook's page carries at most that much in images, and a PDF's page text is bounded by
/// the content the limits let through.
pub(crate) const MAX_REPLY_BYTES: u64 = 64 * 1024 * 1024;
/// Decodes under way at once in this process, in workers and on threads together. Each may
/// map [`WORKER_ADDRESS_SPACE`], so sessions that all read hostile files at the same moment
/// take at most four times that, not once per session; more would only contend for the cores.
pub(crate) const MAX_CONCURRENT_DECODES: usize = 4;
/// The decodes under way: a read waits for a place within its deadline.
static DECODES: LazyLock<Arc<Semaphore>> =
    LazyLock::new(|| Arc::new(Semaphore::new(MAX_CONCURRENT_DECODES)));
/// The largest request header (the job, in JSON).
const MAX_HEADER_BYTES: u32 = 64 * 1024;

/// Exit codes of a worker that could not reply.
const EXIT_BAD_REQUEST: u8 = 2;
const EXIT_DECODER_PANICKED: u8 = 3;

/// What the parent sends ahead of the file's bytes.
#[derive(Debug, Serialize, Deserialize)]
struct Request {
    job: Job,
    /// Processor seconds the worker may use (the call's deadline, rounded up).
    cpu_seconds: u64,
}

/// Why a decode gave no answer, in the words after the file's name.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The deadline passed.
    Timeout(Duration),
    /// The call was cancelled.
    Cancelled,
    /// Why, in plain words.
    Other(String),
}

impl Failure {
    pub(crate) fn why(&self) -> String {
        match self {
            Self::Timeout(limit) => format!(
                "reading it took longer than the {} s read allows",
                limit.as_secs_f64()
            ),
            Self::Cancelled => "the read was cancelled".to_owned(),
            Self::Other(why) => why.clone(),
        }
    }
}

/// Decodes `data` as `job` asks: in `worker` when there is one, else in-process; within
/// `timeout` and until `cancel`.
pub(crate) async fn run(
    worker: Option<&MediaWorker>,
    job: Job,
    data: Arc<Vec<u8>>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<Decoded, Failure> {
    let started = tokio::time::Instant::now();
    let permit = tokio::select! {
        permit = Arc::clone(&DECODES).acquire_owned() => permit
            .map_err(|_| Failure::Other("the decoder could not be started".to_owned()))?,
        () = tokio::time::sleep(timeout) => return Err(Failure::Timeout(timeout)),
        () = cancel.cancelled() => return Err(Failure::Cancelled),
    };
    // The wait for a place counts against the call's deadline.
    let left = timeout.saturating_sub(started.elapsed());
    let decoded = match worker {
        // The place is given back when the worker has been waited for.
        Some(worker) => in_worker(worker, &job, &data, left, cancel).await,
        None => in_process(job, data, left, permit, cancel).await,
    };
    decoded.map_err(|failure| match failure {
        Failure::Timeout(_) => Failure::Timeout(timeout),
        other => other,
    })
}

enum End {
    Done(io::Result<(Vec<u8>, ExitStatus)>),
    Timeout,
    Cancelled,
}

async fn in_worker(
    worker: &MediaWorker,
    job: &Job,
    data: &[u8],
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<Decoded, Failure> {
    let request = serde_json::to_vec(&Request {
        job: job.clone(),
        cpu_seconds: timeout.as_secs() + 1,
    })
    .map_err(|err| Failure::Other(format!("the decoder's request could not be made: {err}")))?;
    // A bare name would be looked up in `PATH`, which the Location's files may shadow.
    if !worker.program().is_absolute() {
        return Err(Failure::Other(format!(
            "the decoder could not be started: its path {} is not absolute",
            worker.program().display()
        )));
    }
    let mut child = tokio::process::Command::new(worker.program())
        .args(worker.args())
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|err| Failure::Other(format!("the decoder could not be started: {err}")))?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(Failure::Other("the decoder has no pipes".to_owned()));
    };
    let end = {
        let exchange = async {
            let send = async {
                // A worker that stops reading (it died) is judged by its status, not by this.
                let length = u32::try_from(request.len()).unwrap_or(u32::MAX);
                let _ = stdin.write_all(&length.to_le_bytes()).await;
                let _ = stdin.write_all(&request).await;
                let _ = stdin.write_all(data).await;
                drop(stdin);
            };
            let receive = async {
                let mut reply = Vec::new();
                stdout
                    .take(MAX_REPLY_BYTES + 1)
                    .read_to_end(&mut reply)
                    .await
                    .map(|_| reply)
            };
            let ((), reply) = tokio::join!(send, receive);
            let reply = reply?;
            if reply.len() as u64 > MAX_REPLY_BYTES {
                // Nothing more is read from it: it must not wait on its pipe until the deadline.
                let _ = child.start_kill();
            }
            let status = child.wait().await?;
            Ok((reply, status))
        };
        tokio::select! {
            done = exchange => End::Done(done),
            () = tokio::time::sleep(timeout) => End::Timeout,
            () = cancel.cancelled() => End::Cancelled,
        }
    };
    let (reply, status) = match end {
        End::Done(done) => {
            done.map_err(|err| Failure::Other(format!("the decoder could not be read: {err}")))?
        }
        End::Timeout | End::Cancelled => {
            // Not yet waited for, so its id is still its own.
            let _ = child.start_kill();
            let _ = child.wait().await;
            return Err(match end {
                End::Timeout => Failure::Timeout(timeout),
                _ => Failure::Cancelled,
            });
        }
    };
    // Checked first: a worker cut off mid-reply dies of the closed pipe.
    if reply.len() as u64 > MAX_REPLY_BYTES {
        return Err(Failure::Other(format!(
            "the decoder's reply was larger than the {} read accepts",
            super::size_text(MAX_REPLY_BYTES)
        )));
    }
    if !status.success() {
        return Err(Failure::Other(died(status)));
    }
    serde_json::from_slice(&reply)
        .map_err(|_| Failure::Other("the decoder's reply could not be understood".to_owned()))
}

/// How a worker that did not reply ended, in plain words.
fn died(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.signal(), status.code()) {
        (Some(6), _) => "the decoder ran out of memory or stack and stopped".to_owned(),
        (Some(9), _) => "the decoder was killed".to_owned(),
        (Some(11), _) => "the decoder crashed".to_owned(),
        (Some(24), _) => "the decoder used more processor time than read allows".to_owned(),
        (Some(signal), _) => format!("the decoder was stopped by signal {signal}"),
        (None, Some(code)) if code == i32::from(EXIT_DECODER_PANICKED) => {
            "the decoder failed on it".to_owned()
        }
        (None, Some(code)) => format!("the decoder failed with exit status {code}"),
        (None, None) => "the decoder ended without a reply".to_owned(),
    }
}

/// Decodes on a thread of this process with [`DECODE_STACK`]. The decoders' limits bound what
/// a hostile file costs; past the deadline the call returns but the thread runs to its end
/// (a thread cannot be killed), which those limits keep short; it keeps its place among the
/// decodes under way (`permit`) until it ends, so abandoned threads cannot pile up.
async fn in_process(
    job: Job,
    data: Arc<Vec<u8>>,
    timeout: Duration,
    permit: OwnedSemaphorePermit,
    cancel: &CancellationToken,
) -> Result<Decoded, Failure> {
    let (send, receive) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("tackle-media".to_owned())
        .stack_size(DECODE_STACK)
        .spawn(move || {
            let decoded = catch_unwind(AssertUnwindSafe(|| decode(job, &data)));
            let _ = send.send(decoded.ok());
            drop(permit);
        })
        .map_err(|err| Failure::Other(format!("the decoder could not be started: {err}")))?;
    tokio::select! {
        decoded = receive => decoded
            .ok()
            .flatten()
            .ok_or_else(|| Failure::Other("the decoder failed on it".to_owned())),
        () = tokio::time::sleep(timeout) => Err(Failure::Timeout(timeout)),
        () = cancel.cancelled() => Err(Failure::Cancelled),
    }
}

/// Serves one decode on this process's stdin and stdout: what a [`MediaWorker`] runs.
///
/// Limits the process's address space, processor time and core dumps, reads the request and
/// the file, decodes on a thread with a bounded stack and writes the reply. Write nothing else
/// to stdout before or after calling it.
pub fn media_worker_main() -> ExitCode {
    // Before anything of the file is read: everything after runs within the limit.
    lower(Resource::As, WORKER_ADDRESS_SPACE, WORKER_ADDRESS_SPACE);
    lower(Resource::Core, 0, 0);
    let Some((request, data)) = read_request() else {
        return ExitCode::from(EXIT_BAD_REQUEST);
    };
    // Seconds of processor time: the signal at the soft limit ends it, the hard one kills.
    let seconds = request.cpu_seconds.max(1);
    lower(Resource::Cpu, seconds, seconds + 1);
    let decoder = std::thread::Builder::new()
        .name("tackle-media".to_owned())
        .stack_size(DECODE_STACK)
        .spawn(move || decode(request.job, &data));
    let Ok(Ok(decoded)) = decoder.map(std::thread::JoinHandle::join) else {
        return ExitCode::from(EXIT_DECODER_PANICKED);
    };
    let Ok(reply) = serde_json::to_vec(&decoded) else {
        return ExitCode::from(EXIT_DECODER_PANICKED);
    };
    let mut stdout = io::stdout().lock();
    if stdout
        .write_all(&reply)
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::from(EXIT_BAD_REQUEST);
    }
    ExitCode::SUCCESS
}

/// Lowers `resource`'s soft limit to `soft` and its hard limit to `hard` (never raises them).
fn lower(resource: Resource, soft: u64, hard: u64) {
    let current = getrlimit(resource);
    let cap = |limit: Option<u64>, value: u64| Some(limit.map_or(value, |limit| limit.min(value)));
    let maximum = cap(current.maximum, hard);
    let soft = cap(current.current, soft).min(maximum);
    let _ = setrlimit(
        resource,
        Rlimit {
            current: soft,
            maximum,
        },
    );
}

fn read_request() -> Option<(Request, Vec<u8>)> {
    let mut stdin = io::stdin().lock();
    let mut length = [0u8; 4];
    stdin.read_exact(&mut length).ok()?;
    let length = u32::from_le_bytes(length);
    if length > MAX_HEADER_BYTES {
        return None;
    }
    let mut header = vec![0u8; length as usize];
    stdin.read_exact(&mut header).ok()?;
    let request = serde_json::from_slice(&header).ok()?;
    let mut data = Vec::new();
    stdin
        .take(MAX_MEDIA_BYTES + 1)
        .read_to_end(&mut data)
        .ok()?;
    (data.len() as u64 <= MAX_MEDIA_BYTES).then_some((request, data))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With every place taken, a read waits for one only until its deadline or its
    /// cancellation, and starts nothing meanwhile (the worker named does not exist: starting
    /// it would be a different failure).
    #[tokio::test]
    async fn a_decode_past_the_cap_waits_only_until_its_deadline() {
        let held = Arc::clone(&DECODES)
            .acquire_many_owned(MAX_CONCURRENT_DECODES as u32)
            .await
            .unwrap();
        let worker = MediaWorker::new("/nonexistent/tackle-media-worker", Vec::<String>::new());
        let data = Arc::new(b"%PDF-1.7".to_vec());
        let job = || {
            Job::Pdf(super::super::pdf::PdfPages {
                offset: 1,
                limit: 1,
                max_lines: 10,
                max_bytes: 1000,
            })
        };
        let limit = Duration::from_millis(200);
        let cancel = CancellationToken::new();
        let waited = run(Some(&worker), job(), Arc::clone(&data), limit, &cancel).await;
        assert!(
            matches!(waited, Err(Failure::Timeout(t)) if t == limit),
            "{waited:?}"
        );
        cancel.cancel();
        let cancelled = run(
            None,
            job(),
            Arc::clone(&data),
            Duration::from_secs(60),
            &cancel,
        )
        .await;
        assert!(
            matches!(cancelled, Err(Failure::Cancelled)),
            "{cancelled:?}"
        );
        // A place given back is taken at once: now the missing program is what fails.
        drop(held);
        let started = run(Some(&worker), job(), data, limit, &CancellationToken::new()).await;
        assert!(
            matches!(&started, Err(Failure::Other(why)) if why.starts_with("the decoder could not be started")),
            "{started:?}"
        );
    }
}
