//! `cargo xtask bench apply_patch`: tackle's `apply_patch` against the `codex` CLI's
//! `apply_patch` (npm `@openai/codex`, whose native binary answers as `apply_patch` when invoked
//! under that name), in the same run, on the same trees and patches.
//!
//! Scenarios: one patch of 1,000 chunks on a 100,000-line file; one patch touching 200 files
//! of 1,000 lines each (5 chunks per file). Each iteration starts from a fresh copy of the
//! input (not timed); tackle is timed from the call to its settled result (parse, permission,
//! read, plan, diff, atomic commit), codex from spawn to exit (its CLI is a process). Both
//! results are checked against the expected tree. The peer is the `codex` on the PATH, else a
//! copy in the project's `target/bench-peers` (`npm install --prefix target/bench-peers
//! @openai/codex`); without either, the bench says how to get one and times tackle alone.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tackle_builtins::{FileMutation, Location, LocationServices};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{AnswerAll, Effect, Permission, Reply, Rule, Ruleset, SavedApprovals};
use tackle_tool_core::{Call, Context, Tool};

const ITERATIONS: usize = 7;
/// Target: no slower than the incumbent CLI on either scenario.
const TARGET_RATIO: f64 = 1.0;

struct Scenario {
    name: &'static str,
    /// Relative path -> content, before and after.
    input: Vec<(String, String)>,
    expected: Vec<(String, String)>,
    patch: String,
}

fn line(file: usize, i: usize) -> String {
    format!(
        "file {file} line {i}: let value_{i} = compute({}, \"{}\");",
        i * 7 % 1000,
        i % 13
    )
}

/// A file of `lines` lines and a patch section changing `chunks` evenly spread lines, each
/// with three lines of context on both sides.
fn file_and_section(
    file: usize,
    name: &str,
    lines: usize,
    chunks: usize,
) -> (String, String, String) {
    let original: Vec<String> = (0..lines).map(|i| line(file, i)).collect();
    let mut changed = original.clone();
    let mut section = format!("*** Update File: {name}\n");
    let step = lines / chunks;
    for c in 0..chunks {
        let at = c * step + step / 2;
        section.push_str("@@\n");
        for context in &original[at - 3..at] {
            let _ = writeln!(section, " {context}");
        }
        let new = format!("{} // changed", original[at]);
        let _ = writeln!(section, "-{}", original[at]);
        let _ = writeln!(section, "+{new}");
        for context in &original[at + 1..at + 4] {
            let _ = writeln!(section, " {context}");
        }
        changed[at] = new;
    }
    let join = |v: &[String]| v.iter().map(|l| format!("{l}\n")).collect::<String>();
    (join(&original), join(&changed), section)
}

fn big_file() -> Scenario {
    let (input, expected, section) = file_and_section(0, "big.rs", 100_000, 1_000);
    Scenario {
        name: "1,000 chunks in one 100,000-line file",
        input: vec![("big.rs".into(), input)],
        expected: vec![("big.rs".into(), expected)],
        patch: format!("*** Begin Patch\n{section}*** End Patch\n"),
    }
}

fn many_files() -> Scenario {
    let mut scenario = Scenario {
        name: "200 files of 1,000 lines, 5 chunks each",
        input: Vec::new(),
        expected: Vec::new(),
        patch: "*** Begin Patch\n".into(),
    };
    for f in 0..200 {
        let name = format!("src/m{}/file{f}.rs", f % 10);
        let (input, expected, section) = file_and_section(f, &name, 1_000, 5);
        scenario.input.push((name.clone(), input));
        scenario.expected.push((name, expected));
        scenario.patch.push_str(&section);
    }
    scenario.patch.push_str("*** End Patch\n");
    scenario
}

fn lay_out(root: &Path, files: &[(String, String)]) {
    if root.exists() {
        fs::remove_dir_all(root).unwrap();
    }
    for (name, content) in files {
        let path = root.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }
}

