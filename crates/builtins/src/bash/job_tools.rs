//! `job_output`, `job_kill` and `job_list`: looking at and stopping the session's background
//! jobs, and the first look `bash` itself gives when it starts one.
//!
//! They act only on the calling session's jobs, which `bash`'s permission check already
//! allowed, so they ask nothing; a rule can still hide them (`job_kill: deny`).

use crate::limits::{
    MAX_PATTERN_CHARS, MAX_REGEX_BYTES, MAX_REGEX_CACHE_BYTES, MAX_REGEX_NESTING, MAX_TEXT_CHARS,
};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tackle_tool_core::{Content, Context, Execute, Tool, ToolError};

use super::capture::complete_prefix;
use super::group::GRACE;
use super::jobs::{JOB_OUTPUT_BYTES, JobStore};
use super::live::{Live, State};
use super::normalize::normalize;

/// The longest `wait_ms` a call may ask for.
pub const MAX_WAIT_MS: u64 = 600_000;

/// How long `bash` watches a job it starts for its first output.
pub(crate) const FIRST_LOOK: Duration = Duration::from_secs(1);

/// After output arrives, the first look ends once the job is quiet this long.
const QUIET: Duration = Duration::from_millis(200);

/// How long `job_kill` waits for the job's processes to be gone: the grace period between TERM
/// and KILL, then reaping.
const KILL_WAIT: Duration = Duration::from_secs(GRACE.as_secs() + 7);

/// How a job stands, for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    /// Its main process runs.
    Running,
    /// Its main process ended by itself.
    Exited,
    /// It was killed.
    Killed,
    /// It could not be waited for.
    Failed,
}

/// The state of one job and its output since the session's last look.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobOutput {
    /// The job id.
    pub id: String,
    /// The command, as given.
    pub command: String,
    /// How it stands.
    pub status: JobStatus,
    /// The exit code (128 + the signal number when a signal ended it), once it exited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// stdout and stderr as they came, normalised, since the last look (only the lines
    /// matching `filter`, when given).
    pub output: String,
    /// Bytes written since the last look that were no longer kept (the job printed more than
    /// the buffer holds in between).
    #[serde(skip_serializing_if = "is_zero")]
    pub dropped_bytes: u64,
    /// Lines left out because they did not match `filter`.
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped_lines: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// A look at a job: the new output after the session's cursor, how it stands, and where the
/// cursor goes.
pub(crate) struct Look {
    pub(crate) output: JobOutput,
    end: u64,
}

/// Reads what `live` holds after `cursor`. While the job runs, a trailing incomplete
/// character (and, with `filter`, a trailing incomplete line) waits for the next look.
fn look(id: &str, command: &str, live: &Live, cursor: u64, filter: Option<&regex::Regex>) -> Look {
    let since = live.since(cursor);
    let mut bytes = since.bytes;
    let running = since.state.is_running();
    let whole = bytes.len();
    if running {
        let cut = match filter {
            Some(_) => memchr::memrchr(b'\n', &bytes).map_or(0, |at| at + 1),
            None => complete_prefix(&bytes),
        };
        bytes.truncate(cut);
    }
    let end = since.end - (whole - bytes.len()) as u64;
    let text = normalize(bytes).text;
    let (output, skipped_lines) = match filter {
        None => (text, 0),
        Some(filter) => {
            let mut kept = String::new();
            let mut skipped = 0;
            for line in text.lines() {
                if filter.is_match(line) {
                    kept.push_str(line);
                    kept.push('\n');
                } else {
                    skipped += 1;
                }
            }
            (kept, skipped)
        }
    };
    let (status, exit_code, signal) = match since.state {
        State::Running => (JobStatus::Running, None, None),
        State::Exited { code, signal } => (JobStatus::Exited, code, signal),
        State::Killed => (JobStatus::Killed, None, None),
        State::Failed(_) => (JobStatus::Failed, None, None),
    };
    Look {
        output: JobOutput {
            id: id.to_owned(),
            command: command.to_owned(),
            status,
            exit_code,
            signal,
            output,
            dropped_bytes: since.dropped,
            skipped_lines,
        },
        end,
    }
}

/// Looks at job `id` of the session, waiting until `deadline` for something to show (new
/// output, or a matching line with `filter`) or for the job to end; moves the session's cursor.
pub(crate) async fn look_at(
    store: &JobStore,
    session: &str,
    id: &str,
    deadline: Instant,
    filter: Option<&regex::Regex>,
) -> Option<JobOutput> {
    let (live, command, mut cursor) = store.find(session, id)?;
    let mut changed = live.subscribe();
    let mut dropped = 0;
    let mut skipped = 0;
    loop {
        changed.borrow_and_update();
        let Look { mut output, end } = look(id, &command, &live, cursor, filter);
        dropped += output.dropped_bytes;
        skipped += output.skipped_lines;
        cursor = end;
        let done = output.status != JobStatus::Running
            || !output.output.is_empty()
            || Instant::now() >= deadline;
        if done || changed_by(&mut changed, deadline).await.is_none() {
            if !done {
                // The deadline passed: one last look.
                let last = look(id, &command, &live, cursor, filter);
                dropped += last.output.dropped_bytes;
                skipped += last.output.skipped_lines;
                cursor = last.end;
                output = last.output;
            }
            output.dropped_bytes = dropped;
            output.skipped_lines = skipped;
            store.advance(session, id, cursor, output.status != JobStatus::Running);
            return Some(output);
        }
    }
}

