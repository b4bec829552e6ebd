//! `cargo xtask fuzz [--seconds N] [--keep-going] [--build-only] [TARGET...]`: the cargo-fuzz
//! targets of `fuzz/` (docs/fuzzing.md says what each one checks).
//!
//! cargo-fuzz needs the nightly toolchain (sanitizers, `-Z` flags); the task finds it through
//! `rustup` and runs cargo-fuzz with it, installing cargo-fuzz under `<target>/tools` first
//! when it is missing, so a clean machine with a nightly toolchain needs nothing else. Each
//! target runs alone (one job) for N seconds over its grown corpus (`<target>/fuzz-corpus/`,
//! never committed) and its seeds (`fuzz/corpus/<target>/`, read-only: libFuzzer writes new
//! inputs to the first directory only). The task prints executions, corpus size and crashes
//! per target; any crash, timeout or out-of-memory fails it and names the reproducer.
//! `--keep-going` runs libFuzzer in fork mode, which records every failure and goes on until
//! the time is up (to collect several findings of one target in one run).

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The cargo-fuzz release the task installs.
const CARGO_FUZZ_VERSION: &str = "0.13.2";
const DEFAULT_SECONDS: u64 = 60;

/// libFuzzer options that differ per target: the longest input, and the time one input may
/// take before it counts as a hang.
struct TargetOptions {
    name: &'static str,
    max_len: usize,
    timeout_seconds: u64,
}

const OPTIONS: &[TargetOptions] = &[
    // Deep nesting needs long pages.
    TargetOptions {
        name: "html",
        max_len: 262_144,
        timeout_seconds: 20,
    },
    TargetOptions {
        name: "store_page",
        max_len: 65_536,
        timeout_seconds: 20,
    },
    TargetOptions {
        name: "read_page",
        max_len: 16_384,
        timeout_seconds: 20,
    },
    // A command's output arrives in pieces of up to a megabyte; 64 KiB of escapes reaches
    // every state of the terminal model many times over.
    TargetOptions {
        name: "terminal_text",
        max_len: 65_536,
        timeout_seconds: 20,
    },
    // Room for the hostile seeds (a stream listed 2,000 times is 16 KiB); the limits keep one
    // input well under a second.
    TargetOptions {
        name: "pdf_text",
        max_len: 65_536,
        timeout_seconds: 20,
    },
    TargetOptions {
        name: "apply_patch",
        max_len: 16_384,
        timeout_seconds: 20,
    },
    // Each input runs a process; a line may wait for its 10 s command timeout.
    TargetOptions {
        name: "bash_exec",
        max_len: 512,
        timeout_seconds: 60,
    },
];

fn options(target: &str) -> (usize, u64) {
    OPTIONS
        .iter()
        .find(|o| o.name == target)
        .map_or((4096, 20), |o| (o.max_len, o.timeout_seconds))
}

/// What the command line asked for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Request {
    pub(crate) seconds: u64,
    pub(crate) build_only: bool,
    pub(crate) keep_going: bool,
    pub(crate) targets: Vec<String>,
}

pub(crate) fn parse_args(args: &[String]) -> Result<Request, String> {
    let mut request = Request {
        seconds: DEFAULT_SECONDS,
        build_only: false,
        keep_going: false,
        targets: Vec::new(),
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => {
                let value = args.next().ok_or("--seconds needs a number")?;
                request.seconds = value
                    .parse()
                    .ok()
                    .filter(|s| *s > 0)
                    .ok_or_else(|| format!("--seconds: not a positive number: {value}"))?;
            }
            "--build-only" => request.build_only = true,
            "--keep-going" => request.keep_going = true,
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            target => request.targets.push(target.to_owned()),
        }
    }
    Ok(request)
}

