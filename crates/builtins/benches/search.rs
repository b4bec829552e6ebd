//! `cargo xtask bench search`: glob and grep against ripgrep, in one run.
//!
//! - Large tree: the crate sources cargo unpacked under `$CARGO_HOME/registry/src` (a real,
//!   varied source tree that exists once the workspace is built). grep of a literal and of a
//!   regex with no limit vs `rg --json`, a literal with two lines of context vs `rg -C2`, and
//!   glob vs `rg --files --glob`, with the same
//!   traversal flags (hidden files, symlinks followed, ignore files outside git, no `.git`).
//! - Small tree (generated here): the per-call latency of a whole `settle` vs spawning `rg`.
//!
//! Runs alternate tackle and rg so both see the same machine noise; medians are reported.
//! Targets: large tree at most 1.0x rg; small-tree calls well under the ~40 ms an rg spawn
//! costs in the reference. ripgrep is found on the PATH, in `$CARGO_HOME/bin` or in the
//! project's `target/bench-peers/bin`; without it, the bench says how to get it and times
//! tackle alone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tackle_builtins::Location;
use tackle_builtins::search::SearchSettings;
use tackle_builtins::{FileMutation, LocationServices, builtin_tool};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{AnswerAll, Effect, Permission, Reply, Rule, Ruleset, SavedApprovals};
use tackle_tool_core::{Call, Context, Tool};

const LARGE_RUNS: usize = 7;
const SMALL_RUNS: usize = 60;
const NO_LIMIT: u64 = 1_000_000_000;