/// Waits for the next change until `deadline`; `None` once it passed.
async fn changed_by(
    changed: &mut tokio::sync::watch::Receiver<u64>,
    deadline: Instant,
) -> Option<()> {
    tokio::time::timeout_at(deadline.into(), changed.changed())
        .await
        .ok()
        .and_then(Result::ok)
}

/// Waits for a job `bash` just started to print its first output and fall quiet for a moment,
/// or to end, for [`FIRST_LOOK`] at most.
pub(crate) async fn first_output(live: &Live) {
    let mut changed = live.subscribe();
    let deadline = Instant::now() + FIRST_LOOK;
    let mut until = deadline;
    while live.state().is_running() {
        if changed_by(&mut changed, until).await.is_none() {
            return;
        }
        if live.total() > 0 {
            until = deadline.min(Instant::now() + QUIET);
        }
    }
}

/// The model text of a look.
pub(crate) fn look_text(output: &JobOutput) -> String {
    let mut text = if output.output.is_empty() {
        "(no new output)".to_owned()
    } else {
        output.output.trim_end_matches('\n').to_owned()
    };
    let mut notices = Vec::new();
    if output.dropped_bytes > 0 {
        notices.push(format!(
            "[{} bytes of output since the last look were dropped: a job keeps only its last \
             {JOB_OUTPUT_BYTES} bytes]",
            output.dropped_bytes
        ));
    }
    if output.skipped_lines > 0 {
        notices.push(format!(
            "[{} lines not matching the filter were skipped]",
            output.skipped_lines
        ));
    }
    if !notices.is_empty() {
        text.push_str("\n\n");
        text.push_str(&notices.join("\n"));
    }
    let _ = write!(text, "\n\n{}", status_sentence(output));
    text
}

fn status_sentence(output: &JobOutput) -> String {
    let id = &output.id;
    match (output.status, output.exit_code, output.signal) {
        (JobStatus::Running, _, _) => format!("Job {id} is running."),
        (JobStatus::Exited, Some(code), Some(signal)) => {
            format!("Job {id} exited with code {code} (terminated by signal {signal}).")
        }
        (JobStatus::Exited, Some(code), None) => format!("Job {id} exited with code {code}."),
        (JobStatus::Exited, None, _) => format!("Job {id} ended without an exit code."),
        (JobStatus::Killed, _, _) => format!("Job {id} was killed."),
        (JobStatus::Failed, _, _) => format!("Job {id} could not be waited for."),
    }
}

fn not_found(id: &str) -> ToolError {
    ToolError::failure(format!(
        "No background job {id} in this session. job_list shows the session's jobs."
    ))
}

/// The input of `job_output`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct JobOutputInput {
    /// The job id `bash` returned.
    #[schemars(length(max = MAX_TEXT_CHARS))]
    pub id: String,
    /// Wait up to this many milliseconds for new output (or, with `filter`, a matching line)
    /// or for the job to end (default 0: return at once; at most 600000).
    #[schemars(range(max = 600_000))]
    pub wait_ms: Option<u64>,
    /// A regular expression: only lines matching it are returned; the others are skipped and
    /// counted.
    #[schemars(length(max = MAX_PATTERN_CHARS))]
    pub filter: Option<String>,
}

struct JobOutputTool {
    store: JobStore,
}

impl Execute for JobOutputTool {
    type Input = JobOutputInput;
    type Output = JobOutput;

    async fn execute(&self, input: JobOutputInput, ctx: &Context) -> Result<JobOutput, ToolError> {
        let filter = match input.filter.as_deref() {
            Some(pattern) => Some(
                regex::RegexBuilder::new(pattern)
                    .size_limit(MAX_REGEX_BYTES)
                    .dfa_size_limit(MAX_REGEX_CACHE_BYTES)
                    .nest_limit(MAX_REGEX_NESTING)
                    .build()
                    .map_err(|err| {
                        ToolError::failure(format!("Invalid filter \"{pattern}\": {err}"))
                    })?,
            ),
            None => None,
        };
        let wait = Duration::from_millis(input.wait_ms.unwrap_or(0).min(MAX_WAIT_MS));
        let deadline = Instant::now() + wait;
        let look = look_at(
            &self.store,
            &ctx.session_id,
            &input.id,
            deadline,
            filter.as_ref(),
        );
        let cancelled = ctx.cancel.cancelled();
        tokio::select! {
            found = look => found.ok_or_else(|| not_found(&input.id)),
            () = cancelled => Err(tackle_tool_core::Halt::Cancelled.into()),
        }
    }
}

/// The input of `job_kill`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct JobKillInput {
    /// The job id `bash` returned.
    #[schemars(length(max = MAX_TEXT_CHARS))]
    pub id: String,
}

