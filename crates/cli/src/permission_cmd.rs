//! `tackle permission`: explain a decision; list, revoke or clear saved approvals.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Subcommand;
use serde_json::json;
use tackle_host::{Config, Origin, Trust};
use tackle_permission::{AnswerAll, Permission, Reply, SavedApprovals};

use crate::error::CliError;
use crate::options::HostArgs;

#[derive(Debug, Subcommand)]
pub(crate) enum PermissionCommand {
    /// Print the decision for an action on a resource and the rule that decides it.
    #[command(
        after_help = "Examples:\n  tackle permission explain bash 'git push origin main'\n  tackle permission explain edit src/main.rs --json\n  tackle permission explain webfetch http://localhost:3000"
    )]
    Explain {
        /// The permission action (bash, read, edit, external_directory, webfetch, ...).
        action: String,
        /// The resource (a command, a path, a URL, ...).
        resource: String,
        #[command(flatten)]
        host: HostArgs,
        /// Print the explanation as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the approvals saved for the Location ("always" replies).
    #[command(
        after_help = "Examples:\n  tackle permission list\n  tackle permission list --dir ~/src/app --json"
    )]
    List {
        /// The Location; defaults to the current directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
        /// Print them as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke one saved approval, written exactly as `list` shows it.
    #[command(
        after_help = "Examples:\n  tackle permission revoke bash 'git push *'\n  tackle permission revoke edit '*' --dir ~/src/app"
    )]
    Revoke {
        /// The permission action.
        action: String,
        /// The resource pattern.
        resource: String,
        /// The Location; defaults to the current directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
    /// Revoke every approval saved for the Location.
    #[command(
        after_help = "Examples:\n  tackle permission clear\n  tackle permission clear --dir ~/src/app"
    )]
    Clear {
        /// The Location; defaults to the current directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
}

pub(crate) fn run(
    command: PermissionCommand,
    data_dir: Option<&Path>,
) -> Result<ExitCode, CliError> {
    match command {
        PermissionCommand::Explain {
            action,
            resource,
            host,
            json,
        } => explain(&action, &resource, &host, data_dir, json),
        PermissionCommand::List { dir, json } => {
            let saved = saved(dir, data_dir)?;
            let rules = saved.list();
            if json {
                let list: Vec<_> = rules
                    .iter()
                    .map(|r| json!({"action": r.action, "resource": r.resource}))
                    .collect();
                let text = serde_json::to_string_pretty(&list)
                    .map_err(|err| CliError::Output(err.into()))?;
                return crate::print(&format!("{text}\n"));
            }
            if rules.is_empty() {
                return crate::print("no saved approvals\n");
            }
            let text: String = rules
                .iter()
                .map(|rule| format!("{} {}\n", rule.action, rule.resource))
                .collect();
            crate::print(&text)
        }
        PermissionCommand::Revoke {
            action,
            resource,
            dir,
        } => {
            if saved(dir, data_dir)?.revoke(&action, &resource)? {
                crate::print(&format!("revoked {action} {resource}\n"))
            } else {
                crate::print(&format!(
                    "no saved approval of {action} {resource} (see tackle permission list)\n"
                ))
                .map(|_| ExitCode::from(1))
            }
        }
        PermissionCommand::Clear { dir } => {
            let count = saved(dir, data_dir)?.clear()?;
            crate::print(&format!(
                "revoked {count} saved approval{}\n",
                if count == 1 { "" } else { "s" }
            ))
        }
    }
}

fn saved(
    dir: Option<std::path::PathBuf>,
    data_dir: Option<&Path>,
) -> Result<SavedApprovals, CliError> {
    let host = HostArgs {
        dir,
        ..HostArgs::default()
    };
    let location = host.location()?;
    let data_dir = HostArgs::data_dir(data_dir)?;
    Ok(SavedApprovals::for_project(&data_dir, &location)?)
}

fn explain(
    action: &str,
    resource: &str,
    host: &HostArgs,
    data_dir: Option<&Path>,
    json: bool,
) -> Result<ExitCode, CliError> {
    let location = host.location()?;
    let data = HostArgs::data_dir(data_dir)?;
    let config = crate::config_cmd::load(host, data_dir)?;
    for warning in &config.warnings {
        eprintln!("{warning}");
    }
    // Explaining asks nobody.
    let permission = Permission::builder(
        config.rules.clone(),
        SavedApprovals::for_project(&data, &location)?,
        Arc::new(AnswerAll(Reply::Reject { message: None })),
    )
    .protected(tackle_host::protected(
        &tackle_host::Environment::from_process(),
        &data,
        &location,
        &config,
    ))
    .build();
    let explanation = permission.explain(action, resource);
    let files = files(&config);
    let text = if json {
        let list: Vec<_> = files
            .iter()
            .map(|(path, trust)| json!({"file": path, "trust": trust.map(trust_name)}))
            .collect();
        let value = json!({
            "configuration": list,
            "explanation": explanation,
        });
        serde_json::to_string_pretty(&value).map_err(|err| CliError::Output(err.into()))?
    } else {
        let shown: Vec<String> = files
            .iter()
            .map(|(path, trust)| {
                let note = match trust {
                    None | Some(Trust::Trusted) => "",
                    Some(Trust::Untrusted) => " (untrusted: its rules can only tighten yours)",
                    Some(Trust::Changed) => {
                        " (changed since trusted: its rules can only tighten yours)"
                    }
                };
                format!("{path}{note}")
            })
            .collect();
        let shown = if shown.is_empty() {
            "none (default rules only)".to_owned()
        } else {
            shown.join(", ")
        };
        format!("{explanation}\nconfiguration: {shown}")
    };
    crate::print(&format!("{text}\n"))
}

/// The configuration files read, with a project file's trust.
fn files(config: &Config) -> Vec<(String, Option<Trust>)> {
    config
        .layers
        .iter()
        .filter_map(|layer| match &layer.origin {
            Origin::User(path) | Origin::Project(path) | Origin::File(path) => {
                Some((path.display().to_string(), layer.trust))
            }
            _ => None,
        })
        .collect()
}

fn trust_name(trust: Trust) -> &'static str {
    match trust {
        Trust::Trusted => "trusted",
        Trust::Untrusted => "untrusted",
        Trust::Changed => "changed",
    }
}
