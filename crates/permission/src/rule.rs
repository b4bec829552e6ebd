//! Rules, rulesets and their evaluation (reference P9, RG7).

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::index::{ActionIndex, Candidates};
use crate::wildcard::{Pattern, normalise_input};

/// What a rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// The call proceeds.
    Allow,
    /// The call is blocked; the model is told why.
    Deny,
    /// The user is asked.
    Ask,
}

impl Effect {
    /// The effect's name as written in configuration: `allow`, `deny` or `ask`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::Ask => "ask",
        }
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rule: an action pattern, a resource pattern and the effect when both match.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rule {
    /// Wildcard over the permission action (`bash`, `edit`, `read`, `*`, ...).
    pub action: String,
    /// Wildcard over the resource (a command, a path, a URL, ...).
    pub resource: String,
    /// What the rule decides.
    pub effect: Effect,
}

impl Rule {
    /// A rule deciding `effect` for `action` on `resource` (both wildcards).
    pub fn new(action: impl Into<String>, resource: impl Into<String>, effect: Effect) -> Self {
        Self {
            action: action.into(),
            resource: resource.into(),
            effect,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} {:?} {}", self.action, self.resource, self.effect)
    }
}

/// Where a rule of a [`Ruleset`] came from, so that [`explain`](crate::Permission::explain)
/// can say why a call was allowed or blocked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RuleOrigin {
    /// The built-in default ruleset ([`Ruleset::defaults`]); `index` counts from 0.
    Default {
        /// Position in the default ruleset.
        index: usize,
    },
    /// A configuration file.
    Config {
        /// The file as the host named it.
        file: String,
        /// The key path of the entry, e.g. `permission.bash["git status*"]`.
        key: String,
        /// Position among the rules of that file, counting from 0.
        index: usize,
    },
    /// A saved approval ("always").
    Saved {
        /// The approvals file, when saved approvals are persisted.
        file: Option<PathBuf>,
    },
    /// Given by code through [`Ruleset::new`]; `index` counts from 0.
    Given {
        /// Position in the vector given to [`Ruleset::new`].
        index: usize,
    },
}

impl fmt::Display for RuleOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Default { index } => write!(f, "default rule #{}", index + 1),
            Self::Config { file, key, index } => {
                write!(f, "{file}, {key} (rule #{} of that file)", index + 1)
            }
            Self::Saved { file: Some(file) } => {
                write!(f, "a saved approval in {}", file.display())
            }
            Self::Saved { file: None } => f.write_str("an approval saved for this run"),
            Self::Given { index } => write!(f, "rule #{} given by the host", index + 1),
        }
    }
}

/// An ordered list of rules; the last matching rule wins.
///
/// Patterns are compiled once, when the ruleset is built.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ruleset {
    rules: Vec<Rule>,
    compiled: Vec<Compiled>,
    index: ActionIndex,
}

#[derive(Debug, Clone, PartialEq)]
struct Compiled {
    action: Pattern,
    resource: Pattern,
    origin: RuleOrigin,
}

impl Ruleset {
    /// A ruleset of `rules`, in order, with [`RuleOrigin::Given`] origins.
    pub fn new(rules: Vec<Rule>) -> Self {
        Self::with_origins(
            rules
                .into_iter()
                .enumerate()
                .map(|(index, rule)| (rule, RuleOrigin::Given { index })),
        )
    }

    /// A ruleset of `rules` with their origins, in order.
    pub fn with_origins(rules: impl IntoIterator<Item = (Rule, RuleOrigin)>) -> Self {
        let mut set = Self::default();
        for (rule, origin) in rules {
            set.push(rule, origin);
        }
        set
    }

