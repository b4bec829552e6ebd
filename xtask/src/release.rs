//! `cargo xtask release <major|minor|patch|X.Y.Z> [--dry-run] [--skip-ci]`: cut a release
//! locally. Nothing is pushed and nothing is uploaded; the task prints the commands that would.
//!
//! Steps, in order (any failure stops the release):
//! 1. The tree must be clean (no change, no untracked file) and `cargo xtask ci` must pass.
//!    `--skip-ci` leaves the CI run out: for the end-to-end test of this task, which runs on a
//!    scratch clone, and for a maintainer who has just run CI on the same commit.
//! 2. The workspace version and every inter-crate requirement in `[workspace.dependencies]`
//!    are bumped; `cargo metadata` then confirms that every member has the new version and that
//!    every requirement on a member accepts it. `Cargo.lock` follows (`cargo update
//!    --workspace --offline`).
//! 3. `CHANGELOG.md` gets the new section (Keep a Changelog) from the commits since the last
//!    tag, grouped by crate (see [`changelog`]), with the size of the `tackle` binary built
//!    with the `dist` profile.
//! 4. The changes are committed (`release X.Y.Z`); the publishable crates (every member not
//!    marked `publish = false`) are checked against the size budget of their packaged files,
//!    then packaged by one `cargo package --offline` in dependency order computed from `cargo
//!    metadata` ([`order`]). Packaging them together lets cargo resolve each crate's
//!    requirements on the others from the packages it just built (a local registry overlay,
//!    cargo 1.90 and later), since they are not on crates.io yet.
//! 5. `cargo publish --dry-run` for the same crates, which needs the crates.io index (it checks
//!    the versions are not taken): the one step that reaches the network.
//! 6. An annotated tag `vX.Y.Z` whose message is the changelog section.
//!
//! `--dry-run` does all of this in a scratch clone of `HEAD` under `target/release-dry-run`,
//! leaving this repository as it was, and says where the changelog, the tag and the packages are.

mod changelog;
mod order;
mod version;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::process::Command;

use order::publishable;
use version::Version;

/// A packaged file larger than this is a fixture that does not belong in a published crate.
pub(crate) const PACKAGED_FILE_BUDGET: u64 = 64 * 1024;

/// What `run` does besides the always-on steps; the CLI turns every step on but CI.
#[derive(Debug)]
pub(crate) struct Options {
    /// `major`, `minor`, `patch` or an explicit `X.Y.Z`.
    pub(crate) bump: String,
    /// Run `cargo xtask ci` first.
    pub(crate) ci: bool,
    /// Build the binary with the `dist` profile and write its size in the notes.
    pub(crate) dist: bool,
    /// Let `cargo package` build each package (it compiles every crate again, from the
    /// package's own sources).
    pub(crate) verify: bool,
    /// Run `cargo publish --dry-run` (needs the crates.io index).
    pub(crate) publish_dry_run: bool,
    /// The cargo target directory (packages go to its `package/`); default: cargo's.
    pub(crate) target_dir: Option<PathBuf>,
    /// The release date written in the changelog (`YYYY-MM-DD`); default: today (UTC).
    pub(crate) date: Option<String>,
}

/// What a release produced.
#[derive(Debug)]
pub(crate) struct Released {
    pub(crate) version: String,
    pub(crate) tag: String,
    /// The publishable crates in the order they were packaged.
    pub(crate) order: Vec<String>,
    /// The `.crate` files, in that order.
    pub(crate) packages: Vec<PathBuf>,
    /// The changelog section written for this release.
    pub(crate) section: String,
}

/// `cargo xtask release ...` from the command line.
pub(crate) fn command(root: &Path, args: &[String]) -> Result<(), String> {
    let mut bump = None;
    let mut dry_run = false;
    let mut ci = true;
    for arg in args {
        match arg.as_str() {
            "--dry-run" => dry_run = true,
            "--skip-ci" => ci = false,
            other if bump.is_none() && !other.starts_with('-') => bump = Some(other.to_owned()),
            other => return Err(format!("release: unexpected argument `{other}`\n{USAGE}")),
        }
    }
    let Some(bump) = bump else {
        return Err(USAGE.to_owned());
    };
    let options = Options {
        bump,
        ci,
        dist: true,
        verify: true,
        publish_dry_run: true,
        target_dir: None,
        date: None,
    };
    let released = if dry_run {
        let scratch = root.join("target").join("release-dry-run");
        if scratch.exists() {
            std::fs::remove_dir_all(&scratch)
                .map_err(|err| format!("cannot remove {}: {err}", scratch.display()))?;
        }
        ensure_clean(root)?;
        // CI runs here, on the commit the clone gets, where everything is already built.
        if options.ci {
            crate::ci(root)?;
        }
        git(
            root,
            &["clone", "--quiet", "--no-local", ".", &path_arg(&scratch)?],
        )?;
        copy_identity(root, &scratch)?;
        // The scratch clone shares this repository's target directory, so nothing is rebuilt.
        let options = Options {
            ci: false,
            target_dir: Some(target_dir(root)?),
            ..options
        };
        eprintln!("xtask: dry run in the scratch clone {}", scratch.display());
        run(&scratch, &options)?
    } else {
        run(root, &options)?
    };
    eprintln!("{}", released.section);
    eprintln!(
        "xtask: released {} (tag {})",
        released.version, released.tag
    );
    eprintln!("xtask: packaged in order: {}", released.order.join(", "));
    for package in &released.packages {
        eprintln!("xtask:   {}", package.display());
    }
    eprintln!(
        "xtask: nothing was pushed or published. To publish: `git push --follow-tags` and \
         `cargo publish --workspace`"
    );
    Ok(())
}

