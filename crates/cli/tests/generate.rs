//! What the binary generates about itself: version, completions, man page, tool reference.

use crate::tackle;

#[test]
fn the_version_names_the_commit_it_was_built_from() {
    let out = tackle().arg("--version").assert().success();
    let line = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    let rest = line
        .strip_prefix(&format!("tackle {version} ("))
        .and_then(|rest| rest.strip_suffix(")\n"))
        .unwrap_or_else(|| panic!("unexpected version line {line:?}"));
    // These tests run from a git checkout: the commit is a hexadecimal hash.
    assert!(
        rest.len() >= 7 && rest.chars().all(|c| c.is_ascii_hexdigit()),
        "{line:?}"
    );
}

#[test]
fn completions_cover_every_shell_and_subcommand() {
    for shell in ["bash", "zsh", "fish"] {
        let out = tackle().args(["completions", shell]).assert().success();
        let script = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        for subcommand in ["tools", "call", "permission", "trust"] {
            assert!(script.contains(subcommand), "{shell}: no {subcommand}");
        }
    }
    tackle().args(["completions", "cmd"]).assert().code(2);
}

#[test]
fn the_man_page_is_roff_for_tackle() {
    let out = tackle().arg("man").assert().success();
    let page = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(page.contains(".TH tackle 1"), "{page}");
    assert!(
        page.contains("The tool runtime for coding agents"),
        "{page}"
    );
    assert!(page.contains("completions"), "{page}");
}

#[test]
fn the_reference_lists_every_builtin_with_its_permission_action() {
    let out = tackle().arg("reference").assert().success();
    let list: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let actions: Vec<(&str, &str)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap(),
                d["permission"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("bash", "bash"),
            ("read", "read"),
            ("edit", "edit"),
            ("write", "edit"),
            ("apply_patch", "edit"),
            ("glob", "glob"),
            ("grep", "grep"),
            ("question", "question"),
            ("skill", "skill"),
            ("todowrite", "todowrite"),
            ("webfetch", "webfetch"),
            ("websearch", "websearch"),
            ("job_output", "job_output"),
            ("job_kill", "job_kill"),
            ("job_list", "job_list"),
        ]
    );
    // Nothing of the machine it runs on: the shell is fixed.
    let bash = list[0]["description"].as_str().unwrap();
    assert!(
        bash.starts_with("Executes a shell command with bash (/bin/bash)"),
        "{bash}"
    );
}
