//! `tackle serve`: every tool to an MCP client over stdio (the `tackle-mcp` crate).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use tackle_host::{Environment, Host};
use tackle_mcp::{AskPolicy, ServeOptions};

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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Ask {
    Deny,
    AllowOnce,
}

/// Serves until the client disconnects.
pub(crate) async fn run(args: &ServeArgs, data_dir: Option<&Path>) -> Result<ExitCode, CliError> {
    tackle_mcp::log_to_stderr();
    // Check the flags now, so a typo fails at once rather than at the client's first request.
    let flags = args.host.flags()?;
    let dir = match &args.host.dir {
        Some(_) => Some(args.host.location()?),
        None => None,
    };
    let config = args.host.config.clone();
    let data_dir: Option<PathBuf> = data_dir.map(Path::to_path_buf);
    let build = move |location: &Path, asker| {
        let mut builder = Host::builder(location)
            .env(Environment::from_process())
            .asker(asker);
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
    match tackle_mcp::serve_stdio(options).await {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(err) => {
            tracing::error!(%err, "serve stopped");
            eprintln!("tackle: {err}");
            Ok(ExitCode::from(2))
        }
    }
}