const USAGE: &str = "usage: cargo xtask release <major|minor|patch|X.Y.Z> [--dry-run] [--skip-ci]";

/// Cuts the release in the repository at `root` (see the module doc).
pub(crate) fn run(root: &Path, options: &Options) -> Result<Released, String> {
    ensure_clean(root)?;
    if options.ci {
        crate::ci(root)?;
    }
    let metadata = crate::tidy::metadata(root)?;
    let current = workspace_version(&metadata)?;
    let next = current.bump(&options.bump)?;
    let version = next.to_string();
    let tag = format!("v{version}");
    if git_output(root, &["tag", "--list", &tag])?.trim() == tag {
        return Err(format!("the tag {tag} exists already"));
    }

    version::write(root, &current, &next)?;
    crate::cargo(root, &["update", "--workspace", "--offline", "--quiet"])?;
    let metadata = crate::tidy::metadata(root)?;
    version::confirm(&metadata, &next)?;
    let crates = order::publish_order(&metadata)?;
    check_package_budget(root, &crates)?;

    let binary = if options.dist {
        Some(dist_size(root, options)?)
    } else {
        None
    };
    let date = match &options.date {
        Some(date) => date.clone(),
        None => changelog::today(),
    };
    let section = changelog::write(root, &metadata, &version, &date, binary.as_deref())?;

    git(
        root,
        &["add", "--", "Cargo.toml", "Cargo.lock", changelog::FILE],
    )?;
    git(
        root,
        &["commit", "--quiet", "-m", &format!("release {version}")],
    )?;

    let packaged = package(root, options, &crates)?;
    if options.publish_dry_run {
        let mut args = vec!["publish", "--dry-run", "--locked"];
        args.extend(selection(&crates));
        if !options.verify {
            args.push("--no-verify");
        }
        cargo_in(root, options, &args)?;
    }
    let message = format!("tackle {version}\n\n{section}");
    // Verbatim: the default cleanup would strip the section's `#` headings as comments.
    git(
        root,
        &[
            "tag",
            "--annotate",
            "--cleanup=verbatim",
            &tag,
            "--message",
            &message,
        ],
    )?;
    Ok(Released {
        version,
        tag,
        order: crates,
        packages: packaged,
        section,
    })
}

/// `cargo package` for `crates`, in that order; the `.crate` files it wrote.
fn package(root: &Path, options: &Options, crates: &[String]) -> Result<Vec<PathBuf>, String> {
    let mut args = vec!["package", "--offline", "--locked"];
    args.extend(selection(crates));
    if !options.verify {
        args.push("--no-verify");
    }
    cargo_in(root, options, &args)?;
    let dir = match &options.target_dir {
        Some(dir) => dir.clone(),
        None => target_dir(root)?,
    }
    .join("package");
    let metadata = crate::tidy::metadata(root)?;
    let version = workspace_version(&metadata)?;
    crates
        .iter()
        .map(|name| {
            let file = dir.join(format!("{name}-{version}.crate"));
            if file.is_file() {
                Ok(file)
            } else {
                Err(format!("cargo package wrote no {}", file.display()))
            }
        })
        .collect()
}

fn selection(crates: &[String]) -> Vec<&str> {
    crates
        .iter()
        .flat_map(|name| ["--package", name.as_str()])
        .collect()
}

/// The CI step: no publishable crate ships a file over [`PACKAGED_FILE_BUDGET`].
pub(crate) fn check_packages(root: &Path) -> Result<(), String> {
    let metadata = crate::tidy::metadata(root)?;
    let crates: Vec<String> = publishable(&metadata).into_iter().collect();
    check_package_budget(root, &crates)
}

