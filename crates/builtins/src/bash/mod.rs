//! The `bash` tool (reference BA1–BA11): a shell command that cannot hang the call,
//! cannot leak unbounded output, and is permitted command by command.
//!
//! Order of a call: decode (timeout 1..=600000 ms) → resolve `workdir` through the Location
//! (BA1) → `external_directory` if it is outside (BA2) → analyse the line (`parse`) and plan
//! its permission (`policy`) → `external_directory` for `cd` targets, file-command paths and
//! redirect targets outside the Location → `bash` with one resource per simple command (BA4,
//! beyond the reference) → the working directory must still be a directory (BA5) → run
//! (`process`, `supervise`) → normalise and report (`output`).
//!
//! Invariants:
//! - Nothing runs before every assertion passed; a denial runs nothing.
//! - The command's whole process group, and every process that left it (`setsid`, double
//!   forks, daemons), is gone when the call returns, is cancelled or its future is dropped
//!   (TERM, then KILL after 3 s), and the call's orphans are reaped — unless the call made it
//!   a background job (`background`, `background_on_timeout`): then the same holds when the
//!   job is killed, its session deleted or its [`JobStore`] dropped (`jobs`), and if the host
//!   process dies, `SIGKILL` included, the kernel empties the job's PID namespace
//!   (`namespace`), or where there is none a guardian process kills what it finds of the job
//!   (`guardian`; see [`JobContainment`] for what it can miss).
//! - Capture is bounded per stream (1 MiB) and every dropped byte is counted; model output is
//!   bounded by settle, not here (reference A16–A17).
//!
//! Process-wide effect (Linux): the first command run makes the host process a child subreaper
//! (`PR_SET_CHILD_SUBREAPER`), so that the command's orphans are reparented to it rather than
//! to init and can be found and terminated. The flag cannot be scoped to one call: orphans of
//! the host's other children are then reparented to the host too. They are never signalled or
//! waited for here (a process is touched only once it is known to be a command's), so a host
//! that starts daemons of its own should reap them (or not mind their zombies).

mod background;
mod capture;
mod containment;
mod env;
mod group;
mod guardian;
mod hidden;
mod job_tools;
mod jobs;
mod launchers;
mod live;
mod namespace;
mod normalize;
mod output;
mod parse;
mod pdeath;
mod policy;
mod process;
mod secrets;
mod shell;
mod supervise;
mod tree;
mod words;
mod wrappers;

use crate::limits::{MAX_COMMAND_CHARS, MAX_PATH_CHARS, MAX_TEXT_CHARS};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tackle_permission::{Permission, Request};
use tackle_tool_core::{Context, Execute, Halt, Rendered, Tool, ToolError, ToolFailure};

pub use containment::JobContainment;
pub use job_tools::{
    JobKillInput, JobList, JobListInput, JobOutput, JobOutputInput, JobStatus, JobSummary,
    MAX_WAIT_MS,
};
pub(crate) use job_tools::{job_kill_tool, job_list_tool, job_output_tool};
pub use jobs::{JOB_OUTPUT_BYTES, JobStore, MAX_KEPT_JOBS, MAX_RUNNING_JOBS};
pub use normalize::{terminal_text, terminal_text_bound};
pub use output::{BashOutput, TerminatedProcess};
pub use process::make_host_non_dumpable;

use crate::authorize::prefixed_denial;
use crate::location::{Kind, Location};
use process::{Job, RunError};

/// Default timeout of a command, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Largest timeout a call may ask for, in milliseconds.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Bytes of stdout, and separately of stderr, kept in memory per command.
pub const MAX_CAPTURE_BYTES: usize = 1_048_576;
/// Time between TERM and KILL when a command's group is terminated.
pub const FORCE_KILL_AFTER: Duration = group::GRACE;

