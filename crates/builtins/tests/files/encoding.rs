//! Byte faithfulness: every edit and write leaves each byte outside its span unchanged,
//! whatever the encoding details of the file.

use serde_json::json;

use super::support::Fixture;

/// Files in every shape the suite covers: (name, bytes). Each contains `TARGET` once.
fn fixtures() -> Vec<(&'static str, Vec<u8>)> {
    let shapes: Vec<(&str, String)> = vec![
        (
            "utf8",
            "first line\nthe TARGET word\nlast line\n".to_owned(),
        ),
        (
            "bom",
            "\u{FEFF}first line\nthe TARGET word\nlast line\n".to_owned(),
        ),
        (
            "crlf",
            "first line\r\nthe TARGET word\r\nlast line\r\n".to_owned(),
        ),
        (
            "mixed",
            "first line\r\nthe TARGET word\nlast line\r\nend\n".to_owned(),
        ),
        (
            "no-final-newline",
            "first line\nthe TARGET word\nlast line".to_owned(),
        ),
        (
            "tabs",
            "\tfirst\n\t\tthe TARGET word\t\n\tlast\n".to_owned(),
        ),
        (
            "cjk-emoji",
            "第一行 😀\n这是 TARGET 字 🎉\n最后一行\n".to_owned(),
        ),
        (
            "bom-crlf-trailing-spaces",
            "\u{FEFF}a  \r\nthe TARGET word  \r\n\r\n".to_owned(),
        ),
    ];
    shapes
        .into_iter()
        .map(|(name, text)| (name, text.into_bytes()))
        .collect()
}

/// `bytes` with the first `old` replaced by `new`, nothing else touched.
fn splice(bytes: &[u8], old: &[u8], new: &[u8]) -> Vec<u8> {
    let at = bytes.windows(old.len()).position(|w| w == old).unwrap();
    [&bytes[..at], new, &bytes[at + old.len()..]].concat()
}

#[tokio::test]
async fn single_word_edits_touch_only_their_span() {
    let fx = Fixture::new();
    for (name, bytes) in fixtures() {
        fx.put(name, &bytes);
        fx.call(
            "edit",
            json!({"path": name, "oldString": "TARGET", "newString": "Ziel✓"}),
        )
        .await
        .unwrap();
        assert_eq!(
            fx.bytes(name),
            splice(&bytes, b"TARGET", "Ziel✓".as_bytes()),
            "{name}"
        );
    }
}

#[tokio::test]
async fn multi_line_edits_keep_the_file_endings() {
    let fx = Fixture::new();
    for (name, bytes) in fixtures() {
        fx.put(name, &bytes);
        let text = String::from_utf8(bytes.clone()).unwrap();
        let text = text.trim_start_matches('\u{FEFF}');
        // oldString as a model writes it: the target line and the next, joined with LF only.
        let lines: Vec<&str> = text.split('\n').map(|l| l.trim_end_matches('\r')).collect();
        let index = lines.iter().position(|l| l.contains("TARGET")).unwrap();
        let old = format!("{}\n{}", lines[index], lines[index + 1]);
        let new = format!(
            "{}\n{}",
            lines[index].replace("TARGET", "T2"),
            lines[index + 1]
        );
        fx.call(
            "edit",
            json!({"path": name, "oldString": old, "newString": new}),
        )
        .await
        .unwrap();
        let after = fx.bytes(name);
        // Exactly the word changed; endings, indentation, BOM and final newline state are kept.
        assert_eq!(
            after,
            splice(&bytes, b"TARGET", b"T2"),
            "{name}: {:?}",
            String::from_utf8_lossy(&after)
        );
    }
}

#[tokio::test]
async fn writes_store_exactly_the_given_bytes() {
    let fx = Fixture::new();
    for (name, bytes) in fixtures() {
        let text = String::from_utf8(bytes.clone()).unwrap();
        fx.call("write", json!({"path": name, "content": text}))
            .await
            .unwrap();
        assert_eq!(fx.bytes(name), bytes, "{name}");
    }
}
