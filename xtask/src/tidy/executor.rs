//! Only the registry runs a tool.
//!
//! `Tool::run_unbounded` executes a tool without bounding what the model reads; the registry's
//! `Materialization::settle` is the boundary that validates, runs and bounds, so it is the only
//! product code that may call it. Tool-core defines it (and tests the tool type with it); tests
//! and benches of other crates may call it to exercise a leaf on its own, but product code
//! (`src/`) and examples (which users copy) must settle through a registry.

use std::path::Path;

/// Crates whose product code may run a tool: the definer and the boundary.
const ALLOWED: &[&str] = &["crates/tool-core/", "crates/registry/src/"];

/// Every call of the raw run in product code or examples outside [`ALLOWED`].
pub(crate) fn check(root: &Path) -> Vec<String> {
    // Built from pieces so that this file does not trip its own check.
    let call = format!("{}_unbounded(", "run");
    let mut files = Vec::new();
    let Ok(crates) = std::fs::read_dir(root.join("crates")) else {
        return Vec::new();
    };
    for krate in crates.flatten() {
        for dir in ["src", "examples"] {
            super::rust_files(&krate.path().join(dir), &mut files);
        }
    }
    files.sort();
    let mut problems = Vec::new();
    for file in files {
        let relative = file.strip_prefix(root).unwrap_or(&file);
        let shown = relative.to_string_lossy().replace('\\', "/");
        if ALLOWED.iter().any(|allowed| shown.starts_with(allowed)) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains(&call) {
                problems.push(format!(
                    "executor: {shown}:{}: only the registry's settle runs a tool; settle \
                     through a registry snapshot",
                    number + 1
                ));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_raw_run_outside_the_registry_fails() {
        let dir = tempfile::tempdir().unwrap();
        let call = format!("tool.{}_unbounded(&call, &ctx)", "run");
        write(
            dir.path(),
            "crates/cli/src/call.rs",
            &format!("fn f() {{ {call}; }}\n"),
        );
        write(
            dir.path(),
            "crates/x/examples/e.rs",
            &format!("\n{call};\n"),
        );
        write(
            dir.path(),
            "crates/registry/src/snapshot.rs",
            &format!("{call};\n"),
        );
        write(
            dir.path(),
            "crates/tool-core/tests/t.rs",
            &format!("{call};\n"),
        );
        write(
            dir.path(),
            "crates/builtins/tests/t.rs",
            &format!("{call};\n"),
        );
        write(
            dir.path(),
            "crates/builtins/src/doc.rs",
            &format!("// {call}\n"),
        );
        let problems = check(dir.path());
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("executor: crates/cli/src/call.rs:1:"));
        assert!(problems[1].starts_with("executor: crates/x/examples/e.rs:2:"));
    }
}
