//! What a finished command becomes: the structured result (reference BA7–BA8, plus what the
//! reference leaves unsaid) and the model text (BA9).
//!
//! Invariants: every loss is stated — dropped capture bytes (exactly), replaced invalid UTF-8,
//! processes that had to be terminated, output left unread — both in the structured result and
//! in the text the model reads.

use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt;

use schemars::JsonSchema;
use serde::Serialize;
use tackle_tool_core::Rendered;

use super::capture::Captured;
use super::group::Member;
use super::normalize::normalize;
use super::supervise::{Ending, Finished};
use crate::shape::keep_if_fits;

/// The structured result of one `bash` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BashOutput {
    /// The command, as given.
    pub command: String,
    /// The canonical directory it ran in.
    pub cwd: String,
    /// The shell that ran it (`/bin/sh` unless configured).
    pub shell: String,
    /// The shell's exit code (128 + the signal number when a signal ended it); absent when the
    /// command timed out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended the shell, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// stdout and stderr, normalised, with notices; absent when it does not fit the call's
    /// structured budget (the model text carries it, and settle saves it once).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Some captured output was dropped (stdout or stderr over the in-memory limit).
    pub truncated: bool,
    /// stdout was over the in-memory limit.
    #[serde(skip_serializing_if = "is_false")]
    pub stdout_truncated: bool,
    /// stderr was over the in-memory limit.
    #[serde(skip_serializing_if = "is_false")]
    pub stderr_truncated: bool,
    /// Exactly how many bytes of stdout were dropped from the middle.
    #[serde(skip_serializing_if = "is_zero")]
    pub stdout_dropped_bytes: u64,
    /// Exactly how many bytes of stderr were dropped from the middle.
    #[serde(skip_serializing_if = "is_zero")]
    pub stderr_dropped_bytes: u64,
    /// The output was not valid UTF-8; invalid bytes were replaced with U+FFFD.
    #[serde(skip_serializing_if = "is_false")]
    pub invalid_utf8: bool,
    /// The command ran out of time and was terminated.
    #[serde(skip_serializing_if = "is_false")]
    pub timed_out: bool,
    /// Processes of the command still running when it ended (background jobs after the main
    /// process exited, or everything at a timeout), which were terminated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub terminated: Vec<TerminatedProcess>,
    /// Reading stopped before the end: a process outside the command's group kept its output
    /// open.
    #[serde(skip_serializing_if = "is_false")]
    pub output_incomplete: bool,
    /// Advisory warnings (absolute arguments outside the working directory).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The background job the command runs on as (`background`, or `background_on_timeout`
    /// once the timeout passed); absent once it ended. `output` is then what it printed so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
}

/// A process that was terminated because the command ended without it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TerminatedProcess {
    /// Its process id.
    pub pid: i32,
    /// Its command line, shortened.
    pub command: String,
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// How many terminated processes the model text names before summarising.
const NAMED_PROCESSES: usize = 5;

/// The facts of one call that are not in [`Finished`].
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) command: String,
    pub(crate) cwd: String,
    pub(crate) shell: String,
    pub(crate) timeout_ms: u64,
    pub(crate) capture_limit: usize,
    pub(crate) warnings: Vec<String>,
}

/// The structured result of a finished command and its model text; the output stays in the
/// structured value only while that fits `max_structured_bytes`.
pub(crate) fn build(
    call: Call,
    finished: Finished,
    max_structured_bytes: usize,
) -> Rendered<BashOutput> {
    let Finished {
        ending,
        stdout,
        stderr,
        terminated,
        killed,
        unread,
    } = finished;
    let (stdout_dropped, stderr_dropped) = (stdout.dropped(), stderr.dropped());
    let stdout = stream_text(stdout, "stdout");
    let stderr = stream_text(stderr, "stderr");
    let invalid_utf8 = stdout.invalid_utf8 || stderr.invalid_utf8;
    let invalid = (stdout.invalid_utf8, stderr.invalid_utf8);
    let mut output = compact(stdout.text, &stderr.text);
    let timed_out = ending == Ending::TimedOut;
    if timed_out {
        let sentence = format!(
            "Command exceeded timeout of {} ms. Retry with a larger timeout if the command is \
             expected to take longer.",
            call.timeout_ms
        );
        output = if output == NO_OUTPUT {
            sentence
        } else {
            format!("{output}\n\n{sentence}")
        };
    }
    let mut notices = Vec::new();
    if let Some(notice) = capture_notice(stdout_dropped, stderr_dropped, call.capture_limit) {
        notices.push(notice);
    }
    if invalid_utf8 {
        let which = match invalid {
            (true, true) => "stdout and stderr were",
            (true, false) => "stdout was",
            _ => "stderr was",
        };
        notices.push(format!(
            "[{which} not valid UTF-8: invalid bytes were replaced with U+FFFD]"
        ));
    }
    if !terminated.is_empty() {
        notices.push(terminated_notice(&terminated, timed_out, killed));
    }
    if unread {
        notices.push(
            "[output reading stopped: a process that left the command's process group still \
             holds its output open]"
                .to_owned(),
        );
    }
    if !notices.is_empty() {
        output.push_str("\n\n");
        output.push_str(&notices.join("\n"));
    }
    let (exit_code, signal) = match ending {
        Ending::Exited(status) => match (status.code(), status.signal()) {
            (Some(code), _) => (Some(code), None),
            (None, Some(signal)) => (Some(128 + signal), Some(signal)),
            (None, None) => (None, None),
        },
        Ending::TimedOut => (None, None),
    };
    let mut out = BashOutput {
        command: call.command,
        cwd: call.cwd,
        shell: call.shell,
        exit_code,
        signal,
        output: None,
        truncated: stdout_dropped > 0 || stderr_dropped > 0,
        stdout_truncated: stdout_dropped > 0,
        stderr_truncated: stderr_dropped > 0,
        stdout_dropped_bytes: stdout_dropped,
        stderr_dropped_bytes: stderr_dropped,
        invalid_utf8,
        timed_out,
        terminated: terminated
            .into_iter()
            .map(|Member { pid, command }| TerminatedProcess { pid, command })
            .collect(),
        output_incomplete: unread,
        warnings: call.warnings,
        job_id: None,
    };
    keep_if_fits(&mut out, |o| &mut o.output, &output, max_structured_bytes);
    // The status line and warnings count against the budget like the output: an output that
    // fills the budget by itself is saved whole by settle, which keeps its end and the status.
    let text = model_text(&out, output);
    Rendered::text(out, text)
}

