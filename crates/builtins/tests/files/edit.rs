//! The edit leaf (the reference's edit cases, the match ladder and its diagnostics).

use std::process::Command;

use serde_json::json;
use tackle_permission::Reply;
use tackle_tool_core::ToolError;

use super::support::{Fixture, asked, slash, text_of};

#[tokio::test]
async fn relative_edit() {
    let fx = Fixture::new();
    fx.put("hello.txt", "before\nrest\n");
    let output = fx
        .call(
            "edit",
            json!({"path": "hello.txt", "oldString": "before", "newString": "after"}),
        )
        .await
        .unwrap();
    assert_eq!(
        text_of(&output),
        "Edited file successfully: hello.txt\nReplacements: 1\n```diff\n-before\n+after\n```"
    );
    let structured = &output.structured;
    assert_eq!(structured["replacements"], json!(1));
    assert_eq!(structured["matchedWith"], json!("exact"));
    let file = &structured["files"][0];
    assert_eq!(
        (
            &file["file"],
            &file["status"],
            &file["additions"],
            &file["deletions"]
        ),
        (
            &json!("hello.txt"),
            &json!("modified"),
            &json!(1),
            &json!(1)
        )
    );
    assert!(file["patch"].as_str().unwrap().contains("-before\n+after"));
    assert_eq!(fx.bytes("hello.txt"), b"after\nrest\n");
    assert_eq!(fx.asked(), vec![asked("edit", "hello.txt", "*")]);
}

#[tokio::test]
async fn absolute_inside_and_external_paths() {
    let fx = Fixture::new();
    let inside = fx.put("in.txt", "a");
    fx.call(
        "edit",
        json!({"path": inside, "oldString": "a", "newString": "b"}),
    )
    .await
    .unwrap();
    assert_eq!(fx.asked(), vec![asked("edit", "in.txt", "*")]);

    let fx = Fixture::new();
    let outside = fx.real_outside();
    let target = outside.join("out.txt");
    std::fs::write(&target, "a").unwrap();
    fx.call(
        "edit",
        json!({"path": target, "oldString": "a", "newString": "b"}),
    )
    .await
    .unwrap();
    let pattern = format!("{}/*", slash(&outside));
    assert_eq!(
        fx.asked(),
        vec![
            asked("external_directory", &pattern, &pattern),
            asked("edit", &slash(&target), "*")
        ]
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"b");
}

#[tokio::test]
async fn denials_change_and_reveal_nothing() {
    for denied in ["external_directory", "edit"] {
        let fx = Fixture::with(Reply::Once, &[denied]);
        let target = fx.real_outside().join("x.txt");
        std::fs::write(&target, "before").unwrap();
        let message = fx
            .failure(
                "edit",
                json!({"path": target, "oldString": "before", "newString": "after"}),
            )
            .await;
        let unable = format!(
            "Unable to edit {}: Permission denied: {denied}",
            target.display()
        );
        assert!(message.starts_with(&unable), "{message}");
        assert_eq!(std::fs::read(&target).unwrap(), b"before");
    }
    let fx = Fixture::with(Reply::Once, &["edit"]);
    fx.put("f.txt", "content");
    let matching = fx
        .failure(
            "edit",
            json!({"path": "f.txt", "oldString": "content", "newString": "x"}),
        )
        .await;
    let missing = fx
        .failure(
            "edit",
            json!({"path": "f.txt", "oldString": "absent", "newString": "x"}),
        )
        .await;
    assert_eq!(
        matching, missing,
        "the answer must not depend on the file's content"
    );
    let declined = Fixture::with(Reply::Reject { message: None }, &[]);
    declined.put("f.txt", "a");
    let result = declined
        .call(
            "edit",
            json!({"path": "f.txt", "oldString": "a", "newString": "b"}),
        )
        .await;
    assert!(matches!(result, Err(ToolError::Halt(_))), "{result:?}");
    assert_eq!(declined.bytes("f.txt"), b"a");
}

#[tokio::test]
async fn input_checks_come_first() {
    let fx = Fixture::new();
    fx.put("f.txt", "same same\n");
    let fail = |old: &str, new: &str| json!({"path": "f.txt", "oldString": old, "newString": new});
    insta::assert_snapshot!(fx.failure("edit", fail("x", "x")).await, @"No changes to apply: oldString and newString are identical.");
    insta::assert_snapshot!(fx.failure("edit", fail("", "x")).await, @"oldString must not be empty. Use write to create or overwrite a file.");
    assert!(
        fx.asked().is_empty(),
        "ED1 and ED2 are checked before any permission"
    );
    insta::assert_snapshot!(fx.failure("edit", fail("same", "x")).await, @"Found 2 exact matches for oldString, at line 1. Provide more surrounding context to make it unique, or set replaceAll to true to replace every occurrence.");
    insta::assert_snapshot!(fx.failure("edit", fail("absent", "x")).await, @"Could not find oldString in the file. It must match exactly, except that line endings, trailing whitespace, a consistent indentation offset and typographic quotes, dashes and spaces may differ.");
    insta::assert_snapshot!(fx.failure("edit", json!({"path": "nope.txt", "oldString": "a", "newString": "b"})).await, @"File not found: nope.txt. Use write to create it.");
    insta::assert_snapshot!(fx.failure("edit", json!({"path": "../up.txt", "oldString": "a", "newString": "b"})).await, @"Unable to edit ../up.txt: ../up.txt: the relative path leads outside the working directory; use an absolute path for files outside it");
    assert_eq!(fx.bytes("f.txt"), b"same same\n");
}

