//! Why a call is allowed, asked or blocked: the rule that decided and where it came from.

use std::fmt;

use serde::Serialize;

use crate::protect::Protection;
use crate::rule::{Effect, Rule, RuleOrigin, Ruleset};
use crate::saved::SavedApprovals;

/// The decision for one action and resource, and what decided it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// The action asked about.
    pub action: String,
    /// The resource asked about.
    pub resource: String,
    /// The decision: deny (blocked), allow (proceeds) or ask (the user is asked).
    pub effect: Effect,
    /// The deciding rule and its origin; `None` when no rule matches (then the user is asked).
    pub decided_by: Option<Decider>,
    /// Why the resource is protected, when it is: then the user is asked even where the rule
    /// allows (a deny still blocks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protected: Option<String>,
}

/// A deciding rule and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decider {
    /// The rule.
    pub rule: Rule,
    /// Its origin: the default ruleset, a configuration file and key, a saved approval, or
    /// the host.
    pub origin: RuleOrigin,
}

impl Explanation {
    /// Mirrors [`Permission::assert`](crate::Permission::assert) for one resource: a
    /// configured deny decides first; else a tightening rule that asks; else a saved approval
    /// (or the session's `approval`); else the deciding configured rule.
    pub(crate) fn of(
        rules: &Ruleset,
        saved: &SavedApprovals,
        approval: Option<(Rule, RuleOrigin)>,
        action: &str,
        resource: &str,
    ) -> Self {
        let decider = |index: usize| {
            Some(Decider {
                rule: rules.rules().get(index)?.clone(),
                origin: rules.origin(index)?.clone(),
            })
        };
        let configured = rules.deciding(action, resource).and_then(decider);
        let denied = configured
            .as_ref()
            .is_some_and(|d| d.rule.effect == Effect::Deny);
        let matched = rules.matched(action, resource);
        let decided_by = match saved.deciding(action, resource).or(approval) {
            _ if denied => configured,
            // The user's approval allows, but a tightening rule asks: the stricter wins.
            Some(_) if rules.tightening_effect(matched).is_some() => {
                matched.tightening.and_then(decider)
            }
            Some((rule, origin)) => Some(Decider { rule, origin }),
            None => configured,
        };
        Self {
            action: action.to_owned(),
            resource: resource.to_owned(),
            effect: decided_by.as_ref().map_or(Effect::Ask, |d| d.rule.effect),
            decided_by,
            protected: None,
        }
    }

    /// Applies a protection: only a deny stays, anything else asks.
    pub(crate) fn protect(&mut self, protection: Option<Protection>) {
        if let Some(protection) = protection {
            if self.effect != Effect::Deny {
                self.effect = Effect::Ask;
            }
            self.protected = Some(protection.to_string());
        }
    }
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}: {}", self.action, self.resource, self.effect)?;
        match &self.decided_by {
            Some(d) => write!(
                f,
                "\n  decided by {{action: {:?}, resource: {:?}, effect: {:?}}}\n  from {}",
                d.rule.action,
                d.rule.resource,
                d.rule.effect.as_str(),
                d.origin
            )?,
            None => f.write_str("\n  no rule matches; the user is asked")?,
        }
        match &self.protected {
            Some(reason) => write!(
                f,
                "\n  protected ({reason}): a write is always asked, whatever the rules or \
                 saved approvals allow"
            ),
            None => Ok(()),
        }
    }
}
