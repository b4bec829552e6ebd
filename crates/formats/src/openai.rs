//! OpenAI: Chat Completions and Responses function tools, their results and their calls.
//!
//! Chat Completions takes only text in a `tool` message, so attachments (images, PDFs) follow
//! all the turn's tool messages in one `user` message (a user message between two tool
//! messages would fail the request), and the tool message says where each one went. Responses
//! takes images and files inside `function_call_output`, so they stay with their result. Neither
//! has an error flag: an error result is its message.

use serde_json::{Map, Value, json};
use tackle_tool_core::{Call, Definition};

use crate::error::{FormatError, malformed};
use crate::parts::{MediaKind, Part, Parts, data_uri, media_kind, unsupported};
use crate::schema::{NotStrict, strict_schema};
use tackle_registry::Settlement;

/// A function tool for OpenAI, strict when its schema allows it.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiTool {
    /// The tool as the API takes it.
    pub tool: Value,
    /// Why the tool is not strict, when strict mode was asked for and its schema needs what
    /// strict mode lacks.
    pub not_strict: Option<NotStrict>,
}

/// A Chat Completions function tool (`{"type": "function", "function": {...}}`), not strict.
pub fn chat_tool(definition: &Definition) -> Value {
    json!({"type": "function", "function": function(definition, None)})
}

/// A Chat Completions function tool in strict mode (`"strict": true`, the strict schema)
/// where its schema can be made strict, else as [`chat_tool`] and why not.
pub fn chat_tool_strict(definition: &Definition) -> OpenAiTool {
    match strict_schema(&definition.input_schema) {
        Ok(schema) => OpenAiTool {
            tool: json!({"type": "function", "function": function(definition, Some(schema))}),
            not_strict: None,
        },
        Err(why) => OpenAiTool {
            tool: chat_tool(definition),
            not_strict: Some(why),
        },
    }
}

fn function(definition: &Definition, strict: Option<Value>) -> Value {
    let mut function = Map::new();
    function.insert("name".into(), Value::from(definition.name.as_str()));
    function.insert(
        "description".into(),
        Value::from(definition.description.as_str()),
    );
    match strict {
        Some(schema) => {
            function.insert("parameters".into(), schema);
            function.insert("strict".into(), Value::Bool(true));
        }
        None => {
            function.insert("parameters".into(), definition.input_schema.clone());
        }
    }
    Value::Object(function)
}

/// A Responses function tool (`{"type": "function", "name": ..., "strict": ...}`): strict where
/// its schema can be made strict (the API's own default), else `"strict": false` and why.
pub fn responses_tool(definition: &Definition) -> OpenAiTool {
    let (parameters, strict, not_strict) = match strict_schema(&definition.input_schema) {
        Ok(schema) => (schema, true, None),
        Err(why) => (definition.input_schema.clone(), false, Some(why)),
    };
    OpenAiTool {
        tool: json!({
            "type": "function",
            "name": definition.name,
            "description": definition.description,
            "parameters": parameters,
            "strict": strict,
        }),
        not_strict,
    }
}

/// The Chat Completions messages that answer a turn's calls: one `tool` message per call, in
/// order, then one `user` message with their attachments when any has one.
pub fn chat_results(results: &[(&Call, &Settlement)]) -> Vec<Value> {
    let mut messages = Vec::with_capacity(results.len() + 1);
    let mut attachments = Vec::new();
    for (call, settlement) in results {
        let parts = Parts::of(settlement);
        messages.push(json!({
            "role": "tool",
            "tool_call_id": call.id,
            "content": parts.text_with_placeholders(),
        }));
        if parts.has_media() {
            attachments.push(json!({
                "type": "text",
                "text": format!("Attachments of the {} call {}:", call.name, call.id),
            }));
        }
        for item in parts.items {
            if let Part::Media { mime, base64, name } = item {
                attachments.push(chat_attachment(&mime, &base64, name.as_deref()));
            }
        }
    }
    if !attachments.is_empty() {
        messages.push(json!({"role": "user", "content": attachments}));
    }
    messages
}

