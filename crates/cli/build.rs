//! Links the `tackle` binary as a position-dependent executable on Linux, and gives
//! `tackle --version` the commit it was built from.
//!
//! A one-shot `tackle call` is how other agents use tackle, so its start-up is on their path.
//! A position-independent executable of this size has tens of thousands of relocations for the
//! dynamic loader to apply, touching about 200 pages before `main`; linked at a fixed address
//! the linker applies them once. The library crates are unaffected (their code stays
//! position-independent).

use std::path::Path;
use std::process::Command;

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let commit = commit().unwrap_or_else(|| "unknown commit".to_owned());
    println!("cargo:rustc-env=TACKLE_VERSION={version} ({commit})");
}

/// The short hash of `HEAD`, or `None` outside a git checkout (a packaged crate, a tarball).
///
/// Only a moved `HEAD` or branch makes the script run again: watching the whole `.git`
/// directory would rebuild the binary on every index change.
fn commit() -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let output = Command::new("git").args(args).output().ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    let hash = git(&["rev-parse", "--short=10", "HEAD"])?;
    println!("cargo:rerun-if-changed=build.rs");
    // A worktree has its own HEAD; branches and packed refs live in the common directory.
    let mut watched = vec![git(&["rev-parse", "--git-path", "HEAD"])];
    if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(git(&["rev-parse", "--git-path", &reference]));
    }
    watched.push(git(&["rev-parse", "--git-path", "packed-refs"]));
    for path in watched.into_iter().flatten() {
        let path = absolute(&path);
        // A missing file would make cargo run the script on every build.
        if Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    Some(hash)
}

/// `git rev-parse --git-path` answers relative to the current directory (the crate's).
fn absolute(path: &str) -> String {
    let path = Path::new(path);
    if path.is_absolute() {
        path.display().to_string()
    } else {
        std::env::current_dir()
            .map(|dir| dir.join(path).display().to_string())
            .unwrap_or_else(|_| path.display().to_string())
    }
}
