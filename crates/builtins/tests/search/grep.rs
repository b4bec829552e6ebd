//! grep: the reference's cases and the behaviour of issue 8.

use serde_json::json;

use super::fixture::{Fixture, age_file};

/// The reference's fixture: `match.txt` and `nested/match.txt` with `needle` on line 2, and a
/// sibling without it.
fn needles() -> Fixture {
    let f = Fixture::new();
    f.write_aged("match.txt", "hay\nneedle\nhay\n", 20);
    f.write_aged("nested/match.txt", "hay\nneedle\n", 10);
    f.write("other.txt", "nothing here\n");
    f
}

#[tokio::test]
async fn missing_paths_are_not_found_and_nothing_else_is_searched() {
    let f = needles();
    for path in ["missing", "missing.txt", "nested/missing/deeper.txt"] {
        let msg = f
            .failure("grep", json!({"pattern": "needle", "path": path}))
            .await;
        assert_eq!(msg, format!("Search path not found: {path}"));
    }
}

#[tokio::test]
async fn default_directory_and_nested() {
    let f = needles();
    let out = f.call("grep", json!({"pattern": "needle"})).await.unwrap();
    insta::assert_snapshot!(f.text(&out), @r"
    Found 2 matches
    [ROOT]/nested/match.txt:
      Line 2: needle

    [ROOT]/match.txt:
      Line 2: needle
    ");
    insta::assert_json_snapshot!(out.structured, @r#"
    {
      "matches": [
        {
          "path": "nested/match.txt",
          "line": 2,
          "text": "needle"
        },
        {
          "path": "match.txt",
          "line": 2,
          "text": "needle"
        }
      ],
      "totalMatches": 2,
      "totalFiles": 2,
      "truncated": false,
      "clipped": false,
      "incomplete": false,
      "binaryFiles": 0,
      "skipped": {
        "outsideLinks": [],
        "loops": 0,
        "unreadable": 0
      }
    }
    "#);
    let out = f
        .call("grep", json!({"pattern": "needle", "path": "nested"}))
        .await
        .unwrap();
    assert_eq!(out.structured["matches"][0]["path"], "nested/match.txt");
    assert_eq!(out.structured["totalMatches"], 1);
}

#[tokio::test]
async fn no_matches_and_single_file() {
    let f = needles();
    let out = f.call("grep", json!({"pattern": "absent"})).await.unwrap();
    insta::assert_snapshot!(f.text(&out), @"No files found");
    // A file path searches only that file, not its siblings.
    let out = f
        .call(
            "grep",
            json!({"pattern": "needle|nothing", "path": "match.txt"}),
        )
        .await
        .unwrap();
    assert_eq!(out.structured["totalFiles"], 1);
    assert_eq!(out.structured["matches"][0]["path"], "match.txt");
}

#[tokio::test]
async fn include_and_limit() {
    let f = Fixture::new();
    f.write_aged("a.ts", "needle\nneedle\n", 30);
    f.write_aged("b.ts", "needle\n", 20);
    f.write_aged("c.js", "needle\n", 10);
    let out = f
        .call(
            "grep",
            json!({"pattern": "needle", "include": "*.ts", "limit": 1}),
        )
        .await
        .unwrap();
    insta::assert_snapshot!(f.text(&out), @r"
    Found 1 matches (more matches available)
    [ROOT]/b.ts:
      Line 1: needle

    (Showing 1 of 3 matches in 2 files: limit=1 reached. Use a larger limit for more, or refine the pattern, path or include.)
    ");
    assert_eq!(out.structured["truncated"], true);
    assert_eq!(out.structured["totalMatches"], 3);
}

#[tokio::test]
async fn files_ordered_newest_first_and_limit_takes_the_newest() {
    let f = Fixture::new();
    for (i, age) in [(0, 50), (1, 10), (2, 30), (3, 40), (4, 20)] {
        f.write_aged(&format!("f{i}.txt"), "x\nx\n", age);
    }
    let out = f
        .call("grep", json!({"pattern": "x", "limit": 5}))
        .await
        .unwrap();
    let order: Vec<String> = out.structured["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{}:{}", m["path"].as_str().unwrap(), m["line"]))
        .collect();
    assert_eq!(
        order,
        ["f1.txt:1", "f1.txt:2", "f4.txt:1", "f4.txt:2", "f2.txt:1"]
    );
    // Touching a file moves it to the front.
    age_file(&f.root.join("f0.txt"), 1);
    let out = f
        .call("grep", json!({"pattern": "x", "limit": 1}))
        .await
        .unwrap();
    assert_eq!(out.structured["matches"][0]["path"], "f0.txt");
}

#[tokio::test]
async fn long_lines_are_clamped_around_the_match() {
    let f = Fixture::new();
    let line = format!("{}needle{}", "a".repeat(5000), "b".repeat(3000));
    f.write("min.js", &format!("short needle\n{line}\n"));
    let out = f.call("grep", json!({"pattern": "needle"})).await.unwrap();
    let text = f.text(&out);
    let long = text.lines().nth(3).unwrap();
    assert!(long.starts_with("  Line 2: …aaaa"), "{}", &long[..40]);
    assert!(long.contains("needle"));
    assert!(long.ends_with("… [line clamped: showing columns 4901-6900 of 8006; read the file at line 2 for the full line]"), "{}", &long[long.len() - 120..]);
    let shown = &out.structured["matches"][1];
    assert_eq!(shown["text"].as_str().unwrap().chars().count(), 2000);
    assert_eq!(
        shown["clipped"],
        json!({"first": 4901, "last": 6900, "length": 8006})
    );
    assert_eq!(out.structured["clipped"], true);
    // A match near the start keeps the line's beginning.
    f.write("start.js", &format!("needle{}\n", "c".repeat(4000)));
    let out = f
        .call("grep", json!({"pattern": "needle", "path": "start.js"}))
        .await
        .unwrap();
    insta::assert_snapshot!(f.text(&out).replace(&"c".repeat(1994), "c…c"), @r"
    Found 1 matches
    [ROOT]/start.js:
      Line 1: needlec…c… [line clamped: showing columns 1-2000 of 4006; read the file at line 1 for the full line]
    ");
}

#[tokio::test]
async fn binary_files_are_skipped() {
    let f = Fixture::new();
    f.write("text.txt", "needle\n");
    f.write("blob.bin", "needle\n\0\x01\x02needle\n");
    let out = f.call("grep", json!({"pattern": "needle"})).await.unwrap();
    assert_eq!(out.structured["totalMatches"], 1);
    assert_eq!(out.structured["binaryFiles"], 1);
    // Named explicitly, a binary file is still not searched, and the model is told why.
    let out = f
        .call("grep", json!({"pattern": "needle", "path": "blob.bin"}))
        .await
        .unwrap();
    insta::assert_snapshot!(f.text(&out), @r"
    No files found

    (1 file was not searched: binary data.)
    ");
}

#[tokio::test]
async fn invalid_regex_is_a_pattern_error_and_nobody_is_asked() {
    let f = needles();
    let msg = f.failure("grep", json!({"pattern": "foo("})).await;
    insta::assert_snapshot!(msg, @r#"
    Invalid regex pattern "foo(": regex parse error:
        foo(
           ^
    error: unclosed group
    "#);
    let msg = f.failure("grep", json!({"pattern": "(?<=a)b"})).await;
    assert!(
        msg.starts_with("Invalid regex pattern \"(?<=a)b\": "),
        "{msg}"
    );
    let msg = f
        .failure("grep", json!({"pattern": "x", "include": "{a"}))
        .await;
    assert!(msg.starts_with("Invalid glob pattern \"{a\": "), "{msg}");
    assert_eq!(
        f.asked().len(),
        1,
        "only the include case reached permission"
    );
}

#[tokio::test]
async fn denied_grep_never_searches() {
    let f = Fixture::deny("grep");
    let msg = f.failure("grep", json!({"pattern": "needle"})).await;
    assert!(
        msg.starts_with("Unable to grep for needle: Permission denied: "),
        "{msg}"
    );
    // Denied before the path is even looked at: a missing path gives the same denial.
    let msg = f
        .failure("grep", json!({"pattern": "needle", "path": "missing"}))
        .await;
    assert!(
        msg.starts_with("Unable to grep for needle: Permission denied: "),
        "{msg}"
    );
}

#[tokio::test]
async fn permission_request_shape() {
    let f = needles();
    f.call(
        "grep",
        json!({"pattern": "needle", "path": "nested", "include": "*.txt", "limit": 5}),
    )
    .await
    .unwrap();
    f.call("grep", json!({"pattern": "needle"})).await.unwrap();
    let asked = f.asked();
    assert_eq!(asked[0].action, "grep");
    assert_eq!(asked[0].resources, vec!["needle"]);
    assert_eq!(asked[0].save, vec!["*"]);
    assert_eq!(
        serde_json::Value::Object(asked[0].metadata.clone()),
        json!({"root": "nested", "path": "nested", "include": "*.txt", "limit": 5})
    );
    assert_eq!(
        serde_json::Value::Object(asked[1].metadata.clone()),
        json!({"root": "."})
    );
}

#[tokio::test]
async fn spent_budget_is_partial_not_empty_handed() {
    let f = Fixture::budget(std::time::Duration::ZERO);
    f.write("a.txt", "needle\n");
    let out = f.call("grep", json!({"pattern": "needle"})).await.unwrap();
    assert_eq!(out.structured["incomplete"], true);
    insta::assert_snapshot!(f.text(&out), @r"
    No files found

    (Search incomplete: the 0 s time budget ran out before the whole tree was searched, so these results are partial. Use a more specific path or pattern.)
    ");
}

#[tokio::test]
async fn crlf_and_invalid_utf8_lines() {
    let f = Fixture::new();
    std::fs::write(f.root.join("win.txt"), b"a\r\nneedle\r\n").unwrap();
    std::fs::write(f.root.join("latin.txt"), b"caf\xe9 needle\n").unwrap();
    let out = f
        .call("grep", json!({"pattern": "needle", "path": "win.txt"}))
        .await
        .unwrap();
    assert_eq!(out.structured["matches"][0]["text"], "needle");
    let out = f
        .call("grep", json!({"pattern": "needle", "path": "latin.txt"}))
        .await
        .unwrap();
    assert_eq!(out.structured["matches"][0]["text"], "caf\u{fffd} needle");
}
