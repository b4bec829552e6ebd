//! The read leaf (the reference's read cases and the legacy model text).

use std::os::unix::fs::symlink;

use serde_json::json;
use tackle_permission::Reply;
use tackle_tool_core::{Halt, OutputContent, ToolError};

use super::support::{Fixture, asked, slash, text_of};

#[cfg(not(feature = "media"))]
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\0\x05\0\x01\xff\x89\x99=\x1d\0\0\0\0IEND\xaeB`\x82";

#[tokio::test]
async fn reads_a_file_after_asking_read() {
    let fx = Fixture::new();
    fx.put("README.md", "hello\nworld\n");
    let output = fx.call("read", json!({"path": "README.md"})).await.unwrap();
    insta::assert_snapshot!(text_of(&output), @r"
    <path>README.md</path>
    <type>file</type>
    <content>
    1: hello
    2: world

    (End of file - total 2 lines)
    </content>
    ");
    assert_eq!(
        output.structured,
        json!({
            "type": "text-page", "path": "README.md", "mime": "text/markdown", "encoding": "UTF-8",
            "offset": 1, "lines": 2, "totalLines": 2,
            "truncated": false, "clampedLines": 0
        })
    );
    assert_eq!(fx.asked(), vec![asked("read", "README.md", "*")]);
}

#[tokio::test]
async fn external_paths_ask_for_the_directory_first() {
    let fx = Fixture::new();
    let outside = fx.real_outside();
    std::fs::write(outside.join("notes.txt"), "x").unwrap();
    let path = outside.join("notes.txt");
    fx.call("read", json!({"path": path})).await.unwrap();
    let pattern = format!("{}/*", slash(&outside));
    assert_eq!(
        fx.asked(),
        vec![
            asked("external_directory", &pattern, &pattern),
            asked("read", &slash(&path), "*"),
        ]
    );
}

#[tokio::test]
async fn a_denial_reads_nothing() {
    let fx = Fixture::with(Reply::Once, &["read"]);
    fx.put("secret.txt", "TOP SECRET");
    let message = fx.failure("read", json!({"path": "secret.txt"})).await;
    insta::assert_snapshot!(message, @r#"Unable to read secret.txt: Permission denied: read "secret.txt" is blocked by the configured rule {action: "read", resource: "*", effect: "deny"}. Do not retry it; use another approach or ask the user to change the rule."#);
    assert!(!message.contains("TOP SECRET"));
    let declined = Fixture::with(Reply::Reject { message: None }, &[]);
    declined.put("a.txt", "x");
    let result = declined.call("read", json!({"path": "a.txt"})).await;
    assert!(
        matches!(result, Err(ToolError::Halt(Halt::Declined))),
        "{result:?}"
    );
    // An external denial stops before `read` is even asked.
    let fx = Fixture::with(Reply::Once, &["external_directory"]);
    let path = fx.real_outside().join("x.txt");
    std::fs::write(&path, "x").unwrap();
    let message = fx.failure("read", json!({"path": path})).await;
    let unable = format!(
        "Unable to read {}: Permission denied: external_directory",
        path.display()
    );
    assert!(message.starts_with(&unable), "{message}");
    assert!(fx.asked().is_empty());
}

/// Without the `media` feature an image is a binary file, refused like any other.
#[cfg(not(feature = "media"))]
#[tokio::test]
async fn without_media_images_are_binary_files() {
    let fx = Fixture::new();
    fx.put("pixel.png", PNG);
    insta::assert_snapshot!(fx.failure("read", json!({"path": "pixel.png"})).await, @"Cannot read binary file: pixel.png");
}

#[tokio::test]
async fn binary_files_are_refused() {
    let fx = Fixture::new();
    fx.put("archive.dat", "plain text in a .dat");
    fx.put("blob", b"abc\0def");
    insta::assert_snapshot!(fx.failure("read", json!({"path": "archive.dat", "offset": 2})).await, @"Cannot read binary file: archive.dat");
    insta::assert_snapshot!(fx.failure("read", json!({"path": "blob"})).await, @"Cannot read binary file: blob");
}

#[tokio::test]
async fn missing_files_suggest_siblings() {
    let fx = Fixture::new();
    fx.put("src/config.rs", "");
    fx.put("src/config_test.rs", "");
    fx.put("src/main.rs", "");
    insta::assert_snapshot!(fx.failure("read", json!({"path": "src/config"})).await, @r"
    File not found: src/config

    Did you mean one of these?
    src/config.rs
    src/config_test.rs
    ");
    insta::assert_snapshot!(fx.failure("read", json!({"path": "nothing.txt"})).await, @"File not found: nothing.txt");
}

#[tokio::test]
async fn unusable_paths_are_reported_without_asking() {
    let fx = Fixture::new();
    insta::assert_snapshot!(fx.failure("read", json!({"path": "../x.txt"})).await, @"Unable to read ../x.txt: ../x.txt: the relative path leads outside the working directory; use an absolute path for files outside it");
    assert!(fx.asked().is_empty());
}

#[tokio::test]
async fn directories_list_directories_first_and_page() {
    let fx = Fixture::new();
    fx.put("b.txt", "");
    fx.put("A.txt", "");
    fx.put("zdir/x", "");
    fx.put("adir/x", "");
    symlink(fx.outside.path(), fx.path("escape")).unwrap();
    symlink(fx.path("missing"), fx.path("dangling")).unwrap();
    insta::assert_snapshot!(fx.text("read", json!({"path": "."})).await, @r"
    <path>.</path>
    <type>directory</type>
    <entries>
    adir/
    zdir/
    A.txt
    b.txt

    (4 entries)
    </entries>
    ");
    let output = fx
        .call("read", json!({"path": ".", "offset": 2, "limit": 2}))
        .await
        .unwrap();
    insta::assert_snapshot!(text_of(&output), @r"
    <path>.</path>
    <type>directory</type>
    <entries>
    zdir/
    A.txt

    (Showing entries 2-3 of 4. Use offset=4 to continue.)
    </entries>
    ");
    assert_eq!(output.structured["next"], json!(4));
    assert_eq!(
        output.structured["entries"][0],
        json!({"name": "zdir/", "directory": true})
    );
    std::fs::create_dir(fx.path("empty")).unwrap();
    let empty = fx
        .call("read", json!({"path": "empty", "offset": 2, "limit": 10}))
        .await
        .unwrap();
    assert_eq!(empty.structured["entries"], json!([]));
    assert_eq!(empty.structured["truncated"], json!(false));
}

#[tokio::test]
async fn long_files_page_with_hints() {
    let fx = Fixture::new();
    let text: String = (1..=3000).map(|n| format!("line {n}\n")).collect();
    fx.put("long.txt", &text);
    let first = fx.call("read", json!({"path": "long.txt"})).await.unwrap();
    let shown = text_of(&first);
    // A full page: the whole text, its tags, numbers and hint included, fits the settle bound
    // (the frame's seven lines are taken from the 2000 first).
    assert!(shown.lines().count() <= 2000, "{}", shown.lines().count());
    assert!(shown.len() <= 50 * 1024, "{}", shown.len());
    assert!(
        shown.ends_with("(Showing lines 1-1993 of 3000. Use offset=1994 to continue.)\n</content>"),
        "{}",
        &shown[shown.len() - 120..]
    );
    assert_eq!(first.structured["next"], json!(1994));
    let page = fx
        .text(
            "read",
            json!({"path": "long.txt", "offset": 2998, "limit": 5}),
        )
        .await;
    insta::assert_snapshot!(page, @r"
    <path>long.txt</path>
    <type>file</type>
    <content>
    2998: line 2998
    2999: line 2999
    3000: line 3000

    (End of file - total 3000 lines)
    </content>
    ");
    let middle = fx
        .text(
            "read",
            json!({"path": "long.txt", "offset": 10, "limit": 2}),
        )
        .await;
    assert!(
        middle.contains(
            "10: line 10\n11: line 11\n\n(Showing lines 10-11 of 3000. Use offset=12 to continue.)"
        ),
        "{middle}"
    );
    insta::assert_snapshot!(fx.failure("read", json!({"path": "long.txt", "offset": 3001})).await, @"Offset 3001 is out of range for this file (3000 lines)");
    let zero = fx
        .text("read", json!({"path": "long.txt", "offset": 0, "limit": 1}))
        .await;
    assert!(zero.contains("\n1: line 1\n"), "{zero}");
    insta::assert_snapshot!(fx.failure("read", json!({"path": "long.txt", "limit": 0})).await, @r#"
    Invalid tool input: limit: expected a positive integer, got 0

    Correct the input so that it matches the tool's input schema, then call the tool again.
    "#);
}

#[tokio::test]
async fn byte_budget_and_long_lines() {
    let fx = Fixture::new();
    let text: String = (0..200)
        .map(|_| format!("{}\n", "y".repeat(1000)))
        .collect();
    fx.put("wide.txt", &text);
    let page = fx.call("read", json!({"path": "wide.txt"})).await.unwrap();
    let shown = text_of(&page);
    // 50 KB in all, numbers, tags and hint included: 50 numbered lines of about 1 KB.
    assert!(shown.len() <= 50 * 1024, "{}", shown.len());
    assert_eq!(page.structured["lines"], 50);
    let tail = &shown[shown.rfind("\n\n").unwrap()..];
    insta::assert_snapshot!(tail, @r"
    (Output capped at 50 KB. Showing lines 1-50. Use offset=51 to continue.)
    </content>
    ");
    fx.put("minified.js", format!("{}\n", "m".repeat(5000)));
    let shown = fx.text("read", json!({"path": "minified.js"})).await;
    assert!(shown.contains(&format!(
        "1: {}... (line truncated to 2000 chars)\n",
        "m".repeat(2000)
    )));
}

#[tokio::test]
async fn encodings_are_decoded_or_refused() {
    let fx = Fixture::new();
    fx.put("bom.txt", "\u{FEFF}first\r\nsecond\r\n");
    let output = fx.call("read", json!({"path": "bom.txt"})).await.unwrap();
    let text = output.content[0].as_text().unwrap();
    assert!(text.contains("1: first\n2: second\n"), "{text}");
    assert!(
        output.structured.get("content").is_none(),
        "the lines are in the text only"
    );
    fx.put("latin1.txt", b"caf\xe9 cr\xe8me\n");
    insta::assert_snapshot!(fx.text("read", json!({"path": "latin1.txt"})).await, @r"
    <path>latin1.txt</path>
    <type>file</type>
    <content>
    1: café crème

    (End of file - total 1 lines)
    (Decoded from Windows-1252 (Latin-1): the file is not UTF-8. edit and write keep its encoding.)
    </content>
    ");
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain("héllo\nwörld".encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    fx.put("utf16.txt", utf16);
    let output = fx.call("read", json!({"path": "utf16.txt"})).await.unwrap();
    let text = output.content[0].as_text().unwrap();
    assert!(text.contains("1: héllo\n2: wörld\n"), "{text}");
    assert_eq!(output.structured["encoding"], json!("UTF-16LE"));
    // GBK bytes: runs of high bytes are no Latin-1.
    fx.put("gbk.txt", b"ok\n\xc4\xe3\xba\xc3\xca\xc0\xbd\xe7\n");
    insta::assert_snapshot!(fx.failure("read", json!({"path": "gbk.txt"})).await, @"File is not valid UTF-8: gbk.txt (first invalid byte at byte offset 3, line 2). It may use a legacy encoding such as GBK, Shift-JIS or Windows-1251; read understands UTF-8, UTF-16 with a byte order mark and Latin-1.");
    // Valid at the start, invalid on a later line that is shown.
    let mut late = "fine\n".repeat(20_000).into_bytes();
    late.extend_from_slice(b"bad \xff here\n");
    fx.put("late.txt", &late);
    let message = fx
        .failure("read", json!({"path": "late.txt", "offset": 20_001}))
        .await;
    assert_eq!(
        message,
        "File is not valid UTF-8: late.txt (first invalid byte at byte offset 100004, line 20001). It may use a legacy encoding such as GBK, Shift-JIS or Windows-1251; read understands UTF-8, UTF-16 with a byte order mark and Latin-1."
    );
}

#[tokio::test]
async fn empty_files() {
    let fx = Fixture::new();
    fx.put("empty.txt", "");
    insta::assert_snapshot!(fx.text("read", json!({"path": "empty.txt"})).await, @r"
    <path>empty.txt</path>
    <type>file</type>
    <content>

    (End of file - total 0 lines)
    </content>
    ");
}

#[tokio::test]
async fn managed_outputs_read_without_a_prompt() {
    let fx = Fixture::new();
    let big: String = (1..=5000).map(|n| format!("out {n}\n")).collect();
    let bounded = fx
        .services
        .store
        .bound(
            "ses_test",
            "call_0",
            tackle_tool_core::ToolOutput::new(json!(null), vec![OutputContent::Text { text: big }]),
        )
        .unwrap();
    let reference = bounded.references[0].to_string();
    let text = fx
        .text(
            "read",
            json!({"path": reference, "offset": 4999, "limit": 10}),
        )
        .await;
    assert_eq!(
        text,
        format!(
            "<path>{reference}</path>\n<type>file</type>\n<content>\n4999: out 4999\n5000: out 5000\n\n(End of output - total 5000 lines)\n</content>"
        )
    );
    assert!(
        fx.asked().is_empty(),
        "no permission prompt for a managed output"
    );
    let missing = fx
        .failure(
            "read",
            json!({"path": "tool-output://faaaaaaaaaaaaaaaaaaaaaaaaaa"}),
        )
        .await;
    assert!(
        missing.starts_with("Unable to read tool-output://faaaaaaaaaaaaaaaaaaaaaaaaaa"),
        "{missing}"
    );
}

#[test]
fn the_input_schema_names_path_offset_limit() {
    let fx = Fixture::new();
    let definition = fx.tool("read").definition("read").unwrap();
    insta::assert_json_snapshot!(definition.input_schema);
}

/// What permission is asked about is exactly what the leaf opens, whatever spelling the
/// model used: an alias is renamed before the ask, and two spellings naming different files
/// are refused before anything is asked, so no ask can name one file while another is read
/// or written.
#[tokio::test]
async fn what_is_asked_about_is_what_is_opened_whatever_the_spelling() {
    let fx = Fixture::new();
    fx.put("a.txt", "alpha\n");
    fx.put("sub/b.txt", "beta\n");
    for (tool, input) in [
        ("read", json!({"path": "a.txt", "filePath": "sub/b.txt"})),
        (
            "read",
            json!({"file_path": "a.txt", "filePath": "sub/b.txt"}),
        ),
        (
            "write",
            json!({"path": "a.txt", "file_path": "sub/b.txt", "content": "x\n"}),
        ),
        (
            "edit",
            json!({"filePath": "a.txt", "path": "sub/b.txt", "oldString": "beta", "newString": "x"}),
        ),
    ] {
        let message = fx.failure(tool, input).await;
        assert!(message.contains("sent twice"), "{message}");
    }
    assert!(fx.asked().is_empty());
    assert_eq!(fx.bytes("a.txt"), b"alpha\n");
    assert_eq!(fx.bytes("sub/b.txt"), b"beta\n");

    let text = fx.text("read", json!({"file_path": "sub/b.txt"})).await;
    assert!(text.contains("1: beta"), "{text}");
    fx.call(
        "write",
        json!({"filePath": "sub/c.txt", "content": "gamma\n"}),
    )
    .await
    .unwrap();
    fx.call(
        "edit",
        json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}),
    )
    .await
    .unwrap();
    assert_eq!(
        fx.asked(),
        vec![
            asked("read", "sub/b.txt", "*"),
            asked("edit", "sub/c.txt", "*"),
            asked("edit", "a.txt", "*"),
        ]
    );
    assert_eq!(fx.bytes("sub/c.txt"), b"gamma\n");
    assert_eq!(fx.bytes("a.txt"), b"ALPHA\n");
    assert_eq!(fx.bytes("sub/b.txt"), b"beta\n");
}
