//! What the service would decide without deciding: explanations (`tackle permission`) and the
//! catalog filters that hide wholly denied tools.

use crate::explain::Explanation;
use crate::rule::Ruleset;

use super::Permission;

impl Permission {
    /// The effect [`assert`](Self::assert) would start from for `action` on `resource`, and
    /// the rule that decides it, with its origin.
    pub fn explain(&self, action: &str, resource: &str) -> Explanation {
        self.explain_agent("", action, resource)
    }

    /// Like [`explain`](Self::explain), for a request of `agent`: the strictest decision of its
    /// rules and its parents' (the agent's own where they agree).
    pub fn explain_agent(&self, agent: &str, action: &str, resource: &str) -> Explanation {
        self.explain_in(None, agent, action, resource)
    }

    /// Like [`explain_agent`](Self::explain_agent), with the approvals given for `session_id`
    /// only ([`Reply::Session`](crate::Reply::Session)) counted.
    pub fn explain_in_session(
        &self,
        session_id: &str,
        agent: &str,
        action: &str,
        resource: &str,
    ) -> Explanation {
        self.explain_in(Some(session_id), agent, action, resource)
    }

    fn explain_in(
        &self,
        session_id: Option<&str>,
        agent: &str,
        action: &str,
        resource: &str,
    ) -> Explanation {
        let state = self.inner.lock();
        let session = session_id.and_then(|id| state.sessions.deciding(id, action, resource));
        let mut strictest: Option<Explanation> = None;
        for rules in self.inner.chains.of(agent) {
            let explanation =
                Explanation::of(rules, &self.inner.saved, session.clone(), action, resource);
            if strictest
                .as_ref()
                .is_none_or(|s| explanation.effect.stricter_than(s.effect))
            {
                strictest = Some(explanation);
            }
        }
        drop(state);
        let mut explanation = strictest.unwrap_or_else(|| {
            Explanation::of(&self.inner.rules, &self.inner.saved, None, action, resource)
        });
        explanation.protect(self.inner.protected.check(action, resource));
        explanation
    }

    /// A catalog filter for `agent`: hides a tool whose action its rules, or any of its
    /// parents', wholly deny.
    pub fn visibility(&self, agent: &str) -> AgentVisibility<'_> {
        AgentVisibility {
            chain: self.inner.chains.of(agent),
        }
    }
}

impl tackle_tool_core::Visibility for Permission {
    fn wholly_disabled(&self, action: &str) -> bool {
        self.inner.rules.wholly_disabled(action)
    }
}

/// The catalog filter of one agent ([`Permission::visibility`]).
#[derive(Debug, Clone, Copy)]
pub struct AgentVisibility<'a> {
    chain: &'a [Ruleset],
}

impl tackle_tool_core::Visibility for AgentVisibility<'_> {
    fn wholly_disabled(&self, action: &str) -> bool {
        self.chain.iter().any(|rules| rules.wholly_disabled(action))
    }
}
