//! glob: the reference's cases and the behaviour of issue 8.

use serde_json::{Value, json};
use tackle_builtins::search::SearchSettings;
use tackle_permission::{Effect, Rule};
use tackle_tool_core::{Halt, ToolError};

use super::fixture::Fixture;

#[tokio::test]
async fn newest_first_absolute_in_text_relative_in_structured() {
    let f = Fixture::new();
    f.write_aged("src/old.rs", "", 300);
    f.write_aged("src/new.rs", "", 10);
    f.write_aged("src/mid/x.rs", "", 100);
    f.write_aged("README.md", "", 5);
    let out = f.call("glob", json!({"pattern": "**/*.rs"})).await.unwrap();
    insta::assert_snapshot!(f.text(&out), @r"
    [ROOT]/src/new.rs
    [ROOT]/src/mid/x.rs
    [ROOT]/src/old.rs
    ");
    insta::assert_json_snapshot!(out.structured, @r#"
    {
      "files": [
        "src/new.rs",
        "src/mid/x.rs",
        "src/old.rs"
      ],
      "total": 3,
      "truncated": false,
      "incomplete": false,
      "skipped": {
        "outsideLinks": [],
        "loops": 0,
        "unreadable": 0
      }
    }
    "#);
}

#[tokio::test]
async fn bare_pattern_matches_at_any_depth_and_path_narrows() {
    let f = Fixture::new();
    f.write_aged("a.rs", "", 30);
    f.write_aged("src/b.rs", "", 20);
    f.write_aged("src/deep/c.rs", "", 10);
    f.write("src/c.txt", "");
    let out = f.call("glob", json!({"pattern": "*.rs"})).await.unwrap();
    assert_eq!(
        out.structured["files"],
        json!(["src/deep/c.rs", "src/b.rs", "a.rs"])
    );
    let out = f
        .call("glob", json!({"pattern": "*.rs", "path": "src"}))
        .await
        .unwrap();
    assert_eq!(
        out.structured["files"],
        json!(["src/deep/c.rs", "src/b.rs"])
    );
    let out = f
        .call("glob", json!({"pattern": "src/*.rs"}))
        .await
        .unwrap();
    assert_eq!(out.structured["files"], json!(["src/b.rs"]));
    // An absolute pattern inside the search root works like the relative one.
    let absolute = format!("{}/src/**/*.rs", f.root.display());
    let out = f.call("glob", json!({"pattern": absolute})).await.unwrap();
    assert_eq!(
        out.structured["files"],
        json!(["src/deep/c.rs", "src/b.rs"])
    );
}

#[tokio::test]
async fn no_files_found() {
    let f = Fixture::new();
    f.write("a.txt", "");
    let out = f.call("glob", json!({"pattern": "*.rs"})).await.unwrap();
    insta::assert_snapshot!(f.text(&out), @"No files found");
    assert_eq!(out.structured["total"], 0);
}

#[tokio::test]
async fn limit_cuts_and_says_how_many_more() {
    let f = Fixture::new();
    for i in 0..7u64 {
        f.write_aged(&format!("f{i}.txt"), "", 100 - i);
    }
    let out = f
        .call("glob", json!({"pattern": "*.txt", "limit": 3}))
        .await
        .unwrap();
    insta::assert_snapshot!(f.text(&out), @r"
    [ROOT]/f6.txt
    [ROOT]/f5.txt
    [ROOT]/f4.txt

    (Results are truncated: showing the first 3 of 7 files, 4 more not shown. Consider using a more specific path or pattern.)
    ");
    assert_eq!(out.structured["total"], 7);
    assert_eq!(out.structured["truncated"], true);
}

#[tokio::test]
async fn default_limit_is_100() {
    let f = Fixture::new();
    for i in 0..105 {
        f.write(&format!("d/f{i:03}.txt"), "");
    }
    let out = f.call("glob", json!({"pattern": "*.txt"})).await.unwrap();
    assert_eq!(out.structured["files"].as_array().unwrap().len(), 100);
    assert_eq!(out.structured["total"], 105);
}

#[tokio::test]
async fn permission_metadata_has_no_absent_keys() {
    // GL1: `{root: "."}` alone, and `{root, path, limit}` when given.
    let f = Fixture::new();
    std::fs::create_dir(f.root.join("src")).unwrap();
    f.call("glob", json!({"pattern": "*.rs"})).await.unwrap();
    f.call(
        "glob",
        json!({"pattern": "*.rs", "path": "src", "limit": 10}),
    )
    .await
    .unwrap();
    let asked = f.asked();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0].action, "glob");
    assert_eq!(asked[0].resources, vec!["*.rs"]);
    assert_eq!(asked[0].save, vec!["*"]);
    assert_eq!(
        Value::Object(asked[0].metadata.clone()),
        json!({"root": "."})
    );
    assert_eq!(
        Value::Object(asked[1].metadata.clone()),
        json!({"root": "src", "path": "src", "limit": 10})
    );
}

#[tokio::test]
async fn missing_path_and_file_path() {
    let f = Fixture::new();
    f.write("a.txt", "");
    let msg = f
        .failure("glob", json!({"pattern": "*", "path": "nope/deeper"}))
        .await;
    insta::assert_snapshot!(msg, @"Search path not found: nope/deeper");
    let msg = f
        .failure("glob", json!({"pattern": "*", "path": "a.txt"}))
        .await;
    insta::assert_snapshot!(msg, @"Search path is not a directory: a.txt. glob searches directories; use read for a single file.");
}

#[tokio::test]
async fn bad_patterns_are_pattern_errors() {
    let f = Fixture::new();
    let msg = f.failure("glob", json!({"pattern": "src/{a,b"})).await;
    insta::assert_snapshot!(msg, @r#"Invalid glob pattern "src/{a,b": unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)"#);
    let msg = f.failure("glob", json!({"pattern": "../*.rs"})).await;
    insta::assert_snapshot!(msg, @r#"The glob pattern "../*.rs" contains `..`; patterns match paths below the search path. Pass the directory to search as `path` instead."#);
    let msg = f.failure("glob", json!({"pattern": "/etc/*.conf"})).await;
    insta::assert_snapshot!(msg, @r#"The glob pattern "/etc/*.conf" is an absolute path outside the search path [ROOT]. Pass the directory to search as `path` and a pattern relative to it."#);
    let msg = f.failure("glob", json!({"pattern": ""})).await;
    insta::assert_snapshot!(msg, @"The glob pattern is empty");
    let err = f
        .call("glob", json!({"pattern": "*", "limit": 0}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ToolError::Failure(ref e) if e.message.starts_with("Invalid tool input: limit: ")),
        "{err:?}"
    );
}

#[tokio::test]
async fn relative_escape_is_refused_before_asking() {
    let f = Fixture::new();
    let msg = f
        .failure("glob", json!({"pattern": "*", "path": "../x"}))
        .await;
    insta::assert_snapshot!(msg, @"Unable to find files matching *: ../x: the relative path leads outside the working directory; use an absolute path for files outside it");
    assert!(f.asked().is_empty());
}

#[tokio::test]
async fn denied_glob_never_walks() {
    let f = Fixture::deny("glob");
    f.write("a.rs", "");
    let msg = f.failure("glob", json!({"pattern": "*.rs"})).await;
    assert!(
        msg.starts_with("Unable to find files matching *.rs: Permission denied: "),
        "{msg}"
    );
}

#[tokio::test]
async fn outside_directory_asks_external_directory_first() {
    let f = Fixture::new();
    super::fixture::write_at(&f.outside, "lib/x.rs", "");
    let out = f
        .call(
            "glob",
            json!({"pattern": "*.rs", "path": f.outside.to_string_lossy()}),
        )
        .await
        .unwrap();
    assert_eq!(f.text(&out), "[OUTSIDE]/lib/x.rs");
    // Outside the Location the structured paths stay absolute.
    let structured = f.redact(out.structured["files"][0].as_str().unwrap());
    assert_eq!(structured, "[OUTSIDE]/lib/x.rs");
    let asked = f.asked();
    let actions: Vec<&str> = asked.iter().map(|r| r.action.as_str()).collect();
    assert_eq!(actions, ["external_directory", "glob"]);
    let pattern = format!("{}/*", f.outside.display());
    assert_eq!(asked[0].resources, vec![pattern.clone()]);
    assert_eq!(asked[0].save, vec![pattern]);
}

#[tokio::test]
async fn denied_external_directory_stops_before_glob() {
    let f = Fixture::with(
        vec![Rule::new("external_directory", "*", Effect::Deny)],
        SearchSettings::default(),
    );
    let msg = f
        .failure(
            "glob",
            json!({"pattern": "*", "path": f.outside.to_string_lossy()}),
        )
        .await;
    assert!(
        msg.starts_with("Unable to find files matching *: Permission denied"),
        "{msg}"
    );
    assert!(f.asked().is_empty(), "glob was never asked");
}

#[tokio::test]
async fn spent_budget_returns_partial_results_marked_incomplete() {
    let f = Fixture::budget(std::time::Duration::ZERO);
    for i in 0..50 {
        f.write(&format!("d{}/f{i}.txt", i % 5), "");
    }
    let out = f.call("glob", json!({"pattern": "*.txt"})).await.unwrap();
    assert_eq!(out.structured["incomplete"], true);
    let total = out.structured["total"].as_u64().unwrap();
    assert!(total < 50, "a spent budget stops the walk early ({total})");
    let text = f.text(&out);
    assert!(
        text.ends_with("(Search incomplete: the 0 s time budget ran out before the whole tree was searched, so these results are partial. Use a more specific path or pattern.)"),
        "{text}"
    );
}

#[tokio::test]
async fn cancelled_call_halts() {
    let f = Fixture::new();
    f.write("a.txt", "");
    let ctx = tackle_tool_core::Context::new("session");
    ctx.cancel.cancel();
    let err = f
        .glob
        .run_unbounded(
            &tackle_tool_core::Call::new("c", "glob", json!({"pattern": "*"})),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Halt(Halt::Cancelled)), "{err:?}");
}

#[tokio::test]
async fn a_pattern_ending_in_a_slash_lists_directories() {
    let f = Fixture::new();
    f.write_aged("src/lib.rs", "", 30);
    f.write_aged("src/tests/a.rs", "", 20);
    f.write_aged("crates/x/tests/b.rs", "", 10);
    f.write("tests.txt", "");
    f.write(".hidden/tests/c.rs", "");
    for dir in ["src/tests", "crates/x/tests", "src", "crates/x", "crates"] {
        age_dir(&f, dir);
    }
    let out = f.call("glob", json!({"pattern": "tests/"})).await.unwrap();
    insta::assert_snapshot!(f.text(&out), @r"
    [ROOT]/crates/x/tests/
    [ROOT]/src/tests/
    ");
    assert_eq!(
        out.structured["files"],
        json!(["crates/x/tests/", "src/tests/"])
    );
    // Anchored with `/`, as file patterns are.
    let out = f.call("glob", json!({"pattern": "*/"})).await.unwrap();
    assert_eq!(
        sorted(&out.structured["files"]),
        [
            "crates/",
            "crates/x/",
            "crates/x/tests/",
            "src/",
            "src/tests/"
        ]
    );
    let out = f
        .call("glob", json!({"pattern": "crates/*/"}))
        .await
        .unwrap();
    assert_eq!(out.structured["files"], json!(["crates/x/"]));
    // A hidden directory is listed when named.
    let out = f.call("glob", json!({"pattern": ".*/"})).await.unwrap();
    assert_eq!(out.structured["files"], json!([".hidden/"]));
}

/// Gives a directory the same old mtime, so the listing order is by path.
fn age_dir(f: &Fixture, dir: &str) {
    let when = std::time::SystemTime::now() - std::time::Duration::from_secs(500);
    std::fs::File::open(f.root.join(dir))
        .unwrap()
        .set_modified(when)
        .unwrap();
}

fn sorted(value: &Value) -> Vec<String> {
    let mut paths: Vec<String> = value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    paths.sort();
    paths
}
