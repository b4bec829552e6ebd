//! Project automation for tackle, run as `cargo xtask <task>`.
//!
//! - `ci`: everything CI checks, in order: fmt, clippy (`-D warnings`), nextest, doc tests, the
//!   feature matrix (tool-core and builtins with no default features, then each feature alone),
//!   cargo-deny (bans, licences, sources; `deny.toml`), tidy, public-api, the size budget of
//!   packaged files, docs.
//! - `tidy`: the architecture and hygiene rules that the compiler cannot check (see [`tidy`]).
//! - `public-api [--bless]`: each library crate's public surface, rendered from rustdoc JSON
//!   (stable toolchain, `RUSTC_BOOTSTRAP=1`), must match its listing in `docs/api/`, so an API
//!   change shows up in review; `--bless` rewrites the listings (see [`public_api`]).
//! - `bench <name>`: the benchmarks that issues ask for, each against its named peer;
//!   `bench --report` runs them all and writes `docs/benchmarks.md` (see [`bench_report`]).
//! - `fuzz [--seconds N] [--keep-going] [--build-only] [TARGET...]`: the cargo-fuzz targets of `fuzz/`, each
//!   for N seconds (default 60), with the nightly toolchain (see [`fuzz`]).
//!
//! - `install [--root DIR]`: builds `tackle` as it is released and installs it (see
//!   [`install`]).
//! - `release <major|minor|patch|X.Y.Z> [--dry-run] [--skip-ci]`: bump, changelog, package,
//!   tag; never pushes or publishes (see [`release`]).
//!
//! - `docs [--bless]`: rustdoc with `-D warnings`, and the generated `docs/tools.md` and
//!   `docs/config.md` must match the code (see [`docs`]); `man`: the man page, from clap.
//!
//! xtask is not part of the product; it may spawn processes and read the tree freely.

mod bench_report;
mod docs;
mod fuzz;
mod install;
mod public_api;
mod release;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(&root),
        Some("tidy") => tidy::run(&root).map_err(|problems| problems.join("\n")),
        Some("public-api") => match &args[1..] {
            [] => public_api::run(&root, false),
            [flag] if flag == "--bless" => public_api::run(&root, true),
            _ => Err(USAGE.to_owned()),
        },
        Some("bench") => bench(&root, &args[1..]),
        Some("fuzz") => fuzz::run(&root, &args[1..]),
        Some("install") => install::command(&root, &args[1..]),
        Some("release") => release::command(&root, &args[1..]),
        Some("docs") => match &args[1..] {
            [] => docs::run(&root, false),
            [flag] if flag == "--bless" => docs::run(&root, true),
            _ => Err(USAGE.to_owned()),
        },
        Some("man") => docs::man(&root),
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: cargo xtask <ci | tidy | public-api [--bless] | bench <name> | bench --report | \
                     fuzz [--seconds N] [--keep-going] [--build-only] [TARGET...] | \
                     install [--root DIR] | \
                     release <major|minor|patch|X.Y.Z> [--dry-run] [--skip-ci] | \
                     docs [--bless] | man>";

/// A benchmark: `cargo xtask bench <name>` runs `cargo bench -p <package> --bench <target>`.
///
/// Each bench is a `harness = false` target in its crate's `benches/` that measures tackle and
/// the named peer in the same run and prints both, their ratio and the target it must meet.
struct Bench {
    name: &'static str,
    package: &'static str,
    target: &'static str,
    /// The bench runs the `tackle` binary: xtask builds it as `cargo xtask install` does and
    /// names it in `TACKLE_BENCH_BINARY`, so what is measured is what users run.
    installed: bool,
}

/// Every benchmark an issue asks for; each issue with a performance target adds its own line.
const BENCHES: &[Bench] = &[
    Bench {
        name: "mcp",
        package: "tackle",
        target: "mcp",
        installed: true,
    },
    Bench {
        name: "read",
        package: "tackle-builtins",
        target: "read",
        installed: false,
    },
    Bench {
        name: "edit",
        package: "tackle-builtins",
        target: "edit",
        installed: false,
    },
    Bench {
        name: "settle",
        package: "tackle-registry",
        target: "settle",
        installed: false,
    },
    // The same name: `bench settle` also measures a settle watched by tracing and the audit log.
    Bench {
        name: "settle",
        package: "tackle-host",
        target: "settle_audit",
        installed: false,
    },
    Bench {
        name: "bound",
        package: "tackle-output-store",
        target: "bound",
        installed: false,
    },
    Bench {
        name: "permission",
        package: "tackle-permission",
        target: "permission",
        installed: false,
    },
    Bench {
        name: "apply_patch",
        package: "tackle-builtins",
        target: "apply_patch",
        installed: false,
    },
    Bench {
        name: "search",
        package: "tackle-builtins",
        target: "search",
        installed: false,
    },
    Bench {
        name: "bash",
        package: "tackle-builtins",
        target: "bash",
        installed: false,
    },
    Bench {
        name: "process",
        package: "tackle",
        target: "process",
        installed: true,
    },
    Bench {
        name: "mcp-client",
        package: "tackle-mcp-client",
        target: "mcp_client",
        installed: false,
    },
];

