//! Deciding one request against an agent's chain of rulesets (its own, then its parents'),
//! the saved approvals and the session's approvals.

use std::collections::HashMap;

use crate::error::PermissionError;
use crate::request::Request;
use crate::rule::{Effect, Rule, RuleOrigin, Ruleset};
use crate::saved::SavedApprovals;

/// The "this session only" approvals, by session id: allow rules held in memory.
#[derive(Debug, Default)]
pub(crate) struct SessionApprovals {
    by_session: HashMap<String, Ruleset>,
}

impl SessionApprovals {
    /// Allows `action` on each of `patterns` for the rest of `session_id`.
    pub(crate) fn add(&mut self, session_id: &str, action: &str, patterns: &[String]) {
        let rules = self.by_session.entry(session_id.to_owned()).or_default();
        for pattern in patterns {
            let origin = RuleOrigin::Session {
                session_id: session_id.to_owned(),
            };
            rules.push(Rule::new(action, pattern.as_str(), Effect::Allow), origin);
        }
    }

    pub(crate) fn allows(&self, session_id: &str, action: &str, resource: &str) -> bool {
        self.by_session
            .get(session_id)
            .is_some_and(|rules| rules.evaluate(action, resource) == Effect::Allow)
    }

    /// The approval deciding `action` on `resource` in `session_id`, if one allows it.
    pub(crate) fn deciding(
        &self,
        session_id: &str,
        action: &str,
        resource: &str,
    ) -> Option<(Rule, RuleOrigin)> {
        let rules = self.by_session.get(session_id)?;
        let index = rules.deciding(action, resource)?;
        Some((
            rules.rules().get(index)?.clone(),
            rules.origin(index)?.clone(),
        ))
    }

    pub(crate) fn remove(&mut self, session_id: &str) {
        self.by_session.remove(session_id);
    }
}

/// `Blocked` when a ruleset of the chain denies any resource (P11: before any approval). The
/// relevant rules reported are those of the first ruleset that denies.
pub(crate) fn blocked(chain: &[Ruleset], request: &Request) -> Option<PermissionError> {
    let action = &request.action;
    let mut denier = None;
    let denied: Vec<String> = request
        .resources
        .iter()
        .filter(|resource| {
            let by = chain
                .iter()
                .find(|rules| rules.evaluate(action, resource) == Effect::Deny);
            denier = denier.or(by);
            by.is_some()
        })
        .cloned()
        .collect();
    let rules = denier?;
    Some(PermissionError::Blocked {
        action: action.clone(),
        resources: denied,
        rules: rules.relevant(action),
    })
}

/// True when, for every ruleset of the chain, every resource is allowed by the rules, the saved
/// approvals or the session's approvals, and no tightening rule asks for it
/// ([`Ruleset::restrict`]: the stricter decision wins). Assumes nothing is denied.
pub(crate) fn allowed(
    chain: &[Ruleset],
    saved: &SavedApprovals,
    session: &SessionApprovals,
    request: &Request,
) -> bool {
    let action = &request.action;
    request.resources.iter().all(|resource| {
        let approved = || {
            saved.allows(action, resource) || session.allows(&request.session_id, action, resource)
        };
        chain.iter().all(|rules| {
            let matched = rules.matched(action, resource);
            rules.tightening_effect(matched).is_none()
                && (rules.effect_of(matched) == Effect::Allow || approved())
        })
    })
}
