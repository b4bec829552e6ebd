//! `tackle audit`: reads the audit log back (`audit.path` in the configuration, or `--file`).
//! Only whole records are shown; a line that is not one (a writer killed mid-write) is named
//! on stderr and skipped.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use tackle_host::audit::{AuditLine, DEFAULT_KEEP, read_log, rotated_path};

use crate::error::CliError;
use crate::options::HostArgs;

#[derive(Debug, Subcommand)]
pub(crate) enum AuditCommand {
    /// Print the last records, one JSON object a line; with `-f`, then every record as it is
    /// appended (across rotations) until interrupted.
    #[command(
        after_help = "Examples:\n  tackle audit tail\n  tackle audit tail -n 50\n  tackle audit tail -f"
    )]
    Tail {
        /// How many records.
        #[arg(short = 'n', long, default_value_t = 20)]
        lines: usize,
        /// Keep printing records as they are appended; ends on Ctrl-C, SIGTERM or a closed
        /// stdout.
        #[arg(short = 'f', long)]
        follow: bool,
        /// The log file (default: `audit.path` of the configuration).
        #[arg(long, value_name = "FILE")]
        file: Option<PathBuf>,
        #[command(flatten)]
        host: HostArgs,
    },
    /// Print the record numbered SEQ, looking in the rotated files too.
    #[command(after_help = "Examples:\n  tackle audit show 42")]
    Show {
        /// The record's `seq`.
        seq: u64,
        /// The log file (default: `audit.path` of the configuration).
        #[arg(long, value_name = "FILE")]
        file: Option<PathBuf>,
        #[command(flatten)]
        host: HostArgs,
    },
}

pub(crate) async fn run(
    command: &AuditCommand,
    data_dir: Option<&Path>,
) -> Result<ExitCode, CliError> {
    match command {
        AuditCommand::Tail {
            lines,
            follow,
            file,
            host,
        } => {
            let path = log_path(file.as_ref(), host, data_dir)?;
            if *follow {
                return crate::audit_follow::follow(&path, *lines).await;
            }
            let records = whole_records(&path)?;
            let start = records.len().saturating_sub(*lines);
            let mut text = String::new();
            for record in &records[start..] {
                text.push_str(&serde_json::to_string(record).map_err(CliError::Json)?);
                text.push('\n');
            }
            crate::print(&text)
        }
        AuditCommand::Show { seq, file, host } => {
            let path = log_path(file.as_ref(), host, data_dir)?;
            let keep = crate::config_cmd::load(host, data_dir)
                .ok()
                .and_then(|config| config.settings.audit.and_then(|audit| audit.keep))
                .unwrap_or(DEFAULT_KEEP);
            let files =
                std::iter::once(path.clone()).chain((1..=keep).map(|n| rotated_path(&path, n)));
            for file in files {
                let found = whole_records(&file)?.into_iter().find(|record| {
                    record.get("seq").and_then(serde_json::Value::as_u64) == Some(*seq)
                });
                if let Some(record) = found {
                    let text = serde_json::to_string_pretty(&record).map_err(CliError::Json)?;
                    return crate::print(&format!("{text}\n"));
                }
            }
            eprintln!(
                "tackle: no record {seq} in {} or its rotated files",
                path.display()
            );
            Ok(ExitCode::from(1))
        }
    }
}

/// `--file`, else the configured log.
fn log_path(
    file: Option<&PathBuf>,
    host: &HostArgs,
    data_dir: Option<&Path>,
) -> Result<PathBuf, CliError> {
    if let Some(file) = file {
        return Ok(file.clone());
    }
    let config = crate::config_cmd::load(host, data_dir)?;
    let data_dir = HostArgs::data_dir(data_dir)?;
    tackle_host::audit::configured_path(&config, &data_dir).ok_or(CliError::NoAuditLog)
}

/// The whole records of `path`, in order; every skipped line is named on stderr.
fn whole_records(path: &Path) -> Result<Vec<serde_json::Map<String, serde_json::Value>>, CliError> {
    let lines = read_log(path).map_err(|source| CliError::Audit {
        path: path.to_owned(),
        source,
    })?;
    Ok(lines
        .into_iter()
        .filter_map(|line| match line {
            AuditLine::Record { record, .. } => Some(record),
            AuditLine::Skipped { line, reason } => {
                eprintln!("tackle: {} line {line} skipped: {reason}", path.display());
                None
            }
        })
        .collect())
}
