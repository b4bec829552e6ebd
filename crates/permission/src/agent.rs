//! Agents: rules per agent on top of the global rules, and subagents held to their parents'.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::error::PermissionError;
use crate::rule::Ruleset;

/// The agents a host configures: each one's own rules (opencode's `agent.<name>.permission`),
/// and which agent is a subagent of which.
///
/// A request of agent `A` is decided by the global rules followed by `A`'s rules, so `A`'s
/// rules win where they overlap (last match wins, as in one [`Ruleset`]). When `A` is a
/// subagent of `P`, the request is also decided as `P` would decide it (and so on up the
/// chain), and the strictest decision wins: a subagent is never allowed what its parent is
/// denied, nor allowed without asking what its parent is asked. An agent the host did not
/// configure (or an empty agent name) is decided by the global rules alone.
#[derive(Debug, Clone, Default)]
pub struct Agents {
    defined: BTreeMap<String, Agent>,
}

#[derive(Debug, Clone, Default)]
struct Agent {
    rules: Ruleset,
    parent: Option<String>,
}

impl Agents {
    /// No agent-specific rules.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `name`'s rules, applied after the global rules (replacing rules set before for
    /// `name`; its parent, if declared, stays).
    pub fn define(&mut self, name: impl Into<String>, rules: Ruleset) -> &mut Self {
        self.defined.entry(name.into()).or_default().rules = rules;
        self
    }

    /// Declares `name` a subagent of `parent`: every decision for `name` is also decided as for
    /// `parent` (and its own parents), the strictest winning. Either agent may have no rules of
    /// its own. Fails when it would make an agent its own ancestor.
    pub fn subagent_of(
        &mut self,
        name: impl Into<String>,
        parent: impl Into<String>,
    ) -> Result<&mut Self, PermissionError> {
        let (name, parent) = (name.into(), parent.into());
        let mut ancestor = Some(parent.as_str());
        while let Some(agent) = ancestor {
            if agent == name {
                return Err(PermissionError::AgentCycle {
                    agent: name,
                    parent,
                });
            }
            ancestor = self.parent(agent);
        }
        self.defined.entry(parent.clone()).or_default();
        self.defined.entry(name).or_default().parent = Some(parent);
        Ok(self)
    }

    /// `name`'s own rules, if it has any configured.
    pub fn rules(&self, name: &str) -> Option<&Ruleset> {
        self.defined.get(name).map(|agent| &agent.rules)
    }

    /// The agent `name` is a subagent of, if any.
    pub fn parent(&self, name: &str) -> Option<&str> {
        self.defined.get(name)?.parent.as_deref()
    }

    /// The configured agents' names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.defined.keys().map(String::as_str)
    }

    /// For every configured agent, the rulesets deciding its requests: its own (global rules
    /// then its rules) first, then its parent's, up the chain. Built once, so a check only
    /// evaluates.
    pub(crate) fn chains(&self, global: &Ruleset) -> Chains {
        let effective = |name: &str| {
            let mut rules = global.clone();
            if let Some(own) = self.rules(name) {
                rules.append(own.clone());
            }
            rules
        };
        let by_agent = self
            .defined
            .keys()
            .map(|name| {
                let mut chain = vec![effective(name)];
                let mut ancestor = self.parent(name);
                while let Some(agent) = ancestor {
                    chain.push(effective(agent));
                    ancestor = self.parent(agent);
                }
                (name.clone(), Arc::from(chain))
            })
            .collect();
        Chains {
            global: Arc::from(vec![global.clone()]),
            by_agent,
        }
    }
}

/// The rulesets that decide each agent's requests (see [`Agents::chains`]).
#[derive(Debug, Clone)]
pub(crate) struct Chains {
    global: Arc<[Ruleset]>,
    by_agent: HashMap<String, Arc<[Ruleset]>>,
}

impl Chains {
    /// The rulesets deciding `agent`'s requests, its own first; the global rules alone for an
    /// agent that is not configured.
    pub(crate) fn of(&self, agent: &str) -> &[Ruleset] {
        self.by_agent.get(agent).unwrap_or(&self.global)
    }
}
