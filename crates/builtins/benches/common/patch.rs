//! Patch scenarios and the codex peer, shared by the apply_patch bench and the whole-process
//! bench of the `tackle` binary (which includes `common` by path).

#![allow(dead_code)] // each bench uses its own subset

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One patch on one tree, with the tree it must give.
pub(crate) struct Scenario {
    pub(crate) name: &'static str,
    /// Relative path -> content, before and after.
    pub(crate) input: Vec<(String, String)>,
    pub(crate) expected: Vec<(String, String)>,
    pub(crate) patch: String,
}

pub(crate) fn line(file: usize, i: usize) -> String {
    format!(
        "file {file} line {i}: let value_{i} = compute({}, \"{}\");",
        i * 7 % 1000,
        i % 13
    )
}

/// A file of `lines` lines and a patch section changing `chunks` evenly spread lines, each
/// with three lines of context on both sides.
pub(crate) fn file_and_section(
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

pub(crate) fn big_file() -> Scenario {
    let (input, expected, section) = file_and_section(0, "big.rs", 100_000, 1_000);
    Scenario {
        name: "1,000 chunks in one 100,000-line file",
        input: vec![("big.rs".into(), input)],
        expected: vec![("big.rs".into(), expected)],
        patch: format!("*** Begin Patch\n{section}*** End Patch\n"),
    }
}

pub(crate) fn many_files() -> Scenario {
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

pub(crate) fn lay_out(root: &Path, files: &[(String, String)]) {
    if root.exists() {
        fs::remove_dir_all(root).unwrap();
    }
    for (name, content) in files {
        let path = root.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }
}

pub(crate) fn check(root: &Path, expected: &[(String, String)], who: &str) -> Result<(), String> {
    for (name, content) in expected {
        let actual =
            fs::read_to_string(root.join(name)).map_err(|e| format!("{who}: {name}: {e}"))?;
        if &actual != content {
            return Err(format!("{who}: {name} differs from the expected result"));
        }
    }
    Ok(())
}

pub(crate) fn run_codex(
    binary: &Path,
    work: &Path,
    patch: &str,
) -> Result<std::process::Output, String> {
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
pub(crate) fn codex_apply_patch(links: &Path) -> Result<PathBuf, String> {
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
/// [`super::peers_dir`]. Nothing is installed.
pub(crate) fn codex_native() -> Result<PathBuf, String> {
    let peers = super::peers_dir();
    if let Some(codex) = super::on_path("codex") {
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

pub(crate) fn is_elf(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok_and(|()| &magic == b"\x7fELF")
}

pub(crate) fn find_elf(dir: &Path, name: &str, depth: usize) -> Option<PathBuf> {
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
