//! Permission asks: to the client through elicitation when it can answer, else by policy.
//!
//! One [`Router`] is the host's [`Asker`]; it finds the asking session's client by the
//! request's session id, so a host shared by several sessions asks the right client. A session
//! whose client declared no elicitation capability (or that is unknown) gets the policy's
//! answer at once: an ask never waits on nobody.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, PoisonError};

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};
use tackle_permission::{Asker, PendingRequest, Reply};

/// What answers a permission ask when the client cannot be asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AskPolicy {
    /// Refuse, telling the model the call needs an approval configured in tackle.json.
    #[default]
    Deny,
    /// Allow this one call (for trusted pipelines); a configured deny still denies.
    AllowOnce,
}

/// The feedback the model reads when a call needs an approval nobody can give.
pub(crate) const NEEDS_APPROVAL: &str = "This call needs approval and this MCP client cannot \
be asked. Allow it in tackle.json (\"permission\"), or run `tackle serve --ask allow-once`.";

/// The host's asker for every session of one server.
#[derive(Debug, Default)]
pub(crate) struct Router {
    policy: AskPolicy,
    clients: Mutex<HashMap<String, Peer<RoleServer>>>,
}

impl Router {
    pub(crate) fn new(policy: AskPolicy) -> Self {
        Self {
            policy,
            clients: Mutex::default(),
        }
    }

    /// Asks `peer` for the asks of `session` from now on.
    pub(crate) fn attach(&self, session: &str, peer: Peer<RoleServer>) {
        self.lock().insert(session.to_owned(), peer);
    }

    /// Forgets the client of `session`.
    pub(crate) fn detach(&self, session: &str) {
        self.lock().remove(session);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Peer<RoleServer>>> {
        self.clients.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn policy_reply(&self) -> Reply {
        match self.policy {
            AskPolicy::Deny => Reply::Reject {
                message: Some(NEEDS_APPROVAL.to_owned()),
            },
            AskPolicy::AllowOnce => Reply::Once,
        }
    }
}

impl Asker for Router {
    fn ask(&self, pending: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        let peer = self
            .lock()
            .get(&pending.request.session_id)
            .filter(|peer| can_elicit(peer))
            .cloned();
        match peer {
            Some(peer) => Box::pin(elicit(peer, pending)),
            None => {
                let reply = self.policy_reply();
                Box::pin(async move { reply })
            }
        }
    }
}

/// True when the client declared the elicitation capability (form mode).
fn can_elicit(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.capabilities.elicitation.is_some())
}

async fn elicit(peer: Peer<RoleServer>, pending: PendingRequest) -> Reply {
    let params = match serde_json::from_value::<ElicitRequestParams>(form(&pending)) {
        Ok(params) => params,
        Err(err) => {
            tracing::error!(%err, "cannot build the elicitation request");
            return Reply::Reject { message: None };
        }
    };
    match peer.create_elicitation(params).await {
        Ok(result) => reply_of(&result),
        Err(err) => {
            // A client that cannot answer declines: the call stops instead of waiting.
            tracing::warn!(%err, "elicitation failed");
            Reply::Reject { message: None }
        }
    }
}

/// The form the client shows: the action and resources, and a choice with optional feedback.
fn form(pending: &PendingRequest) -> Value {
    let request = &pending.request;
    let message = format!(
        "tackle wants permission: {} {}",
        request.action,
        request.resources.join(", ")
    );
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "decision": {
                    "type": "string",
                    "title": "Decision",
                    "enum": ["once", "always", "reject"],
                    "enumNames": ["Allow once", "Always allow", "Reject"],
                },
                "feedback": {
                    "type": "string",
                    "title": "Feedback for the model (when rejecting)",
                },
            },
            "required": ["decision"],
        },
    })
}

/// The permission reply an elicitation result stands for: only an accepted "once" or
/// "always" allows; anything else (decline, cancel, a malformed answer) rejects.
pub(crate) fn reply_of(result: &ElicitResult) -> Reply {
    let content = result.content.as_ref();
    let field = |name: &str| content.and_then(|c| c.get(name)).and_then(Value::as_str);
    let feedback = field("feedback")
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned);
    match (&result.action, field("decision")) {
        (ElicitationAction::Accept, Some("once")) => Reply::Once,
        (ElicitationAction::Accept, Some("always")) => Reply::Always,
        _ => Reply::Reject { message: feedback },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(action: &str, content: Option<Value>) -> ElicitResult {
        let mut value = json!({ "action": action });
        if let Some(content) = content {
            value["content"] = content;
        }
        serde_json::from_value(value).unwrap_or_else(|err| panic!("{err}"))
    }

    #[test]
    fn only_an_accepted_allow_allows() {
        let once = result("accept", Some(json!({"decision": "once"})));
        assert_eq!(reply_of(&once), Reply::Once);
        let always = result("accept", Some(json!({"decision": "always"})));
        assert_eq!(reply_of(&always), Reply::Always);
        let reject = result(
            "accept",
            Some(json!({"decision": "reject", "feedback": " use git status "})),
        );
        assert_eq!(
            reply_of(&reject),
            Reply::Reject {
                message: Some("use git status".into())
            }
        );
        assert_eq!(
            reply_of(&result("decline", None)),
            Reply::Reject { message: None }
        );
        assert_eq!(
            reply_of(&result("cancel", None)),
            Reply::Reject { message: None }
        );
        let odd = result("accept", Some(json!({"decision": "sure"})));
        assert_eq!(reply_of(&odd), Reply::Reject { message: None });
    }

    #[test]
    fn the_form_is_a_valid_elicitation() {
        let pending = PendingRequest {
            id: "per_1".into(),
            request: tackle_permission::Request::new(
                &tackle_tool_core::Context::new("s"),
                "bash",
                vec!["ls".into()],
            ),
        };
        let params = serde_json::from_value::<ElicitRequestParams>(form(&pending));
        assert!(params.is_ok(), "{params:?}");
    }
}