#[tokio::test]
async fn replace_all() {
    let fx = Fixture::new();
    fx.put("f.txt", "same same same");
    let output = fx
        .call(
            "edit",
            json!({"path": "f.txt", "oldString": "same", "newString": "x", "replaceAll": true}),
        )
        .await
        .unwrap();
    assert_eq!(output.structured["replacements"], json!(3));
    assert_eq!(fx.bytes("f.txt"), b"x x x");
}

#[tokio::test]
async fn bom_and_crlf_are_kept() {
    let fx = Fixture::new();
    fx.put("win.txt", "\u{FEFF}before\r\nrest\r\n");
    fx.call(
        "edit",
        json!({"path": "win.txt", "oldString": "before\nrest", "newString": "after\nrest"}),
    )
    .await
    .unwrap();
    assert_eq!(fx.bytes("win.txt"), "\u{FEFF}after\r\nrest\r\n".as_bytes());
}

/// Lines newString adds take the line ending of the region they go into (issue 14, item 9:
/// `y` -> `p\nq` in a CRLF file wrote an LF line into it); LF and mixed files stay as they are.
#[tokio::test]
async fn added_lines_take_the_files_line_ending() {
    let fx = Fixture::new();
    let cases = [
        (
            "crlf.txt",
            "x\r\ny\r\nz\r\n",
            "y",
            "p\nq",
            "x\r\np\r\nq\r\nz\r\n",
        ),
        ("lf.txt", "x\ny\nz\n", "y", "p\r\nq", "x\np\nq\nz\n"),
        (
            "mixed.txt",
            "a\r\nb\nc\r\n",
            "b",
            "b1\nb2",
            "a\r\nb1\nb2\nc\r\n",
        ),
        ("tail.txt", "x\r\ny", "y", "p\nq", "x\r\np\r\nq"),
    ];
    for (name, before, old, new, after) in cases {
        fx.put(name, before);
        fx.call(
            "edit",
            json!({"path": name, "oldString": old, "newString": new}),
        )
        .await
        .unwrap();
        assert_eq!(fx.bytes(name), after.as_bytes(), "{name}");
    }
}