pub(crate) fn run(root: &Path, args: &[String]) -> Result<(), String> {
    let request = parse_args(args)?;
    let fuzz_dir = root.join("fuzz");
    let all = targets(&fuzz_dir)?;
    let targets = if request.targets.is_empty() {
        all.clone()
    } else {
        for target in &request.targets {
            if !all.contains(target) {
                return Err(format!(
                    "unknown fuzz target `{target}`; available: {}",
                    all.join(", ")
                ));
            }
        }
        request.targets.clone()
    };
    let target_dir = target_dir(root);
    let tool = Toolchain::find()?;
    let cargo_fuzz = install_cargo_fuzz(&target_dir)?;
    let fuzz = |args: &[&str]| {
        // `args` is `<subcommand> ...`; the fuzz directory goes right after the subcommand,
        // before any `--` that starts libFuzzer's own arguments.
        let mut command = Command::new(&cargo_fuzz);
        command.arg("fuzz");
        if let Some((subcommand, rest)) = args.split_first() {
            command
                .arg(subcommand)
                .arg("--fuzz-dir")
                .arg(&fuzz_dir)
                .args(rest);
        }
        command.current_dir(root);
        tool.apply(&mut command, &target_dir);
        command
    };

    eprintln!("xtask: building the fuzz targets (nightly, address sanitizer)");
    let status = fuzz(&["build"])
        .status()
        .map_err(|err| format!("cannot run cargo-fuzz: {err}"))?;
    if !status.success() {
        return Err(format!("building the fuzz targets failed ({status})"));
    }
    if request.build_only {
        eprintln!("xtask: fuzz targets built: {}", all.join(", "));
        return Ok(());
    }

    let mut results = Vec::new();
    for target in &targets {
        let result = run_target(root, &target_dir, target, &request, &fuzz)?;
        results.push(result);
    }
    eprintln!(
        "\n{:<12} {:>12} {:>8} {:>8}  result",
        "target", "executions", "corpus", "failures"
    );
    for r in &results {
        let outcome = match &r.failure {
            None => "ok".to_owned(),
            Some(failure) => failure.clone(),
        };
        eprintln!(
            "{:<12} {:>12} {:>8} {:>8}  {outcome}",
            r.target,
            r.executions.map_or("?".to_owned(), |n| n.to_string()),
            r.corpus.map_or("?".to_owned(), |n| n.to_string()),
            r.reproducers.len(),
        );
        for path in r.reproducers.iter().skip(1) {
            eprintln!("{:<12} {:>30}  also: {}", "", "", path.display());
        }
    }
    let failed: Vec<&str> = results
        .iter()
        .filter(|r| r.failure.is_some())
        .map(|r| r.target.as_str())
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("fuzzing found problems in: {}", failed.join(", ")))
    }
}

/// The `[[bin]]` names of `fuzz/Cargo.toml`.
fn targets(fuzz_dir: &Path) -> Result<Vec<String>, String> {
    let manifest = fuzz_dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|err| format!("cannot read {}: {err}", manifest.display()))?;
    let value: toml::Table = text
        .parse()
        .map_err(|err| format!("cannot parse {}: {err}", manifest.display()))?;
    let names = value
        .get("bin")
        .and_then(toml::Value::as_array)
        .map(|bins| {
            bins.iter()
                .filter_map(|bin| bin.get("name").and_then(toml::Value::as_str))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    if names.is_empty() {
        return Err(format!("{} declares no fuzz target", manifest.display()));
    }
    Ok(names)
}

fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
}

/// The nightly toolchain's cargo and rustc.
struct Toolchain {
    cargo: PathBuf,
    rustc: PathBuf,
}

impl Toolchain {
    fn find() -> Result<Self, String> {
        let which = |tool: &str| -> Result<PathBuf, String> {
            let output = Command::new("rustup")
                .args(["which", "--toolchain", "nightly", tool])
                .output()
                .map_err(|err| format!("cannot run rustup to find the nightly toolchain: {err}"))?;
            if !output.status.success() {
                return Err(format!(
                    "fuzzing needs the nightly toolchain (`rustup toolchain install nightly`): {}",
                    String::from_utf8_lossy(&output.stderr).trim()
                ));
            }
            Ok(PathBuf::from(
                String::from_utf8_lossy(&output.stdout).trim().to_owned(),
            ))
        };
        Ok(Self {
            cargo: which("cargo")?,
            rustc: which("rustc")?,
        })
    }

    /// Makes `command` (cargo-fuzz) use this toolchain: cargo-fuzz runs `cargo` from `PATH`
    /// and reads `CARGO` for metadata, and the outer `cargo xtask` set both for stable.
    fn apply(&self, command: &mut Command, target_dir: &Path) {
        let mut path = OsString::new();
        if let Some(bin) = self.cargo.parent() {
            path.push(bin);
            path.push(":");
        }
        path.push(std::env::var_os("PATH").unwrap_or_default());
        command
            .env("PATH", path)
            .env("CARGO", &self.cargo)
            .env("RUSTC", &self.rustc)
            .env("RUSTUP_TOOLCHAIN", "nightly")
            .env("CARGO_TARGET_DIR", target_dir)
            .env_remove("RUSTC_WRAPPER")
            .env_remove("RUSTDOC");
    }
}

