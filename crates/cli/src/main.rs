//! `tackle`: the tool runtime on the command line.
//!
//! The binary is a thin user of the `tackle-host` library: it builds the host of one Location
//! (the current directory, or `--dir`) from the merged configuration, then lists its tools
//! (`tackle tools`), settles one call (`tackle call`), shows the configuration (`tackle
//! config`), explains and manages permissions (`tackle permission`) or records trust in a
//! project's configuration (`tackle trust`). It owns no tool behaviour of its own, only the
//! terminal: asking, answering questions, printing.
//!
//! Exit codes: 0 for a success result, 1 for an error result, 2 for a usage error (a bad
//! configuration included), a halt or a call that could not be settled at all.

mod asker;
mod audit_cmd;
mod audit_follow;
mod call;
mod config_cmd;
mod error;
mod generate;
mod live;
mod logging;
mod mcp_cmd;
mod options;
mod permission_cmd;
mod question;
mod serve;
mod tools;
mod trust_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::error::CliError;
use crate::options::HostArgs;

const MAIN_HELP: &str = "\
Configuration, later wins: defaults, ~/.config/tackle/tackle.json[c], the project's
opencode.json[c], .opencode/opencode.json[c] and tackle.json[c] (repository root down to the
Location), --config FILE, TACKLE_* variables, --set flags. See `tackle config`.

Examples:
  tackle tools
  tackle call read '{\"path\": \"src/main.rs\"}'
  echo '{\"command\": \"git status\"}' | tackle call bash - --yes
  tackle config
  tackle permission explain bash 'git push'
  tackle trust";

#[derive(Debug, Parser)]
#[command(
    name = "tackle",
    version = generate::VERSION,
    about = "The tool runtime for coding agents",
    after_help = MAIN_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Where managed outputs, saved approvals and trusted projects live (default: the platform
    /// data directory, e.g. ~/.local/share/tackle).
    #[arg(long, global = true, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Log each settle, permission decision and process to stderr (-vv: more); RUST_LOG
    /// takes tracing-subscriber directives instead.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
}

#[derive(Debug, Subcommand)]
enum SessionCommand {
    /// Delete everything the session left: its todo list and its managed outputs.
    Delete {
        /// The session id given to `tackle call --session`.
        id: String,
        #[command(flatten)]
        host: HostArgs,
    },
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the definitions of the available tools.
    #[command(
        after_help = "Examples:\n  tackle tools\n  tackle tools --format json --dir ~/src/app\n  tackle tools --set 'permission.bash=\"deny\"'"
    )]
    Tools {
        /// Output format.
        #[arg(long, value_enum, default_value_t = ToolsFormat::Text)]
        format: ToolsFormat,
        #[command(flatten)]
        host: HostArgs,
        /// The model the catalog is for (e.g. gpt-5, claude-sonnet-4-5): OpenAI's GPT models
        /// are offered apply_patch instead of edit and write, the others edit and write.
        #[arg(long, value_name = "ID")]
        model: Option<String>,
    },
    /// Settle one tool call and print its result.
    #[command(
        after_help = "Examples:\n  tackle call read '{\"path\": \"README.md\"}'\n  tackle call bash '{\"command\": \"ls\"}' --yes --json\n  tackle call write - --yes < input.json\n  tackle call grep '{\"pattern\": \"TODO\"}' --set search.budget_ms=5000"
    )]
    Call {
        /// The tool name.
        tool: String,
        /// The input as JSON, or `-` to read it from standard input; defaults to `{}`.
        input: Option<String>,
        #[command(flatten)]
        host: HostArgs,
        /// Answer every permission ask with "once" (a deny still denies).
        #[arg(long)]
        yes: bool,
        /// Print the whole settlement as JSON instead of the model text.
        #[arg(long)]
        json: bool,
        /// The session the call belongs to.
        #[arg(long, value_name = "ID", default_value = "cli")]
        session: String,
        /// The agent making the call (its `agent.<name>.permission` rules apply).
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
    },
    /// Delete a session (`call --session ID`): its todo list and its managed outputs.
    #[command(after_help = "Examples:\n  tackle session delete review-42 --dir ~/src/app")]
    Session {
        #[command(subcommand)]
        command: SessionCommand,
    },
    /// Print the effective configuration, each value with where it came from.
    #[command(
        after_help = "Examples:\n  tackle config\n  tackle config --set output.max_lines=500\n  tackle config schema > tackle.schema.json"
    )]
    Config {
        #[command(subcommand)]
        command: Option<config_cmd::ConfigCommand>,
        #[command(flatten)]
        host: HostArgs,
    },
    /// Explain the permission rules, and list or revoke saved approvals.
    #[command(
        after_help = "Examples:\n  tackle permission explain bash 'rm -rf build'\n  tackle permission list\n  tackle permission revoke bash 'git push *'\n  tackle permission clear"
    )]
    Permission {
        #[command(subcommand)]
        command: permission_cmd::PermissionCommand,
    },
    /// Trust a project's configuration (tackle.json, opencode.json, ...) as it is now. Until
    /// then its rules can only tighten yours: its allow rules are ignored, and so are its
    /// settings that widen what tools reach. A change to a file makes it untrusted again.
    #[command(
        after_help = "Examples:\n  tackle trust\n  tackle trust ~/src/app\n  tackle trust --list"
    )]
    Trust {
        /// The project directory; defaults to the current directory.
        #[arg(value_name = "DIR", conflicts_with = "list")]
        dir: Option<PathBuf>,
        /// List the trusted files and whether each is unchanged.
        #[arg(long)]
        list: bool,
    },
    /// List the configured MCP servers, or one server's tools.
    #[command(after_help = "Examples:\n  tackle mcp list\n  tackle mcp tools github")]
    Mcp {
        #[command(subcommand)]
        command: mcp_cmd::McpCommand,
    },
    /// Read the audit log (`audit.path`): every call and permission decision.
    #[command(after_help = "Examples:\n  tackle audit tail -n 50\n  tackle audit show 42")]
    Audit {
        #[command(subcommand)]
        command: audit_cmd::AuditCommand,
    },
    /// Serve every tool to an MCP client over stdio (one connection, one session).
    #[command(
        after_help = "Examples:\n  tackle serve\n  tackle serve --dir ~/src/app --ask allow-once\n\nMCP client configuration: {\"command\": [\"tackle\", \"serve\"]}"
    )]
    Serve(serve::ServeArgs),
    /// Forget the trust of a project's configuration.
    #[command(after_help = "Examples:\n  tackle untrust\n  tackle untrust ~/src/app")]
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
    /// Decode one image, PDF or notebook for `read`, request on stdin, reply on stdout: the
    /// worker process tackle starts itself, never a command for people.
    #[command(hide = true)]
    MediaWorker,
}

