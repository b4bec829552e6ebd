//! `tackle config`: the effective configuration with origins; `tackle config schema`.

use std::path::Path;
use std::process::ExitCode;

use clap::Subcommand;
use tackle_host::{Config, Environment, Sources};

use crate::error::CliError;
use crate::options::HostArgs;

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Print the JSON Schema of tackle.json (editors validate and complete with it).
    Schema,
}

pub(crate) fn run(
    command: Option<&ConfigCommand>,
    host: &HostArgs,
    data_dir: Option<&Path>,
) -> Result<ExitCode, CliError> {
    match command {
        Some(ConfigCommand::Schema) => {
            let schema = tackle_host::config::schema();
            let text = serde_json::to_string_pretty(&schema)
                .map_err(|err| CliError::Output(err.into()))?;
            crate::print(&format!("{text}\n"))
        }
        None => {
            let config = load(host, data_dir)?;
            for warning in &config.warnings {
                eprintln!("{warning}");
            }
            crate::print(&config.describe())
        }
    }
}

/// The merged configuration of `host`'s Location, as a host would load it.
pub(crate) fn load(host: &HostArgs, data_dir: Option<&Path>) -> Result<Config, CliError> {
    Ok(Config::load(&Sources {
        location: host.location()?,
        data_dir: Some(HostArgs::data_dir(data_dir)?),
        file: host.config.clone(),
        env: Environment::from_process(),
        flags: host.flags()?,
    })?)
}
