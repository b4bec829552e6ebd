//! A settlement as the pieces every provider's result is made of.

use tackle_registry::Settlement;
use tackle_tool_core::{OutputContent, ResultValue};

/// What a settled call gives a provider: its parts in order and whether it failed.
#[derive(Debug)]
pub(crate) struct Parts {
    pub(crate) error: bool,
    pub(crate) items: Vec<Part>,
}

#[derive(Debug)]
pub(crate) enum Part {
    Text(String),
    /// A file the tool attached (an image, a PDF), base64 as the provider takes it.
    Media {
        mime: String,
        base64: String,
        name: Option<String>,
    },
}

/// The kind of attachment a provider may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MediaKind {
    Image,
    Pdf,
    Other,
}

pub(crate) fn media_kind(mime: &str) -> MediaKind {
    match mime {
        "image/png" | "image/jpeg" | "image/gif" | "image/webp" => MediaKind::Image,
        "application/pdf" => MediaKind::Pdf,
        _ => MediaKind::Other,
    }
}

impl Parts {
    pub(crate) fn of(settlement: &Settlement) -> Self {
        let (error, items) = match settlement.result() {
            ResultValue::Error(message) => (true, vec![Part::Text(message)]),
            ResultValue::Text(text) => (false, vec![Part::Text(text)]),
            ResultValue::Json(value) => (false, vec![Part::Text(compact(&value))]),
            ResultValue::Content(parts) => (false, parts.into_iter().map(part).collect()),
        };
        Self { error, items }
    }

    /// The text parts joined by blank lines, with a line naming each attachment where it was.
    pub(crate) fn text_with_placeholders(&self) -> String {
        let texts: Vec<String> = self
            .items
            .iter()
            .map(|item| match item {
                Part::Text(text) => text.clone(),
                Part::Media { mime, name, .. } => placeholder(mime, name.as_deref()),
            })
            .collect();
        texts.join("\n\n")
    }

    pub(crate) fn has_media(&self) -> bool {
        self.items
            .iter()
            .any(|item| matches!(item, Part::Media { .. }))
    }
}

/// The line that stands where an attachment was taken out of a result.
pub(crate) fn placeholder(mime: &str, name: Option<&str>) -> String {
    match name {
        Some(name) => format!("[{mime} attachment {name}: sent in the next user message]"),
        None => format!("[{mime} attachment: sent in the next user message]"),
    }
}

/// The note that stands for an attachment a provider takes in no form.
pub(crate) fn unsupported(mime: &str, name: Option<&str>) -> String {
    let name = name.map(|n| format!(" {n}")).unwrap_or_default();
    format!("[{mime} attachment{name} left out: this provider takes no such file]")
}

fn part(content: OutputContent) -> Part {
    match content {
        OutputContent::Text { text } => Part::Text(text),
        OutputContent::File { uri, mime, name } => match base64_of(&uri) {
            Some(base64) => Part::Media {
                base64: base64.to_owned(),
                mime,
                name,
            },
            // tool-core writes every file as a data URI; anything else is shown as it is.
            None => Part::Text(uri),
        },
    }
}

/// The base64 payload of a `data:<mime>;base64,<data>` URI.
fn base64_of(uri: &str) -> Option<&str> {
    let rest = uri.strip_prefix("data:")?;
    let (header, data) = rest.split_once(',')?;
    header.ends_with(";base64").then_some(data)
}

/// A JSON value as compact text, as a model reads a structured result.
pub(crate) fn compact(value: &serde_json::Value) -> String {
    // Serializing a `Value` cannot fail: its keys are strings.
    serde_json::to_string(value).unwrap_or_default()
}

/// The data URI of an attachment.
pub(crate) fn data_uri(mime: &str, base64: &str) -> String {
    format!("data:{mime};base64,{base64}")
}
