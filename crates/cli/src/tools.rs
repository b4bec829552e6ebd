//! `tackle tools`: the definitions of the tools a model would be offered.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use tackle_tool_core::Definition;

use crate::ToolsFormat;
use crate::error::CliError;
use crate::options::{HostArgs, interactive};

pub(crate) fn run(
    format: ToolsFormat,
    host: &HostArgs,
    data_dir: Option<&std::path::Path>,
) -> Result<ExitCode, CliError> {
    let host = interactive(host.builder(data_dir)?, false)?;
    let snapshot = host.materialize();
    let text = match format {
        ToolsFormat::Json => json(snapshot.definitions()),
        ToolsFormat::Text => text(snapshot.definitions()),
    };
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(CliError::Output)?;
    Ok(ExitCode::SUCCESS)
}

fn json(definitions: &[Arc<Definition>]) -> String {
    let list: Vec<&Definition> = definitions.iter().map(AsRef::as_ref).collect();
    let mut text = serde_json::to_string_pretty(&list).unwrap_or_else(|_| "[]".to_owned());
    text.push('\n');
    text
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
