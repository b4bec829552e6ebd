//! Every format, for one definition or a whole snapshot.

use serde_json::{Value, json};
use tackle_registry::Materialization;
use tackle_tool_core::{Definition, ToolClass};

use crate::schema::NotStrict;
use crate::{anthropic, gemini, mcp, openai};

/// A provider's shape of tool definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// tackle's own definitions (`name`, `description`, `inputSchema`, `outputSchema`).
    Json,
    /// OpenAI Chat Completions function tools, not strict.
    OpenAi,
    /// OpenAI Chat Completions function tools, strict where the schema allows it.
    OpenAiStrict,
    /// OpenAI Responses function tools, strict where the schema allows it.
    OpenAiResponses,
    /// Anthropic Messages tools.
    Anthropic,
    /// Gemini function declarations.
    Gemini,
    /// MCP `tools/list` tools.
    Mcp,
}

impl Format {
    /// Every format, in the order the CLI lists them.
    pub const ALL: [Format; 7] = [
        Self::Json,
        Self::OpenAi,
        Self::OpenAiStrict,
        Self::OpenAiResponses,
        Self::Anthropic,
        Self::Gemini,
        Self::Mcp,
    ];

    /// The format's name on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::OpenAi => "openai",
            Self::OpenAiStrict => "openai-strict",
            Self::OpenAiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::Mcp => "mcp",
        }
    }
}

/// One definition in a format, and why it is not strict when the format asked for strict.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    /// The definition as the provider takes it.
    pub value: Value,
    /// Set when the format is strict but this schema could not be made strict: the tool is
    /// exported non-strict.
    pub not_strict: Option<NotStrict>,
}

/// The definition of a tool of class `class` in `format`.
pub fn export_definition(definition: &Definition, class: ToolClass, format: Format) -> Exported {
    let plain = |value| Exported {
        value,
        not_strict: None,
    };
    match format {
        // Serializing a definition cannot fail: its schemas are JSON values.
        Format::Json => plain(serde_json::to_value(definition).unwrap_or_default()),
        Format::OpenAi => plain(openai::chat_tool(definition)),
        Format::OpenAiStrict => strict(openai::chat_tool_strict(definition)),
        Format::OpenAiResponses => strict(openai::responses_tool(definition)),
        Format::Anthropic => plain(anthropic::tool(definition)),
        Format::Gemini => plain(gemini::function_declaration(definition)),
        Format::Mcp => plain(mcp::tool(definition, class)),
    }
}

fn strict(tool: openai::OpenAiTool) -> Exported {
    Exported {
        value: tool.tool,
        not_strict: tool.not_strict,
    }
}

/// A snapshot's definitions in a format.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalog {
    /// What the provider's request takes: the `tools` list (OpenAI, Anthropic; Gemini's one
    /// tool holding every `functionDeclarations`), or MCP's `tools/list` result.
    pub tools: Value,
    /// The tools exported non-strict although the format is strict, and why.
    pub not_strict: Vec<(String, NotStrict)>,
}

/// The definitions `snapshot` offers, in catalog order, in `format`.
pub fn export(snapshot: &Materialization, format: Format) -> Catalog {
    let mut values = Vec::new();
    let mut not_strict = Vec::new();
    for definition in snapshot.definitions() {
        let class = snapshot
            .tool(&definition.name)
            .map_or_else(ToolClass::default, |tool| tool.class());
        let exported = export_definition(definition, class, format);
        values.push(exported.value);
        if let Some(why) = exported.not_strict {
            not_strict.push((definition.name.clone(), why));
        }
    }
    let tools = match format {
        Format::Gemini => json!([{"functionDeclarations": values}]),
        Format::Mcp => json!({"tools": values}),
        _ => Value::Array(values),
    };
    Catalog { tools, not_strict }
}