/// The input of `bash`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct BashInput {
    /// The command to execute.
    #[schemars(length(max = MAX_COMMAND_CHARS))]
    pub command: String,
    /// The directory to run the command in, relative to the workspace directory or absolute.
    /// Defaults to the workspace directory. Use this instead of `cd <dir> && <command>`.
    #[schemars(length(max = MAX_PATH_CHARS))]
    pub workdir: Option<String>,
    /// Optional timeout in milliseconds (default 120000, at most 600000).
    #[schemars(with = "Option<u64>", range(min = 1, max = 600_000))]
    #[schemars(extend("x-aliases" = ["timeout_ms"]))]
    pub timeout: Option<TimeoutMs>,
    /// A clear, concise description of what this command does in 5-10 words.
    #[schemars(length(max = MAX_TEXT_CHARS))]
    pub description: Option<String>,
    /// Run the command as a background job (a dev server, a watcher): the call returns after
    /// its first output with a job id for job_output and job_kill. No timeout applies.
    #[serde(default)]
    #[schemars(extend("x-aliases" = ["run_in_background"]))]
    pub background: bool,
    /// If the command is still running at its timeout, keep it running as a background job
    /// instead of terminating it.
    #[serde(default)]
    pub background_on_timeout: bool,
}

/// A command timeout in milliseconds: positive and at most [`MAX_TIMEOUT_MS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "u64")]
pub struct TimeoutMs(u64);

impl TimeoutMs {
    /// The timeout in milliseconds.
    pub fn millis(self) -> u64 {
        self.0
    }
}

impl TryFrom<u64> for TimeoutMs {
    type Error = String;

    fn try_from(ms: u64) -> Result<Self, String> {
        if ms == 0 || ms > MAX_TIMEOUT_MS {
            return Err(format!(
                "the timeout must be a positive number of milliseconds, at most \
                 {MAX_TIMEOUT_MS}; got {ms}"
            ));
        }
        Ok(Self(ms))
    }
}

/// How `bash` runs commands.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BashOptions {
    /// The shell given `-c <command>`: the configured `shell`, or `None` for `bash` found on
    /// the `PATH` of the environment commands start from (`env`, else the host process's),
    /// then `/bin/bash`, and `/bin/sh` only where there is no bash. The tool looks it up once,
    /// when it is built ([`BashOptions::resolved_shell`]).
    pub shell: Option<PathBuf>,
    /// Names, or `*` patterns, of environment variables that commands see unchanged even when
    /// they look like credentials, by name or by value, or hold a URL with a password
    /// (`GITHUB_TOKEN`, `AWS_*`).
    pub env_allow: Vec<String>,
    /// The environment commands start from; `None`: the host process's, read at each call.
    pub env: Option<Vec<(OsString, OsString)>>,
    /// Bytes kept per stream ([`MAX_CAPTURE_BYTES`]).
    pub capture_limit: usize,
    /// The timeout of a call that gives none, in milliseconds ([`DEFAULT_TIMEOUT_MS`]).
    pub default_timeout_ms: u64,
    /// The longest timeout a call gets, in milliseconds (at most [`MAX_TIMEOUT_MS`]); a
    /// call asking for more runs with this one.
    pub max_timeout_ms: u64,
}

impl Default for BashOptions {
    fn default() -> Self {
        Self {
            shell: None,
            env_allow: Vec::new(),
            env: None,
            capture_limit: MAX_CAPTURE_BYTES,
            default_timeout_ms: DEFAULT_TIMEOUT_MS,
            max_timeout_ms: MAX_TIMEOUT_MS,
        }
    }
}

impl BashOptions {
    /// The shell commands run with: [`BashOptions::shell`], or the one found on the `PATH`
    /// commands start with when none is configured.
    pub fn resolved_shell(&self) -> PathBuf {
        if let Some(shell) = &self.shell {
            return shell.clone();
        }
        let path = match &self.env {
            Some(env) => env::value_in(env, "PATH").map(ToOwned::to_owned),
            None => std::env::var_os("PATH"),
        };
        shell::default_shell(path.as_deref())
    }
}

