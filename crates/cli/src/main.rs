//! `tackle`: the tool runtime on the command line.
//!
//! The binary is a host like any other: it builds the tools for one Location (the current
//! directory, or `--dir`), then lists their definitions (`tackle tools`) or settles one call
//! (`tackle call`). It owns no tool behaviour of its own. `tackle trust` records that the user
//! trusts a project's configuration; until then it can only tighten the user's rules.
//!
//! Exit codes: 0 for a success result, 1 for an error result, 2 for a usage error, a halt or a
//! call that could not be settled at all.

mod asker;
mod call;
mod config;
mod error;
mod generate;
mod host;
mod permission_cmd;
mod question;
mod tools;
mod trust;
mod trust_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use tackle_builtins::skill::SkillSources;

use crate::error::CliError;
use crate::host::HostOptions;

#[derive(Debug, Parser)]
#[command(
    name = "tackle",
    version = generate::VERSION,
    about = "The tool runtime for coding agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Where managed outputs, saved approvals and trusted projects live (default: the platform
    /// data directory, e.g. ~/.local/share/tackle).
    #[arg(long, global = true, value_name = "DIR")]
    data_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the definitions of the available tools.
    Tools {
        /// Output format.
        #[arg(long, value_enum, default_value_t = ToolsFormat::Text)]
        format: ToolsFormat,
        /// The Location (workspace directory); defaults to the current directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The configuration file (default: the Location's tackle.json, else opencode.json).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Settle one tool call and print its result.
    Call {
        /// The tool name.
        tool: String,
        /// The input as JSON, or `-` to read it from standard input; defaults to `{}`.
        input: Option<String>,
        /// The Location (workspace directory); defaults to the current directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// The configuration file (default: the Location's tackle.json, else opencode.json).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Answer every permission ask with "once" (a deny still denies).
        #[arg(long)]
        yes: bool,
        /// Print the whole settlement as JSON instead of the model text.
        #[arg(long)]
        json: bool,
    },
    /// Inspect the permission rules.
    Permission {
        #[command(subcommand)]
        command: permission_cmd::PermissionCommand,
    },
    /// Trust a project's configuration (tackle.json, opencode.json) as it is now. Until then its
    /// rules can only tighten yours: its allow rules are ignored. A change to the file makes it
    /// untrusted again.
    Trust {
        /// The project directory; defaults to the current directory.
        #[arg(value_name = "DIR", conflicts_with = "list")]
        dir: Option<PathBuf>,
        /// List the trusted files and whether each is unchanged.
        #[arg(long)]
        list: bool,
    },
    /// Forget the trust of a project's configuration.
    Untrust {
        /// The project directory; defaults to the current directory.
        #[arg(value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Print a shell completion script (e.g. `tackle completions bash > ~/.local/share/bash-completion/completions/tackle`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff); `cargo xtask man` writes it to a file.
    #[command(hide = true)]
    Man,
    /// Print every builtin's definition and permission action as JSON (for docs/tools.md).
    #[command(hide = true)]
    Reference,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ToolsFormat {
    /// One line per tool: name and the first line of its description.
    Text,
    /// The definitions as a JSON array.
    Json,
}

fn main() -> ExitCode {
    // Before anything runs: commands run as this user and must not read this process's
    // environment (its credentials) through /proc/<pid>.
    if let Err(err) = tackle_builtins::bash::make_host_non_dumpable() {
        eprintln!("tackle: warning: cannot protect this process from its commands: {err}");
    }
    let cli = Cli::parse();
    // One call, or one listing, per process: worker threads would cost more to start than
    // they could save. Blocking work still runs on tokio's blocking pool.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => return report(&CliError::Runtime(err)),
    };
    let outcome = runtime.block_on(async move {
        match cli.command {
            Command::Tools {
                format,
                dir,
                config,
            } => {
                let options = HostOptions {
                    dir,
                    data_dir: cli.data_dir,
                    config,
                    yes: false,
                    skills: user_skills(),
                };
                tools::run(format, &options)
            }
            Command::Call {
                tool,
                input,
                dir,
                config,
                yes,
                json,
            } => {
                let options = HostOptions {
                    dir,
                    data_dir: cli.data_dir,
                    config,
                    yes,
                    skills: user_skills(),
                };
                call::run(&tool, input.as_deref(), &options, json).await
            }
            Command::Permission { command } => {
                permission_cmd::run(command, cli.data_dir.as_deref())
            }
            Command::Trust { list: true, .. } => trust_cmd::list(cli.data_dir.as_deref()),
            Command::Trust { dir, list: false } => {
                trust_cmd::trust(dir.as_deref(), cli.data_dir.as_deref())
            }
            Command::Untrust { dir } => trust_cmd::untrust(dir.as_deref(), cli.data_dir.as_deref()),
            Command::Completions { shell } => generate::completions(shell),
            Command::Man => generate::man(),
            Command::Reference => generate::reference(),
        }
    });
    match outcome {
        Ok(code) => code,
        Err(err) => report(&err),
    }
}

/// The user's skill directories, found from `HOME` and `XDG_CONFIG_HOME`.
fn user_skills() -> SkillSources {
    SkillSources::from_env(|key| std::env::var_os(key))
}

fn report(err: &CliError) -> ExitCode {
    eprintln!("tackle: {err}");
    ExitCode::from(2)
}
