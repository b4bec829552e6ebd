//! The result of one settled call, and its wire shape.

use serde::Serialize;
use tackle_output_store::OutputRef;
use tackle_tool_core::{ResultValue, ToolOutput};

/// The result of one settled call.
///
/// A success keeps its bounded output once; the provider's result value is derived from it on
/// demand ([`result`](Self::result), or [`into_result`](Self::into_result) without a copy).
#[derive(Debug, Clone, PartialEq)]
pub struct Settlement {
    pub(crate) outcome: Outcome,
    pub(crate) references: Vec<OutputRef>,
    pub(crate) truncated: bool,
    pub(crate) omitted_lines: u64,
    pub(crate) omitted_bytes: u64,
    pub(crate) unsaved: Option<String>,
    pub(crate) settled_as: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// An error result the model sees (unknown, stale, or a tool failure).
    Error(String),
    /// The bounded output of a success.
    Output(ToolOutput),
}

impl Settlement {
    /// An error result the model sees, with nothing else.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            outcome: Outcome::Error(message.into()),
            references: Vec::new(),
            truncated: false,
            omitted_lines: 0,
            omitted_bytes: 0,
            unsaved: None,
            settled_as: None,
        }
    }

    /// The name of the tool that settled the call when the call spelled it in another case
    /// (`Bash` settled as `bash`); `None` when the call named it exactly.
    pub fn settled_as(&self) -> Option<&str> {
        self.settled_as.as_deref()
    }

    /// What the provider receives: json, text, content, or an error the model sees.
    pub fn result(&self) -> ResultValue {
        match &self.outcome {
            Outcome::Error(message) => ResultValue::Error(message.clone()),
            Outcome::Output(output) => output.to_result_value(),
        }
    }

    /// The result value, consuming the settlement.
    pub fn into_result(self) -> ResultValue {
        match self.outcome {
            Outcome::Error(message) => ResultValue::Error(message),
            Outcome::Output(output) => output.into_result_value(),
        }
    }

    /// The bounded output of a success; `None` for an error result.
    pub fn output(&self) -> Option<&ToolOutput> {
        match &self.outcome {
            Outcome::Error(_) => None,
            Outcome::Output(output) => Some(output),
        }
    }

    /// True for an error result.
    pub fn is_error(&self) -> bool {
        matches!(self.outcome, Outcome::Error(_))
    }

    /// Managed outputs that hold what bounding left out (text first, then a structured value).
    pub fn references(&self) -> &[OutputRef] {
        &self.references
    }

    /// True when bounding cut the output.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Lines of model text left out of the preview.
    pub fn omitted_lines(&self) -> u64 {
        self.omitted_lines
    }

    /// Bytes left out: of the model text, plus a replaced structured value's.
    pub fn omitted_bytes(&self) -> u64 {
        self.omitted_bytes
    }

    /// Why what bounding left out could not be saved (the output store's error, for the host
    /// to log), when a spill failed; the model's preview says so itself.
    pub fn unsaved(&self) -> Option<&str> {
        self.unsaved.as_deref()
    }
}

/// The wire shape: `{"result": ..., "output": ..., "references": [...], ...}`, with absent
/// parts left out (reference RG13).
impl Serialize for Settlement {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire<'a> {
            result: ResultValue,
            #[serde(skip_serializing_if = "Option::is_none")]
            output: Option<&'a ToolOutput>,
            #[serde(skip_serializing_if = "<[_]>::is_empty")]
            references: &'a [OutputRef],
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            truncated: bool,
            #[serde(skip_serializing_if = "is_zero")]
            omitted_lines: u64,
            #[serde(skip_serializing_if = "is_zero")]
            omitted_bytes: u64,
            #[serde(skip_serializing_if = "Option::is_none")]
            unsaved: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            settled_as: Option<&'a str>,
        }
        Wire {
            result: self.result(),
            output: self.output(),
            references: &self.references,
            truncated: self.truncated,
            omitted_lines: self.omitted_lines,
            omitted_bytes: self.omitted_bytes,
            unsaved: self.unsaved(),
            settled_as: self.settled_as.as_deref(),
        }
        .serialize(serializer)
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