/// The directory of the workspace member `name`, if there is one.
pub(crate) fn package_dir(metadata: &cargo_metadata::Metadata, name: &str) -> Option<PathBuf> {
    let package = metadata
        .workspace_packages()
        .into_iter()
        .find(|p| p.name == name)?;
    Some(
        package
            .manifest_path
            .parent()
            .map(|d| d.as_std_path().to_path_buf())
            .unwrap_or_default(),
    )
}

/// Fails when a publishable crate would ship a file over [`PACKAGED_FILE_BUDGET`] (a test
/// fixture that should stay in the repository).
pub(crate) fn check_package_budget(root: &Path, crates: &[String]) -> Result<(), String> {
    let metadata = crate::tidy::metadata(root)?;
    let mut problems = Vec::new();
    for name in crates {
        let Some(dir) = package_dir(&metadata, name) else {
            continue;
        };
        let listing = cargo_output(
            root,
            &[
                "package",
                "--list",
                "--offline",
                "--allow-dirty",
                "--package",
                name,
            ],
        )?;
        for file in listing.lines() {
            // Files cargo generates (Cargo.toml.orig's sibling, .cargo_vcs_info.json) are not
            // on disk; what is, is what the package carries.
            let Ok(meta) = std::fs::metadata(dir.join(file)) else {
                continue;
            };
            if meta.len() > PACKAGED_FILE_BUDGET {
                problems.push(format!(
                    "{name}: {file} is {} bytes, over the {PACKAGED_FILE_BUDGET}-byte budget of a \
                     packaged file: exclude it from the package (`exclude` in the crate's \
                     Cargo.toml) or make it smaller",
                    meta.len()
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// Builds `tackle` as it is installed (`cargo xtask install`); its size for the release notes.
fn dist_size(root: &Path, options: &Options) -> Result<String, String> {
    let build = crate::install::Build::for_host()?;
    let binary = build.build(root, options.target_dir.as_deref())?;
    let bytes = std::fs::metadata(&binary)
        .map_err(|err| format!("{}: {err}", binary.display()))?
        .len();
    let linked = if build.rustflags.is_some() {
        ", linked statically"
    } else {
        ""
    };
    Ok(format!(
        "The `tackle` binary as `cargo xtask install` builds it (the `dist` profile: LTO, one \
         codegen unit, stripped{linked}) for {} is {:.1} MiB ({bytes} bytes).",
        build.target,
        bytes as f64 / (1024.0 * 1024.0)
    ))
}

fn workspace_version(metadata: &cargo_metadata::Metadata) -> Result<Version, String> {
    let package = metadata
        .workspace_packages()
        .into_iter()
        .find(|p| p.name.as_str() == "tackle-tool-core")
        .ok_or("the workspace has no tackle-tool-core")?;
    Version::parse(&package.version.to_string())
}

pub(crate) fn target_dir(root: &Path) -> Result<PathBuf, String> {
    let metadata = crate::tidy::metadata(root)?;
    Ok(metadata.target_directory.as_std_path().to_path_buf())
}

fn ensure_clean(root: &Path) -> Result<(), String> {
    let status = git_output(root, &["status", "--porcelain"])?;
    if status.trim().is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the working tree is not clean; commit or stash first:\n{status}"
        ))
    }
}

/// The scratch clone commits and tags as this repository's user would.
fn copy_identity(from: &Path, to: &Path) -> Result<(), String> {
    for key in ["user.name", "user.email"] {
        if let Ok(value) = git_output(from, &["config", key]) {
            git(to, &["config", key, value.trim()])?;
        }
    }
    Ok(())
}

fn path_arg(path: &Path) -> Result<String, String> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{} is not UTF-8", path.display()))
}

/// Runs cargo in `root` with the release's target directory.
fn cargo_in(root: &Path, options: &Options, args: &[&str]) -> Result<(), String> {
    let mut all: Vec<&str> = args.to_vec();
    let target;
    if let Some(dir) = &options.target_dir {
        target = path_arg(dir)?;
        all.extend(["--target-dir", &target]);
    }
    crate::cargo(root, &all)
}

fn cargo_output(root: &Path, args: &[&str]) -> Result<String, String> {
    let cargo = crate::cargo_program();
    output(
        Command::new(cargo).args(args).current_dir(root),
        "cargo",
        args,
    )
}

pub(crate) fn git(root: &Path, args: &[&str]) -> Result<(), String> {
    git_output(root, args).map(drop)
}

pub(crate) fn git_output(root: &Path, args: &[&str]) -> Result<String, String> {
    output(
        Command::new("git").args(args).current_dir(root),
        "git",
        args,
    )
}

fn output(command: &mut Command, program: &str, args: &[&str]) -> Result<String, String> {
    let output = command
        .output()
        .map_err(|err| format!("cannot run {program}: {err}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "`{program} {}` failed ({}): {}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}