    /// The default ruleset a new user expects; see `docs/permissions.md`.
    ///
    /// Anything unlisted asks; reading, listing and searching are allowed except for `.env`
    /// files (`*.env.example` is allowed); edits, shell commands, web access and paths outside
    /// the Location ask; question, todowrite and skill are allowed.
    pub fn defaults() -> Self {
        use Effect::{Allow, Ask};
        let rules = [
            ("*", "*", Ask),
            ("read", "*", Allow),
            ("read", "*.env", Ask),
            ("read", "*.env.*", Ask),
            ("read", "*.env.example", Allow),
            ("glob", "*", Allow),
            ("grep", "*", Allow),
            ("list", "*", Allow),
            ("edit", "*", Ask),
            ("bash", "*", Ask),
            ("webfetch", "*", Ask),
            ("websearch", "*", Ask),
            ("external_directory", "*", Ask),
            ("question", "*", Allow),
            ("todowrite", "*", Allow),
            ("skill", "*", Allow),
        ];
        Self::with_origins(rules.into_iter().enumerate().map(
            |(index, (action, resource, effect))| {
                (
                    Rule::new(action, resource, effect),
                    RuleOrigin::Default { index },
                )
            },
        ))
    }

    /// Adds `rule` at the end (it wins over every earlier rule it overlaps).
    pub fn push(&mut self, rule: Rule, origin: RuleOrigin) {
        let compiled = Compiled {
            action: Pattern::new(&rule.action),
            resource: Pattern::new(&rule.resource),
            origin,
        };
        self.push_compiled(rule, compiled);
    }

    fn push_compiled(&mut self, rule: Rule, compiled: Compiled) {
        let index = self.rules.len();
        self.compiled.push(compiled);
        let compiled = &self.compiled;
        self.index
            .push(index, &rule.action, |i| &compiled[i].action);
        self.rules.push(rule);
    }

    /// Appends every rule of `later`, which therefore wins where rules overlap; this is how
    /// configured rules apply on top of [`Ruleset::defaults`].
    pub fn append(&mut self, later: Ruleset) {
        for (rule, compiled) in later.rules.into_iter().zip(later.compiled) {
            self.push_compiled(rule, compiled);
        }
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Where the rule at `index` came from.
    pub fn origin(&self, index: usize) -> Option<&RuleOrigin> {
        self.compiled.get(index).map(|c| &c.origin)
    }

    /// The number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// True when there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The effect for `action` on `resource`: the last matching rule's, or ask when none
    /// matches.
    pub fn evaluate(&self, action: &str, resource: &str) -> Effect {
        self.deciding(action, resource)
            .map_or(Effect::Ask, |index| self.rules[index].effect)
    }

    /// The index of the last rule matching `action` and `resource`, if any.
    pub fn deciding(&self, action: &str, resource: &str) -> Option<usize> {
        let action = normalise_input(action);
        let resource = normalise_input(resource);
        let resource_matches = |i: &usize| self.compiled[*i].resource.matches_normalised(&resource);
        match self.index.candidates(&action) {
            Candidates::Matching(list) => list.iter().rev().copied().find(resource_matches),
            Candidates::Unchecked(list) => list
                .iter()
                .rev()
                .copied()
                .filter(|i| self.compiled[*i].action.matches_normalised(&action))
                .find(resource_matches),
        }
    }

    /// The indices of the rules whose action pattern matches `action`, ascending.
    fn matching_action(&self, action: &str) -> Vec<usize> {
        let action = normalise_input(action);
        match self.index.candidates(&action) {
            Candidates::Matching(list) => list.to_vec(),
            Candidates::Unchecked(list) => list
                .iter()
                .copied()
                .filter(|i| self.compiled[*i].action.matches_normalised(&action))
                .collect(),
        }
    }

    /// The rules whose action pattern matches `action`, in order: the rules relevant to a
    /// decision about it.
    pub fn relevant(&self, action: &str) -> Vec<Rule> {
        self.matching_action(action)
            .into_iter()
            .map(|i| self.rules[i].clone())
            .collect()
    }

    /// True when every use of `action` is denied: the last rule whose action pattern matches
    /// `action` (whatever its resource) has the resource `*` and the effect deny (RG7).
    pub fn wholly_disabled(&self, action: &str) -> bool {
        self.matching_action(action).last().is_some_and(|&index| {
            let rule = &self.rules[index];
            rule.resource == "*" && rule.effect == Effect::Deny
        })
    }
}

impl tackle_tool_core::Visibility for Ruleset {
    fn wholly_disabled(&self, action: &str) -> bool {
        Ruleset::wholly_disabled(self, action)
    }
}

impl FromIterator<Rule> for Ruleset {
    fn from_iter<I: IntoIterator<Item = Rule>>(iter: I) -> Self {
        Self::new(iter.into_iter().collect())
    }
}