/// cargo-fuzz under `<target>/tools`, installed there first if it is missing.
fn install_cargo_fuzz(target_dir: &Path) -> Result<PathBuf, String> {
    let root = target_dir.join("tools");
    let binary = root.join("bin").join("cargo-fuzz");
    if binary.is_file() {
        return Ok(binary);
    }
    eprintln!(
        "xtask: installing cargo-fuzz {CARGO_FUZZ_VERSION} into {}",
        root.display()
    );
    let cargo = crate::cargo_program();
    let status = Command::new(cargo)
        .args(["install", "--locked", "cargo-fuzz", "--version"])
        .arg(CARGO_FUZZ_VERSION)
        .arg("--root")
        .arg(&root)
        .status()
        .map_err(|err| format!("cannot run cargo install: {err}"))?;
    if !status.success() || !binary.is_file() {
        return Err(format!("installing cargo-fuzz failed ({status})"));
    }
    Ok(binary)
}

/// One target's run.
struct Outcome {
    target: String,
    executions: Option<u64>,
    corpus: Option<u64>,
    failure: Option<String>,
    /// Reproducers this run wrote (crashes, timeouts, out-of-memory inputs).
    reproducers: Vec<PathBuf>,
}

fn run_target(
    root: &Path,
    target_dir: &Path,
    target: &str,
    request: &Request,
    fuzz: &dyn Fn(&[&str]) -> Command,
) -> Result<Outcome, String> {
    let seconds = request.seconds;
    let artifacts = root.join("fuzz").join("artifacts").join(target);
    let known = files(&artifacts);
    let grown = target_dir.join("fuzz-corpus").join(target);
    let seeds = root.join("fuzz").join("corpus").join(target);
    let logs = target_dir.join("fuzz-logs");
    let scratch = scratch_dir(target);
    for dir in [&grown, &logs, &scratch] {
        std::fs::create_dir_all(dir)
            .map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    }
    let log_path = logs.join(format!("{target}.log"));
    let log = File::create(&log_path)
        .map_err(|err| format!("cannot create {}: {err}", log_path.display()))?;
    let log_err = log
        .try_clone()
        .map_err(|err| format!("cannot share {}: {err}", log_path.display()))?;
    let (max_len, timeout) = options(target);
    let mut libfuzzer_args = vec![
        format!("-max_total_time={seconds}"),
        format!("-max_len={max_len}"),
        format!("-timeout={timeout}"),
        "-rss_limit_mb=4096".to_owned(),
        "-print_final_stats=1".to_owned(),
    ];
    if request.keep_going {
        libfuzzer_args.extend(
            [
                "-fork=1",
                "-ignore_crashes=1",
                "-ignore_timeouts=1",
                "-ignore_ooms=1",
            ]
            .map(str::to_owned),
        );
    }
    let grown_arg = grown.to_string_lossy().into_owned();
    let seeds_arg = seeds.to_string_lossy().into_owned();
    let mut args = vec!["run", target, grown_arg.as_str()];
    if seeds.is_dir() {
        args.push(seeds_arg.as_str());
    }
    args.push("--");
    args.extend(libfuzzer_args.iter().map(String::as_str));
    eprintln!(
        "xtask: fuzzing {target} for {seconds} s (log: {})",
        log_path.display()
    );
    let status = fuzz(&args)
        .env("TACKLE_FUZZ_SCRATCH", &scratch)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .status()
        .map_err(|err| format!("cannot run cargo-fuzz: {err}"));
    let _ = std::fs::remove_dir_all(&scratch);
    let status = status?;
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let mut outcome = summarize(target, &text);
    outcome.reproducers = files(&artifacts)
        .into_iter()
        .filter(|path| !known.contains(path))
        .collect();
    if outcome.failure.is_none()
        && let Some(first) = outcome.reproducers.first()
    {
        outcome.failure = Some(format!("failure; reproducer: {}", first.display()));
    }
    if !status.success() && outcome.failure.is_none() {
        outcome.failure = Some(format!(
            "cargo-fuzz failed ({status}); see {}",
            log_path.display()
        ));
    }
    if let Some(failure) = &outcome.failure {
        eprintln!("xtask: {target}: {failure}");
        if request.keep_going {
            // Fork mode keeps the children's output to itself: replay a few reproducers.
            for path in outcome.reproducers.iter().take(REPLAYED) {
                eprintln!("  {}:", path.display());
                for line in replay(target_dir, target, path, &scratch) {
                    eprintln!("    {line}");
                }
            }
        } else {
            for line in panic_lines(&text) {
                eprintln!("    {line}");
            }
        }
        let _ = std::fs::remove_dir_all(&scratch);
    }
    Ok(outcome)
}

