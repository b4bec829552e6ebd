//! `cargo xtask install [--root DIR]`: builds the `tackle` binary as it is released and installs
//! it (`cargo install`, so `cargo uninstall tackle` removes it).
//!
//! The release build is the `dist` profile (whole-program optimisation, stripped) for the
//! host's target. On Linux with glibc it is also linked statically and at a fixed address: a
//! one-shot `tackle call` is how other agents use tackle, and such a binary starts without the
//! dynamic loader resolving tens of thousands of relocations and mapping the C libraries first
//! (`tackle call read` of a small file takes about two thirds of the time it does dynamically
//! linked; `cargo xtask bench process` measures this binary).
//!
//! The flags go in `RUSTFLAGS` with an explicit `--target`: cargo then applies them to the
//! binary and its dependencies but not to build scripts and proc-macros, which run in the
//! compiler and cannot be linked statically.
//!
//! A statically linked glibc still loads the system's name-service modules at run time to look
//! up a host name (`webfetch`); those must come from the glibc the binary was linked against,
//! which holds for a binary built on the machine it runs on, the only way tackle is installed.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The profile the binary is released with (see `[profile.dist]` in the workspace manifest).
const PROFILE: &str = "dist";

/// The flags of a static glibc build.
///
/// The last one keeps commands started without copying tackle's memory. The standard library
/// starts a child with `posix_spawn` (which shares the parent's memory until the child runs
/// the new program) only when it finds `posix_spawn_file_actions_addchdir_np`, to enter the
/// child's directory, and it refers to that function weakly. A static link takes a function
/// from the C library's archive only when something needs it, and a weak reference does not
/// count; without `-u` the reference stays empty and every command with a directory (each
/// `bash` call) is started by `fork`, which copies the page tables of the whole process: 2 ms
/// instead of 0.1 ms for a process holding 50 MiB.
const STATIC_GLIBC: &str = "-C target-feature=+crt-static -C relocation-model=static \
                            -C link-arg=-Wl,-u,posix_spawn_file_actions_addchdir_np";

/// How the released binary is built for one target.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Build {
    pub(crate) target: String,
    /// Extra code-generation flags for the binary and its dependencies.
    pub(crate) rustflags: Option<&'static str>,
}

impl Build {
    /// The release build for `target` (a triple such as `x86_64-unknown-linux-gnu`).
    pub(crate) fn for_target(target: &str) -> Self {
        // glibc links statically only into a position-dependent executable without the cost
        // this is for (a static position-independent one still relocates itself at start).
        let rustflags = target.ends_with("-linux-gnu").then_some(STATIC_GLIBC);
        Self {
            target: target.to_owned(),
            rustflags,
        }
    }

    /// The release build for the machine xtask runs on.
    pub(crate) fn for_host() -> Result<Self, String> {
        Ok(Self::for_target(&crate::tidy::host_triple()?))
    }

    /// `cargo <args...>` with this build's target, profile and flags; `RUSTFLAGS` the caller
    /// already set are kept, ours follow them.
    fn cargo(&self, root: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(crate::cargo_program());
        command
            .args(args)
            .args(["--profile", PROFILE, "--locked", "--target", &self.target])
            .current_dir(root);
        if let Some(flags) = self.rustflags {
            let flags = match std::env::var("RUSTFLAGS") {
                Ok(theirs) if !theirs.trim().is_empty() => format!("{theirs} {flags}"),
                _ => flags.to_owned(),
            };
            command.env("RUSTFLAGS", flags);
        }
        command
    }

    /// Builds the binary (in `target_dir`, else the workspace's target directory) and returns
    /// its path.
    pub(crate) fn build(&self, root: &Path, target_dir: Option<&Path>) -> Result<PathBuf, String> {
        let mut command = self.cargo(root, &["build", "--package", "tackle"]);
        let dir = match target_dir {
            Some(dir) => {
                command.arg("--target-dir").arg(dir);
                dir.to_path_buf()
            }
            None => crate::release::target_dir(root)?,
        };
        crate::run_cargo(command)?;
        Ok(dir.join(&self.target).join(PROFILE).join("tackle"))
    }
}

