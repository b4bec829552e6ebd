//! The error discipline of tool execution, as types.

use std::error::Error as StdError;

use serde_json::{Map, Value};

/// Everything a tool's execution can end with besides success.
///
/// The three variants are deliberately distinct, and there is no blanket conversion from
/// arbitrary errors: a leaf maps its *expected* errors to [`ToolFailure`] explicitly, so a `?`
/// can never turn a halt or a defect into something the model sees.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// An expected failure; the model sees its message as an error result.
    #[error(transparent)]
    Failure(#[from] ToolFailure),
    /// The host's turn stops: the user declined or dismissed, or the call was cancelled.
    #[error(transparent)]
    Halt(#[from] Halt),
    /// A bug or a broken environment; it propagates to the host unchanged.
    #[error(transparent)]
    Defect(#[from] Defect),
}

impl ToolError {
    /// Shorthand for a [`ToolFailure`] with `message`.
    pub fn failure(message: impl Into<String>) -> Self {
        Self::Failure(ToolFailure::new(message))
    }

    /// Shorthand for a [`Defect`] with `message`.
    pub fn defect(message: impl Into<String>) -> Self {
        Self::Defect(Defect::new(message))
    }
}

/// An expected failure that the model sees as an error result and can react to.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ToolFailure {
    /// The text the model reads.
    pub message: String,
    /// Optional machine-readable facts for the host (never shown to the model by settle).
    pub metadata: Option<Map<String, Value>>,
}

impl ToolFailure {
    /// A failure with `message` and no metadata.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            metadata: None,
        }
    }

    /// The same failure carrying `metadata`.
    #[must_use]
    pub fn with_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.metadata = Some(metadata);
        self
    }
}

/// The host's turn stops; no model-visible result is produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Halt {
    /// The user rejected a permission request without feedback.
    #[error("the user declined the tool call")]
    Declined,
    /// The user dismissed a question.
    #[error("the user dismissed the question")]
    Dismissed,
    /// The host cancelled the call.
    #[error("the tool call was cancelled")]
    Cancelled,
}

/// A bug or a broken environment; it propagates to the host unchanged.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Defect {
    message: String,
    #[source]
    source: Option<Box<dyn StdError + Send + Sync>>,
}

impl Defect {
    /// A defect described by `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            source: None,
        }
    }

    /// A defect described by `message`, caused by `source`.
    pub fn with_source(
        message: impl Into<String>,
        source: impl StdError + Send + Sync + 'static,
    ) -> Self {
        Self {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }

    /// The defect's own message, without its source chain.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// A tool could not be registered under a name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RegistrationError {
    /// The name that was refused.
    pub name: String,
    /// Why, as shown to the registering code (`Invalid tool name: <name>`).
    pub message: String,
}

impl RegistrationError {
    pub(crate) fn invalid_name(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            message: format!("Invalid tool name: {name}"),
        }
    }
}

/// A JSON Schema given to [`Tool::dynamic`](crate::Tool::dynamic) is not a valid schema.
#[cfg(feature = "dynamic")]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {which} schema: {message}")]
pub struct InvalidSchema {
    /// `input` or `output`.
    pub which: &'static str,
    /// The validator's complaint.
    pub message: String,
}