/// Reproducers replayed after a `--keep-going` run, to show what they hit.
const REPLAYED: usize = 8;

/// What the fuzz target binary says when it runs `input` alone: its panic or error lines.
fn replay(target_dir: &Path, target: &str, input: &Path, scratch: &Path) -> Vec<String> {
    // cargo-fuzz builds for the host triple: `<target>/<triple>/release/<name>`.
    let binary = std::fs::read_dir(target_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("release").join(target))
        .find(|path| path.is_file());
    let Some(binary) = binary else {
        return vec!["(the target binary was not found)".to_owned()];
    };
    let _ = std::fs::create_dir_all(scratch);
    let output = Command::new(binary)
        .arg(input)
        .env("TACKLE_FUZZ_SCRATCH", scratch)
        .stdin(Stdio::null())
        .output();
    match output {
        Ok(output) => panic_lines(&String::from_utf8_lossy(&output.stderr))
            .into_iter()
            .map(str::to_owned)
            .collect(),
        Err(err) => vec![format!("(cannot run the target: {err})")],
    }
}

/// The files in `dir`, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// A per-run scratch directory for the targets' files, removed after the run.
fn scratch_dir(target: &str) -> PathBuf {
    let shm = Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    base.join(format!("tackle-fuzz-{target}-{}", std::process::id()))
}

/// Executions, corpus size and the failure (with its reproducer) from libFuzzer's output.
fn summarize(target: &str, log: &str) -> Outcome {
    let number_after = |line: &str, key: &str| -> Option<u64> {
        let rest = &line[line.find(key)? + key.len()..];
        let digits: String = rest
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    // Fork mode prints `#<executions>: cov: ... corp: <n> ...` and no final stats.
    let executions = log
        .lines()
        .filter_map(|line| number_after(line, "stat::number_of_executed_units:"))
        .next_back()
        .or_else(|| {
            log.lines()
                .filter(|line| line.starts_with('#') && line.contains(": cov:"))
                .filter_map(|line| number_after(line, "#"))
                .next_back()
        });
    let corpus = log
        .lines()
        .filter(|line| line.starts_with('#'))
        .filter_map(|line| number_after(line, "corp:"))
        .next_back();
    let artifact = log
        .lines()
        .filter_map(|line| line.split_once("Test unit written to "))
        .map(|(_, path)| path.trim().to_owned())
        .next_back();
    let kind = if log.contains("ERROR: libFuzzer: timeout") {
        Some("timeout")
    } else if log.contains("ERROR: libFuzzer: out-of-memory") {
        Some("out of memory")
    } else if log.contains("ERROR: libFuzzer: deadly signal")
        || log.contains("ERROR: AddressSanitizer")
        || log.contains("==ERROR: libFuzzer")
    {
        Some("crash")
    } else {
        None
    };
    let failure = match (kind, artifact) {
        (Some(kind), Some(path)) => Some(format!("{kind}; reproducer: {path}")),
        (Some(kind), None) => Some(kind.to_owned()),
        (None, Some(path)) => Some(format!("failure; reproducer: {path}")),
        (None, None) => None,
    };
    Outcome {
        target: target.to_owned(),
        executions,
        corpus,
        failure,
        reproducers: Vec::new(),
    }
}

/// The lines that say what went wrong (a panic message and its location).
fn panic_lines(log: &str) -> Vec<&str> {
    let lines: Vec<&str> = log.lines().collect();
    let Some(start) = lines
        .iter()
        .position(|l| l.contains("panicked at") || l.contains("==ERROR"))
    else {
        return Vec::new();
    };
    lines[start..]
        .iter()
        .take(12)
        .take_while(|l| !l.starts_with("stack backtrace") && !l.starts_with("note: run with"))
        .copied()
        .collect()
}

#[cfg(test)]
mod tests;
