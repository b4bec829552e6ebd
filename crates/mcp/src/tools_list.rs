//! tackle's tool definitions in MCP form: name, title, description, `inputSchema`,
//! `outputSchema` (for tools with structured output) and behaviour hints.
//!
//! The one place this crate maps a [`Definition`] to an MCP tool.

use std::sync::Arc;

use rmcp::model::Tool;
use serde_json::{Map, Value, json};
use tackle_tool_core::Definition;

/// A human-readable title for a builtin; other tools are titled by their name.
pub fn title(name: &str) -> Option<&'static str> {
    Some(match name {
        "bash" => "Run a shell command",
        "read" => "Read a file",
        "edit" => "Edit a file",
        "write" => "Write a file",
        "apply_patch" => "Apply a patch",
        "glob" => "Find files by pattern",
        "grep" => "Search file contents",
        "question" => "Ask the user",
        "skill" => "Load a skill",
        "todowrite" => "Update the todo list",
        "webfetch" => "Fetch a URL",
        "websearch" => "Search the web",
        "job_output" => "Read a background job's output",
        "job_kill" => "Stop a background job",
        "job_list" => "List background jobs",
        _ => return None,
    })
}

/// The behaviour hints of a builtin: read-only, destructive, open-world.
pub fn annotations(name: &str) -> Value {
    let mut hints = Map::new();
    if let Some(title) = title(name) {
        hints.insert("title".into(), title.into());
    }
    match name {
        "read" | "glob" | "grep" | "skill" | "job_output" | "job_list" => {
            hints.insert("readOnlyHint".into(), true.into());
            hints.insert("openWorldHint".into(), false.into());
        }
        "write" | "edit" | "apply_patch" | "bash" | "job_kill" => {
            hints.insert("readOnlyHint".into(), false.into());
            hints.insert("destructiveHint".into(), true.into());
        }
        "webfetch" | "websearch" => {
            hints.insert("readOnlyHint".into(), true.into());
            hints.insert("openWorldHint".into(), true.into());
        }
        _ => {}
    }
    Value::Object(hints)
}

/// True when the tool's structured output is an object, which MCP can carry as
/// `structuredContent` (a text tool's output is a string: its text is the result).
pub fn has_structured_output(definition: &Definition) -> bool {
    definition.output_schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The advertised output schema: the tool's own, or the form bounding gives a structured value
/// too large to keep inline (`{truncated, bytes, reference | unsaved, hint?}`), so a client
/// that validates `structuredContent` accepts both.
fn output_schema(definition: &Definition) -> Value {
    json!({
        "type": "object",
        "anyOf": [
            definition.output_schema,
            {
                "type": "object",
                "properties": {
                    "truncated": { "const": true },
                    "bytes": { "type": "integer", "minimum": 0 },
                    "reference": { "type": "string" },
                    "unsaved": { "type": "string" },
                    "hint": { "type": "string" },
                },
                "required": ["truncated", "bytes"],
            },
        ],
    })
}

/// The MCP form of `definition`.
pub fn tool(definition: &Definition) -> Tool {
    let mut value = json!({
        "name": definition.name,
        "description": definition.description,
        "inputSchema": definition.input_schema,
        "annotations": annotations(&definition.name),
    });
    if let Some(title) = title(&definition.name) {
        value["title"] = title.into();
    }
    if has_structured_output(definition) {
        value["outputSchema"] = output_schema(definition);
    }
    let input_schema = match definition.input_schema.as_object() {
        Some(schema) => schema.clone(),
        None => Map::from_iter([("type".to_owned(), Value::from("object"))]),
    };
    match serde_json::from_value::<Tool>(value) {
        Ok(tool) => tool,
        // Every field above has the type MCP gives it; keep the tool listed regardless.
        Err(err) => {
            tracing::error!(%err, name = %definition.name, "tool definition not in MCP form");
            Tool::new(
                definition.name.clone(),
                definition.description.clone(),
                Arc::new(input_schema),
            )
        }
    }
}

/// The MCP forms of `definitions`, in catalog order.
pub fn tools(definitions: &[Arc<Definition>]) -> Vec<Tool> {
    definitions.iter().map(|d| tool(d)).collect()
}
