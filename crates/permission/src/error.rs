//! The one error type of the crate, and how tools see it.

use std::path::PathBuf;

use serde_json::{Map, json};
use tackle_tool_core::{Defect, Halt, ToolError, ToolFailure};

use crate::rule::{Effect, Rule};
use crate::wildcard::matches;

/// Everything a permission check, reply, configuration or saved-approvals file can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PermissionError {
    /// A configured rule denies at least one resource. `rules` are the configured rules whose
    /// action pattern matches `action` (the relevant rules), `resources` the denied resources.
    #[error("{}", blocked_message(action, resources, rules))]
    Blocked {
        /// The requested action.
        action: String,
        /// The resources a configured rule denies.
        resources: Vec<String>,
        /// The configured rules relevant to `action`, in order.
        rules: Vec<Rule>,
    },
    /// The user rejected the request without feedback (or the service closed): the host's turn
    /// stops.
    #[error("the user declined the permission request")]
    Declined,
    /// The user rejected the request with feedback for the model.
    #[error(
        "The user rejected permission to use this specific tool call with the following feedback: {feedback}"
    )]
    Corrected {
        /// What the user said.
        feedback: String,
    },
    /// The request's session was deleted while it waited: the call stops
    /// ([`Halt::Cancelled`] for tools).
    #[error("the session {session_id:?} was deleted while this permission request was pending")]
    SessionDeleted {
        /// The deleted session.
        session_id: String,
    },
    /// An agent would be its own ancestor through [`Agents::subagent_of`](crate::Agents::subagent_of).
    #[error(
        "agent {agent:?} cannot be a subagent of {parent:?}: {parent:?} is {agent:?} or one of its subagents"
    )]
    AgentCycle {
        /// The agent declared a subagent.
        agent: String,
        /// The parent it was given.
        parent: String,
    },
    /// No pending request has this id (already answered, or never asked).
    #[error("no pending permission request has the id {request_id:?}")]
    NotFound {
        /// The id that was replied to.
        request_id: String,
    },
    /// A request that cannot be evaluated: an empty action, no resources, an empty resource or
    /// save pattern, a NUL character. A bug in the calling tool.
    #[error("invalid permission request: {reason}")]
    InvalidRequest {
        /// What is wrong.
        reason: String,
    },
    /// A configuration file is not valid; `path` is the key path of the bad entry (empty for
    /// the whole file).
    #[error("{}", config_message(file, path, message))]
    Config {
        /// The file as the host named it.
        file: String,
        /// The key path, e.g. `permission.bash["git *"]`.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The saved-approvals file could not be read or written. Nothing in memory or on disk is
    /// changed by a failed write.
    #[error("saved approvals {}: {message}", path.display())]
    Saved {
        /// The approvals file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

fn config_message(file: &str, path: &str, message: &str) -> String {
    if path.is_empty() {
        format!("{file}: {message}")
    } else {
        format!("{file}: {path}: {message}")
    }
}

fn quoted_list(items: &[String]) -> String {
    items
        .iter()
        .map(|item| format!("{item:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rule that decided a denial of `resources`: the last relevant deny matching the first
/// (in a plain ruleset the last match of a denied resource is a deny; with tightening rules it
/// may be followed by one that does not decide).
fn deciding_rule<'a>(resources: &[String], rules: &'a [Rule]) -> Option<&'a Rule> {
    let resource = resources.first()?;
    rules
        .iter()
        .rev()
        .find(|rule| rule.effect == Effect::Deny && matches(resource, &rule.resource))
}

fn blocked_message(action: &str, resources: &[String], rules: &[Rule]) -> String {
    let what = if resources.len() == 1 {
        format!("{action} {}", quoted_list(resources))
    } else {
        format!("{action} on {}", quoted_list(resources))
    };
    let why = match deciding_rule(resources, rules) {
        Some(rule) => format!(
            "the configured rule {{action: {:?}, resource: {:?}, effect: \"deny\"}}",
            rule.action, rule.resource
        ),
        None => "the permission configuration".to_owned(),
    };
    format!(
        "Permission denied: {what} is blocked by {why}. Do not retry it; use another approach \
         or ask the user to change the rule."
    )
}

impl From<PermissionError> for ToolError {
    fn from(err: PermissionError) -> Self {
        match err {
            PermissionError::Blocked {
                ref action,
                ref resources,
                ref rules,
            } => {
                let mut metadata = Map::new();
                metadata.insert(
                    "permission".to_owned(),
                    json!({
                        "action": action,
                        "resources": resources,
                        "rule": deciding_rule(resources, rules),
                    }),
                );
                ToolError::Failure(ToolFailure::new(err.to_string()).with_metadata(metadata))
            }
            PermissionError::Corrected { .. } => ToolError::failure(err.to_string()),
            PermissionError::Declined => ToolError::Halt(Halt::Declined),
            PermissionError::SessionDeleted { .. } => ToolError::Halt(Halt::Cancelled),
            other => ToolError::Defect(Defect::with_source("permission check failed", other)),
        }
    }
}

/// A JSON value's kind, for error messages (the one wording, tool-core's).
pub(crate) use tackle_tool_core::value_kind as kind;
