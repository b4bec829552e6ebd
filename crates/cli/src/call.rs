//! `tackle call`: settle one tool call and print its result.

use std::io::{Read as _, Write as _};
use std::process::ExitCode;

use serde_json::Value;
use tackle_builtins::bash::JobStore;
use tackle_registry::Settlement;
use tackle_tool_core::{Call, ResultValue};

use crate::error::CliError;
use crate::options::{HostArgs, interactive};

/// What `tackle call` was asked.
#[derive(Debug)]
pub(crate) struct CallArgs {
    pub(crate) tool: String,
    pub(crate) input: Option<String>,
    pub(crate) yes: bool,
    pub(crate) json: bool,
    pub(crate) session: String,
    pub(crate) agent: Option<String>,
}

pub(crate) async fn run(
    args: &CallArgs,
    host: &HostArgs,
    data_dir: Option<&std::path::Path>,
) -> Result<ExitCode, CliError> {
    let input = parse_input(args.input.as_deref())?;
    // One call needs one tool: the others are not built at all.
    let builder = host
        .builder(data_dir)?
        .only(&args.tool)
        .jobs(JobStore::refusing(
            "Background jobs need a host that keeps running: `tackle call` exits when the call \
         returns, and the job would end with it. Run the command without `background` (it then \
         has a timeout), or start it through `tackle serve`, which keeps jobs across calls.",
        ));
    let host = interactive(builder, args.yes)?;
    // A call of a server's tool waits for the servers (a builtin's host connects none).
    host.mcp_ready().await;
    let call = Call::new("call_cli", &args.tool, input);
    let mut session = host.session(&args.session);
    if let Some(agent) = &args.agent {
        session = session.with_agent(agent);
    }
    // At a terminal, the person watching sees the command's output as it runs (stderr); the
    // result printed below is the model's, unchanged.
    let settlement = match crate::live::Live::start() {
        Some(live) => {
            let ctx = session.context(&call).with_progress(live.sink());
            let settled = session.materialize().settle(&call, &ctx).await;
            drop(ctx);
            live.finish();
            settled?
        }
        None => session.settle(&call).await?,
    };
    let json = args.json;
    if let Some(reason) = settlement.unsaved() {
        // The model's preview says the rest is lost; the user learns why.
        eprintln!("tackle: the full output was not saved: {reason}");
    }
    print(&settlement, json)?;
    Ok(if settlement.is_error() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Inputs on stdin up to this size are read whole before they are parsed.
const IN_MEMORY_INPUT: usize = 1 << 20;

fn parse_input(input: Option<&str>) -> Result<Value, CliError> {
    match input {
        None => Ok(Value::Object(Default::default())),
        Some("-") => {
            // A small input is parsed from memory, which is several times faster than from a
            // reader; a large one (a 200 MB write) is parsed as it streams in, so it is never
            // also held whole as text.
            let mut head = Vec::with_capacity(IN_MEMORY_INPUT);
            let mut stdin = std::io::stdin().lock();
            (&mut stdin)
                .take(IN_MEMORY_INPUT as u64)
                .read_to_end(&mut head)
                .map_err(CliError::Stdin)?;
            if head.len() < IN_MEMORY_INPUT {
                return serde_json::from_slice(&head).map_err(CliError::InputJson);
            }
            let rest = std::io::BufReader::with_capacity(1 << 16, stdin);
            serde_json::from_reader(head.as_slice().chain(rest)).map_err(|err| {
                if err.is_io() {
                    CliError::Stdin(err.into())
                } else {
                    CliError::InputJson(err)
                }
            })
        }
        Some(text) => serde_json::from_str(text).map_err(CliError::InputJson),
    }
}

fn print(settlement: &Settlement, json: bool) -> Result<(), CliError> {
    let mut text = if json {
        serde_json::to_string_pretty(settlement).map_err(|err| CliError::Output(err.into()))?
    } else {
        model_text(&settlement.result())
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