fn workspace_root() -> PathBuf {
    // CARGO_MANIFEST_DIR is <root>/xtask at build time.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn ci(root: &Path) -> Result<(), String> {
    let steps: &[&[&str]] = &[
        &["fmt", "--all", "--check"],
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[
            "nextest",
            "run",
            "--workspace",
            "--locked",
            "--no-fail-fast",
        ],
        &["test", "--workspace", "--doc", "--locked"],
        // The embedding example is documentation that must keep working: it runs.
        &[
            "run",
            "--locked",
            "--quiet",
            "--package",
            "tackle-host",
            "--example",
            "embed",
        ],
        &[
            "deny",
            "check",
            "--hide-inclusion-graph",
            "bans",
            "licenses",
            "sources",
        ],
    ];
    for step in steps {
        cargo(root, step)?;
    }
    feature_matrix(root)?;
    tidy::run(root).map_err(|problems| problems.join("\n"))?;
    public_api::run(root, false)?;
    release::check_packages(root)?;
    docs::run(root, false)?;
    eprintln!("xtask: ci passed");
    Ok(())
}

/// Crates whose features select what a downstream crate gets, and the features that must each
/// build and pass the tests alone (after the crate with none of them).
const FEATURE_MATRIX: &[(&str, &[&str])] = &[
    // Its only feature is its default, which the workspace run already covers.
    ("tackle-tool-core", &[]),
    (
        "tackle-builtins",
        &["bash", "search", "apply-patch", "web", "media"],
    ),
];

/// Clippy and the tests of each crate in [`FEATURE_MATRIX`] with no default features, then
/// with each feature alone (the workspace run already covered all of them together).
fn feature_matrix(root: &Path) -> Result<(), String> {
    for (package, features) in FEATURE_MATRIX {
        for feature in std::iter::once(None).chain(features.iter().map(Some)) {
            let mut selection = vec!["--package", package, "--no-default-features"];
            if let Some(feature) = feature {
                selection.extend(["--features", feature]);
            }
            let mut clippy = vec!["clippy", "--all-targets", "--locked"];
            clippy.extend(&selection);
            clippy.extend(["--", "-D", "warnings"]);
            cargo(root, &clippy)?;
            let mut nextest = vec![
                "nextest",
                "run",
                "--locked",
                "--no-tests=warn",
                "--no-fail-fast",
            ];
            nextest.extend(&selection);
            cargo(root, &nextest)?;
        }
    }
    Ok(())
}

pub(crate) fn cargo(root: &Path, args: &[&str]) -> Result<(), String> {
    let mut command = Command::new(cargo_program());
    command.args(args).current_dir(root);
    run_cargo(command)
}

/// The cargo that runs xtask (`CARGO`), else the one on the `PATH`.
pub(crate) fn cargo_program() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// The compiler cargo would use (`RUSTC`), else the one on the `PATH`.
pub(crate) fn rustc_program() -> std::ffi::OsString {
    std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into())
}

/// Runs a cargo command, shown first (with the variables it sets) as one could type it.
pub(crate) fn run_cargo(mut command: Command) -> Result<(), String> {
    let vars: String = command
        .get_envs()
        .filter_map(|(key, value)| Some(format!("{}=\"{}\" ", key.to_str()?, value?.to_str()?)))
        .collect();
    let args: Vec<_> = command
        .get_args()
        .map(|arg| arg.to_string_lossy())
        .collect();
    let shown = format!("{vars}cargo {}", args.join(" "));
    eprintln!("xtask: {shown}");
    let status = command
        .status()
        .map_err(|err| format!("cannot run cargo: {err}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed ({status})"))
    }
}

fn bench(root: &Path, args: &[String]) -> Result<(), String> {
    let mut names: Vec<&str> = BENCHES.iter().map(|b| b.name).collect();
    names.dedup();
    let available = if names.is_empty() {
        "(none yet)".to_owned()
    } else {
        names.join(", ")
    };
    if args.first().is_some_and(|a| a == "--report") {
        return bench_report::run(root, BENCHES);
    }
    let Some(name) = args.first() else {
        return Err(format!(
            "usage: cargo xtask bench <name> [args...]; available: {available}"
        ));
    };
    let matching: Vec<&Bench> = BENCHES.iter().filter(|b| b.name == name).collect();
    if matching.is_empty() {
        return Err(format!("unknown bench `{name}`; available: {available}"));
    }
    for bench in matching {
        let mut command = bench_command(root, bench)?;
        command.arg("--").args(&args[1..]);
        run_cargo(command)?;
    }
    Ok(())
}

/// `cargo bench` of `bench`, with the installed binary built first when it runs one.
fn bench_command(root: &Path, bench: &Bench) -> Result<Command, String> {
    let mut command = Command::new(cargo_program());
    command
        .args(["bench", "--package", bench.package, "--bench", bench.target])
        .current_dir(root);
    if bench.installed {
        let binary = install::Build::for_host()?.build(root, None)?;
        command.env("TACKLE_BENCH_BINARY", binary);
    }
    Ok(command)
}