/// The exact values that `bash` keeps from commands' environments under `options`, so a host
/// can redact them from what tools return: every variable withheld as a credential (by name or
/// by the shape of its value, unless `env_allow` lets it through), and for a URL whose password
/// was removed, the whole original value and the password (also percent-decoded). Values
/// shorter than 8 bytes are left out (redacting them would garble ordinary output); the rest
/// come longest first, without duplicates, so replacing them in order never leaves part of a
/// longer one. Read from `options.env`, or the host process's environment at the time of the
/// call, as each command does.
pub fn scrubbed_values(options: &BashOptions) -> Vec<String> {
    env::command_env(base_env(options), &options.env_allow).secrets
}

/// The environment a command starts from under `options`: `options.env` (or the host
/// process's environment) without the credentials and URL passwords [`scrubbed_values`]
/// lists, plus the variables that keep programs from waiting for a human. For a host that
/// starts other programs (an MCP server) with what `bash` would give a command.
pub fn scrubbed_env(options: &BashOptions) -> Vec<(OsString, OsString)> {
    env::command_env(base_env(options), &options.env_allow).vars
}

/// The environment commands start from.
fn base_env(options: &BashOptions) -> Vec<(OsString, OsString)> {
    match &options.env {
        Some(env) => env.clone(),
        None => std::env::vars_os().collect(),
    }
}

fn description(shell: &Path, options: &BashOptions) -> String {
    format!(
        "Executes a shell command with {shell} and returns its output.\n\
\n\
- The command runs in the workspace directory, or in `workdir` (relative to the workspace, \
or absolute). Use `workdir` instead of `cd <dir> && ...`. Each call starts a fresh shell: \
directory changes and variables do not carry over.\n\
- There is no terminal and standard input is empty: editors, pagers and prompts cannot be \
used. Pass non-interactive flags (`-y`, `--no-edit`, `-m <message>`); PAGER and GIT_PAGER \
are `cat`.\n\
- The command is stopped after `timeout` ms (default {default}, at most {max}). Processes still running when the command exits are terminated, detached \
ones (`setsid`, `nohup`, daemons) included, so do not leave servers running with `&`.\n\
- For a dev server, a watcher or anything meant to keep running, set `background: true`: \
the command becomes a background job of this session and the call returns after its first \
output with a job id. Read what it prints later with job_output, stop it with job_kill, see \
all jobs with job_list. Jobs end with the session. For a long build, \
`background_on_timeout: true` keeps it running as a job when the timeout passes.\n\
- stdout and stderr are each captured up to 1 MiB (the first and last 512 KiB are kept and \
the rest counted); colour codes and progress redraws are removed. A non-zero exit code is \
reported, not treated as a failure.\n\
- Environment variables that look like credentials (by name or by value) are removed, and \
passwords are removed from URLs.\n\
- Prefer the read, edit, write, glob and grep tools for reading, changing and finding files.",
        shell = shell::named(shell),
        default = options.default_timeout_ms.min(options.max_timeout_ms),
        max = options.max_timeout_ms,
    )
}

/// What a command line is asked about before it runs, for hosts that preview or explain a
/// call (and for tests): the same plan the tool asserts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandPermission {
    /// `<dir>/*` of every directory outside the Location that a `cd` target, a path argument
    /// of a file command or an output redirect lies in (`external_directory`).
    pub external_directories: Vec<String>,
    /// One resource per simple command, quotes resolved, plus the text of every part that
    /// cannot be resolved statically (`bash`).
    pub resources: Vec<String>,
    /// The patterns an "always" reply saves (`git checkout *`).
    pub save: Vec<String>,
    /// Parts that cannot be resolved statically, with why; they make the call ask.
    pub unresolved: Vec<UnresolvedPart>,
    /// Advisory warnings (reference BA3).
    pub warnings: Vec<String>,
}

