//! Gemini: function declarations, `functionResponse` parts and `functionCall`s.
//!
//! A `functionResponse` carries `{"output": ...}` or, for an error, `{"error": ...}`. Attachments
//! go where the model can take them: after the turn's function responses as `inlineData` parts
//! of the same user turn (every Gemini model reads those), or, for models that read multimodal
//! function responses, inside the `functionResponse` itself ([`GeminiMedia::Inline`]).

use serde_json::{Map, Value, json};
use tackle_registry::Settlement;
use tackle_tool_core::{Call, Definition, ResultValue};

use crate::error::{FormatError, malformed};
use crate::parts::{MediaKind, Part, Parts, media_kind, placeholder, unsupported};
use crate::schema::gemini_schema;

/// The id prefix of a call Gemini sent without an id: its response names no id either.
const UNNAMED: &str = "tackle-gemini-";

/// Where a result's attachments go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum GeminiMedia {
    /// After the turn's function responses, as `inlineData` parts of the same user turn.
    #[default]
    FollowUp,
    /// Inside each `functionResponse` (`parts`), for models that read them there.
    Inline,
}

/// A function declaration (`{"name", "description", "parameters"}`), its schema in Gemini's
/// subset; a tool without inputs declares no parameters.
pub fn function_declaration(definition: &Definition) -> Value {
    let mut declaration = Map::new();
    declaration.insert("name".into(), Value::from(definition.name.as_str()));
    declaration.insert(
        "description".into(),
        Value::from(definition.description.as_str()),
    );
    let has_inputs = definition
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty());
    if has_inputs {
        declaration.insert("parameters".into(), gemini_schema(&definition.input_schema));
    }
    Value::Object(declaration)
}

/// The user turn that answers a turn's calls: one `functionResponse` part per call, in order,
/// and the attachments where `media` puts them.
pub fn function_responses(results: &[(&Call, &Settlement)], media: GeminiMedia) -> Value {
    let mut parts = Vec::with_capacity(results.len());
    let mut follow_up = Vec::new();
    for (call, settlement) in results {
        let pieces = Parts::of(settlement);
        let mut response = Map::new();
        if !call.id.is_empty() && !call.id.starts_with(UNNAMED) {
            response.insert("id".into(), Value::from(call.id.as_str()));
        }
        response.insert("name".into(), Value::from(call.name.as_str()));
        let mut inline = Vec::new();
        let mut texts = Vec::new();
        for item in &pieces.items {
            match item {
                Part::Text(text) => texts.push(text.clone()),
                Part::Media { mime, base64, name } => {
                    let data = json!({"inlineData": {"mimeType": mime, "data": base64}});
                    match (media_kind(mime), media) {
                        (MediaKind::Other, _) => texts.push(unsupported(mime, name.as_deref())),
                        (_, GeminiMedia::Inline) => inline.push(data),
                        (_, GeminiMedia::FollowUp) => {
                            texts.push(placeholder(mime, name.as_deref()));
                            follow_up.push(data);
                        }
                    }
                }
            }
        }
        let key = if pieces.error { "error" } else { "output" };
        let value = match settlement.output().map(|_| settlement.result()) {
            // A structured result is sent as the value it is, not as text.
            Some(ResultValue::Json(value)) => value,
            _ => Value::String(texts.join("\n\n")),
        };
        response.insert("response".into(), json!({ key: value }));
        if !inline.is_empty() {
            response.insert("parts".into(), Value::Array(inline));
        }
        parts.push(json!({"functionResponse": response}));
    }
    parts.extend(follow_up);
    json!({"role": "user", "parts": parts})
}

/// The function calls of a `generateContent` response (its first candidate) or of one
/// `Content`, in order. A call without an id (older models send none) is given one of its own,
/// `tackle-gemini-<n>` after its position, which its response leaves out again.
pub fn calls(response: &Value) -> Result<Vec<Call>, FormatError> {
    const WHO: &str = "Gemini";
    let content = response
        .pointer("/candidates/0/content")
        .unwrap_or(response);
    let parts = content
        .get("parts")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(WHO, "no `parts` list"))?;
    parts
        .iter()
        .filter_map(|part| part.get("functionCall"))
        .enumerate()
        .map(|(n, call)| {
            let name = call
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| malformed(WHO, "a functionCall without `name`"))?;
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("{UNNAMED}{n}"), str::to_owned);
            let args = call.get("args").cloned().unwrap_or_else(|| json!({}));
            Ok(Call::new(id, name, args))
        })
        .collect()
}