/// The model text (BA9): the output, a status line, and any warnings. Appended to `output`
/// itself: the output can be a megabyte, and a copy of it would cost as much as capturing it.
fn model_text(out: &BashOutput, mut text: String) -> String {
    text.reserve(128);
    text.push_str("\n\n");
    match (out.timed_out, out.exit_code, out.signal) {
        (true, _, _) => text.push_str("Command timed out before completion."),
        (false, Some(code), Some(signal)) => {
            let _ = write!(
                text,
                "Command exited with code {code} (terminated by signal {signal})."
            );
        }
        (false, Some(code), None) => {
            let _ = write!(text, "Command exited with code {code}.");
        }
        (false, None, _) => text.push_str("Command ended without an exit code."),
    }
    if !out.warnings.is_empty() {
        text.push_str("\n\nWarnings:");
        for warning in &out.warnings {
            let _ = write!(text, "\n- {warning}");
        }
    }
    text
}

pub(crate) const NO_OUTPUT: &str = "(no output)";

/// BA8's `compactOutput`.
fn compact(stdout: String, stderr: &str) -> String {
    match (stdout.is_empty(), stderr.is_empty()) {
        (false, false) => format!("{stdout}\n\nstderr:\n{stderr}"),
        (true, false) => format!("stderr:\n{stderr}"),
        (false, true) => stdout,
        (true, true) => NO_OUTPUT.to_owned(),
    }
}

/// One stream's normalised text.
#[derive(Debug)]
struct StreamText {
    text: String,
    invalid_utf8: bool,
}

/// A stream's text; a truncated one shows where its middle was dropped.
fn stream_text(captured: Captured, name: &str) -> StreamText {
    let dropped = captured.dropped();
    let head = normalize(captured.head);
    if dropped == 0 {
        return StreamText {
            text: head.text,
            invalid_utf8: head.invalid_utf8,
        };
    }
    let tail = normalize(captured.tail);
    let mut text = head.text;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let _ = write!(
        text,
        "[... {dropped} bytes of {name} dropped here ...]\n{}",
        tail.text
    );
    StreamText {
        text,
        invalid_utf8: head.invalid_utf8 || tail.invalid_utf8,
    }
}

/// The reference notice, followed by the exact counts.
fn capture_notice(stdout: u64, stderr: u64, limit: usize) -> Option<String> {
    let kept = format!(
        "the first and last {} of each truncated stream are kept.",
        size(limit / 2)
    );
    match (stdout > 0, stderr > 0) {
        (false, false) => None,
        (true, false) => Some(format!(
            "[stdout capture truncated at the in-memory safety limit] {stdout} bytes of stdout \
             were dropped from the middle; {kept}"
        )),
        (false, true) => Some(format!(
            "[stderr capture truncated at the in-memory safety limit] {stderr} bytes of stderr \
             were dropped from the middle; {kept}"
        )),
        (true, true) => Some(format!(
            "[stdout and stderr capture truncated at the in-memory safety limit] {stdout} bytes \
             of stdout and {stderr} bytes of stderr were dropped from the middle; {kept}"
        )),
    }
}

fn size(bytes: usize) -> String {
    if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

fn terminated_notice(members: &[Member], timed_out: bool, killed: bool) -> String {
    let count = members.len();
    let what = if count == 1 { "process" } else { "processes" };
    let when = if timed_out {
        "at the timeout"
    } else {
        "still running after the command exited"
    };
    let mut names: Vec<String> = members
        .iter()
        .take(NAMED_PROCESSES)
        .map(|m| format!("{} (pid {})", m.command, m.pid))
        .collect();
    if count > NAMED_PROCESSES {
        names.push(format!("and {} more", count - NAMED_PROCESSES));
    }
    let how = if killed {
        "; some ignored TERM and were killed"
    } else {
        ""
    };
    format!(
        "[terminated {count} {what} {when}{how}: {}]",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_output_as_ba8() {
        let compact = |a: &str, b: &str| compact(a.to_owned(), b);
        assert_eq!(compact("out", "err"), "out\n\nstderr:\nerr");
        assert_eq!(compact("", "err"), "stderr:\nerr");
        assert_eq!(compact("out", ""), "out");
        assert_eq!(compact("", ""), "(no output)");
    }

    #[test]
    fn truncated_streams_show_the_gap() {
        let captured = Captured {
            head: b"first line\npart".to_vec(),
            tail: b"ial\nlast line\n".to_vec(),
            total: 1000,
        };
        let text = stream_text(captured, "stdout").text;
        assert_eq!(
            text,
            "first line\npart\n[... 971 bytes of stdout dropped here ...]\nial\nlast line\n"
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(size(512 * 1024), "512 KiB");
        assert_eq!(size(100), "100 bytes");
    }
}
