//! `tackle serve`: every tool to an MCP client over stdio (the `tackle-mcp` crate).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use tackle_builtins::FileMutation;
use tackle_builtins::bash::{JobContainment, JobStore};
use tackle_host::{Environment, Host};
use tackle_mcp::{AskPolicy, HttpOptions, ServeError, ServeOptions};

use crate::error::CliError;
use crate::options::HostArgs;

/// The flags of `tackle serve`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) host: HostArgs,
    /// What answers a permission ask when the client cannot be asked (it declares no
    /// elicitation): `deny` tells the model the call needs an approval in tackle.json;
    /// `allow-once` allows each such call (trusted pipelines only). A configured deny always
    /// denies.
    #[arg(long, value_enum, default_value_t = Ask::Deny)]
    pub(crate) ask: Ask,
    /// Serve over streamable HTTP on this loopback address (e.g. 127.0.0.1:8765) instead of
    /// stdio. Every request needs the bearer token: --token-file, else one generated into the
    /// data directory and printed once to stderr.
    #[arg(long, value_name = "ADDR", conflicts_with = "listen")]
    pub(crate) http: Option<SocketAddr>,
    /// Serve over HTTP on any address, loopback or not; requires --token-file.
    #[arg(long, value_name = "ADDR", requires = "token_file")]
    pub(crate) listen: Option<SocketAddr>,
    /// Start background jobs without a PID namespace of their own: a guardian process per job
    /// then kills what it can find of the job if tackle is killed. For jobs that need what a
    /// user namespace withholds (`sudo`, set-user-ID programs, the host's `ps`).
    #[arg(long)]
    pub(crate) no_job_namespace: bool,
    /// The file holding the bearer token HTTP clients must send.
    #[arg(long, value_name = "FILE")]
    pub(crate) token_file: Option<PathBuf>,
    /// A browser origin allowed to call over HTTP (scheme://host:port; repeatable). Without
    /// one, any request carrying an Origin is refused.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub(crate) allow_origin: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Ask {
    Deny,
    AllowOnce,
}

/// How long exiting waits for background jobs' processes to be gone: TERM, the grace period
/// before KILL, reaping, and slack.
const JOBS_SHUTDOWN: std::time::Duration = std::time::Duration::from_secs(10);

/// Serves until the client disconnects.
pub(crate) async fn run(args: &ServeArgs, data_dir: Option<&Path>) -> Result<ExitCode, CliError> {
    // Before anything is built or listened on: a server nested too deep ends at once.
    if let Err(err) = tackle_mcp::check_nesting(&Environment::from_process()) {
        eprintln!("tackle serve: {err}");
        return Ok(ExitCode::from(2));
    }
    // Check the flags now, so a typo fails at once rather than at the client's first request.
    let flags = args.host.flags()?;
    let dir = match &args.host.dir {
        Some(_) => Some(args.host.location()?),
        None => None,
    };
    let config = args.host.config.clone();
    let explicit_data_dir = data_dir;
    let data_dir: Option<PathBuf> = data_dir.map(Path::to_path_buf);
    // One per process: the sessions' edits of one file are serialised.
    let files = FileMutation::default();
    // One per process too, so that every session's jobs are ended before the process exits.
    let jobs = JobStore::with_containment(if args.no_job_namespace {
        JobContainment::Guardian
    } else {
        JobContainment::Namespace
    });
    let sessions_jobs = jobs.clone();
    let build = move |location: &Path, asker| {
        let mut builder = Host::builder(location)
            .env(Environment::from_process())
            .file_mutation(files.clone())
            .jobs(sessions_jobs.clone())
            .asker(asker);
        if let Some(worker) = crate::media_worker() {
            builder = builder.media_worker(worker);
        }
        if let Some(dir) = &data_dir {
            builder = builder.data_dir(dir);
        }
        if let Some(file) = &config {
            builder = builder.config_file(file);
        }
        for (key, value) in &flags {
            builder = builder.set(key.clone(), value.clone());
        }
        builder.build()
    };
    let mut options = ServeOptions::new(Arc::new(build));
    options.dir = dir;
    options.ask = match args.ask {
        Ask::Deny => AskPolicy::Deny,
        Ask::AllowOnce => AskPolicy::AllowOnce,
    };
    let outcome = match (args.http, args.listen) {
        (None, None) => tackle_mcp::serve_stdio(options).await,
        (http, listen) => match http_options(args, http, listen, explicit_data_dir) {
            Ok(http) => tackle_mcp::serve_http(options, http).await,
            Err(err) => Err(err),
        },
    };
    // The jobs' threads end with the process: their processes are terminated first.
    if !jobs.shutdown(JOBS_SHUTDOWN).await {
        eprintln!("tackle: some background jobs were still being terminated at exit");
    }
    match outcome {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(err) => {
            tracing::error!(%err, "serve stopped");
            eprintln!("tackle: {err}");
            Ok(ExitCode::from(2))
        }
    }
}

/// The HTTP options: `--http` must be loopback; `--listen` needs its own token file.
fn http_options(
    args: &ServeArgs,
    http: Option<SocketAddr>,
    listen: Option<SocketAddr>,
    data_dir: Option<&Path>,
) -> Result<HttpOptions, ServeError> {
    let addr = match (http, listen) {
        (Some(addr), _) if !addr.ip().is_loopback() => {
            return Err(ServeError::Listen(format!(
                "--http {addr} is not a loopback address; use --listen {addr} --token-file FILE"
            )));
        }
        (Some(addr), _) | (None, Some(addr)) => addr,
        (None, None) => return Err(ServeError::Listen("no address".to_owned())),
    };
    let token = match &args.token_file {
        Some(file) => tackle_mcp::http::read_token(file)?,
        None => {
            let dir =
                HostArgs::data_dir(data_dir).map_err(|err| ServeError::Token(err.to_string()))?;
            let (token, file) = tackle_mcp::http::generate_token(&dir)?;
            // Printed once, on stderr: stdout is not used by the HTTP server either.
            eprintln!(
                "tackle serve: bearer token (also in {}): {token}",
                file.display()
            );
            token
        }
    };
    let mut options = HttpOptions::new(addr, token);
    options.allowed_origins.clone_from(&args.allow_origin);
    if listen.is_some() && !addr.ip().is_unspecified() {
        options.allowed_hosts.push(addr.ip().to_string());
        options.allowed_hosts.push(addr.to_string());
    }
    eprintln!("tackle serve: MCP over HTTP on http://{addr}/mcp");
    Ok(options)
}
