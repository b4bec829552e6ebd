//! MCP (Model Context Protocol): tools as `tools/list` lists them and `tools/call` results.
//!
//! The one mapping of a definition and a settlement to MCP: `tackle serve` sends exactly these
//! values, so what `tackle tools --format mcp` shows is what an MCP client gets.
//!
//! A tool's annotations follow its declared class: read-only tools say `readOnlyHint`, the web
//! tools also `openWorldHint`, and every other tool `destructiveHint` (MCP's own default for a
//! tool that is not read-only, stated so a client need not know the default); builtins carry a
//! human-readable title. An output schema is given only where the structured output is an
//! object, which MCP requires of it, and it also admits the form bounding gives a value too large
//! to keep inline, so a client that validates `structuredContent` accepts every result.

use serde_json::{Map, Value, json};
use tackle_registry::Settlement;
use tackle_tool_core::{Definition, ToolClass};

use crate::parts::{MediaKind, Part, Parts, media_kind};

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

/// A tool (`{"name", "title"?, "description", "inputSchema", "outputSchema"?, "annotations"}`).
pub fn tool(definition: &Definition, class: ToolClass) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), Value::from(definition.name.as_str()));
    let title = title(&definition.name);
    if let Some(title) = title {
        tool.insert("title".into(), Value::from(title));
    }
    tool.insert(
        "description".into(),
        Value::from(definition.description.as_str()),
    );
    // MCP requires an object schema for the input; a tool that declares anything else is
    // offered as taking an object, and its input is still checked against its own schema.
    let input_schema = if definition.input_schema.is_object() {
        definition.input_schema.clone()
    } else {
        json!({"type": "object"})
    };
    tool.insert("inputSchema".into(), input_schema);
    if has_structured_output(definition) {
        tool.insert("outputSchema".into(), output_schema(definition));
    }
    tool.insert("annotations".into(), annotations(class, title));
    Value::Object(tool)
}

/// True when the tool's structured output is an object, which MCP carries as
/// `structuredContent` (a text tool's output is a string: its text is the result).
pub fn has_structured_output(definition: &Definition) -> bool {
    definition.output_schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The advertised output schema: the tool's own, or the form bounding gives a structured value
/// too large to keep inline (`{truncated, bytes, reference | unsaved, hint?}`).
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

fn annotations(class: ToolClass, title: Option<&str>) -> Value {
    let read_only = class.is_read_only();
    let mut hints = json!({
        "readOnlyHint": read_only,
        "openWorldHint": class == ToolClass::OpenWorld,
    });
    if !read_only {
        hints["destructiveHint"] = Value::Bool(true);
    }
    if let Some(title) = title {
        hints["title"] = Value::from(title);
    }
    hints
}

/// A `tools/call` result in MCP's terms, for a server that builds its own protocol types from
/// it (`tackle serve` does, without a JSON detour); [`call_result`] is its JSON.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CallResult {
    /// The result's content, in order.
    pub content: Vec<CallContent>,
    /// `isError`.
    pub is_error: bool,
    /// `structuredContent`: the bounded structured value, when it is an object (always, for a
    /// tool that advertises an output schema).
    pub structured_content: Option<Value>,
}

/// One item of a `tools/call` result's content.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallContent {
    /// Text content.
    Text(String),
    /// Image content.
    Image {
        /// The image, base64.
        data: String,
        /// `image/png`, `image/jpeg`, ...
        mime_type: String,
    },
    /// Any other file (a PDF, an archive): an embedded resource with the file as its blob.
    Blob {
        /// `attachment:///<name>`.
        uri: String,
        /// The file's type.
        mime_type: String,
        /// The file, base64.
        blob: String,
    },
}

impl CallContent {
    /// The item as MCP's JSON.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Text(text) => json!({"type": "text", "text": text}),
            Self::Image { data, mime_type } => {
                json!({"type": "image", "data": data, "mimeType": mime_type})
            }
            Self::Blob {
                uri,
                mime_type,
                blob,
            } => json!({
                "type": "resource",
                "resource": {"uri": uri, "mimeType": mime_type, "blob": blob},
            }),
        }
    }
}

