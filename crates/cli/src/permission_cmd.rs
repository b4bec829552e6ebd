//! `tackle permission`: inspect the permission rules of a Location.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Subcommand;
use serde_json::json;
use tackle_permission::{AnswerAll, Permission, Protected, Reply};

use crate::config;
use crate::error::CliError;
use crate::host;
use crate::trust::Trust;

#[derive(Debug, Subcommand)]
pub(crate) enum PermissionCommand {
    /// Print the decision for an action on a resource and the rule that decides it.
    Explain {
        /// The permission action (bash, read, edit, external_directory, webfetch, ...).
        action: String,
        /// The resource (a command, a path, a URL, ...).
        resource: String,
        /// The Location (workspace directory); defaults to the current directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The configuration file; defaults to the Location's tackle.json, else opencode.json.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print the explanation as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub(crate) fn run(
    command: PermissionCommand,
    data_dir: Option<&std::path::Path>,
) -> Result<ExitCode, CliError> {
    match command {
        PermissionCommand::Explain {
            action,
            resource,
            dir,
            config,
            json,
        } => {
            let location = host::location(dir.as_deref())?;
            let data_dir = host::data_dir(data_dir)?;
            let loaded = config::load(&location, config.as_deref(), &data_dir)?;
            // Explaining asks nobody.
            let permission = Permission::new(
                loaded.rules,
                config::saved_approvals(&data_dir, &location)?,
                Arc::new(AnswerAll(Reply::Reject { message: None })),
            )
            .with_protected(Protected::from_env(|key| std::env::var_os(key)).and_dir(&data_dir));
            let explanation = permission.explain(&action, &resource);
            let source = loaded.source.as_ref().map(|p| p.display().to_string());
            let trust = loaded.trust.map(|trust| match trust {
                Trust::Trusted => "trusted",
                Trust::Untrusted => "untrusted",
                Trust::Changed => "changed",
            });
            let text = if json {
                let value = json!({
                    "configuration": source,
                    "trust": trust,
                    "explanation": explanation,
                });
                serde_json::to_string_pretty(&value).map_err(|err| CliError::Output(err.into()))?
            } else {
                let note = match loaded.trust {
                    None | Some(Trust::Trusted) => "",
                    Some(Trust::Untrusted) => " (untrusted: its rules can only tighten yours)",
                    Some(Trust::Changed) => {
                        " (changed since trusted: its rules can only tighten yours)"
                    }
                };
                format!(
                    "{explanation}\nconfiguration: {}{note}",
                    source.as_deref().unwrap_or("none (default rules only)")
                )
            };
            std::io::stdout()
                .write_all(format!("{text}\n").as_bytes())
                .map_err(CliError::Output)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
