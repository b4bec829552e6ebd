//! Permission rules for tackle: wildcard matching, evaluation, asking, saved approvals.
//!
//! A [`Rule`] pairs an action pattern and a resource pattern with an [`Effect`]; a
//! [`Ruleset`] is ordered and the **last** matching rule wins, no match meaning ask; rules
//! added with [`Ruleset::restrict`] (an untrusted project's) can only make a decision stricter.
//! The
//! [`Permission`] service asserts a [`Request`]: a configured deny of any resource blocks it
//! (saved approvals never override a configured deny); all resources allowed by the
//! configured rules plus the [`SavedApprovals`] pass; anything else waits for an [`Asker`] or a
//! host [`reply`](Permission::reply). [`Permission::explain`] says which rule decided and
//! where it came from. [`parse_config`] reads the opencode/Kilo `permission` object.
//!
//! Agents ([`Agents`], [`Permission::with_agents`]): a request carries the agent of its call
//! ([`Request::agent`]); the agent's own rules apply after the global ones, and a subagent's
//! request must also pass as its parent's would (the stricter decision wins). Sessions: a
//! [`Reply::Session`] approval lasts until [`Permission::delete_session`], which also ends the
//! session's pending requests. A host with a user interface follows the requests through
//! [`Permission::subscribe`] ([`PermissionEvent`]) and answers with
//! [`Permission::reply`], beside or instead of a blocking [`Asker`].
//!
//! Every decision of [`Permission::assert`] is a `tracing` event, and a host that keeps its own
//! record (an audit log) gives the service a [`DecisionObserver`] ([`Permission::with_observer`]).
//!
//! Invariants:
//! - Matching ([`matches()`], [`Pattern`]) never backtracks: its cost is linear in the input for
//!   a given pattern, whatever the pattern.
//! - A configured deny always wins; an "always" saves only allows.
//! - An `edit` of a [protected](Protected) resource (configuration files, `.git/`, the user's
//!   configuration) is always asked: no allow rule or saved approval pre-approves it.
//! - Every pending request ends exactly once: answered, covered by an "always" or "this
//!   session" approval, declined by a reject in its session or by [`Permission::close`], ended
//!   by [`Permission::delete_session`], or withdrawn when its `assert` future is dropped; each
//!   end is one event for subscribers.
//! - A subagent is never allowed what its parent is denied or asked.
//! - This crate depends on `tackle-tool-core` only (it implements its `Visibility` for catalog
//!   filtering) and touches no file but the saved-approvals file.

#![deny(missing_docs)]

mod agent;
mod config;
mod decide;
mod decision;
mod error;
mod events;
mod explain;
mod index;
mod jsonc;
mod protect;
mod request;
mod rule;
mod saved;
mod service;
mod wildcard;

pub use agent::Agents;
pub use config::{UnknownKeys, parse_agent_permission, parse_config, parse_permission};
pub use decision::{Decision, DecisionObserver, Verdict};
pub use error::PermissionError;
pub use events::{EVENT_CAPACITY, PermissionEvent};
pub use explain::{Decider, Explanation};
pub use jsonc::to_json as jsonc_to_json;
pub use protect::{Protected, Protection};
pub use request::{AnswerAll, Asker, PendingRequest, Reply, ReplyLater, Request, Source};
pub use rule::{Effect, Rule, RuleOrigin, Ruleset};
pub use saved::SavedApprovals;
pub use service::{AgentVisibility, Permission, PermissionBuilder};
pub use wildcard::{Pattern, matches};
