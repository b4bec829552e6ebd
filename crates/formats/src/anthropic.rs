//! Anthropic Messages: tools, `tool_result` blocks and `tool_use` calls.
//!
//! A `tool_result` takes text, images and PDF documents, so attachments stay with their result;
//! an error result carries `is_error`. Anthropic refuses empty text blocks, so an empty result is
//! sent as a short note instead.

use serde_json::{Value, json};
use tackle_registry::Settlement;
use tackle_tool_core::{Call, Definition};

use crate::error::{FormatError, malformed};
use crate::parts::{MediaKind, Part, Parts, media_kind, unsupported};

/// What an empty result is sent as.
const EMPTY: &str = "(no output)";

/// A tool (`{"name", "description", "input_schema"}`).
pub fn tool(definition: &Definition) -> Value {
    json!({
        "name": definition.name,
        "description": definition.description,
        "input_schema": definition.input_schema,
    })
}

/// The `user` message that answers a turn's calls: one `tool_result` block per call, in order.
pub fn tool_results(results: &[(&Call, &Settlement)]) -> Value {
    let blocks: Vec<Value> = results
        .iter()
        .map(|(call, settlement)| tool_result(call, settlement))
        .collect();
    json!({"role": "user", "content": blocks})
}

/// The `tool_result` block of one settled call.
pub fn tool_result(call: &Call, settlement: &Settlement) -> Value {
    let parts = Parts::of(settlement);
    let mut content: Vec<Value> = parts
        .items
        .iter()
        .filter_map(|item| match item {
            Part::Text(text) if text.is_empty() => None,
            Part::Text(text) => Some(json!({"type": "text", "text": text})),
            Part::Media { mime, base64, name } => Some(match media_kind(mime) {
                MediaKind::Image => json!({
                    "type": "image",
                    "source": {"type": "base64", "media_type": mime, "data": base64},
                }),
                MediaKind::Pdf => json!({
                    "type": "document",
                    "source": {"type": "base64", "media_type": mime, "data": base64},
                }),
                MediaKind::Other => {
                    json!({"type": "text", "text": unsupported(mime, name.as_deref())})
                }
            }),
        })
        .collect();
    if content.is_empty() {
        content.push(json!({"type": "text", "text": EMPTY}));
    }
    let mut block = json!({
        "type": "tool_result",
        "tool_use_id": call.id,
        "content": content,
    });
    if parts.error {
        block["is_error"] = Value::Bool(true);
    }
    block
}

/// The `tool_use` calls of a Messages response (an assistant message), in order.
pub fn calls(message: &Value) -> Result<Vec<Call>, FormatError> {
    const WHO: &str = "Anthropic Messages";
    let blocks = message
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(WHO, "no `content` list"))?;
    blocks
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|block| {
            let id = block
                .get("id")
                .and_then(Value::as_str)
                .ok_or_else(|| malformed(WHO, "a tool_use block without `id`"))?;
            let name = block
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| malformed(WHO, "a tool_use block without `name`"))?;
            let input = block.get("input").cloned().unwrap_or(Value::Null);
            Ok(Call::new(id, name, input))
        })
        .collect()
}
