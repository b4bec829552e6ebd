//! `cargo xtask docs [--bless]`: the API documentation builds without a warning, and the
//! generated pages in `docs/` match the code.
//!
//! - rustdoc for the workspace with `-D warnings`: a broken or private intra-doc link fails,
//!   and so does a missing doc on a library crate's public item (each library crate denies
//!   `missing_docs`).
//! - `docs/tools.md` from the builtins' live definitions: the built binary's hidden `tackle
//!   reference` prints each tool's definition and permission action; the examples of what the
//!   model reads come from the compat snapshot tests (`crates/builtins/tests/compat/snapshots`),
//!   so they are outputs a test checked.
//! - `docs/config.md` from `docs/config.schema.json`, when that file exists.
//!
//! Without `--bless` a generated page that differs from the checked-in one fails with a diff
//! (`cargo xtask ci` runs this); `--bless` rewrites it. `cargo xtask man` writes the man page
//! the binary generates from its command-line definition.

mod schema;
mod tools;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::process::Command;

const TOOLS_PAGE: &str = "docs/tools.md";
const CONFIG_PAGE: &str = "docs/config.md";
const CONFIG_SCHEMA: &str = "docs/config.schema.json";
const SNAPSHOTS: &str = "crates/builtins/tests/compat/snapshots";

/// `cargo xtask docs [--bless]`.
pub(crate) fn run(root: &Path, bless: bool) -> Result<(), String> {
    rustdoc(root)?;
    let binary = build_binary(root)?;
    let reference = binary_output(&binary, &["reference"])?;
    let definitions: Vec<serde_json::Value> = serde_json::from_str(&reference)
        .map_err(|err| format!("tackle reference printed no definitions: {err}"))?;
    let examples = tools::examples(&root.join(SNAPSHOTS))?;
    let page = tools::page(&definitions, &examples);
    let mut problems = Vec::new();
    if let Err(problem) = settle(&root.join(TOOLS_PAGE), TOOLS_PAGE, &page, bless) {
        problems.push(problem);
    }
    let schema_path = root.join(CONFIG_SCHEMA);
    if schema_path.is_file() {
        let text = std::fs::read_to_string(&schema_path)
            .map_err(|err| format!("{CONFIG_SCHEMA}: {err}"))?;
        let schema: serde_json::Value =
            serde_json::from_str(&text).map_err(|err| format!("{CONFIG_SCHEMA}: {err}"))?;
        let page = config_page(&schema);
        if let Err(problem) = settle(&root.join(CONFIG_PAGE), CONFIG_PAGE, &page, bless) {
            problems.push(problem);
        }
    } else {
        eprintln!("xtask: {CONFIG_SCHEMA} does not exist (yet): {CONFIG_PAGE} is not generated");
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// `cargo xtask man`: the man page, in `<target>/man/tackle.1`.
pub(crate) fn man(root: &Path) -> Result<(), String> {
    let binary = build_binary(root)?;
    let page = binary_output(&binary, &["man"])?;
    let dir = crate::tidy::metadata(root)?
        .target_directory
        .as_std_path()
        .join("man");
    std::fs::create_dir_all(&dir).map_err(|err| format!("{}: {err}", dir.display()))?;
    let file = dir.join("tackle.1");
    std::fs::write(&file, page).map_err(|err| format!("{}: {err}", file.display()))?;
    eprintln!(
        "xtask: wrote {} (view it with `man {}`)",
        file.display(),
        file.display()
    );
    Ok(())
}

/// Compares the generated `page` with the file at `path` (or with `bless`, writes it).
pub(crate) fn settle(path: &Path, name: &str, page: &str, bless: bool) -> Result<(), String> {
    let current = std::fs::read_to_string(path).unwrap_or_default();
    if current == page {
        return Ok(());
    }
    if bless {
        std::fs::write(path, page).map_err(|err| format!("{name}: {err}"))?;
        eprintln!("xtask: wrote {name}");
        return Ok(());
    }
    Err(format!(
        "{name} is out of date with the code; run `cargo xtask docs --bless` and commit it:\n{}",
        crate::public_api::diff(name, &current, page)
    ))
}

fn rustdoc(root: &Path) -> Result<(), String> {
    eprintln!("xtask: cargo doc --workspace --no-deps --locked (RUSTDOCFLAGS=-D warnings)");
    let cargo = crate::cargo_program();
    let status = Command::new(cargo)
        .args(["doc", "--workspace", "--no-deps", "--locked"])
        .env("RUSTDOCFLAGS", "-D warnings")
        .current_dir(root)
        .status()
        .map_err(|err| format!("cannot run cargo doc: {err}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("rustdoc found problems ({status})"))
    }
}

/// Builds the `tackle` binary (dev profile) and returns its path.
fn build_binary(root: &Path) -> Result<PathBuf, String> {
    crate::cargo(root, &["build", "--package", "tackle", "--locked"])?;
    let metadata = crate::tidy::metadata(root)?;
    Ok(metadata
        .target_directory
        .as_std_path()
        .join("debug")
        .join("tackle"))
}

fn binary_output(binary: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new(binary)
        .args(args)
        .output()
        .map_err(|err| format!("cannot run {}: {err}", binary.display()))?;
    if !output.status.success() {
        return Err(format!(
            "`tackle {}` failed ({}): {}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    String::from_utf8(output.stdout).map_err(|err| format!("tackle {}: {err}", args.join(" ")))
}

/// `docs/config.md` from the configuration's JSON Schema.
pub(crate) fn config_page(schema: &serde_json::Value) -> String {
    let mut text = format!(
        "# Configuration\n\n<!-- Generated by `cargo xtask docs --bless` from {CONFIG_SCHEMA}; \
         `cargo xtask ci` fails when it differs. Do not edit by hand. -->\n\n"
    );
    if let Some(description) = schema.get("description").and_then(|d| d.as_str()) {
        text.push_str(description.trim());
        text.push_str("\n\n");
    }
    text.push_str(&schema::table(schema, schema));
    text
}