struct JobKillTool {
    store: JobStore,
}

impl Execute for JobKillTool {
    type Input = JobKillInput;
    type Output = JobOutput;

    async fn execute(&self, input: JobKillInput, ctx: &Context) -> Result<JobOutput, ToolError> {
        let session = &ctx.session_id;
        let (live, _, _) = self
            .store
            .find(session, &input.id)
            .ok_or_else(|| not_found(&input.id))?;
        self.store.kill(session, &input.id);
        // Returns once every process of the job is gone (or the wait ran out: then it says
        // the job is still running).
        let deadline = Instant::now() + KILL_WAIT;
        let mut changed = live.subscribe();
        while live.state().is_running() {
            if changed_by(&mut changed, deadline).await.is_none() {
                break;
            }
        }
        look_at(&self.store, session, &input.id, Instant::now(), None)
            .await
            .ok_or_else(|| not_found(&input.id))
    }
}

/// One job in `job_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobSummary {
    /// The job id.
    pub id: String,
    /// The command, as given.
    pub command: String,
    /// How it stands.
    pub status: JobStatus,
    /// The exit code, once it exited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Seconds since it started.
    pub seconds: u64,
    /// Bytes written since the last look.
    pub unread_bytes: u64,
}

/// The session's jobs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct JobList {
    /// Oldest first.
    pub jobs: Vec<JobSummary>,
}

/// The input of `job_list` (nothing).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct JobListInput {}

struct JobListTool {
    store: JobStore,
}

impl Execute for JobListTool {
    type Input = JobListInput;
    type Output = JobList;

    async fn execute(&self, _input: JobListInput, ctx: &Context) -> Result<JobList, ToolError> {
        let jobs = self.store.with_session(&ctx.session_id, |jobs| {
            jobs.iter()
                .map(|job| {
                    let state = job.live.state();
                    let (status, exit_code) = match state {
                        State::Running => (JobStatus::Running, None),
                        State::Exited { code, .. } => (JobStatus::Exited, code),
                        State::Killed => (JobStatus::Killed, None),
                        State::Failed(_) => (JobStatus::Failed, None),
                    };
                    JobSummary {
                        id: job.id.clone(),
                        command: job.command.clone(),
                        status,
                        exit_code,
                        seconds: job.started.elapsed().as_secs(),
                        unread_bytes: job.live.total().saturating_sub(job.cursor),
                    }
                })
                .collect()
        });
        Ok(JobList { jobs })
    }
}

fn list_text(list: &JobList) -> Vec<Content> {
    if list.jobs.is_empty() {
        return vec![Content::text("No background jobs in this session.")];
    }
    let mut text = String::new();
    for job in &list.jobs {
        let status = match (job.status, job.exit_code) {
            (JobStatus::Running, _) => "running".to_owned(),
            (JobStatus::Exited, Some(code)) => format!("exited with code {code}"),
            (JobStatus::Exited, None) => "exited".to_owned(),
            (JobStatus::Killed, _) => "killed".to_owned(),
            (JobStatus::Failed, _) => "failed".to_owned(),
        };
        let _ = writeln!(
            text,
            "{}: {status}, started {}s ago, {} bytes unread: {}",
            job.id, job.seconds, job.unread_bytes, job.command
        );
    }
    vec![Content::text(text.trim_end().to_owned())]
}

const OUTPUT_DESCRIPTION: &str = "\
Reads a background job's new output (what it printed since the last look) and its status; a \
job that has ended also reports its exit code.

- `id` is the job id bash returned when it started the job with `background: true`.
- `wait_ms` waits up to that long for new output or for the job to end (default 0: return at \
once). Use it instead of sleeping in bash.
- `filter` is a regular expression: only matching lines are returned, the others are skipped; \
with `wait_ms`, the call waits for a matching line, e.g. `\"filter\": \"listening|error\"`.
- A job keeps only the last 256 KiB of its output; what was dropped between two looks is \
counted.";

const KILL_DESCRIPTION: &str = "\
Stops a background job: its whole process tree gets TERM, then KILL after 3 seconds, \
detached processes included. Returns when they are gone, with the job's last output.";

const LIST_DESCRIPTION: &str = "\
Lists this session's background jobs: id, status, exit code, age, unread output and command.";

/// `job_output` over `store`.
pub(crate) fn job_output_tool(store: JobStore) -> Tool {
    Tool::typed(OUTPUT_DESCRIPTION, JobOutputTool { store })
        .model_output(|output: &JobOutput| vec![Content::text(look_text(output))])
        .build()
}

/// `job_kill` over `store`.
pub(crate) fn job_kill_tool(store: JobStore) -> Tool {
    Tool::typed(KILL_DESCRIPTION, JobKillTool { store })
        .model_output(|output: &JobOutput| vec![Content::text(look_text(output))])
        .build()
}

/// `job_list` over `store`.
pub(crate) fn job_list_tool(store: JobStore) -> Tool {
    Tool::typed(LIST_DESCRIPTION, JobListTool { store })
        .model_output(list_text)
        .build()
}
