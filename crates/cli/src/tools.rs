//! `tackle tools`: the definitions of the available tools.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use tackle_tool_core::Definition;

use crate::ToolsFormat;
use crate::error::CliError;
use crate::host;

pub(crate) fn run(format: ToolsFormat, dir: Option<&Path>) -> Result<ExitCode, CliError> {
    let location = host::location(dir)?;
    let mut definitions = Vec::new();
    for (name, tool) in host::tools(&location) {
        // Builtin names are fixed and valid; a failure here is a bug worth reporting.
        let definition = tool.definition(&name).map_err(|err| {
            CliError::Defect(tackle_tool_core::Defect::with_source(
                "invalid builtin",
                err,
            ))
        })?;
        definitions.push(definition);
    }
    let text = match format {
        ToolsFormat::Json => json(&definitions),
        ToolsFormat::Text => text(&definitions),
    };
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(CliError::Output)?;
    Ok(ExitCode::SUCCESS)
}

fn json(definitions: &[std::sync::Arc<Definition>]) -> String {
    let list: Vec<&Definition> = definitions.iter().map(AsRef::as_ref).collect();
    let mut text = serde_json::to_string_pretty(&list).unwrap_or_else(|_| "[]".to_owned());
    text.push('\n');
    text
}

fn text(definitions: &[std::sync::Arc<Definition>]) -> String {
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