fn check(root: &Path, expected: &[(String, String)], who: &str) -> Result<(), String> {
    for (name, content) in expected {
        let actual =
            fs::read_to_string(root.join(name)).map_err(|e| format!("{who}: {name}: {e}"))?;
        if &actual != content {
            return Err(format!("{who}: {name} differs from the expected result"));
        }
    }
    Ok(())
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn tackle(scenario: &Scenario, work: &Path, runtime: &tokio::runtime::Runtime) -> Duration {
    let mut times = Vec::new();
    for _ in 0..ITERATIONS {
        lay_out(work, &scenario.input);
        let permission = Permission::new(
            Ruleset::new(vec![Rule::new("*", "*", Effect::Allow)]),
            SavedApprovals::in_memory(),
            Arc::new(AnswerAll(Reply::Once)),
        );
        let tool = patch_tool(Location::new(work).unwrap(), permission);
        let call = Call::new(
            "bench",
            "apply_patch",
            json!({ "patchText": scenario.patch }),
        );
        let started = Instant::now();
        let output = runtime.block_on(tool.run_unbounded(&call, &Context::new("bench")));
        times.push(started.elapsed());
        if let Err(err) = output {
            panic!("tackle failed: {err:?}");
        }
        check(work, &scenario.expected, "tackle").unwrap();
    }
    median(times)
}

fn codex(scenario: &Scenario, work: &Path, binary: &Path) -> Result<Duration, String> {
    let mut times = Vec::new();
    for _ in 0..ITERATIONS {
        lay_out(work, &scenario.input);
        let started = Instant::now();
        let output = run_codex(binary, work, &scenario.patch)?;
        times.push(started.elapsed());
        if !output.status.success() {
            return Err(format!(
                "codex apply_patch exited with {}: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        check(work, &scenario.expected, "codex")?;
    }
    Ok(median(times))
}

fn run_codex(binary: &Path, work: &Path, patch: &str) -> Result<std::process::Output, String> {
    let mut child = Command::new(binary)
        .current_dir(work)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    let mut stdin = child.stdin.take().unwrap();
    let patch = patch.to_owned();
    // Feed stdin from a thread so a large patch cannot deadlock against unread output.
    let feeder = std::thread::spawn(move || stdin.write_all(patch.as_bytes()));
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    feeder
        .join()
        .unwrap()
        .map_err(|e| format!("writing the patch to codex: {e}"))?;
    Ok(output)
}

/// The `codex` CLI's native binary behind an `apply_patch` link, or why there is none.
fn codex_apply_patch(links: &Path) -> Result<PathBuf, String> {
    let native = codex_native()?;
    fs::create_dir_all(links).unwrap();
    let link = links.join("apply_patch");
    let _ = fs::remove_file(&link);
    std::os::unix::fs::symlink(&native, &link).map_err(|e| e.to_string())?;
    // Sanity: it must answer as apply_patch.
    let probe = links.join("probe");
    lay_out(&probe, &[("a.txt".into(), "a\n".into())]);
    let out = run_codex(
        &link,
        &probe,
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n",
    )?;
    if fs::read_to_string(probe.join("a.txt")).ok().as_deref() != Some("b\n") {
        return Err(format!(
            "{} did not apply a patch as `apply_patch` ({}): {}",
            native.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    println!("peer: {} (as apply_patch)", native.display());
    Ok(link)
}

/// The native `codex` binary: the `codex` on the PATH when it is one, else the one in the npm
/// package that it starts (`.../@openai/codex/bin/codex.js`; the binary is in that package or
/// a platform package beside it), else one in the project's npm directory under
/// [`common::peers_dir`]. Nothing is installed.
fn codex_native() -> Result<PathBuf, String> {
    let peers = common::peers_dir();
    if let Some(codex) = common::on_path("codex") {
        let codex = fs::canonicalize(&codex).unwrap_or(codex);
        if is_elf(&codex) {
            return Ok(codex);
        }
        // `.../@openai/codex/bin/codex.js` -> `.../@openai`.
        if let Some(scope) = codex.ancestors().nth(3)
            && let Some(native) = find_elf(scope, "codex", 8)
        {
            return Ok(native);
        }
    }
    if let Some(native) = find_elf(&peers.join("node_modules/@openai"), "codex", 8) {
        return Ok(native);
    }
    Err(format!(
        "no native `codex` binary on the PATH or in {dir}. To compare, get the codex CLI, \
         e.g. into the project (nothing global): `npm install --prefix {dir} @openai/codex`, \
         then run the bench again",
        dir = peers.display()
    ))
}

fn is_elf(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok_and(|()| &magic == b"\x7fELF")
}

fn find_elf(dir: &Path, name: &str, depth: usize) -> Option<PathBuf> {
    let entries = fs::read_dir(dir).ok()?;
    let mut dirs = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            dirs.push(path);
        } else if path.file_name().is_some_and(|n| n == name) && is_elf(&path) {
            return Some(path);
        }
    }
    if depth == 0 {
        return None;
    }
    dirs.sort();
    dirs.iter().find_map(|d| find_elf(d, name, depth - 1))
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let peer = codex_apply_patch(&scratch.path().join("peer"));
    if let Err(why) = &peer {
        println!("peer: codex CLI unavailable, no ratio: {why}");
    }
    println!(
        "apply_patch: median of {ITERATIONS} runs; target: tackle/codex <= {TARGET_RATIO:.1}x"
    );
    for scenario in [big_file(), many_files()] {
        let work = scratch.path().join("work");
        println!(
            "{} (patch {} KiB):",
            scenario.name,
            scenario.patch.len() / 1024
        );
        let ours = tackle(&scenario, &work, &runtime);
        println!("  tackle apply_patch: {}", ms(ours));
        match &peer {
            Ok(binary) => match codex(&scenario, &work, binary) {
                Ok(theirs) => {
                    let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
                    let verdict = if ratio <= TARGET_RATIO {
                        "met"
                    } else {
                        "MISSED"
                    };
                    println!("  codex apply_patch:  {}", ms(theirs));
                    println!(
                        "  ratio tackle/codex: {ratio:.2}x (target <= {TARGET_RATIO:.1}x: {verdict})"
                    );
                }
                Err(why) => println!("  codex apply_patch: failed: {why}"),
            },
            Err(_) => println!("  codex apply_patch: not measured (see above)"),
        }
    }
}

/// The `apply_patch` tool of `location`, asking `permission`. apply_patch never spills, so its
/// output store's directory is never created.
fn patch_tool(location: Location, permission: Permission) -> Tool {
    let store = OutputStore::new(StoreConfig::in_data_dir(
        location.root().join(".unused-data"),
    ));
    let services = LocationServices::new(location, permission, store, FileMutation::new());
    tackle_builtins::builtin_tool(&services, "apply_patch").expect("apply_patch is built")
}
