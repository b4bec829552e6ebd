//! `cargo xtask public-api [--bless]`: a checked-in snapshot of each library crate's public API.
//!
//! - The crates are the library targets of the workspace members (`cargo metadata`). Their
//!   rustdoc JSON is built with the stable toolchain, all features on, by one `cargo doc
//!   --no-deps` with `RUSTC_BOOTSTRAP=1` and `RUSTDOCFLAGS=-Z unstable-options --output-format
//!   json` (the rustdoc flags `cargo public-api` uses on nightly), in `<target>/public-api`.
//! - [`render`] turns each JSON file into a sorted text listing of the public surface, written
//!   to `docs/api/<package>.txt`. Without `--bless` a listing that differs from the checked-in
//!   file fails with a unified diff; `--bless` rewrites the files (and removes stale ones).
//! - The JSON is read as untyped `serde_json::Value`, written against format version
//!   [`FORMAT_VERSION`]; another version only prints a note, and whatever it renders
//!   differently shows up in the diff.

mod attrs;
mod render;
mod types;
mod walk;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use cargo_metadata::Metadata;
use serde_json::Value;

/// The rustdoc JSON format version the renderer was written against (rustc 1.95).
const FORMAT_VERSION: u64 = 57;

/// Where the listings live, relative to the workspace root.
const API_DIR: &str = "docs/api";

/// A library crate of the workspace: its package name and its library target's crate name.
#[derive(Debug)]
struct Library {
    package: String,
    crate_name: String,
}

/// Checks (or with `bless`, rewrites) every listing in `docs/api/`.
pub(crate) fn run(root: &Path, bless: bool) -> Result<(), String> {
    let metadata = crate::tidy::metadata(root)?;
    let libraries = libraries(&metadata);
    let target_dir = metadata.target_directory.as_std_path().join("public-api");
    rustdoc_json(root, &target_dir, &libraries)?;
    let doc_dir = target_dir.join("doc");
    let krates = libraries
        .iter()
        .map(|library| load(&doc_dir.join(format!("{}.json", library.crate_name))))
        .collect::<Result<Vec<Value>, String>>()?;
    let surfaces = krates
        .iter()
        .map(walk::surface)
        .collect::<Result<Vec<_>, String>>()?;
    // Items of one workspace crate in another's signatures go by their public paths.
    let mut aliases: HashMap<String, String> = HashMap::new();
    for (defined, public) in surfaces.iter().flat_map(|s| s.aliases()) {
        // Two items at one defining path (a type and a function) keep the smaller, whatever the
        // order of the walk.
        let known = aliases.entry(defined).or_insert_with(|| public.clone());
        if public < *known {
            *known = public;
        }
    }
    let dir = root.join(API_DIR);
    let mut problems = Vec::new();
    let mut expected = Vec::new();
    for (library, surface) in libraries.iter().zip(&surfaces) {
        let listing = format!(
            "# The public API of {}, all features on, rendered from rustdoc JSON by\n\
             # `cargo xtask public-api`; `cargo xtask public-api --bless` rewrites it.\n\n{}",
            library.package,
            surface.render(&aliases)
        );
        let file = dir.join(format!("{}.txt", library.package));
        expected.push(file.clone());
        let current = std::fs::read_to_string(&file).unwrap_or_default();
        if current == listing {
            continue;
        }
        let name = format!("{API_DIR}/{}.txt", library.package);
        if bless {
            std::fs::create_dir_all(&dir).map_err(|err| format!("{}: {err}", dir.display()))?;
            std::fs::write(&file, &listing).map_err(|err| format!("{}: {err}", file.display()))?;
            eprintln!("xtask: public-api: wrote {name}");
        } else {
            let diff = diff(&name, &current, &listing);
            problems.push(format!(
                "public-api: {name} is not the crate's API:\n{diff}"
            ));
        }
    }
    for stale in stale_listings(&dir, &expected) {
        let shown = stale.strip_prefix(root).unwrap_or(&stale).display();
        if bless {
            std::fs::remove_file(&stale).map_err(|err| format!("{shown}: {err}"))?;
            eprintln!("xtask: public-api: removed {shown}");
        } else {
            problems.push(format!(
                "public-api: {shown}: no library crate has this listing"
            ));
        }
    }
    if problems.is_empty() {
        let verb = if bless { "are up to date" } else { "match" };
        eprintln!("xtask: public-api: {} listings {verb}", libraries.len());
        Ok(())
    } else {
        problems.push(
            "public-api: the public API changed; if that is intended, run `cargo xtask \
             public-api --bless` and commit docs/api/"
                .to_owned(),
        );
        Err(problems.join("\n"))
    }
}

