//! grep's options as models send them (issue 15): case, literal strings, context, multiline,
//! output modes and their result cap, and the bad values of each.

use serde_json::json;

use super::fixture::Fixture;

/// Two files, the newer one first in every listing: `b.rs` holds two matches close together,
/// `a.rs` one near its end.
fn code() -> Fixture {
    let f = Fixture::new();
    f.write_aged(
        "a.rs",
        "fn one() {}\nfn two() {}\n// TODO: first\nfn three() {}\n",
        30,
    );
    f.write_aged(
        "b.rs",
        "use std::io;\n\nfn main() {\n    todo_later();\n    // todo: later\n    let x = 1;\n}\n\nfn more() {}\n// TODO: last\n",
        10,
    );
    f
}

async fn text(f: &Fixture, input: serde_json::Value) -> String {
    let out = f.call("grep", input).await.unwrap();
    f.text(&out)
}

#[tokio::test]
async fn ignore_case() {
    let f = code();
    insta::assert_snapshot!(text(&f, json!({"pattern": "todo"})).await, @r"
    Found 2 matches
    [ROOT]/b.rs:
      Line 4:     todo_later();
      Line 5:     // todo: later
    ");
    insta::assert_snapshot!(text(&f, json!({"pattern": "todo", "ignoreCase": true})).await, @r"
    Found 4 matches
    [ROOT]/b.rs:
      Line 4:     todo_later();
      Line 5:     // todo: later
      Line 10: // TODO: last

    [ROOT]/a.rs:
      Line 3: // TODO: first
    ");
}

#[tokio::test]
async fn literal() {
    let f = code();
    // As a regex `todo_later()` matches `todo!` followed by an empty group; as a string it needs the
    // parentheses, and `(` is no syntax error.
    insta::assert_snapshot!(text(&f, json!({"pattern": "fn (", "literal": true})).await, @"No files found");
    insta::assert_snapshot!(text(&f, json!({"pattern": "todo_later()", "literal": true})).await, @r"
    Found 1 matches
    [ROOT]/b.rs:
      Line 4:     todo_later();
    ");
    insta::assert_snapshot!(text(&f, json!({"pattern": "fn o.e", "literal": true})).await, @"No files found");
    insta::assert_snapshot!(text(&f, json!({"pattern": "TODO: L", "literal": true, "ignoreCase": true})).await, @r"
    Found 2 matches
    [ROOT]/b.rs:
      Line 5:     // todo: later
      Line 10: // TODO: last
    ");
}

#[tokio::test]
async fn context_lines_look_like_rg() {
    let f = code();
    insta::assert_snapshot!(text(&f, json!({"pattern": "TODO", "context": 1})).await, @r"
    Found 2 matches
    [ROOT]/b.rs-9-fn more() {}
    [ROOT]/b.rs:10:// TODO: last
    --
    [ROOT]/a.rs-2-fn two() {}
    [ROOT]/a.rs:3:// TODO: first
    [ROOT]/a.rs-4-fn three() {}
    ");
    // Overlapping context joins two matches into one group.
    insta::assert_snapshot!(text(&f, json!({"pattern": "todo", "context": 2, "path": "b.rs"})).await, @r"
    Found 2 matches
    [ROOT]/b.rs-2-
    [ROOT]/b.rs-3-fn main() {
    [ROOT]/b.rs:4:    todo_later();
    [ROOT]/b.rs:5:    // todo: later
    [ROOT]/b.rs-6-    let x = 1;
    [ROOT]/b.rs-7-}
    ");
}

#[tokio::test]
async fn before_and_after_override_context_per_side() {
    let f = code();
    insta::assert_snapshot!(text(&f, json!({"pattern": "TODO", "before": 2})).await, @r"
    Found 2 matches
    [ROOT]/b.rs-8-
    [ROOT]/b.rs-9-fn more() {}
    [ROOT]/b.rs:10:// TODO: last
    --
    [ROOT]/a.rs-1-fn one() {}
    [ROOT]/a.rs-2-fn two() {}
    [ROOT]/a.rs:3:// TODO: first
    ");
    insta::assert_snapshot!(text(&f, json!({"pattern": "TODO", "after": 1, "path": "a.rs"})).await, @r"
    Found 1 matches
    [ROOT]/a.rs:3:// TODO: first
    [ROOT]/a.rs-4-fn three() {}
    ");
    insta::assert_snapshot!(text(&f, json!({"pattern": "TODO", "context": 3, "before": 0, "after": 1, "path": "a.rs"})).await, @r"
    Found 1 matches
    [ROOT]/a.rs:3:// TODO: first
    [ROOT]/a.rs-4-fn three() {}
    ");
    // Zero lines of context is the plain format.
    insta::assert_snapshot!(text(&f, json!({"pattern": "TODO", "context": 0, "path": "a.rs"})).await, @r"
    Found 1 matches
    [ROOT]/a.rs:
      Line 3: // TODO: first
    ");
}

#[tokio::test]
async fn context_in_the_structured_output() {
    let f = code();
    let out = f
        .call(
            "grep",
            json!({"pattern": "TODO", "after": 1, "path": "a.rs"}),
        )
        .await
        .unwrap();
    insta::assert_json_snapshot!(out.structured, @r#"
    {
      "matches": [
        {
          "path": "a.rs",
          "line": 3,
          "text": "// TODO: first"
        }
      ],
      "context": [
        {
          "path": "a.rs",
          "line": 4,
          "text": "fn three() {}"
        }
      ],
      "totalMatches": 1,
      "totalFiles": 1,
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
}

#[tokio::test]
async fn the_limit_keeps_whole_matches_with_their_context() {
    let f = code();
    insta::assert_snapshot!(text(&f, json!({"pattern": "todo", "ignoreCase": true, "context": 1, "limit": 2})).await, @r"
    Found 2 matches (more matches available)
    [ROOT]/b.rs-3-fn main() {
    [ROOT]/b.rs:4:    todo_later();
    [ROOT]/b.rs:5:    // todo: later
    [ROOT]/b.rs-6-    let x = 1;

    (Showing 2 of 4 matches in 2 files: limit=2 reached. Use a larger limit for more, or refine the pattern, path or include.)
    ");
}

#[tokio::test]
async fn multiline() {
    let f = code();
    // Line by line, a pattern cannot match a line break: the model is told what to set.
    insta::assert_snapshot!(f.failure("grep", json!({"pattern": r"main\(\) \{\n\s+todo"})).await, @r#"Invalid regex pattern "main\\(\\) \\{\\n\\s+todo": the literal "\n" is not allowed in a regex; set `multiline` to match across lines"#);
    insta::assert_snapshot!(text(&f, json!({"pattern": r"main\(\) \{\s+todo"})).await, @"No files found");
    insta::assert_snapshot!(text(&f, json!({"pattern": r"main\(\) \{\n\s+todo", "multiline": true})).await, @r"
    Found 1 matches
    [ROOT]/b.rs:
      Line 3: fn main() {
      Line 4:     todo_later();
    ");
    // `.` crosses lines; a match spanning lines counts once.
    let out = f
        .call(
            "grep",
            json!({"pattern": "fn main.*?: later", "multiline": true, "context": 1}),
        )
        .await
        .unwrap();
    assert_eq!(out.structured["totalMatches"], 1);
    assert_eq!(out.structured["matches"].as_array().unwrap().len(), 3);
    insta::assert_snapshot!(f.text(&out), @r"
    Found 1 matches
    [ROOT]/b.rs-2-
    [ROOT]/b.rs:3:fn main() {
    [ROOT]/b.rs:4:    todo_later();
    [ROOT]/b.rs:5:    // todo: later
    [ROOT]/b.rs-6-    let x = 1;
    ");
}

#[tokio::test]
async fn files_with_matches() {
    let f = code();
    let out = f
        .call(
            "grep",
            json!({"pattern": "fn", "outputMode": "files_with_matches"}),
        )
        .await
        .unwrap();
    insta::assert_snapshot!(f.text(&out), @r"
    Found 2 files
    [ROOT]/b.rs
    [ROOT]/a.rs
    ");
    assert_eq!(
        out.structured["files"],
        json!([{"path": "b.rs"}, {"path": "a.rs"}])
    );
    assert_eq!(out.structured["matches"], json!([]));
    insta::assert_snapshot!(text(&f, json!({"pattern": "fn", "outputMode": "files_with_matches", "limit": 1})).await, @r"
    Found 1 file
    [ROOT]/b.rs

    (Showing 1 of 2 files: limit=1 reached. Use a larger limit for more, or refine the pattern, path or include.)
    ");
    // Context only shapes the content mode.
    insta::assert_snapshot!(text(&f, json!({"pattern": "TODO: f", "outputMode": "files_with_matches", "context": 2})).await, @r"
    Found 1 file
    [ROOT]/a.rs
    ");
}

#[tokio::test]
async fn count() {
    let f = code();
    let out = f
        .call(
            "grep",
            json!({"pattern": "todo", "ignoreCase": true, "outputMode": "count"}),
        )
        .await
        .unwrap();
    insta::assert_snapshot!(f.text(&out), @r"
    Found 4 matches in 2 files
    [ROOT]/b.rs:3
    [ROOT]/a.rs:1
    ");
    assert_eq!(
        out.structured["files"],
        json!([{"path": "b.rs", "count": 3}, {"path": "a.rs", "count": 1}])
    );
    assert_eq!(out.structured["totalMatches"], 4);
    insta::assert_snapshot!(text(&f, json!({"pattern": "fn", "outputMode": "count", "limit": 1})).await, @r"
    Found 2 matches in 1 file
    [ROOT]/b.rs:2

    (Showing 1 of 2 files: limit=1 reached. Use a larger limit for more, or refine the pattern, path or include.)
    ");
    insta::assert_snapshot!(text(&f, json!({"pattern": "absent", "outputMode": "count"})).await, @"No files found");
}

#[tokio::test]
async fn anchors_match_at_every_line() {
    // The searcher hands the matcher many lines at once: `^` and `$` must still mean a line's
    // start and end, as in rg.
    let f = code();
    insta::assert_snapshot!(text(&f, json!({"pattern": "^fn t\\w+\\(\\) \\{\\}$"})).await, @r"
    Found 2 matches
    [ROOT]/a.rs:
      Line 2: fn two() {}
      Line 4: fn three() {}
    ");
}

#[tokio::test]
async fn bad_option_values_are_refused_before_anything_is_asked() {
    let f = code();
    let cases = [
        json!({"pattern": "x", "context": -1}),
        json!({"pattern": "x", "before": 1001}),
        json!({"pattern": "x", "after": "many"}),
        json!({"pattern": "x", "outputMode": "lines"}),
        json!({"pattern": "x", "ignoreCase": "yes please"}),
        json!({"pattern": "", "literal": true}),
    ];
    let mut report = String::new();
    for input in cases {
        let message = f.failure("grep", input.clone()).await;
        report.push_str(&format!("{input}\n  {message}\n"));
    }
    insta::assert_snapshot!(report, @r#"
    {"pattern":"x","context":-1}
      Invalid tool input: context: expected an integer from 0 to 1000, got -1

    Correct the input so that it matches the tool's input schema, then call the tool again.
    {"pattern":"x","before":1001}
      Invalid tool input: before: expected an integer from 0 to 1000, got 1001

    Correct the input so that it matches the tool's input schema, then call the tool again.
    {"pattern":"x","after":"many"}
      Invalid tool input: after: expected an integer from 0 to 1000, got "many"

    Correct the input so that it matches the tool's input schema, then call the tool again.
    {"pattern":"x","outputMode":"lines"}
      Invalid tool input: outputMode: expected one of: content, files_with_matches, count, got "lines"

    Correct the input so that it matches the tool's input schema, then call the tool again.
    {"pattern":"x","ignoreCase":"yes please"}
      Invalid tool input: ignoreCase: expected true or false, got "yes please"

    Correct the input so that it matches the tool's input schema, then call the tool again.
    {"pattern":"","literal":true}
      The regex pattern is empty
    "#);
    assert!(f.asked().is_empty());
}
