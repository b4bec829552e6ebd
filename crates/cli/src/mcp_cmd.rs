//! `tackle mcp`: the configured MCP servers, as the host connected them.

use std::fmt::Write as _;
use std::process::ExitCode;

use clap::Subcommand;
use tackle_host::{McpServerStatus, McpState};

use crate::error::CliError;
use crate::options::HostArgs;

#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// Each server: its state, how many tools it registered, its last error.
    List {
        #[command(flatten)]
        host: HostArgs,
    },
    /// One server's tools: the name the model calls, the server's own name, and the tools
    /// left out with the reason.
    Tools {
        /// The server's name in the `mcp` configuration.
        name: String,
        #[command(flatten)]
        host: HostArgs,
    },
}

pub(crate) async fn run(
    command: &McpCommand,
    data_dir: Option<&std::path::Path>,
) -> Result<ExitCode, CliError> {
    let (McpCommand::List { host } | McpCommand::Tools { host, .. }) = command;
    // Listing asks nobody: no call is made.
    let host = host.builder(data_dir)?.build()?;
    host.mcp_ready().await;
    let status = host.mcp_status();
    match command {
        McpCommand::List { .. } => crate::print(&list(&status)),
        McpCommand::Tools { name, .. } => match status.iter().find(|s| &s.name == name) {
            Some(server) => {
                crate::print(&tools(server))?;
                Ok(if server.state == McpState::Connected {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                })
            }
            None => Err(CliError::UnknownServer(name.clone())),
        },
    }
}

fn list(status: &[McpServerStatus]) -> String {
    if status.is_empty() {
        return "(no MCP servers configured)\n".to_owned();
    }
    let width = status.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for server in status {
        let _ = write!(
            out,
            "{:width$}  {:10}  {:3} tools",
            server.name,
            server.state.as_str(),
            server.tools.len()
        );
        if !server.skipped.is_empty() {
            let _ = write!(out, ", {} skipped", server.skipped.len());
        }
        if let Some(error) = &server.last_error {
            let _ = write!(out, "  last error: {}", error.replace('\n', " "));
        }
        out.push('\n');
    }
    out
}

fn tools(server: &McpServerStatus) -> String {
    let mut out = String::new();
    if server.state != McpState::Connected {
        let _ = writeln!(
            out,
            "{} is {}: {}",
            server.name,
            server.state.as_str(),
            server.last_error.as_deref().unwrap_or("no error recorded")
        );
    }
    let width = server.tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
    for tool in &server.tools {
        let _ = writeln!(out, "{:width$}  {}", tool.name, tool.original);
    }
    for skipped in &server.skipped {
        let _ = writeln!(out, "skipped {}: {}", skipped.original, skipped.reason);
    }
    out
}
