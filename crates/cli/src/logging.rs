//! Logs for people: `tracing` output on stderr, never on stdout (a call's result, or the MCP
//! protocol, owns stdout).
//!
//! `RUST_LOG` (or `TACKLE_LOG`, what `tackle serve` has always read) chooses what is shown,
//! with `tracing-subscriber`'s directives (`tackle_permission=info,debug`); otherwise `-v`
//! shows each settle, permission decision and process (info), `-vv` more (debug), `-vvv`
//! everything; without any, warnings only.

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;

/// What is shown without a directive: warnings, and rmcp's own only when they are errors.
const QUIET: &str = "warn,rmcp=error";

/// Installs the process's subscriber, writing to stderr.
pub(crate) fn init(verbose: u8) {
    let filter = ["RUST_LOG", "TACKLE_LOG"]
        .into_iter()
        .find_map(|key| EnvFilter::try_from_env(key).ok())
        .unwrap_or_else(|| EnvFilter::new(directive(verbose)));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        // A settle's outcome (duration, result type, bytes) is recorded on its span: one line
        // when it closes.
        .with_span_events(FmtSpan::CLOSE)
        .try_init();
}

/// The filter for `-v` given `verbose` times.
fn directive(verbose: u8) -> &'static str {
    match verbose {
        0 => QUIET,
        1 => "info,rmcp=warn",
        2 => "debug,rmcp=info",
        _ => "trace",
    }
}