/// A part of a command line that cannot be resolved without running it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnresolvedPart {
    /// Its source text.
    pub text: String,
    /// Why it cannot be resolved.
    pub reason: String,
}

/// The permission plan of `command` run in `cwd` (canonical, inside or outside `location`),
/// with `home` as `~`.
pub fn command_permission(
    command: &str,
    location: &Location,
    cwd: &Path,
    home: Option<&Path>,
) -> CommandPermission {
    let analysis = parse::analyze(command);
    let plan = policy::plan(
        command,
        &analysis,
        policy::Place {
            location,
            cwd,
            home,
        },
    );
    CommandPermission {
        external_directories: plan.external,
        resources: plan.resources,
        save: plan.save,
        unresolved: plan
            .unresolved
            .into_iter()
            .map(|u| UnresolvedPart {
                text: u.text,
                reason: u.reason.to_owned(),
            })
            .collect(),
        warnings: plan.warnings,
    }
}

/// The `bash` tool for `location`, asserting through `permission`, run as `options` say,
/// keeping background jobs in `jobs`.
pub(crate) fn bash_tool(
    location: Location,
    permission: Permission,
    options: BashOptions,
    jobs: JobStore,
) -> Tool {
    let shell = options.resolved_shell();
    let description = description(&shell, &options);
    Tool::typed(
        description,
        BashTool {
            location,
            permission,
            shell,
            options,
            jobs,
        },
    )
    .rendered()
    .build()
}

struct BashTool {
    location: Location,
    permission: Permission,
    /// The shell every command runs with, looked up when the tool was built.
    shell: PathBuf,
    options: BashOptions,
    jobs: JobStore,
}

fn failure(message: impl Into<String>) -> ToolError {
    ToolError::failure(message)
}

impl Execute for BashTool {
    type Input = BashInput;
    type Output = Rendered<BashOutput>;

