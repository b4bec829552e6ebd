//! `bash` calls that leave a job running: `background: true` (the call returns after the
//! job's first output) and `background_on_timeout: true` (the call waits for its timeout as
//! usual, and a command still running then is kept as a job instead of being terminated).
//!
//! Both run the command as a job from the start, so nothing is restarted or lost at the
//! hand-over; the result is `bash`'s own, with `jobId` while the job runs on. A call that is
//! cancelled before it returns a job id kills the job: nobody could reach it.

use std::time::{Duration, Instant};

use tackle_tool_core::{Halt, Rendered, ToolError, ToolFailure};
use tokio_util::sync::CancellationToken;

use super::job_tools::{JobOutput, JobStatus, first_output, look_at};
use super::jobs::{JobStore, Spec, StartError};
use super::output::{BashOutput, Call, NO_OUTPUT};
use crate::shape::keep_if_fits;

/// How a job call waits.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Mode {
    /// Returns after the first output.
    Background,
    /// Waits up to the timeout; keeps the job if it is still running then.
    KeepOnTimeout(Duration),
}

/// What one job call works with.
pub(crate) struct JobCall<'a> {
    pub(crate) store: &'a JobStore,
    pub(crate) session: &'a str,
    pub(crate) cancel: &'a CancellationToken,
    pub(crate) max_structured_bytes: usize,
}

/// Starts `spec` as a job and waits as `mode` says.
pub(crate) async fn run(
    job: JobCall<'_>,
    spec: Spec,
    call: Call,
    mode: Mode,
) -> Result<Rendered<BashOutput>, ToolError> {
    let (id, live) = job
        .store
        .start(job.session, spec)
        .await
        .map_err(|err| match err {
            StartError::Refused(message) => ToolError::failure(message),
            StartError::Run(err) => {
                ToolFailure::new(format!("Unable to execute command: {}", call.command))
                    .with_metadata(
                        [("reason".to_owned(), serde_json::json!(err.to_string()))]
                            .into_iter()
                            .collect(),
                    )
                    .into()
            }
        })?;
    let waited = async {
        match mode {
            Mode::Background => first_output(&live).await,
            Mode::KeepOnTimeout(timeout) => {
                let mut changed = live.subscribe();
                let deadline = tokio::time::Instant::now() + timeout;
                while live.state().is_running() {
                    if tokio::time::timeout_at(deadline, changed.changed())
                        .await
                        .map_or(true, |changed| changed.is_err())
                    {
                        break;
                    }
                }
            }
        }
    };
    tokio::select! {
        () = waited => {}
        () = job.cancel.cancelled() => {
            job.store.kill(job.session, &id);
            return Err(Halt::Cancelled.into());
        }
    }
    let look = look_at(job.store, job.session, &id, Instant::now(), None)
        .await
        .ok_or_else(|| ToolError::failure(format!("Background job {id} vanished.")))?;
    Ok(render(call, &look, mode, job.max_structured_bytes))
}

/// The result of a job call: `bash`'s output shape, `jobId` when the job is kept.
fn render(
    call: Call,
    look: &JobOutput,
    mode: Mode,
    max_structured_bytes: usize,
) -> Rendered<BashOutput> {
    let kept = look.status == JobStatus::Running;
    let mut output = look.output.trim_end_matches('\n').to_owned();
    if output.is_empty() {
        output.push_str(NO_OUTPUT);
    }
    if look.dropped_bytes > 0 {
        output.push_str(&format!(
            "\n\n[{} bytes of output were dropped: a job keeps only its last {} bytes]",
            look.dropped_bytes,
            super::JOB_OUTPUT_BYTES
        ));
    }
    let mut out = BashOutput {
        command: call.command,
        cwd: call.cwd,
        shell: call.shell,
        exit_code: look.exit_code,
        signal: look.signal,
        output: None,
        truncated: look.dropped_bytes > 0,
        stdout_truncated: false,
        stderr_truncated: false,
        stdout_dropped_bytes: 0,
        stderr_dropped_bytes: 0,
        invalid_utf8: false,
        timed_out: false,
        terminated: Vec::new(),
        output_incomplete: false,
        warnings: call.warnings,
        job_id: kept.then(|| look.id.clone()),
    };
    keep_if_fits(&mut out, |o| &mut o.output, &output, max_structured_bytes);
    let mut text = output;
    text.push_str("\n\n");
    let id = &look.id;
    let how = format!(
        "Read its output with job_output {{\"id\": \"{id}\"}} (it can wait for output with \
         wait_ms) and stop it with job_kill."
    );
    match (mode, look.status) {
        (Mode::Background, JobStatus::Running) => {
            text.push_str(&format!(
                "Started background job {id}; it is running. {how}"
            ));
        }
        (Mode::KeepOnTimeout(timeout), JobStatus::Running) => {
            text.push_str(&format!(
                "Command exceeded timeout of {} ms and keeps running as background job {id}. \
                 {how}",
                timeout.as_millis()
            ));
        }
        _ => match (look.exit_code, look.signal) {
            (Some(code), Some(signal)) => text.push_str(&format!(
                "Command exited with code {code} (terminated by signal {signal})."
            )),
            (Some(code), None) => text.push_str(&format!("Command exited with code {code}.")),
            (None, _) => text.push_str("Command ended without an exit code."),
        },
    }
    if !out.warnings.is_empty() {
        text.push_str("\n\nWarnings:");
        for warning in &out.warnings {
            text.push_str(&format!("\n- {warning}"));
        }
    }
    Rendered::text(out, text)
}
