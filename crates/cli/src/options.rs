//! The flags every command that builds a host shares, and how they become a host.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use serde_json::Value;
use tackle_host::{Environment, Host, HostBuilder};
use tackle_permission::{AnswerAll, Asker, Reply};

use crate::error::CliError;
use crate::question::TerminalQuestions;

/// Where the Location is and what configures it.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct HostArgs {
    /// The Location (workspace directory); defaults to the current directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
    /// A configuration file read after the user's and the project's (it must exist).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Sets one configuration key above every file and variable; VALUE is JSON, or else a
    /// string (repeatable): --set output.max_lines=500 --set bash.shell=/bin/zsh
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
}

impl HostArgs {
    /// The Location, canonical.
    pub(crate) fn location(&self) -> Result<PathBuf, CliError> {
        Ok(tackle_host::location(
            self.dir.as_deref().unwrap_or(Path::new(".")),
        )?)
    }

    /// The `--set` flags as key paths and values.
    pub(crate) fn flags(&self) -> Result<Vec<(String, Value)>, CliError> {
        self.set
            .iter()
            .map(|flag| {
                let (key, value) = flag
                    .split_once('=')
                    .filter(|(key, _)| !key.is_empty())
                    .ok_or_else(|| CliError::SetFlag(flag.clone()))?;
                let value =
                    serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
                Ok((key.to_owned(), value))
            })
            .collect()
    }

    /// A host builder for these flags, the process environment and `data_dir`.
    pub(crate) fn builder(&self, data_dir: Option<&Path>) -> Result<HostBuilder, CliError> {
        // The host makes the Location canonical (once).
        let dir = self.dir.clone().unwrap_or_else(|| PathBuf::from("."));
        let mut builder = Host::builder(dir).env(Environment::from_process());
        if let Some(worker) = crate::media_worker() {
            builder = builder.media_worker(worker);
        }
        if let Some(dir) = data_dir {
            builder = builder.data_dir(dir);
        }
        if let Some(file) = &self.config {
            builder = builder.config_file(file);
        }
        for (key, value) in self.flags()? {
            builder = builder.set(key, value);
        }
        Ok(builder)
    }

    /// The data directory: `--data-dir`, else the platform's.
    pub(crate) fn data_dir(explicit: Option<&Path>) -> Result<PathBuf, CliError> {
        match explicit {
            Some(dir) => Ok(dir.to_owned()),
            None => Ok(tackle_host::default_data_dir(&Environment::from_process())?),
        }
    }
}

/// Builds the host, with the terminal (when there is one) asking and answering questions;
/// `--yes` answers every ask "once"; without a terminal an ask is declined. The configuration's
/// warnings go to stderr.
pub(crate) fn interactive(builder: HostBuilder, yes: bool) -> Result<Host, CliError> {
    let asker: Arc<dyn Asker> = if yes {
        Arc::new(AnswerAll(Reply::Once))
    } else {
        match crate::asker::TerminalAsker::detect() {
            Some(terminal) => Arc::new(terminal),
            None => Arc::new(crate::asker::Headless),
        }
    };
    let mut builder = builder.asker(asker);
    if let Some(terminal) = TerminalQuestions::detect() {
        builder = builder.questions(Arc::new(terminal));
    }
    let host = builder.build()?;
    for warning in &host.config().warnings {
        eprintln!("{warning}");
    }
    Ok(host)
}