/// The subcommand tackle starts itself as to decode media ([`Command::MediaWorker`]).
const MEDIA_WORKER_COMMAND: &str = "media-worker";

/// This program as `read`'s media worker: its own path (never looked up in `PATH`) and the
/// hidden subcommand. `None` when the path is unknown: decoding then stays in-process.
pub(crate) fn media_worker() -> Option<tackle_builtins::read::MediaWorker> {
    let program = std::env::current_exe().ok()?;
    Some(tackle_builtins::read::MediaWorker::new(
        program,
        [MEDIA_WORKER_COMMAND],
    ))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ToolsFormat {
    /// One line per tool: name and the first line of its description.
    Text,
    /// The definitions as a JSON array.
    Json,
    /// OpenAI Chat Completions function tools.
    Openai,
    /// OpenAI Chat Completions function tools in strict mode, where a schema allows it.
    OpenaiStrict,
    /// OpenAI Responses function tools (strict where a schema allows it).
    OpenaiResponses,
    /// Anthropic Messages tools.
    Anthropic,
    /// Gemini function declarations.
    Gemini,
    /// MCP tools, as `tools/list` returns them.
    Mcp,
}

fn main() -> ExitCode {
    // Before anything runs: commands run as this user and must not read this process's
    // environment (its credentials) through /proc/<pid>.
    if let Err(err) = tackle_builtins::bash::make_host_non_dumpable() {
        eprintln!("tackle: warning: cannot protect this process from its commands: {err}");
    }
    let cli = Cli::parse();
    // The worker's stdout is its reply and nothing else: no logging, no runtime.
    if matches!(cli.command, Command::MediaWorker) {
        return tackle_builtins::read::media_worker_main();
    }
    logging::init(cli.verbose);
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
    let data_dir = cli.data_dir;
    let outcome = runtime.block_on(async move {
        match cli.command {
            Command::Tools {
                format,
                host,
                model,
            } => tools::run(format, model.as_deref(), &host, data_dir.as_deref()).await,
            Command::Call {
                tool,
                input,
                host,
                yes,
                json,
                session,
                agent,
            } => {
                let call = call::CallArgs {
                    tool,
                    input,
                    yes,
                    json,
                    session,
                    agent,
                };
                call::run(&call, &host, data_dir.as_deref()).await
            }
            Command::Session {
                command: SessionCommand::Delete { id, host },
            } => {
                // Deleting needs no tool built: `todowrite` is the cheapest to name.
                let host = host
                    .builder(data_dir.as_deref())?
                    .only("todowrite")
                    .build()?;
                host.delete_session(&id)?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Config { command, host } => {
                config_cmd::run(command.as_ref(), &host, data_dir.as_deref())
            }
            Command::Permission { command } => permission_cmd::run(command, data_dir.as_deref()),
            Command::Trust { list: true, .. } => trust_cmd::list(data_dir.as_deref()),
            Command::Trust { dir, list: false } => {
                trust_cmd::trust(dir.as_deref(), data_dir.as_deref())
            }
            Command::Audit { command } => audit_cmd::run(&command, data_dir.as_deref()).await,
            Command::Serve(args) => serve::run(&args, data_dir.as_deref()).await,
            Command::Mcp { command } => mcp_cmd::run(&command, data_dir.as_deref()).await,
            Command::Untrust { dir } => trust_cmd::untrust(dir.as_deref(), data_dir.as_deref()),
            Command::Completions { shell } => generate::completions(shell),
            Command::Man => generate::man(),
            Command::Reference => generate::reference(),
            // Served above, before the runtime.
            Command::MediaWorker => Ok(tackle_builtins::read::media_worker_main()),
        }
    });
    match outcome {
        Ok(code) => code,
        Err(err) => report(&err),
    }
}

fn report(err: &CliError) -> ExitCode {
    eprintln!("tackle: {err}");
    ExitCode::from(2)
}

/// Writes `text` to stdout.
pub(crate) fn print(text: &str) -> Result<ExitCode, CliError> {
    use std::io::Write as _;
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(CliError::Output)?;
    Ok(ExitCode::SUCCESS)
}