    async fn execute(
        &self,
        input: BashInput,
        ctx: &Context,
    ) -> Result<Rendered<BashOutput>, ToolError> {
        let command = input.command;
        if command.trim().is_empty() {
            return Err(failure("The command is empty."));
        }
        if command.contains('\0') {
            return Err(failure("The command contains a NUL character."));
        }
        if input.background || input.background_on_timeout {
            // Before anyone is asked: approving a command that cannot start helps nobody.
            if let Some(refusal) = self.jobs.refusal() {
                return Err(failure(refusal));
            }
        }
        let analysis = parse::analyze(&command);
        if let Some(program) = &analysis.interactive {
            return Err(failure(format!(
                "`{program}` is an interactive editor, and commands here run without a \
                 terminal, so it would only wait for input that never comes. Edit files with \
                 the edit or write tools, or run the editor in a batch mode (for example \
                 `vim -es`)."
            )));
        }

        // BA1–BA2: the working directory.
        let workdir = input.workdir.as_deref().unwrap_or(".");
        let target = self
            .location
            .resolve(workdir, Kind::Directory)
            .map_err(|err| failure(format!("Invalid workdir: {err}")))?;
        let workdir_pattern = target.external.as_ref().map(|e| e.pattern.clone());
        if let Some(pattern) = &workdir_pattern {
            self.assert_external(ctx, vec![pattern.clone()], &command)
                .await?;
        }

        // The paths the command touches, then every simple command.
        let env = env::command_env(base_env(&self.options), &self.options.env_allow);
        let home = env.get("HOME").map(Path::new);
        let place = policy::Place {
            location: &self.location,
            cwd: &target.canonical,
            home,
        };
        let plan = policy::plan(&command, &analysis, place);
        let external: Vec<String> = plan
            .external
            .iter()
            .filter(|p| workdir_pattern.as_ref() != Some(*p))
            .cloned()
            .collect();
        if !external.is_empty() {
            self.assert_external(ctx, external, &command).await?;
        }
        let mut request = Request::new(ctx, "bash", plan.resources.clone())
            .with_save(plan.save.clone())
            .with_metadata("command", json!(command));
        if !plan.unresolved.is_empty() {
            let unresolved: Vec<Value> = plan
                .unresolved
                .iter()
                .map(|u| json!({"text": u.text, "reason": u.reason}))
                .collect();
            // A rule written for a command (`git status*`) may match such a text by prefix;
            // only the user can judge it.
            request = request
                .with_metadata("unresolved", Value::Array(unresolved))
                .with_always_ask();
        }
        if policy::names_a_rule(&plan.stray, self.permission.rules()) {
            // Defence in depth: a denied or asked program is named where no command we
            // resolved starts (an unknown wrapper, a misread syntax); only the user can judge.
            request = request.with_always_ask();
        }
        self.permission.assert(request).await.map_err(|err| {
            prefixed_denial(&format!("Unable to execute command: {command}"), err)
        })?;

        // BA5: it may have changed while permission was being asked.
        if !std::fs::metadata(&target.canonical).is_ok_and(|meta| meta.is_dir()) {
            return Err(failure(format!(
                "Working directory is not a directory: {}",
                target.canonical.display()
            )));
        }

        // The host's ceiling may be lower than what the schema accepts: the call runs with it.
        let timeout_ms = input
            .timeout
            .map_or(self.options.default_timeout_ms, TimeoutMs::millis)
            .min(self.options.max_timeout_ms);
        if input.background || input.background_on_timeout {
            let mode = if input.background {
                background::Mode::Background
            } else {
                background::Mode::KeepOnTimeout(Duration::from_millis(timeout_ms))
            };
            let spec = jobs::Spec {
                shell: self.shell.clone(),
                command: command.clone(),
                cwd: target.canonical.clone(),
                env: env.vars.clone(),
            };
            let call = output::Call {
                command,
                cwd: target.canonical.display().to_string(),
                shell: self.shell.display().to_string(),
                timeout_ms,
                capture_limit: self.options.capture_limit,
                warnings: plan.warnings,
            };
            let job = background::JobCall {
                store: &self.jobs,
                session: &ctx.session_id,
                cancel: &ctx.cancel,
                max_structured_bytes: ctx.budget.max_structured_bytes(),
            };
            return background::run(job, spec, call, mode).await;
        }
        let job = Job {
            shell: &self.shell,
            command: &command,
            cwd: &target.canonical,
            env: &env.vars,
            timeout: Duration::from_millis(timeout_ms),
            capture_limit: self.options.capture_limit,
            progress: &ctx.progress,
        };
        let finished = match process::run(job, &ctx.cancel).await {
            Ok(finished) => finished,
            Err(RunError::Cancelled) => return Err(Halt::Cancelled.into()),
            Err(err) => {
                // BA11, with the cause for the host.
                let mut metadata = Map::new();
                metadata.insert("reason".to_owned(), json!(err.to_string()));
                return Err(
                    ToolFailure::new(format!("Unable to execute command: {command}"))
                        .with_metadata(metadata)
                        .into(),
                );
            }
        };
        let call = output::Call {
            command,
            cwd: target.canonical.display().to_string(),
            shell: self.shell.display().to_string(),
            timeout_ms,
            capture_limit: self.options.capture_limit,
            warnings: plan.warnings,
        };
        Ok(output::build(
            call,
            finished,
            ctx.budget.max_structured_bytes(),
        ))
    }
}

impl BashTool {
    async fn assert_external(
        &self,
        ctx: &Context,
        patterns: Vec<String>,
        command: &str,
    ) -> Result<(), ToolError> {
        let request = Request::new(ctx, "external_directory", patterns.clone())
            .with_save(patterns)
            .with_metadata("command", json!(command));
        self.permission
            .assert(request)
            .await
            .map_err(|err| prefixed_denial(&format!("Unable to execute command: {command}"), err))
    }
}
