//! What a settle leaves behind for the people running the host: a `tracing` span per call and,
//! for a host that keeps its own record (an audit log), a [`SettleObserver`] told of every
//! settled call.
//!
//! Neither changes a result. Nothing is measured when nobody listens: without an enabled span
//! and without an observer, settle does no extra work.

use std::io;
use std::time::Duration;

use serde_json::Value;
use tackle_output_store::OutputRef;
use tackle_tool_core::{Call, Context, OutputContent, ResultValue};
use tracing::Span;
use tracing::field::Empty;
use tracing::subscriber::NoSubscriber;

use crate::SettleError;
use crate::settlement::Settlement;

/// Told of every call a registry settles, once it has settled (successfully or not).
///
/// Called on the settling task, so it must return quickly and never block: hand the record to
/// a channel or a bounded queue. It cannot change the settlement.
pub trait SettleObserver: Send + Sync + 'static {
    /// One call has settled.
    fn settled(&self, record: &SettleRecord<'_>);

    /// Whether `call` may run at all, asked before anything of it runs (name lookup,
    /// decoding, permission): an `Err` settles it as that error result, unrun, and the
    /// observer is then told of it like any other call. The default admits every call; an
    /// audit log that must record every call refuses them while it cannot write. Asked on the
    /// settling task like `settled`: it must be quick (a system call or two, never a wait).
    fn admit(&self, call: &Call, ctx: &Context) -> Result<(), String> {
        let _ = (call, ctx);
        Ok(())
    }
}

/// One settled call, as an observer sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SettleRecord<'a> {
    /// The call, with its raw input (which may carry file contents: an observer that keeps
    /// records decides what of it to keep).
    pub call: &'a Call,
    /// The context it was settled in (session, agent).
    pub context: &'a Context,
    /// The registered name that settled it, when one did (`bash` for a call of `Bash`).
    pub tool: Option<&'a str>,
    /// The settled tool's permission action (`edit` for write, edit and apply_patch), when a
    /// tool settled it.
    pub action: Option<&'a str>,
    /// How long the settle took, bounding included.
    pub duration: Duration,
    /// The settlement, or why there is none (a halt, a defect, a store error).
    pub outcome: Result<&'a Settlement, &'a SettleError>,
}

impl SettleRecord<'_> {
    /// The size of the call's input as compact JSON. Counted on each call (by serializing
    /// into a counter), so only a watcher that reports it pays for it.
    pub fn bytes_in(&self) -> u64 {
        json_len(&self.call.input)
    }

    /// What kind of result it was: `text`, `json`, `content`, `error`, or for no settlement
    /// `halt`, `defect` or `store`.
    pub fn result_type(&self) -> &'static str {
        match self.outcome {
            Ok(settlement) if settlement.is_error() => "error",
            Ok(settlement) => match settlement.output().map(ToolOutputKind::of) {
                Some(ToolOutputKind::Text) => "text",
                Some(ToolOutputKind::Json) => "json",
                Some(ToolOutputKind::Content) | None => "content",
            },
            Err(SettleError::Halt(_) | SettleError::NotRun) => "halt",
            Err(SettleError::Store(_)) => "store",
            Err(SettleError::Defect(_)) => "defect",
        }
    }

    /// The size of what the model reads: its text (or error message) and attached files' URIs.
    pub fn bytes_out(&self) -> u64 {
        let Ok(settlement) = self.outcome else {
            return 0;
        };
        match settlement.output() {
            None => match settlement.result() {
                ResultValue::Error(message) => message.len() as u64,
                _ => 0,
            },
            Some(output) => output
                .content
                .iter()
                .map(|part| match part {
                    OutputContent::Text { text } => text.len() as u64,
                    OutputContent::File { uri, .. } => uri.len() as u64,
                })
                .sum(),
        }
    }

    /// True when bounding cut the result.
    pub fn truncated(&self) -> bool {
        self.outcome.is_ok_and(Settlement::truncated)
    }

    /// The managed outputs holding what bounding left out.
    pub fn references(&self) -> &[OutputRef] {
        match self.outcome {
            Ok(settlement) => settlement.references(),
            Err(_) => &[],
        }
    }
}

enum ToolOutputKind {
    Text,
    Json,
    Content,
}

impl ToolOutputKind {
    fn of(output: &tackle_tool_core::ToolOutput) -> Self {
        match output.content.as_slice() {
            [] => Self::Json,
            [OutputContent::Text { .. }] => Self::Text,
            _ => Self::Content,
        }
    }
}

/// The settle span of `call`: named `settle`, its outcome fields filled in by [`finish`].
pub(crate) fn span(call: &Call, ctx: &Context) -> Span {
    // Whether a callsite is enabled is decided once for every subscriber of the process: while
    // any of them wants these spans, the macro builds one even on a thread that has no
    // subscriber at all, and the settle would measure the call for nobody.
    if tracing::dispatcher::get_default(|current| current.is::<NoSubscriber>()) {
        return Span::none();
    }
    tracing::info_span!(
        "settle",
        tool = %call.name,
        call_id = %call.id,
        session = %ctx.session_id,
        agent = %ctx.agent,
        settled_as = Empty,
        duration_ms = Empty,
        result = Empty,
        bytes_in = Empty,
        bytes_out = Empty,
        truncated = Empty,
        reference = Empty,
    )
}

/// The size of `value` as compact JSON, counted without building the text.
fn json_len(value: &Value) -> u64 {
    struct Count(u64);
    impl io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` into a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Records `record`'s outcome on `span`, in one recording: a subscriber handles (and a
/// formatting one formats) the outcome once, not once per field.
pub(crate) fn record_on(span: &Span, record: &SettleRecord<'_>) {
    if span.is_disabled() {
        return;
    }
    tracing::record_all!(
        span,
        settled_as = record.tool.filter(|tool| *tool != record.call.name),
        duration_ms = record.duration.as_secs_f64() * 1000.0,
        result = record.result_type(),
        bytes_in = record.bytes_in(),
        bytes_out = record.bytes_out(),
        truncated = record.truncated(),
        reference = record.references().first().map(tracing::field::display),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tackle_tool_core::{Call, Context};

    #[test]
    fn a_thread_without_a_subscriber_gets_no_span_while_another_subscriber_wants_them() {
        // A subscriber that wants every `settle` span exists, but is nobody's default here.
        let wanting = tracing::Dispatch::new(
            tracing_subscriber::fmt()
                .with_writer(std::io::sink)
                .with_max_level(tracing::Level::TRACE)
                .finish(),
        );
        let call = Call::new("call_1", "read", json!({"path": "a"}));
        let ctx = Context::new("s");
        assert!(super::span(&call, &ctx).is_disabled());
        let span = tracing::dispatcher::with_default(&wanting, || super::span(&call, &ctx));
        assert!(!span.is_disabled());
    }
}