#[tokio::test]
async fn a_python_method_body_keeps_its_indentation() {
    let fx = Fixture::new();
    let source = "class Greeter:\n    def greet(self, name):\n        if name:\n            return f\"hi {name}\"\n        return \"hi\"\n\n    def other(self):\n        return 1\n";
    fx.put("greeter.py", source);
    // The model copied the body 4 columns less indented than the file has it.
    let old = "    if name:\n        return f\"hi {name}\"\n    return \"hi\"";
    let new = "    if not name:\n        return \"hi\"\n    return f\"hello {name}\"";
    let output = fx
        .call(
            "edit",
            json!({"path": "greeter.py", "oldString": old, "newString": new}),
        )
        .await
        .unwrap();
    assert_eq!(output.structured["matchedWith"], json!("indentation"));
    insta::assert_snapshot!(text_of(&output), @r#"
    Edited file successfully: greeter.py
    Replacements: 1
    Matched ignoring indentation; newString was re-indented by adding 4 spaces.
    ```diff
    -        if name:
    -            return f"hi {name}"
    -        return "hi"
    +        if not name:
    +            return "hi"
    +        return f"hello {name}"
    ```
    "#);
    let edited = String::from_utf8(fx.bytes("greeter.py")).unwrap();
    assert_eq!(
        edited,
        "class Greeter:\n    def greet(self, name):\n        if not name:\n            return \"hi\"\n        return f\"hello {name}\"\n\n    def other(self):\n        return 1\n"
    );
    // Where Python is installed, it must still parse, with the block inside the method.
    if let Ok(run) = Command::new("python3")
        .args(["-c", "import ast,sys; m=ast.parse(open(sys.argv[1]).read()); f=m.body[0].body[0]; assert len(f.body)==2, f.body"])
        .arg(fx.path("greeter.py"))
        .output()
    {
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    }
}

#[tokio::test]
async fn misses_show_the_closest_region() {
    let fx = Fixture::new();
    fx.put("f.rs", "fn main() {\n\tlet a = 1;\n\tlet b = 2;\n}\n");
    let message = fx
        .failure(
            "edit",
            json!({"path": "f.rs", "oldString": "let a = 1;\n  let b = 3;", "newString": "x"}),
        )
        .await;
    insta::assert_snapshot!(message, @r"
    Could not find oldString in the file. It must match exactly, except that line endings, trailing whitespace, a consistent indentation offset and typographic quotes, dashes and spaces may differ.
    The closest region is lines 2-3:
    2: 	let a = 1;
    3: 	let b = 2;
    First difference at line 2, column 1: the file has a tab, oldString has 'l'.
      file:      →let·a·=·1;
      oldString: let·a·=·1;
    ");
}

#[tokio::test]
async fn several_loose_matches_are_listed() {
    let fx = Fixture::new();
    fx.put("f.txt", "a  \nx\na\t\n");
    insta::assert_snapshot!(fx.failure("edit", json!({"path": "f.txt", "oldString": "a \n", "newString": "b\n"})).await, @"Found 2 matches (ignoring line endings and trailing whitespace) for oldString, at lines 1, 3. Provide more surrounding context to make it unique, or set replaceAll to true to replace every occurrence.");
}

#[tokio::test]
async fn rungs_are_reported() {
    let fx = Fixture::new();
    fx.put("q.txt", "say “hi” — ok\n");
    let output = fx
        .call(
            "edit",
            json!({"path": "q.txt", "oldString": "say \"hi\" - ok", "newString": "say hello"}),
        )
        .await
        .unwrap();
    assert_eq!(output.structured["matchedWith"], json!("unicode"));
    assert!(text_of(&output).contains("Matched ignoring typographic quotes, dashes and spaces."));
    assert_eq!(fx.bytes("q.txt"), b"say hello\n");
    fx.put("w.txt", "x = 1   \ny = 2\n");
    let output = fx
        .call(
            "edit",
            json!({"path": "w.txt", "oldString": "x = 1\ny = 2\n", "newString": "x = 3\ny = 4\n"}),
        )
        .await
        .unwrap();
    assert_eq!(output.structured["matchedWith"], json!("whitespace"));
    assert_eq!(fx.bytes("w.txt"), b"x = 3\ny = 4\n");
}

#[tokio::test]
async fn line_numbers_copied_from_read_are_removed() {
    let fx = Fixture::new();
    fx.put("n.txt", "alpha\nbeta\ngamma\n");
    let output = fx
        .call("edit", json!({"path": "n.txt", "oldString": "2: beta\n3: gamma", "newString": "2: BETA\n3: GAMMA"}))
        .await
        .unwrap();
    assert_eq!(output.structured["lineNumbersStripped"], json!(true));
    assert_eq!(fx.bytes("n.txt"), b"alpha\nBETA\nGAMMA\n");
}

#[tokio::test]
async fn non_utf8_files_are_refused_untouched() {
    let fx = Fixture::new();
    fx.put("latin1.txt", b"caf\xe9\nnext\n");
    insta::assert_snapshot!(fx.failure("edit", json!({"path": "latin1.txt", "oldString": "next", "newString": "x"})).await, @"Cannot edit latin1.txt: the file is not valid UTF-8 (first invalid byte at byte offset 3, line 1). edit only changes UTF-8 files and never rewrites other encodings; use write to replace the whole file.");
    assert_eq!(fx.bytes("latin1.txt"), b"caf\xe9\nnext\n");
}

#[tokio::test]
async fn large_results_drop_the_patch_and_keep_the_counts() {
    let fx = Fixture::new();
    let text: String = (0..3000).map(|n| format!("value {n}\n")).collect();
    fx.put("big.txt", &text);
    let output = fx
        .call(
            "edit",
            json!({"path": "big.txt", "oldString": "value", "newString": "v", "replaceAll": true}),
        )
        .await
        .unwrap();
    let file = &output.structured["files"][0];
    assert!(file.get("patch").is_none(), "{file}");
    assert_eq!(
        (&file["additions"], &file["deletions"]),
        (&json!(3000), &json!(3000))
    );
    assert_eq!(output.structured["replacements"], json!(3000));
}

#[tokio::test]
async fn symlinked_files_are_edited_in_place() {
    let fx = Fixture::new();
    fx.put("real/target.txt", "old\n");
    std::os::unix::fs::symlink(fx.path("real/target.txt"), fx.path("alias.txt")).unwrap();
    let output = fx
        .call(
            "edit",
            json!({"path": "alias.txt", "oldString": "old", "newString": "new"}),
        )
        .await
        .unwrap();
    assert!(text_of(&output).starts_with("Edited file successfully: real/target.txt\n"));
    assert!(
        std::fs::symlink_metadata(fx.path("alias.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fx.bytes("real/target.txt"), b"new\n");
}

#[test]
fn the_input_schema_has_exactly_the_reference_fields() {
    let fx = Fixture::new();
    let definition = fx.tool("edit").definition("edit").unwrap();
    let keys: Vec<&String> = definition.input_schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(sorted, ["newString", "oldString", "path", "replaceAll"]);
    insta::assert_json_snapshot!(definition.input_schema);
    assert_eq!(fx.tool("edit").permission("edit"), "edit");
}
