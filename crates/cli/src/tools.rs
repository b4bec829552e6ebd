//! `tackle tools`: the definitions of the tools a model would be offered, in tackle's own
//! shape or a provider's.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use tackle_formats::{CatalogProfile, Format, export};
use tackle_tool_core::Definition;

use crate::ToolsFormat;
use crate::error::CliError;
use crate::options::{HostArgs, interactive};

pub(crate) async fn run(
    format: ToolsFormat,
    model: Option<&str>,
    host: &HostArgs,
    data_dir: Option<&std::path::Path>,
) -> Result<ExitCode, CliError> {
    let host = interactive(host.builder(data_dir)?, false)?;
    // The configured MCP servers' tools are part of the catalog; a slow server is named, not
    // waited for.
    for server in host.mcp_ready_within(tackle_host::MCP_STARTUP_WAIT).await {
        eprintln!("tackle: MCP server {server} is still connecting; its tools are not listed");
    }
    let mut snapshot = host.materialize();
    if let Some(model) = model {
        snapshot = CatalogProfile::for_model(model).apply(&snapshot);
    }
    let format = match format {
        ToolsFormat::Text => {
            return print(&text(snapshot.definitions()));
        }
        ToolsFormat::Json => Format::Json,
        ToolsFormat::Openai => Format::OpenAi,
        ToolsFormat::OpenaiStrict => Format::OpenAiStrict,
        ToolsFormat::OpenaiResponses => Format::OpenAiResponses,
        ToolsFormat::Anthropic => Format::Anthropic,
        ToolsFormat::Gemini => Format::Gemini,
        ToolsFormat::Mcp => Format::Mcp,
    };
    let catalog = export(&snapshot, format);
    for (name, why) in &catalog.not_strict {
        eprintln!("tackle: {name} is offered non-strict: its schema cannot be strict ({why})");
    }
    let mut text = serde_json::to_string_pretty(&catalog.tools).unwrap_or_else(|_| "[]".into());
    text.push('\n');
    print(&text)
}

fn print(text: &str) -> Result<ExitCode, CliError> {
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(CliError::Output)?;
    Ok(ExitCode::SUCCESS)
}

fn text(definitions: &[Arc<Definition>]) -> String {
    if definitions.is_empty() {
        return "(no tools)\n".to_owned();
    }
    let width = definitions.iter().map(|d| d.name.len()).max().unwrap_or(0);
    definitions
        .iter()
        .map(|d| {
            let summary = d.description.lines().next().unwrap_or("");
            format!("{:width$}  {summary}\n", d.name)
        })
        .collect()
}
