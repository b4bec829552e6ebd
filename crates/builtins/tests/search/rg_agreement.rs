//! grep's options agree with ripgrep's: on generated trees, every option set gives the same
//! lines (matches and context), counts and files as `rg` with the matching flags. Skipped,
//! saying so, when `rg` is not installed.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::fixture::Fixture;

/// Lines the generated files are made of: each pattern below matches some of them.
const LINES: [&str; 7] = [
    "fn alpha() {",
    "    beta(gamma);",
    "}",
    "// TODO alpha",
    "let Alpha = 1;",
    "",
    "beta( ALPHA )",
];

/// `(grep input beyond the pattern, rg flags)` for one pattern each.
fn cases() -> Vec<(&'static str, Value, Vec<&'static str>)> {
    vec![
        ("alpha", json!({}), vec![]),
        ("alpha", json!({"ignoreCase": true}), vec!["-i"]),
        ("beta(", json!({"literal": true}), vec!["-F"]),
        (
            "beta( alpha",
            json!({"literal": true, "ignoreCase": true}),
            vec!["-F", "-i"],
        ),
        ("alpha", json!({"context": 1}), vec!["-C", "1"]),
        ("TODO|beta", json!({"before": 2}), vec!["-B", "2"]),
        ("^}$", json!({"after": 1}), vec!["-A", "1"]),
        // `before` overrides `context` on its side only (rg 13 would let a later -B drop -C).
        (
            "gamma",
            json!({"context": 3, "before": 1}),
            vec!["-A", "3", "-B", "1"],
        ),
        (
            r"fn alpha.*?\}",
            json!({"multiline": true}),
            vec!["-U", "--multiline-dotall"],
        ),
        (
            r"\{\n\s+beta",
            json!({"multiline": true, "context": 1}),
            vec!["-U", "--multiline-dotall", "-C", "1"],
        ),
        (
            "alpha",
            json!({"outputMode": "count", "ignoreCase": true}),
            vec!["-c", "-i"],
        ),
        (
            "beta",
            json!({"outputMode": "files_with_matches"}),
            vec!["-l"],
        ),
    ]
}

fn rg() -> Option<&'static str> {
    let found = Command::new("rg").arg("--version").output();
    found.is_ok_and(|out| out.status.success()).then_some("rg")
}

/// A file's shown lines: line number -> (is a match, text).
type Lines = BTreeMap<u64, (bool, String)>;

/// What one search shows, per file (relative path): its lines, or its count.
#[derive(Debug, PartialEq, Eq)]
enum Shown {
    Lines(BTreeMap<String, Lines>),
    Counts(BTreeMap<String, u64>),
    Files(Vec<String>),
}

fn run_rg(rg: &str, root: &Path, pattern: &str, flags: &[&str]) -> Shown {
    let out = Command::new(rg)
        .current_dir(root)
        .args([
            "--no-config",
            "--hidden",
            "--no-require-git",
            "--null",
            "-n",
        ])
        .args(["--with-filename", "--color", "never"])
        .args(flags)
        .args(["--", pattern, "."])
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    if flags.contains(&"-l") {
        // `--null` ends each path with NUL instead of a newline.
        let mut files: Vec<String> = text
            .split('\0')
            .filter(|path| !path.is_empty())
            .map(|path| path.trim_start_matches("./").to_owned())
            .collect();
        files.sort();
        return Shown::Files(files);
    }
    let records = text.lines().filter(|line| *line != "--").map(|line| {
        let (path, rest) = line.split_once('\0').unwrap_or((line, ""));
        (path.trim_start_matches("./").to_owned(), rest)
    });
    if flags.contains(&"-c") {
        return Shown::Counts(records.map(|(p, n)| (p, n.parse().unwrap())).collect());
    }
    let mut files: BTreeMap<String, Lines> = BTreeMap::new();
    for (path, rest) in records {
        let at = rest.find([':', '-']).unwrap();
        let number = rest[..at].parse().unwrap();
        let is_match = rest.as_bytes()[at] == b':';
        files
            .entry(path)
            .or_default()
            .insert(number, (is_match, rest[at + 1..].to_owned()));
    }
    Shown::Lines(files)
}

fn ours(output: &Value) -> Shown {
    let files = output["files"].as_array();
    if let Some(files) = files.filter(|f| f.iter().any(|f| f.get("count").is_some())) {
        return Shown::Counts(
            files
                .iter()
                .map(|f| {
                    (
                        f["path"].as_str().unwrap().to_owned(),
                        f["count"].as_u64().unwrap(),
                    )
                })
                .collect(),
        );
    }
    if let Some(files) = files {
        let mut files: Vec<String> = files
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_owned())
            .collect();
        files.sort();
        return Shown::Files(files);
    }
    let mut shown: BTreeMap<String, Lines> = BTreeMap::new();
    for (key, is_match) in [("matches", true), ("context", false)] {
        for line in output[key].as_array().into_iter().flatten() {
            shown
                .entry(line["path"].as_str().unwrap().to_owned())
                .or_default()
                .insert(
                    line["line"].as_u64().unwrap(),
                    (is_match, line["text"].as_str().unwrap().to_owned()),
                );
        }
    }
    Shown::Lines(shown)
}

fn tree() -> impl Strategy<Value = Vec<(usize, Vec<usize>)>> {
    prop::collection::vec(
        (0..6usize, prop::collection::vec(0..LINES.len(), 0..14)),
        1..6,
    )
}

/// An empty result is `Files`, `Counts` or `Lines` alike.
fn empty(shown: &Shown) -> bool {
    match shown {
        Shown::Lines(files) => files.is_empty(),
        Shown::Counts(files) => files.is_empty(),
        Shown::Files(files) => files.is_empty(),
    }
}

#[test]
fn options_agree_with_rg() {
    let Some(rg) = rg() else {
        eprintln!("rg is not installed: the comparison with ripgrep is skipped");
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let config = ProptestConfig {
        cases: 16,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(specs in tree())| {
        let f = Fixture::new();
        for (name, lines) in &specs {
            let text: String = lines.iter().map(|i| format!("{}\n", LINES[*i])).collect();
            let dir = if name % 2 == 0 { "src" } else { ".hidden" };
            f.write(&format!("{dir}/f{name}.rs"), &text);
        }
        for (pattern, options, flags) in cases() {
            let mut input = options.clone();
            input["pattern"] = json!(pattern);
            input["limit"] = json!(1_000_000);
            let output = runtime.block_on(f.call("grep", input)).unwrap();
            let (ours, theirs) = (ours(&output.structured), run_rg(rg, &f.root, pattern, &flags));
            if !(empty(&ours) && empty(&theirs)) {
                prop_assert_eq!(ours, theirs, "{} {} ({:?})", pattern, options, flags);
            }
        }
    });
}