impl CallResult {
    /// The result of one settled call: its content (text, images; other files as embedded
    /// resources), `isError`, and its structured value.
    pub fn of(settlement: &Settlement) -> Self {
        let parts = Parts::of(settlement);
        let content = parts
            .items
            .into_iter()
            .map(|item| match item {
                Part::Text(text) => CallContent::Text(text),
                Part::Media { mime, base64, name } => match media_kind(&mime) {
                    MediaKind::Image => CallContent::Image {
                        data: base64,
                        mime_type: mime,
                    },
                    MediaKind::Pdf | MediaKind::Other => CallContent::Blob {
                        uri: format!("attachment:///{}", name.as_deref().unwrap_or("file")),
                        mime_type: mime,
                        blob: base64,
                    },
                },
            })
            .collect();
        let structured_content = settlement
            .output()
            .map(|output| &output.structured)
            .filter(|structured| structured.is_object())
            .cloned();
        Self {
            content,
            is_error: parts.error,
            structured_content,
        }
    }

    /// The result as MCP's JSON.
    pub fn to_json(&self) -> Value {
        let content: Vec<Value> = self.content.iter().map(CallContent::to_json).collect();
        let mut result = json!({"content": content, "isError": self.is_error});
        if let Some(structured) = &self.structured_content {
            result["structuredContent"] = structured.clone();
        }
        result
    }
}

/// The `tools/call` result of one settled call, as MCP's JSON ([`CallResult`]).
pub fn call_result(settlement: &Settlement) -> Value {
    CallResult::of(settlement).to_json()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn definition(name: &str, output_schema: Value) -> Definition {
        Definition {
            name: name.into(),
            description: "does things".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}},
                "required": ["path"], "additionalProperties": false}),
            output_schema,
        }
    }

    #[test]
    fn hints_follow_the_class_and_builtins_have_titles() {
        let read = tool(
            &definition("read", json!({"type": "string"})),
            ToolClass::ReadOnly,
        );
        assert_eq!(read["annotations"]["readOnlyHint"], true);
        assert_eq!(read["title"], "Read a file");
        assert_eq!(read["annotations"]["title"], "Read a file");
        // A text tool has no structured output to describe.
        assert!(read.get("outputSchema").is_none(), "{read}");
        let bash = tool(
            &definition("bash", json!({"type": "object", "properties": {}})),
            ToolClass::Mutating,
        );
        assert_eq!(bash["annotations"]["destructiveHint"], true);
        assert_eq!(bash["outputSchema"]["anyOf"][0]["type"], "object");
        assert_eq!(
            bash["outputSchema"]["anyOf"][1]["required"],
            json!(["truncated", "bytes"])
        );
        let fetch = tool(&definition("webfetch", json!({})), ToolClass::OpenWorld);
        assert_eq!(fetch["annotations"]["openWorldHint"], true);
        assert_eq!(fetch["annotations"]["readOnlyHint"], true);
        let other = tool(&definition("mine", json!({})), ToolClass::ReadOnly);
        assert!(other.get("title").is_none(), "{other}");
        assert!(other["annotations"].get("title").is_none(), "{other}");
    }

    #[test]
    fn an_input_schema_that_is_not_an_object_is_offered_as_an_object() {
        let mut odd = definition("odd", json!({}));
        odd.input_schema = Value::Bool(true);
        assert_eq!(
            tool(&odd, ToolClass::Mutating)["inputSchema"],
            json!({"type": "object"})
        );
    }

    #[test]
    fn an_error_result_is_an_is_error_result_without_structured_content() {
        let result = call_result(&Settlement::error("Unknown tool: nope"));
        assert_eq!(result["isError"], true);
        assert_eq!(result["content"][0]["text"], "Unknown tool: nope");
        assert!(result.get("structuredContent").is_none(), "{result}");
    }
}