fn chat_attachment(mime: &str, base64: &str, name: Option<&str>) -> Value {
    match media_kind(mime) {
        MediaKind::Image => {
            json!({"type": "image_url", "image_url": {"url": data_uri(mime, base64)}})
        }
        MediaKind::Pdf => json!({
            "type": "file",
            "file": {"file_data": data_uri(mime, base64), "filename": name.unwrap_or("attachment.pdf")},
        }),
        MediaKind::Other => json!({"type": "text", "text": unsupported(mime, name)}),
    }
}

/// The Responses input items that answer a turn's calls: one `function_call_output` per call,
/// in order, with its attachments inline.
pub fn responses_results(results: &[(&Call, &Settlement)]) -> Vec<Value> {
    results
        .iter()
        .map(|(call, settlement)| {
            json!({
                "type": "function_call_output",
                "call_id": call.id,
                "output": responses_output(&Parts::of(settlement)),
            })
        })
        .collect()
}

fn responses_output(parts: &Parts) -> Value {
    if !parts.has_media() {
        return Value::String(parts.text_with_placeholders());
    }
    let items = parts.items.iter().map(|item| match item {
        Part::Text(text) => json!({"type": "input_text", "text": text}),
        Part::Media { mime, base64, name } => match media_kind(mime) {
            MediaKind::Image => json!({"type": "input_image", "image_url": data_uri(mime, base64)}),
            MediaKind::Pdf => json!({
                "type": "input_file",
                "file_data": data_uri(mime, base64),
                "filename": name.as_deref().unwrap_or("attachment.pdf"),
            }),
            MediaKind::Other => {
                json!({"type": "input_text", "text": unsupported(mime, name.as_deref())})
            }
        },
    });
    Value::Array(items.collect())
}

/// The calls of a Chat Completions response (its first choice's message) or of one assistant
/// message, in order.
pub fn chat_calls(response: &Value) -> Result<Vec<Call>, FormatError> {
    const WHO: &str = "Chat Completions";
    let message = response.pointer("/choices/0/message").unwrap_or(response);
    let Some(calls) = message.get("tool_calls") else {
        return Ok(Vec::new());
    };
    let calls = calls
        .as_array()
        .ok_or_else(|| malformed(WHO, "`tool_calls` is not a list"))?;
    calls
        .iter()
        .map(|call| {
            let id =
                string(call, "/id").ok_or_else(|| malformed(WHO, "a tool call without `id`"))?;
            let name = string(call, "/function/name")
                .ok_or_else(|| malformed(WHO, "a tool call without `function.name`"))?;
            let arguments = string(call, "/function/arguments").unwrap_or_default();
            Ok(Call::new(id, name, arguments_value(arguments)))
        })
        .collect()
}

/// The calls of a Responses response (its `function_call` output items), or of a list of
/// output items, in order.
pub fn responses_calls(response: &Value) -> Result<Vec<Call>, FormatError> {
    const WHO: &str = "Responses";
    let items = response
        .get("output")
        .unwrap_or(response)
        .as_array()
        .ok_or_else(|| malformed(WHO, "no `output` list"))?;
    items
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("function_call"))
        .map(|item| {
            let id = string(item, "/call_id")
                .ok_or_else(|| malformed(WHO, "a function call without `call_id`"))?;
            let name = string(item, "/name")
                .ok_or_else(|| malformed(WHO, "a function call without `name`"))?;
            let arguments = string(item, "/arguments").unwrap_or_default();
            Ok(Call::new(id, name, arguments_value(arguments)))
        })
        .collect()
}

fn string<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// A call's `arguments` text as its input: the JSON it holds, or (when it is not JSON) the text
/// itself, which settling answers with an input error the model can fix.
fn arguments_value(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return Value::Object(Map::new());
    }
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_owned()))
}
