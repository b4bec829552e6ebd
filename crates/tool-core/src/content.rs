//! What a tool produces for the model and the host.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A part of a tool's model projection, as an author returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Text the model reads.
    Text(String),
    /// A file (an image, a PDF, ...) given to the model inline.
    File {
        /// Its media type, e.g. `image/png`.
        mime: String,
        /// Its raw bytes.
        data: Vec<u8>,
        /// An optional file name.
        name: Option<String>,
    },
}

impl Content {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(text.into())
    }

    pub(crate) fn into_output(self) -> OutputContent {
        match self {
            Self::Text(text) => OutputContent::Text { text },
            Self::File { mime, data, name } => {
                let mut uri = String::with_capacity(mime.len() + 13 + data.len().div_ceil(3) * 4);
                uri.push_str("data:");
                uri.push_str(&mime);
                uri.push_str(";base64,");
                base64::engine::general_purpose::STANDARD.encode_string(&data, &mut uri);
                OutputContent::File { uri, mime, name }
            }
        }
    }
}

/// A part of a settled tool output: text, or a file carried as a `data:` URI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum OutputContent {
    /// Text the model reads.
    Text {
        /// The text.
        text: String,
    },
    /// A file, as `data:<mime>;base64,<data>`.
    File {
        /// The data URI.
        uri: String,
        /// Its media type.
        mime: String,
        /// An optional file name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
}

impl OutputContent {
    /// The text of a text part.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
            Self::File { .. } => None,
        }
    }
}

/// The output of one settled tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// The structured value (the output, or its structured projection).
    pub structured: Value,
    /// What the model reads.
    pub content: Vec<OutputContent>,
}

impl ToolOutput {
    /// An output of `structured` and `content`.
    pub fn new(structured: Value, content: Vec<OutputContent>) -> Self {
        Self {
            structured,
            content,
        }
    }

    /// How a result is presented to a provider (reference L5): `json` when there is no content,
    /// `text` for exactly one text part, `content` otherwise.
    pub fn to_result_value(&self) -> ResultValue {
        match self.content.as_slice() {
            [] => ResultValue::Json(self.structured.clone()),
            [OutputContent::Text { text }] => ResultValue::Text(text.clone()),
            parts => ResultValue::Content(parts.to_vec()),
        }
    }
}

impl ToolOutput {
    /// Like [`to_result_value`](Self::to_result_value), consuming the output (no copy).
    pub fn into_result_value(self) -> ResultValue {
        let mut content = self.content;
        match content.as_slice() {
            [] => ResultValue::Json(self.structured),
            [OutputContent::Text { .. }] => match content.pop() {
                Some(OutputContent::Text { text }) => ResultValue::Text(text),
                _ => ResultValue::Content(content),
            },
            _ => ResultValue::Content(content),
        }
    }
}

/// A tool result as a provider receives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "lowercase")]
pub enum ResultValue {
    /// A structured value.
    Json(Value),
    /// One text.
    Text(String),
    /// An error the model sees.
    Error(String),
    /// Several parts, or media.
    Content(Vec<OutputContent>),
}

impl ResultValue {
    /// True for [`ResultValue::Error`].
    pub fn is_error(&self) -> bool {
        matches!(self, Self::Error(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn output(content: Vec<OutputContent>) -> ToolOutput {
        ToolOutput::new(json!({"n": 1}), content)
    }

    #[test]
    fn result_value_projection() {
        assert_eq!(
            output(vec![]).to_result_value(),
            ResultValue::Json(json!({"n": 1}))
        );
        let text = OutputContent::Text { text: "hi".into() };
        assert_eq!(
            output(vec![text.clone()]).to_result_value(),
            ResultValue::Text("hi".into())
        );
        let two = vec![text.clone(), text];
        assert_eq!(
            output(two.clone()).to_result_value(),
            ResultValue::Content(two)
        );
    }

    #[test]
    fn file_becomes_data_uri() {
        let part = Content::File {
            mime: "image/png".into(),
            data: b"\x89PNG".to_vec(),
            name: None,
        }
        .into_output();
        assert_eq!(
            serde_json::to_value(&part).unwrap(),
            json!({"type": "file", "uri": "data:image/png;base64,iVBORw==", "mime": "image/png"})
        );
    }

    #[test]
    fn result_value_serializes_tagged() {
        let v = serde_json::to_value(ResultValue::Error("Unknown tool: x".into())).unwrap();
        assert_eq!(v, json!({"type": "error", "value": "Unknown tool: x"}));
    }
}