/// `cargo xtask install [--root DIR]` from the command line.
pub(crate) fn command(root: &Path, args: &[String]) -> Result<(), String> {
    let install_root = match args {
        [] => None,
        [flag, dir] if flag == "--root" => Some(dir.as_str()),
        _ => return Err(USAGE.to_owned()),
    };
    let build = Build::for_host()?;
    let mut args = vec!["install", "--path", "crates/cli"];
    if let Some(dir) = install_root {
        args.extend(["--root", dir]);
    }
    crate::run_cargo(build.cargo(root, &args))
}

const USAGE: &str = "usage: cargo xtask install [--root DIR]";

#[cfg(test)]
mod tests {
    use super::Build;

    #[test]
    fn only_linux_with_glibc_is_linked_statically() {
        let gnu = Build::for_target("x86_64-unknown-linux-gnu");
        let flags = gnu.rustflags.unwrap_or_default();
        for flag in [
            "-C target-feature=+crt-static",
            "-C relocation-model=static",
            "-C link-arg=-Wl,-u,posix_spawn_file_actions_addchdir_np",
        ] {
            assert!(flags.contains(flag), "{flag} is missing from {flags}");
        }
        assert_eq!(
            Build::for_target("aarch64-unknown-linux-gnu").rustflags,
            gnu.rustflags
        );
        // musl is static already; macOS and Windows link their C library dynamically.
        for target in [
            "x86_64-unknown-linux-musl",
            "aarch64-apple-darwin",
            "x86_64-pc-windows-msvc",
        ] {
            assert_eq!(Build::for_target(target).rustflags, None, "{target}");
        }
    }

    /// A program that starts a command as `bash` does (in a directory, leading a process
    /// group) and prints how many times the C library's `fork` ran: its fork handlers run on
    /// every `fork` and never on `posix_spawn`.
    const SPAWN_PROBE: &str = r#"
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicUsize, Ordering};

static FORKS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn counted() {
    FORKS.fetch_add(1, Ordering::SeqCst);
}

extern "C" {
    fn pthread_atfork(
        prepare: Option<extern "C" fn()>,
        parent: Option<extern "C" fn()>,
        child: Option<extern "C" fn()>,
    ) -> i32;
}

fn main() {
    assert_eq!(unsafe { pthread_atfork(Some(counted), None, None) }, 0);
    let status = std::process::Command::new("/bin/sh")
        .args(["-c", "exit 0"])
        .current_dir("/")
        .process_group(0)
        .status()
        .expect("spawn");
    assert!(status.success());
    println!("{}", FORKS.load(Ordering::SeqCst));
}
"#;

    #[test]
    fn a_static_glibc_build_starts_commands_without_fork() {
        let target = crate::tidy::host_triple().expect("host triple");
        let Some(flags) = super::Build::for_target(&target).rustflags else {
            return; // a target linked dynamically starts commands as the C library does
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let source = dir.path().join("probe.rs");
        std::fs::write(&source, SPAWN_PROBE).expect("write the probe");
        let probe = dir.path().join("probe");
        let built = std::process::Command::new(crate::rustc_program())
            .args(["--edition", "2021", "--target", &target])
            .args(flags.split_whitespace())
            .arg("-o")
            .arg(&probe)
            .arg(&source)
            .output()
            .expect("run rustc");
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let ran = std::process::Command::new(&probe)
            .output()
            .expect("run the probe");
        assert!(ran.status.success(), "{ran:?}");
        assert_eq!(
            String::from_utf8_lossy(&ran.stdout).trim(),
            "0",
            "the static build started a command with fork"
        );
    }

    #[test]
    fn the_build_names_its_target_and_profile_so_build_scripts_stay_dynamic() {
        let build = Build::for_target("x86_64-unknown-linux-gnu");
        let command = build.cargo(std::path::Path::new("."), &["build"]);
        let args: Vec<_> = command
            .get_args()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "build",
                "--profile",
                "dist",
                "--locked",
                "--target",
                "x86_64-unknown-linux-gnu"
            ]
        );
        let flags = command
            .get_envs()
            .find(|(key, _)| *key == "RUSTFLAGS")
            .and_then(|(_, value)| value)
            .map(|value| value.to_string_lossy().into_owned())
            .unwrap_or_default();
        assert!(flags.ends_with(super::STATIC_GLIBC), "{flags}");
    }
}
