//! What became of each request [`Permission::assert`](crate::Permission::assert) decided: a
//! `tracing` event per decision and, for a host that keeps its own record (an audit log), a
//! [`DecisionObserver`].
//!
//! Nothing is prepared when nobody listens: without an enabled event and without an observer,
//! `assert` does no extra work.

use std::sync::Arc;

use serde::Serialize;

use crate::error::PermissionError;
use crate::explain::Explanation;
use crate::request::{Reply, Request};
use crate::rule::Effect;

/// Told of every decision, once it is final (allowed, blocked, answered, or ended unanswered).
///
/// Called on the deciding task (or where the `assert` future is dropped), so it must return
/// quickly and never block: hand the decision to a channel or a bounded queue.
pub trait DecisionObserver: Send + Sync + 'static {
    /// One request was decided.
    fn decided(&self, decision: &Decision);
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verdict {
    /// It may proceed: the rules and approvals allowed it, or the user did.
    Allowed,
    /// A configured rule denied a resource.
    Blocked,
    /// The user (or a closed service) refused it.
    Rejected,
    /// It stopped waiting unanswered: its call was dropped or its session deleted.
    Ended,
    /// It could not be evaluated (no resource, NUL), or an "always" could not be saved.
    Failed,
}

impl Verdict {
    /// `allowed`, `blocked`, `rejected`, `ended` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allowed => "allowed",
            Self::Blocked => "blocked",
            Self::Rejected => "rejected",
            Self::Ended => "ended",
            Self::Failed => "failed",
        }
    }
}

/// One decided request.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Decision {
    /// The request's session.
    pub session_id: String,
    /// The agent that made it.
    pub agent: String,
    /// The call that made it.
    pub call_id: String,
    /// The action asked for.
    pub action: String,
    /// The resources asked for.
    pub resources: Vec<String>,
    /// What the rules and approvals decided before anyone was asked (the strictest of the
    /// resources'): `ask` when the user was asked.
    pub effect: Effect,
    /// Per resource, the effect and the deciding rule with its origin, as
    /// [`Permission::explain`](crate::Permission::explain) reports them.
    pub explanations: Vec<Explanation>,
    /// The answer, when the user (or the host's asker) was asked and answered.
    pub reply: Option<Reply>,
    /// How the request ended.
    pub verdict: Verdict,
}

impl Decision {
    /// The explanation that decided: the first resource whose effect is the decision's.
    pub fn deciding(&self) -> Option<&Explanation> {
        self.explanations
            .iter()
            .find(|explanation| explanation.effect == self.effect)
    }

    /// `once`, `always`, `session` or `reject`, when the request was answered.
    pub fn reply_kind(&self) -> Option<&'static str> {
        self.reply.as_ref().map(|reply| match reply {
            Reply::Once => "once",
            Reply::Always => "always",
            Reply::Session => "session",
            Reply::Reject { .. } => "reject",
        })
    }
}

/// A decision being made: reported when it is finished, or as [`Verdict::Ended`] when the
/// `assert` future is dropped first.
pub(crate) struct Report {
    decision: Option<Decision>,
    observer: Option<Arc<dyn DecisionObserver>>,
}

impl Report {
    /// A report of `request`, when anyone listens; `explain` says what the rules decide for
    /// one resource.
    pub(crate) fn start(
        request: &Request,
        observer: Option<&Arc<dyn DecisionObserver>>,
        explain: impl Fn(&str) -> Explanation,
    ) -> Option<Self> {
        if observer.is_none() && !tracing::enabled!(tracing::Level::INFO) {
            return None;
        }
        let explanations: Vec<Explanation> = request
            .resources
            .iter()
            .map(|resource| explain(resource))
            .collect();
        let effect = explanations
            .iter()
            .map(|explanation| explanation.effect)
            .reduce(|a, b| if b.stricter_than(a) { b } else { a })
            .unwrap_or(Effect::Ask);
        // A request the tool marks as always asked is asked whatever the rules allow.
        let effect = if request.always_ask && effect == Effect::Allow {
            Effect::Ask
        } else {
            effect
        };
        Some(Self {
            decision: Some(Decision {
                session_id: request.session_id.clone(),
                agent: request.agent.clone(),
                call_id: request.source.call_id.clone(),
                action: request.action.clone(),
                resources: request.resources.clone(),
                effect,
                explanations,
                reply: None,
                verdict: Verdict::Ended,
            }),
            observer: observer.cloned(),
        })
    }

    /// Reports the decision `outcome` made: `Ok(Some(reply))` when the user was asked and
    /// allowed it, `Ok(None)` when the rules did.
    pub(crate) fn finish(mut self, outcome: &Result<Option<Reply>, PermissionError>) {
        if let Some(decision) = self.decision.as_mut() {
            let (reply, verdict) = match outcome {
                Ok(reply) => (reply.clone(), Verdict::Allowed),
                Err(PermissionError::Blocked { .. }) => (None, Verdict::Blocked),
                Err(PermissionError::Corrected { feedback }) => (
                    Some(Reply::Reject {
                        message: Some(feedback.clone()),
                    }),
                    Verdict::Rejected,
                ),
                Err(PermissionError::Declined) => {
                    (Some(Reply::Reject { message: None }), Verdict::Rejected)
                }
                Err(PermissionError::SessionDeleted { .. }) => (None, Verdict::Ended),
                Err(_) => (None, Verdict::Failed),
            };
            decision.reply = reply;
            decision.verdict = verdict;
        }
        // Drop reports it.
    }
}

impl Drop for Report {
    fn drop(&mut self) {
        if let Some(decision) = self.decision.take() {
            emit(&decision);
            if let Some(observer) = &self.observer {
                observer.decided(&decision);
            }
        }
    }
}

/// The decision's `tracing` event.
fn emit(decision: &Decision) {
    let deciding = decision.deciding();
    let rule = deciding.and_then(|explanation| explanation.decided_by.as_ref());
    let origin = rule.map(|d| d.origin.to_string());
    let rule = rule.map(|d| {
        let r = &d.rule;
        format!("{} {:?}: {}", r.action, r.resource, r.effect.as_str())
    });
    tracing::info!(
        session = %decision.session_id,
        agent = %decision.agent,
        call_id = %decision.call_id,
        action = %decision.action,
        resources = ?decision.resources,
        effect = decision.effect.as_str(),
        rule = rule.as_deref(),
        origin = origin.as_deref(),
        reply = decision.reply_kind(),
        verdict = decision.verdict.as_str(),
        "permission decision"
    );
}
