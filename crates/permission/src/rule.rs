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
    /// A "this session only" approval ([`Reply::Session`](crate::Reply::Session)), held in
    /// memory until the session is deleted.
    Session {
        /// The session it was given in.
        session_id: String,
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
            Self::Session { session_id } => {
                write!(f, "an approval for session {session_id:?} only")
            }
            Self::Given { index } => write!(f, "rule #{} given by the host", index + 1),
        }
    }
}

impl Effect {
    /// True when `self` decides more strictly than `other` (deny, then ask, then allow).
    pub(crate) fn stricter_than(self, other: Effect) -> bool {
        self.strictness() > other.strictness()
    }

    /// Deny is stricter than ask, ask than allow.
    fn strictness(self) -> u8 {
        match self {
            Self::Allow => 0,
            Self::Ask => 1,
            Self::Deny => 2,
        }
    }
}

/// An ordered list of rules; the last matching rule wins.
///
/// A ruleset may also hold *tightening* rules ([`restrict`](Self::restrict)), such as an
/// untrusted project's: they form a second decision (their last match, allow meaning no
/// opinion), and where it is stricter than the ordinary rules' decision it wins.
///
/// Patterns are compiled once, when the ruleset is built.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ruleset {
    rules: Vec<Rule>,
    compiled: Vec<Compiled>,
    index: ActionIndex,
    /// Whether any rule is tightening (so the common case stops at the first match).
    tightening: bool,
}

#[derive(Debug, Clone, PartialEq)]
struct Compiled {
    action: Pattern,
    resource: Pattern,
    origin: RuleOrigin,
    /// Only makes decisions stricter (see [`Ruleset::restrict`]).
    tightening: bool,
}

/// The last matching ordinary rule and the last matching tightening rule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Matched {
    pub(crate) ordinary: Option<usize>,
    pub(crate) tightening: Option<usize>,
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
            tightening: false,
        };
        self.push_compiled(rule, compiled);
    }

    fn push_compiled(&mut self, rule: Rule, compiled: Compiled) {
        let index = self.rules.len();
        self.tightening |= compiled.tightening;
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

    /// Adds the rules of `restrictions` as tightening rules: they can make a decision
    /// stricter, never looser. For an action and resource, their decision is their last
    /// matching rule's effect; where it is deny, or ask while the ordinary rules (and, in
    /// [`Permission`](crate::Permission), saved approvals) allow, it decides. Where it is allow,
    /// or none of them matches, the ordinary decision stands: an allow among them allows
    /// nothing. This is how an untrusted project's configuration applies.
    pub fn restrict(&mut self, restrictions: Ruleset) {
        for (rule, mut compiled) in restrictions.rules.into_iter().zip(restrictions.compiled) {
            compiled.tightening = true;
            self.push_compiled(rule, compiled);
        }
    }

    /// True when the rule at `index` is a tightening rule ([`restrict`](Self::restrict)).
    pub fn is_tightening(&self, index: usize) -> bool {
        self.compiled.get(index).is_some_and(|c| c.tightening)
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
        self.effect_of(self.matched(action, resource))
    }

    /// The index of the rule that decides `action` on `resource`, if any: the last matching
    /// rule, or a stricter tightening one ([`restrict`](Self::restrict)).
    pub fn deciding(&self, action: &str, resource: &str) -> Option<usize> {
        self.deciding_of(self.matched(action, resource))
    }

    /// The effect of the rules `matched` found (no deciding rule: ask), for a caller that
    /// also needs the match itself.
    pub(crate) fn effect_of(&self, matched: Matched) -> Effect {
        self.deciding_of(matched)
            .map_or(Effect::Ask, |index| self.rules[index].effect)
    }

    /// [`deciding`](Self::deciding) of a match already made.
    fn deciding_of(&self, matched: Matched) -> Option<usize> {
        match matched.tightening {
            // Stricter wins; with no ordinary match, a tightening ask is the rule that asks.
            Some(t)
                if self.rules[t].effect.strictness() > self.ordinary_effect(matched)
                    || (matched.ordinary.is_none() && self.rules[t].effect != Effect::Allow) =>
            {
                Some(t)
            }
            _ => matched.ordinary,
        }
    }

    /// The strictness of the ordinary rules' decision (no match: ask).
    fn ordinary_effect(&self, matched: Matched) -> u8 {
        matched
            .ordinary
            .map_or(Effect::Ask, |i| self.rules[i].effect)
            .strictness()
    }

    /// The last matching ordinary and tightening rules for `action` on `resource`.
    pub(crate) fn matched(&self, action: &str, resource: &str) -> Matched {
        let action = normalise_input(action);
        let resource = normalise_input(resource);
        let resource_matches = |i: &usize| self.compiled[*i].resource.matches_normalised(&resource);
        let mut matched = Matched::default();
        let tightening = self.tightening;
        // Visits matching rules from the last; true when the search can stop.
        let mut visit = |i: usize| {
            let slot = if tightening && self.compiled[i].tightening {
                &mut matched.tightening
            } else {
                &mut matched.ordinary
            };
            slot.get_or_insert(i);
            matched.ordinary.is_some() && (!tightening || matched.tightening.is_some())
        };
        match self.index.candidates(&action) {
            Candidates::Matching(list) => {
                for &i in list.iter().rev() {
                    if resource_matches(&i) && visit(i) {
                        break;
                    }
                }
            }
            Candidates::Unchecked(list) => {
                for &i in list.iter().rev() {
                    if self.compiled[i].action.matches_normalised(&action)
                        && resource_matches(&i)
                        && visit(i)
                    {
                        break;
                    }
                }
            }
        }
        matched
    }

    /// The effect of the tightening rules alone for `action` on `resource`: `None` when none
    /// matches or the last match allows (no opinion).
    pub(crate) fn tightening_effect(&self, matched: Matched) -> Option<Effect> {
        matched
            .tightening
            .map(|i| self.rules[i].effect)
            .filter(|effect| *effect != Effect::Allow)
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
    /// decision about it (tightening allows, which decide nothing, left out).
    pub fn relevant(&self, action: &str) -> Vec<Rule> {
        self.matching_action(action)
            .into_iter()
            .filter(|&i| !(self.compiled[i].tightening && self.rules[i].effect == Effect::Allow))
            .map(|i| self.rules[i].clone())
            .collect()
    }

    /// True when every use of `action` is denied: the last rule whose action pattern matches
    /// `action` (whatever its resource) has the resource `*` and the effect deny (RG7), among
    /// the ordinary rules or among the tightening ones.
    pub fn wholly_disabled(&self, action: &str) -> bool {
        let matching = self.matching_action(action);
        [false, true].into_iter().any(|tightening| {
            matching
                .iter()
                .rev()
                .find(|&&i| self.compiled[i].tightening == tightening)
                .is_some_and(|&index| {
                    let rule = &self.rules[index];
                    rule.resource == "*" && rule.effect == Effect::Deny
                })
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
