//! The ignore, hidden and symlink policy, which glob and grep share.

use serde_json::{Value, json};

use super::fixture::{Fixture, write_at};

/// A tree with every case of the policy: a `.gitignore`d file and directory, a `.ignore`d file,
/// a hidden workflow, `.git` internals, a symlinked directory inside, a loop and a link to
/// outside the Location.
fn tree() -> Fixture {
    let f = Fixture::new();
    f.write(".gitignore", "secret.log\nbuild/\n");
    f.write(".ignore", "vendor.txt\n");
    f.write("secret.log", "needle\n");
    f.write("build/out.txt", "needle\n");
    f.write("vendor.txt", "needle\n");
    f.write(".github/workflows/ci.yml", "needle: true\n");
    f.write(".git/config", "needle\n");
    f.write(".git/HEAD", "needle\n");
    f.write("src/main.rs", "needle\n");
    f.write("real/inner.txt", "needle\n");
    f.link("linked", "real");
    f.link("sub/loop", "..");
    write_at(&f.outside, "leak.txt", "needle\n");
    f.link("sub/ext", &f.outside);
    f.link("ext_file.txt", f.outside.join("leak.txt"));
    f
}

fn sorted(value: &Value, key: &str) -> Vec<String> {
    let mut paths: Vec<String> = value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            if key.is_empty() {
                v.as_str().unwrap().to_owned()
            } else {
                v[key].as_str().unwrap().to_owned()
            }
        })
        .collect();
    paths.sort();
    paths
}

/// What glob's `**/*` lists: hidden names are left out unless the pattern names them.
const EXPECTED: [&str; 3] = ["linked/inner.txt", "real/inner.txt", "src/main.rs"];

#[tokio::test]
async fn glob_sees_the_policy() {
    let f = tree();
    let out = f.call("glob", json!({"pattern": "**/*"})).await.unwrap();
    assert_eq!(sorted(&out.structured["files"], ""), EXPECTED);
    let skipped = &out.structured["skipped"];
    let links = sorted(&skipped["outsideLinks"], "link");
    assert_eq!(links, ["ext_file.txt", "sub/ext"]);
    assert_eq!(skipped["loops"], 1);
    // The model is told, not silently left without the files.
    let text = f.text(&out);
    let notes = text.split("\n\n").nth(1).unwrap();
    insta::assert_snapshot!(notes, @"(Not followed: 2 symlinks leading outside [ROOT]: [ROOT]/ext_file.txt -> [OUTSIDE]/leak.txt, [ROOT]/sub/ext -> [OUTSIDE]. To search a target, pass it as `path`.)");
    // Named with a leading dot, hidden files are listed, `.git` never.
    let out = f.call("glob", json!({"pattern": ".*"})).await.unwrap();
    assert_eq!(
        sorted(&out.structured["files"], ""),
        [".gitignore", ".ignore"]
    );
}

#[tokio::test]
async fn hidden_files_are_listed_when_the_pattern_names_them() {
    // As `rg --files`: a pattern that names no hidden name lists none.
    let f = tree();
    // (The tree's links leading outside are named in a note after a blank line.)
    let listed =
        |out: &tackle_tool_core::ToolOutput| f.text(out).split("\n\n").next().unwrap().to_owned();
    let out = f.call("glob", json!({"pattern": "*.yml"})).await.unwrap();
    insta::assert_snapshot!(listed(&out), @"No files found");
    for pattern in [
        ".github/workflows/*.yml",
        ".github/**",
        "**/.github/**/*.yml",
    ] {
        let out = f.call("glob", json!({"pattern": pattern})).await.unwrap();
        assert_eq!(listed(&out), "[ROOT]/.github/workflows/ci.yml", "{pattern}");
    }
    f.write(".env", "");
    f.write("src/.env.local", "");
    f.write(".github/workflows/.draft.yml", "");
    let out = f
        .call("glob", json!({"pattern": "**/.env*"}))
        .await
        .unwrap();
    assert_eq!(
        sorted(&out.structured["files"], ""),
        [".env", "src/.env.local"]
    );
    // Only the names the pattern names: `.draft.yml` is hidden inside `.github`.
    let out = f
        .call("glob", json!({"pattern": ".github/**"}))
        .await
        .unwrap();
    assert_eq!(out.structured["files"], json!([".github/workflows/ci.yml"]));
    let out = f
        .call("glob", json!({"pattern": ".github/**/.*"}))
        .await
        .unwrap();
    assert_eq!(
        out.structured["files"],
        json!([".github/workflows/.draft.yml"])
    );
}

#[tokio::test]
async fn grep_sees_the_same_files() {
    let f = tree();
    let out = f.call("grep", json!({"pattern": "needle"})).await.unwrap();
    assert_eq!(
        sorted(&out.structured["matches"], "path"),
        [
            ".github/workflows/ci.yml",
            "linked/inner.txt",
            "real/inner.txt",
            "src/main.rs"
        ]
    );
    let links = sorted(&out.structured["skipped"]["outsideLinks"], "link");
    assert_eq!(links, ["ext_file.txt", "sub/ext"]);
}

#[tokio::test]
async fn outside_link_target_can_be_searched_explicitly() {
    let f = tree();
    let out = f
        .call(
            "grep",
            json!({"pattern": "needle", "path": f.outside.to_string_lossy()}),
        )
        .await
        .unwrap();
    insta::assert_snapshot!(f.text(&out), @r"
    Found 1 matches
    [OUTSIDE]/leak.txt:
      Line 1: needle
    ");
    let actions: Vec<String> = f.asked().into_iter().map(|r| r.action).collect();
    assert_eq!(actions, ["external_directory", "grep"]);
}

#[tokio::test]
async fn ignore_files_apply_outside_git_and_in_parents() {
    // No `.git` anywhere: a `.gitignore` still applies, also to a search of a subdirectory.
    let f = Fixture::new();
    f.write(".gitignore", "*.gen.rs\n");
    f.write("src/a.rs", "");
    f.write("src/b.gen.rs", "");
    let out = f
        .call("glob", json!({"pattern": "*.rs", "path": "src"}))
        .await
        .unwrap();
    assert_eq!(out.structured["files"], json!(["src/a.rs"]));
}

#[tokio::test]
async fn link_to_an_ancestor_outside_is_reported_not_walked() {
    // `up -> ../..` leads above the Location: a loop for the walker, an escape for us.
    let f = Fixture::new();
    f.write("a.txt", "");
    f.link("up", "..");
    let out = f.call("glob", json!({"pattern": "*.txt"})).await.unwrap();
    assert_eq!(out.structured["files"], json!(["a.txt"]));
    let links = sorted(&out.structured["skipped"]["outsideLinks"], "link");
    assert_eq!(links, ["up"]);
}

#[tokio::test]
async fn symlinked_file_inside_is_listed_under_its_own_name() {
    let f = Fixture::new();
    f.write("docs/guide.md", "needle\n");
    f.link("GUIDE.md", "docs/guide.md");
    let out = f.call("grep", json!({"pattern": "needle"})).await.unwrap();
    assert_eq!(
        sorted(&out.structured["matches"], "path"),
        ["GUIDE.md", "docs/guide.md"]
    );
}
