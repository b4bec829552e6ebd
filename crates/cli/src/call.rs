//! `tackle call`: settle one tool call and print its result.

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;
use serde_json::Value;
use tackle_tool_core::{Call, Context, ResultValue, ToolError, ToolOutput};

use crate::error::CliError;
use crate::host;

#[derive(Debug)]
pub(crate) struct CallArgs {
    pub(crate) tool: String,
    pub(crate) input: Option<String>,
    pub(crate) dir: Option<PathBuf>,
    /// Answers permission asks once; used once permission lands.
    #[allow(dead_code)]
    pub(crate) yes: bool,
    pub(crate) json: bool,
}

/// What `--json` prints: the result value and, for a success, the output.
#[derive(Debug, Serialize)]
struct Settlement {
    result: ResultValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<ToolOutput>,
}

pub(crate) async fn run(args: CallArgs) -> Result<ExitCode, CliError> {
    let location = host::location(args.dir.as_deref())?;
    let input = parse_input(args.input.as_deref())?;
    let call = Call::new("call_cli", args.tool, input);
    let ctx = Context::new("cli").for_call(call.id.clone());
    let settlement = match host::tools(&location)
        .into_iter()
        .find(|(name, _)| *name == call.name)
    {
        None => Settlement {
            result: ResultValue::Error(format!("Unknown tool: {}", call.name)),
            output: None,
        },
        Some((_, tool)) => match tool.settle(&call, &ctx).await {
            Ok(output) => Settlement {
                result: output.to_result_value(),
                output: Some(output),
            },
            Err(ToolError::Failure(failure)) => Settlement {
                result: ResultValue::Error(failure.message),
                output: None,
            },
            Err(ToolError::Halt(halt)) => return Err(CliError::Halt(halt)),
            Err(ToolError::Defect(defect)) => return Err(CliError::Defect(defect)),
        },
    };
    print(&settlement, args.json)?;
    Ok(if settlement.result.is_error() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn parse_input(input: Option<&str>) -> Result<Value, CliError> {
    let text = match input {
        None => return Ok(Value::Object(Default::default())),
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(CliError::Stdin)?;
            text
        }
        Some(text) => text.to_owned(),
    };
    serde_json::from_str(&text).map_err(CliError::InputJson)
}

fn print(settlement: &Settlement, json: bool) -> Result<(), CliError> {
    let mut text = if json {
        serde_json::to_string_pretty(settlement).map_err(|err| CliError::Output(err.into()))?
    } else {
        model_text(&settlement.result)
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(CliError::Output)
}

/// The text a model would read for `result`.
fn model_text(result: &ResultValue) -> String {
    match result {
        ResultValue::Text(text) | ResultValue::Error(text) => text.clone(),
        ResultValue::Json(value) => serde_json::to_string_pretty(value).unwrap_or_default(),
        ResultValue::Content(parts) => parts
            .iter()
            .map(|part| match part {
                tackle_tool_core::OutputContent::Text { text } => text.clone(),
                tackle_tool_core::OutputContent::File { mime, name, .. } => {
                    format!(
                        "[file {} ({mime})]",
                        name.as_deref().unwrap_or("attachment")
                    )
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}
