//! Inputs the fuzz targets (`fuzz/`, `cargo xtask fuzz`) found, inline: one test per defect
//! class. Each input is also a seed of its target, under `fuzz/corpus/<target>/`.

#[cfg(feature = "bash")]
use std::path::Path;
#[cfg(feature = "web")]
use std::time::{Duration, Instant};

use serde_json::json;
use tackle_builtins::{FileMutation, Location, LocationServices, builtin_tool};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{AnswerAll, Effect, Permission, Reply, Rule, Ruleset, SavedApprovals};
use tackle_tool_core::{Call, Context};

/// The `edit_ladder` target: a CRLF file stays CRLF when newString (LF) adds lines.
#[tokio::test]
async fn edit_keeps_crlf_when_new_string_adds_lines() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), b"x\r\ny\r\nz\r").unwrap();
    let services = LocationServices::new(
        Location::new(dir.path()).unwrap(),
        Permission::new(
            Ruleset::new(vec![Rule::new("*", "*", Effect::Allow)]),
            SavedApprovals::in_memory(),
            std::sync::Arc::new(AnswerAll(Reply::Once)),
        ),
        OutputStore::new(StoreConfig::in_data_dir(dir.path().join(".data"))),
        FileMutation::new(),
    );
    let edit = builtin_tool(&services, "edit").unwrap();
    let input = json!({"path": "f.txt", "oldString": "y", "newString": "p\nq\n"});
    edit.run_unbounded(&Call::new("c", "edit", input), &Context::new("s"))
        .await
        .unwrap();
    let after = std::fs::read(dir.path().join("f.txt")).unwrap();
    assert_eq!(after, b"x\r\np\r\nq\r\n\r\nz\r");
}

/// The `bash_policy` target's decision: `line` runs without asking under rules that allow
/// every command but `rm` and `curl`.
#[cfg(feature = "bash")]
fn allowed(line: &str, root: &Path) -> bool {
    let rules = Ruleset::new(vec![
        Rule::new("bash", "*", Effect::Allow),
        Rule::new("bash", "rm *", Effect::Deny),
        Rule::new("bash", "curl *", Effect::Deny),
    ]);
    let location = Location::new(root).unwrap();
    let plan = tackle_builtins::bash::command_permission(line, &location, root, None);
    plan.unresolved.is_empty()
        && plan.external_directories.is_empty()
        && !plan.resources.is_empty()
        && plan
            .resources
            .iter()
            .all(|r| rules.evaluate("bash", r) == Effect::Allow)
}

/// The `bash_policy` and `bash_exec` targets: each line runs `rm` or `curl` (`bash_exec` saw
/// the denied program's marker appear), so the policy must not allow it.
#[cfg(feature = "bash")]
#[test]
fn bash_lines_that_run_a_denied_command_are_not_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let lines = [
        // `env -` was not seen through.
        "env - rm",
        "export v1=rm; env - \"${v1}\" -rf y",
        // Placeholders filled at run time.
        "printf '%s\\n' 'rm' | xargs -I{} sh -c '{}'",
        "echo '\"rm\"' | xargs -I{} bash -c {}",
        // Shell options before `-c`.
        "sh +x -c \"rm x\"",
        // Nested backticks.
        "local_x=`echo; \\`echo rm\\` -f x`",
        // An escaped backslash in backquotes (`r\\m` runs `rm`).
        "local_x=`echo; r\\\\m`",
        // A substitution in a `<<-` here-document body.
        "cat <<-EOF\n\t$(set -- curl x; \"$@\")\n\tEOF",
        // `!` or `time` before a compound command hid the commands inside it.
        "! { rm x; }",
        "! for v in x; do rm x; done",
        "! while false; do rm x; done",
        "! if true; then rm x; fi",
        "! for v in rm; do $v x; done",
        "time { rm x; }",
        "time for v in x; do rm x; done",
    ];
    let allowed: Vec<(&str, Vec<String>)> = lines
        .iter()
        .copied()
        .filter(|line| allowed(line, &root))
        .map(|line| {
            let location = Location::new(&root).unwrap();
            let plan = tackle_builtins::bash::command_permission(line, &location, &root, None);
            (line, plan.resources)
        })
        .collect();
    assert!(allowed.is_empty(), "allowed: {allowed:#?}");
}

/// The `html` target's seeds: deeply nested pages (`<div>` 10,000 deep; 3,000 `<ul><li>` then
/// 3,000 `<blockquote><b>`) overflowed the stack of the conversion.
#[cfg(feature = "web")]
#[test]
fn deeply_nested_html_converts() {
    let pages = [
        format!("{}deep", "<div>".repeat(10_000)),
        format!(
            "{}{}deep",
            "<ul><li>".repeat(3000),
            "<blockquote><b>".repeat(3000)
        ),
    ];
    for page in &pages {
        let deadline = Instant::now() + Duration::from_secs(120);
        let markdown = tackle_builtins::web::html_to_markdown(page, deadline).unwrap();
        let text = tackle_builtins::web::html_to_text(page, deadline).unwrap();
        assert!(markdown.contains("deep"), "{markdown:.200}");
        assert!(text.contains("deep"), "{text:.200}");
    }
}
