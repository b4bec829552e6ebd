//! MCP (Model Context Protocol): tools as `tools/list` lists them and `tools/call` results.
//!
//! A tool's annotations follow its declared class: read-only tools say `readOnlyHint`, the web
//! tools also `openWorldHint`, and every other tool `destructiveHint` (MCP's own default for a
//! tool that is not read-only, stated so a client need not know the default). An output schema
//! is given only where the structured output is an object, which MCP requires of it.

use serde_json::{Map, Value, json};
use tackle_registry::Settlement;
use tackle_tool_core::{Definition, ToolClass};

use crate::parts::{MediaKind, Part, Parts, media_kind};

/// A tool (`{"name", "description", "inputSchema", "outputSchema"?, "annotations"}`).
pub fn tool(definition: &Definition, class: ToolClass) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), Value::from(definition.name.as_str()));
    tool.insert(
        "description".into(),
        Value::from(definition.description.as_str()),
    );
    tool.insert("inputSchema".into(), definition.input_schema.clone());
    if is_object(&definition.output_schema) {
        tool.insert("outputSchema".into(), definition.output_schema.clone());
    }
    tool.insert("annotations".into(), annotations(class));
    Value::Object(tool)
}

fn is_object(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

fn annotations(class: ToolClass) -> Value {
    let read_only = class.is_read_only();
    let mut hints = json!({
        "readOnlyHint": read_only,
        "openWorldHint": class == ToolClass::OpenWorld,
    });
    if !read_only {
        hints["destructiveHint"] = Value::Bool(true);
    }
    hints
}

/// The `tools/call` result of one settled call: its content (text, images; other files as
/// embedded resources), `isError`, and the structured value as `structuredContent` when it is a
/// whole object (a value too large to keep whole was saved, and only the text says where).
pub fn call_result(settlement: &Settlement) -> Value {
    let parts = Parts::of(settlement);
    let content: Vec<Value> = parts
        .items
        .iter()
        .map(|item| match item {
            Part::Text(text) => json!({"type": "text", "text": text}),
            Part::Media { mime, base64, name } => match media_kind(mime) {
                MediaKind::Image => json!({"type": "image", "data": base64, "mimeType": mime}),
                MediaKind::Pdf | MediaKind::Other => json!({
                    "type": "resource",
                    "resource": {
                        "uri": format!("file:///{}", name.as_deref().unwrap_or("attachment")),
                        "mimeType": mime,
                        "blob": base64,
                    },
                }),
            },
        })
        .collect();
    let mut result = json!({"content": content, "isError": parts.error});
    if let Some(output) = settlement.output()
        && output.structured.is_object()
        && settlement.references().is_empty()
    {
        result["structuredContent"] = output.structured.clone();
    }
    result
}
