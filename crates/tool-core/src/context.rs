//! What a tool call carries besides its input.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{Budget, ProgressSink};

/// One tool call as a model asked for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    /// The provider's id of this call.
    pub id: String,
    /// The tool name the model used.
    pub name: String,
    /// The raw input; decoded and validated during settlement.
    pub input: Value,
}

impl Call {
    /// A call of `name` with `input` and the call id `id`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            input,
        }
    }
}

/// The invocation context a tool executes with.
///
/// Cloning is cheap enough for a call; the cancellation token is shared, so cancelling it stops
/// every clone's work.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Context {
    /// The host's session id.
    pub session_id: String,
    /// The agent that made the call.
    pub agent: String,
    /// The assistant message that contains the call.
    pub assistant_message_id: String,
    /// The call's id ([`Call::id`]).
    pub tool_call_id: String,
    /// Cancelled when the host abandons the call; settlement then halts with
    /// [`Halt::Cancelled`](crate::Halt::Cancelled).
    pub cancel: CancellationToken,
    /// The output limits of this call. Settle sets it from the host's output store, so a leaf
    /// that shapes its own output (a page, a compacted report) fits what settle keeps.
    pub budget: Budget,
    /// Where the running call reports its progress for people and clients watching (never the
    /// model); none by default.
    pub progress: ProgressSink,
}

impl Context {
    /// A context for `session_id` with empty ids and a fresh cancellation token.
    pub fn new(session_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            ..Self::default()
        }
    }

    /// The same context reporting progress to `progress`.
    #[must_use]
    pub fn with_progress(mut self, progress: ProgressSink) -> Self {
        self.progress = progress;
        self
    }

    /// The same context for another call id.
    #[must_use]
    pub fn for_call(&self, tool_call_id: impl Into<String>) -> Self {
        Self {
            tool_call_id: tool_call_id.into(),
            ..self.clone()
        }
    }
}