fn main() {
    let rg = find_rg();
    let version = match &rg {
        Some(rg) => {
            let version = output_text(Command::new(rg).arg("--version"));
            version.lines().next().unwrap_or("").to_owned()
        }
        None => {
            let dir = common::peers_dir();
            println!(
                "ripgrep (`rg`) is not on the PATH, in {} or in {}: the rg comparisons are \
                 skipped and tackle is timed alone. To compare, install ripgrep (your package \
                 manager, or into the project: `cargo install --locked --root {} ripgrep`) \
                 and run the bench again.",
                cargo_home().join("bin").display(),
                dir.join("bin").display(),
                dir.display(),
            );
            "no rg".to_owned()
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();

    let large = large_tree();
    let files = count_files(&large);
    println!(
        "search bench: large tree {} ({files} files), {version}, {} threads, median of {LARGE_RUNS}",
        large.display(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    let tools = Tools::new(&large);
    let large = large.as_path();
    let mut worst: Option<f64> = None;
    for (label, pattern) in [
        ("grep literal", "PhantomData"),
        ("grep regex", r"fn [a-z_]+_mut\("),
    ] {
        let input = json!({"pattern": pattern, "limit": NO_LIMIT});
        let rg_args = [
            "--no-config",
            "--json",
            "--hidden",
            "--follow",
            "--no-require-git",
            "--no-messages",
            "--glob=!**/.git/**",
            "--",
            pattern,
            ".",
        ];
        let ratio = compare(
            label,
            LARGE_RUNS,
            || {
                tools.call(&runtime, "grep", &input)["totalMatches"]
                    .as_u64()
                    .unwrap()
            },
            rg.as_ref()
                .map(|rg| move || count_lines(&run_rg(rg, large, &rg_args), "{\"type\":\"match\"")),
            1.0,
        );
        worst = worse(worst, ratio);
    }
    // Context as models ask for it (`context: 2`) against `rg -C2`, which prints the lines.
    let input = json!({"pattern": "PhantomData", "context": 2, "limit": NO_LIMIT});
    let rg_args = [
        "--no-config",
        "-n",
        "--null",
        "-C2",
        "--hidden",
        "--follow",
        "--no-require-git",
        "--no-messages",
        "--glob=!**/.git/**",
        "--",
        "PhantomData",
        ".",
    ];
    let ratio = compare(
        "grep -C2",
        LARGE_RUNS,
        || {
            tools.call(&runtime, "grep", &input)["totalMatches"]
                .as_u64()
                .unwrap()
        },
        rg.as_ref()
            .map(|rg| move || count_match_lines(&run_rg(rg, large, &rg_args))),
        1.0,
    );
    worst = worse(worst, ratio);
    let input = json!({"pattern": "*.rs", "limit": NO_LIMIT});
    let rg_args = [
        "--no-config",
        "--files",
        "--hidden",
        "--follow",
        "--no-require-git",
        "--glob=*.rs",
        "--glob=!**/.git/**",
        ".",
    ];
    let ratio = compare(
        "glob *.rs",
        LARGE_RUNS,
        || {
            tools.call(&runtime, "glob", &input)["total"]
                .as_u64()
                .unwrap()
        },
        rg.as_ref()
            .map(|rg| move || count_lines(&run_rg(rg, large, &rg_args), "")),
        1.0,
    );
    worst = worse(worst, ratio);

    let small = small_tree();
    let tools = Tools::new(small.path());
    println!(
        "\nsmall tree ({} files): per-call latency, median of {SMALL_RUNS}",
        count_files(small.path())
    );
    let input = json!({"pattern": "needle"});
    compare(
        "grep call",
        SMALL_RUNS,
        || {
            tools.call(&runtime, "grep", &input)["totalMatches"]
                .as_u64()
                .unwrap()
        },
        rg.as_ref().map(|rg| {
            || {
                let args = ["--no-config", "--json", "--hidden", "--", "needle", "."];
                count_lines(&run_rg(rg, small.path(), &args), "{\"type\":\"match\"")
            }
        }),
        1.0,
    );
    let input = json!({"pattern": "*.rs"});
    compare(
        "glob call",
        SMALL_RUNS,
        || {
            tools.call(&runtime, "glob", &input)["total"]
                .as_u64()
                .unwrap()
        },
        rg.as_ref().map(|rg| {
            || {
                let args = ["--no-config", "--files", "--hidden", "--glob=*.rs", "."];
                count_lines(&run_rg(rg, small.path(), &args), "")
            }
        }),
        1.0,
    );
    match worst {
        Some(worst) => println!(
            "\nworst large-tree ratio {worst:.2}x (target <= 1.00x): {}",
            if worst <= 1.0 { "met" } else { "NOT met" }
        ),
        None => println!("\nno large-tree ratio: ripgrep is missing (see above)"),
    }
}

/// Times `ours` and `peer` alternately `runs` times (after one warm-up each), prints medians,
/// result counts and the ratio, and returns the ratio. Without a peer, times `ours` alone.
fn compare(
    label: &str,
    runs: usize,
    mut ours: impl FnMut() -> u64,
    mut peer: Option<impl FnMut() -> u64>,
    target: f64,
) -> Option<f64> {
    // `cargo bench --bench search -- <text>` runs only the cases whose label contains it.
    if let Some(only) = std::env::args().nth(1).filter(|a| !a.starts_with('-'))
        && !label.contains(only.as_str())
    {
        return None;
    }
    let our_count = ours();
    let peer_count = peer.as_mut().map(|peer| peer());
    let mut our_times = Vec::with_capacity(runs);
    let mut peer_times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        std::hint::black_box(ours());
        our_times.push(start.elapsed());
        if let Some(peer) = peer.as_mut() {
            let start = Instant::now();
            std::hint::black_box(peer());
            peer_times.push(start.elapsed());
        }
    }
    let ours_ms = median_ms(&mut our_times);
    let Some(peer_count) = peer_count else {
        println!("{label:<13} tackle {ours_ms:>8.2} ms ({our_count} results) | rg not run");
        return None;
    };
    let peer_ms = median_ms(&mut peer_times);
    let ratio = ours_ms / peer_ms;
    let same = if our_count == peer_count {
        "same results".to_owned()
    } else {
        format!("results differ: {our_count} vs {peer_count}")
    };
    println!(
        "{label:<13} tackle {ours_ms:>8.2} ms ({our_count} results) | rg {peer_ms:>8.2} ms \
         ({peer_count}) | ratio {ratio:.2}x (target <= {target:.1}x) [{same}]"
    );
    Some(ratio)
}

/// The larger of two ratios, either possibly missing.
fn worse(worst: Option<f64>, ratio: Option<f64>) -> Option<f64> {
    match (worst, ratio) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

fn median_ms(times: &mut [Duration]) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1000.0
}

/// The two tools on a Location, allowed everything, with a budget no run reaches.
struct Tools {
    glob: Tool,
    grep: Tool,
}

impl Tools {
    fn new(dir: &Path) -> Self {
        let location = Location::new(dir).unwrap();
        let permission = Permission::new(
            Ruleset::new(vec![Rule::new("*", "*", Effect::Allow)]),
            SavedApprovals::in_memory(),
            Arc::new(AnswerAll(Reply::Once)),
        );
        let settings = {
            let mut value = SearchSettings::default();
            value.budget = Duration::from_secs(600);
            value
        };
        // A raw run never spills, so the store's directory is never created.
        let store = OutputStore::new(StoreConfig::in_data_dir(dir.join(".unused-data")));
        let services = LocationServices::new(location, permission, store, FileMutation::new())
            .with_search(settings);
        Self {
            glob: builtin_tool(&services, "glob").unwrap(),
            grep: builtin_tool(&services, "grep").unwrap(),
        }
    }

    /// Settles one call (decode, permission, search, model text) and returns the structured
    /// output; a partial or failed result would make the comparison meaningless.
    fn call(&self, runtime: &tokio::runtime::Runtime, name: &str, input: &Value) -> Value {
        let tool = if name == "glob" {
            &self.glob
        } else {
            &self.grep
        };
        let call = Call::new("bench", name, input.clone());
        let out = runtime
            .block_on(tool.run_unbounded(&call, &Context::new("bench")))
            .unwrap_or_else(|err| panic!("{name} failed: {err}"));
        assert_eq!(
            out.structured["incomplete"], false,
            "{name} ran out of budget"
        );
        std::hint::black_box(&out.content);
        out.structured
    }
}

/// A working `rg`: on the PATH, in `$CARGO_HOME/bin` or in the project's peers directory.
/// Nothing is installed.
fn find_rg() -> Option<PathBuf> {
    let candidates = [
        "rg".into(),
        cargo_home().join("bin/rg"),
        common::peers_dir().join("bin/rg"),
    ];
    candidates.into_iter().find(|rg: &PathBuf| {
        Command::new(rg)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo"),
        PathBuf::from,
    )
}

/// The unpacked crate sources of the registry (present once the workspace has been built).
fn large_tree() -> PathBuf {
    let dir = cargo_home().join("registry/src");
    let dir = std::fs::canonicalize(&dir)
        .unwrap_or_else(|err| panic!("{}: {err} (build the workspace first)", dir.display()));
    assert!(count_files(&dir) > 5_000, "{} is too small", dir.display());
    dir
}

/// A small project-like tree: 60 files in nested directories, some with the needle.
fn small_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..60 {
        let ext = ["rs", "ts", "md"][i % 3];
        let path = dir.path().join(format!("src/m{}/f{i}.{ext}", i % 6));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut text = String::new();
        for line in 0..80 {
            if (i + line) % 37 == 0 {
                text.push_str("let needle = find(haystack);\n");
            } else {
                text.push_str("fn helper(x: u32) -> u32 { x * 2 + 1 }\n");
            }
        }
        std::fs::write(path, text).unwrap();
    }
    std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
    dir
}

fn count_files(dir: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(entry.path()),
                Ok(_) => n += 1,
                Err(_) => {}
            }
        }
    }
    n
}

fn run_rg(rg: &Path, dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(rg)
        .args(args)
        .current_dir(dir)
        .stderr(Stdio::null())
        .output()
        .unwrap();
    // 0: found, 1: nothing found; 2 would mean an error and a meaningless comparison.
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "rg failed: {:?}",
        out.status
    );
    out.stdout
}

/// Lines of `out` starting with `prefix` (all lines for an empty prefix).
fn count_lines(out: &[u8], prefix: &str) -> u64 {
    out.split(|b| *b == b'\n')
        .filter(|line| !line.is_empty() && line.starts_with(prefix.as_bytes()))
        .count() as u64
}

/// The match lines of `rg -n --null` output (`path\0N:text`; context lines are `path\0N-text`).
fn count_match_lines(out: &[u8]) -> u64 {
    out.split(|b| *b == b'\n')
        .filter_map(|line| {
            let at = line.iter().position(|b| *b == 0)?;
            line[at + 1..].iter().find(|b| !b.is_ascii_digit()).copied()
        })
        .filter(|after| *after == b':')
        .count() as u64
}

fn output_text(cmd: &mut Command) -> String {
    cmd.output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}