/// The library targets of the workspace members, sorted by package name.
fn libraries(metadata: &Metadata) -> Vec<Library> {
    let mut libraries: Vec<Library> = metadata
        .workspace_packages()
        .into_iter()
        .filter_map(|package| {
            let lib = package
                .targets
                .iter()
                .find(|t| t.is_lib() || t.is_rlib() || t.is_proc_macro())?;
            Some(Library {
                package: package.name.to_string(),
                crate_name: lib.name.replace('-', "_"),
            })
        })
        .collect();
    libraries.sort_by(|a, b| a.package.cmp(&b.package));
    libraries
}

/// Builds the rustdoc JSON of every library into `<target_dir>/doc/<crate>.json`.
///
/// `target_dir` is a target directory of its own: build scripts such as proc-macro2's rerun
/// when `RUSTC_BOOTSTRAP` changes, so sharing the workspace's would rebuild nearly every
/// dependency both after this and after the next ordinary build. One `cargo doc` documents
/// all the crates with the features resolved together; a `cargo rustdoc` per crate resolves
/// them per crate and rebuilt shared dependencies from one crate to the next.
fn rustdoc_json(root: &Path, target_dir: &Path, libraries: &[Library]) -> Result<(), String> {
    let cargo = crate::cargo_program();
    let mut command = Command::new(cargo);
    command.args(["doc", "--no-deps", "--lib", "--all-features", "--locked"]);
    for library in libraries {
        command.args(["--package", &library.package]);
    }
    // JSON output is unstable rustdoc; RUSTC_BOOTSTRAP lets the stable toolchain give it.
    command
        .env("RUSTC_BOOTSTRAP", "1")
        .env("RUSTDOCFLAGS", "-Z unstable-options --output-format json")
        .env("CARGO_TARGET_DIR", target_dir)
        .current_dir(root);
    eprintln!(
        "xtask: public-api: rustdoc JSON of {} crates (cargo doc)",
        libraries.len()
    );
    let status = command
        .status()
        .map_err(|err| format!("cannot run cargo doc: {err}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo doc (rustdoc JSON) failed ({status})"))
    }
}

/// A rustdoc JSON file, with a note when its format is not the one the renderer knows.
fn load(json_file: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(json_file)
        .map_err(|err| format!("{}: {err}", json_file.display()))?;
    let krate: Value =
        serde_json::from_str(&text).map_err(|err| format!("{}: {err}", json_file.display()))?;
    let version = krate["format_version"].as_u64().unwrap_or_default();
    if version != FORMAT_VERSION {
        eprintln!(
            "xtask: public-api: note: {} has rustdoc JSON format {version}, the renderer knows \
             {FORMAT_VERSION}; check the listings for rendering changes",
            json_file.display()
        );
    }
    Ok(krate)
}

/// Listings in `dir` that belong to no library any more.
fn stale_listings(dir: &Path, expected: &[PathBuf]) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut stale: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt") && !expected.contains(p))
        .collect();
    stale.sort();
    stale
}

/// A unified diff from the checked-in listing to the rendered one.
pub(crate) fn diff(name: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(2)
        .header(
            &format!("{name} (checked in)"),
            &format!("{name} (rendered)"),
        )
        .to_string()
}

#[cfg(test)]
mod tests;
