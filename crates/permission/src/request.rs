//! What a tool asks for, and how a host answers (reference P2–P4).

use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};
use tackle_tool_core::Context;

use crate::error::PermissionError;

/// A permission request: may `action` be done to every one of `resources`?
#[derive(Debug, Clone)]
pub struct Request {
    /// The host's session id; pending requests are grouped by it.
    pub session_id: String,
    /// The agent that made the call ([`Context::agent`]): its rules, and its parents' if it is a
    /// subagent, decide the request ([`Agents`](crate::Agents)). Empty: the global rules alone.
    pub agent: String,
    /// The permission action (`bash`, `edit`, `read`, `external_directory`, ...).
    pub action: String,
    /// The resources, all of which must be allowed (a command, paths, a URL, ...).
    pub resources: Vec<String>,
    /// The patterns an "always" reply saves for `action` (P17: `["*"]` for file tools,
    /// `[command]` for bash, `[<dir>/*]` for external directories); a "this session" reply
    /// keeps the same patterns in memory. Empty: "always" and "this session" keep nothing and
    /// act like "once".
    pub save: Vec<String>,
    /// Anything the host's prompt may show (a diff, the file path, ...).
    pub metadata: Map<String, Value>,
    /// The call that made the request.
    pub source: Source,
    /// Ask even when the configured rules and saved approvals allow every resource (a
    /// configured deny still blocks). For what a tool cannot judge statically, such as a
    /// shell command built at run time; an "always" never resolves such a request for another.
    pub always_ask: bool,
}

/// The tool call a request comes from.
#[derive(Debug, Clone, Default)]
pub struct Source {
    /// The assistant message that contains the call.
    pub message_id: String,
    /// The call's id.
    pub call_id: String,
}

impl Request {
    /// A request for `action` on `resources` from the call described by `ctx`.
    pub fn new(ctx: &Context, action: impl Into<String>, resources: Vec<String>) -> Self {
        Self {
            session_id: ctx.session_id.clone(),
            agent: ctx.agent.clone(),
            action: action.into(),
            resources,
            save: Vec::new(),
            metadata: Map::new(),
            source: Source {
                message_id: ctx.assistant_message_id.clone(),
                call_id: ctx.tool_call_id.clone(),
            },
            always_ask: false,
        }
    }

    /// The same request, asked even when the rules would allow it (see
    /// [`always_ask`](Self::always_ask)).
    #[must_use]
    pub fn with_always_ask(mut self) -> Self {
        self.always_ask = true;
        self
    }

    /// The same request with the patterns an "always" reply saves.
    #[must_use]
    pub fn with_save(mut self, save: Vec<String>) -> Self {
        self.save = save;
        self
    }

    /// The same request with `key` set to `value` in its metadata.
    #[must_use]
    pub fn with_metadata(mut self, key: &str, value: Value) -> Self {
        self.metadata.insert(key.to_owned(), value);
        self
    }

    /// Rejects what cannot be evaluated meaningfully. An empty resource list in particular
    /// would otherwise be vacuously allowed.
    pub(crate) fn validate(&self) -> Result<(), PermissionError> {
        let invalid = |reason: String| Err(PermissionError::InvalidRequest { reason });
        if self.action.is_empty() {
            return invalid("the action is empty".to_owned());
        }
        if self.action.contains('\0') {
            return invalid(format!("the action {:?} contains NUL", self.action));
        }
        if self.resources.is_empty() {
            return invalid(format!("no resources given for {}", self.action));
        }
        for (what, list) in [("resource", &self.resources), ("save pattern", &self.save)] {
            for item in list {
                if item.is_empty() {
                    return invalid(format!("an empty {what} for {}", self.action));
                }
                if item.contains('\0') {
                    return invalid(format!("the {what} {item:?} contains NUL"));
                }
            }
        }
        Ok(())
    }
}

/// A request waiting for an answer, with its id.
#[derive(Debug, Clone)]
pub struct PendingRequest {
    /// The id a host passes to [`Permission::reply`](crate::Permission::reply) (`per_...`).
    pub id: String,
    /// What is asked.
    pub request: Request,
}

/// An answer to a permission request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Allow this request only.
    Once,
    /// Allow it and save the request's `save` patterns for this project; other pending
    /// requests of the session that are now allowed are resolved too.
    Always,
    /// Allow it and, for the rest of the session, the request's `save` patterns: held in
    /// memory, forgotten when the session is deleted
    /// ([`Permission::delete_session`](crate::Permission::delete_session)) or the process ends.
    /// Other pending requests of the session that are now allowed are resolved too. Like
    /// "always", it never overrides a configured deny.
    Session,
    /// Refuse it. Without a message the host's turn stops ([`PermissionError::Declined`]);
    /// with one the model reads it ([`PermissionError::Corrected`]). Every other pending
    /// request of the session is declined.
    Reject {
        /// Feedback for the model.
        message: Option<String>,
    },
}

/// The host's way of asking the user. The returned future is awaited until it answers or the
/// request is resolved some other way (a [`Permission::reply`](crate::Permission::reply), an
/// "always" or a reject of another request, closing the service), whichever comes first; it is
/// dropped in the latter case.
pub trait Asker: Send + Sync + 'static {
    /// Asks about `request`.
    fn ask(&self, request: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>>;
}

/// An [`Asker`] that answers every request with the same reply: `AnswerAll(Reply::Once)` is a
/// CLI's `--yes`, `AnswerAll(Reply::Reject { message: None })` a host nobody can answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerAll(pub Reply);

impl Asker for AnswerAll {
    fn ask(&self, _request: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        let reply = self.0.clone();
        Box::pin(async move { reply })
    }
}

/// An [`Asker`] that never answers by itself: every request waits for
/// [`Permission::reply`](crate::Permission::reply) (or [`close`](crate::Permission::close)).
/// For hosts that show pending requests and reply through the service.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReplyLater;

impl Asker for ReplyLater {
    fn ask(&self, _request: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        Box::pin(std::future::pending())
    }
}
