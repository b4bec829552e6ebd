use proptest::prelude::*;
use serde_json::json;

use super::*;

impl Sink for Vec<u8> {
    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.extend_from_slice(bytes);
        Ok(())
    }
}

/// Scans `message` fed in chunks of `size` bytes.
fn scan(message: &[u8], size: usize) -> (Found, String) {
    let mut scan = Scan::new();
    let mut text = Vec::new();
    for chunk in message.chunks(size.max(1)) {
        scan.feed(chunk, &mut text).unwrap();
    }
    (scan.finish(), String::from_utf8(text).unwrap())
}

/// `text` as a JSON string with every non-ASCII character escaped (surrogate pairs too).
fn ascii_json(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
    out
}

#[test]
fn a_result_s_id_and_texts_are_found() {
    let message = json!({
        "jsonrpc": "2.0",
        "result": {
            "structuredContent": {"text": "not this", "id": 9},
            "content": [
                {"type": "text", "text": "first \"quoted\"\nline"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"text": "second 😀", "type": "text"}
            ],
            "isError": true
        },
        "id": 42
    })
    .to_string();
    let (found, text) = scan(message.as_bytes(), 7);
    assert_eq!(found.id.as_deref(), Some(&b"42"[..]));
    assert!(found.is_error && !found.method && !found.error);
    assert_eq!(found.texts, 2);
    assert_eq!(text, "first \"quoted\"\nline\nsecond 😀");
}

#[test]
fn string_ids_keep_their_escapes_and_requests_are_told_apart() {
    let message = br#"{"id":"a\"b","method":"sampling/createMessage","params":{"text":"x"}}"#;
    let (found, text) = scan(message, 3);
    assert_eq!(found.id.as_deref(), Some(&br#""a\"b""#[..]));
    assert!(found.method);
    assert_eq!(text, "");
    let error = br#"{"jsonrpc":"2.0","id":"7","error":{"code":-1,"message":"no"}}"#;
    let (found, _) = scan(error, 5);
    assert!(found.error);
    assert_eq!(found.id.as_deref(), Some(&br#""7""#[..]));
}

#[test]
fn a_lone_surrogate_is_a_replacement_character() {
    let message = br#"{"id":1,"result":{"content":[{"text":"a\ud83db\ude00c\ud83d\ude00"}]}}"#;
    let (_, text) = scan(message, 1);
    assert_eq!(text, "a\u{fffd}b\u{fffd}c😀");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn any_text_result_is_decoded_exactly(
        texts in prop::collection::vec(any::<String>(), 1..4),
        id in prop_oneof![any::<u32>().prop_map(|n| n.to_string()), "[a-z\"\\\\]{0,8}".prop_map(|s| serde_json::to_string(&s).unwrap())],
        ascii in any::<bool>(),
        is_error in any::<bool>(),
        size in 1usize..64,
    ) {
        let parts: Vec<String> = texts
            .iter()
            .map(|t| {
                let literal = if ascii { ascii_json(t) } else { serde_json::to_string(t).unwrap() };
                format!(r#"{{"type":"text","text":{literal}}}"#)
            })
            .collect();
        let message = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{}],"isError":{is_error}}}}}"#,
            parts.join(",")
        );
        // The message is valid JSON, as a server sends it.
        serde_json::from_str::<serde_json::Value>(&message).unwrap();
        let (found, text) = scan(message.as_bytes(), size);
        prop_assert_eq!(found.id.as_deref(), Some(id.as_bytes()));
        prop_assert_eq!(found.is_error, is_error);
        prop_assert_eq!(text, texts.join("\n"));
    }

    #[test]
    fn any_bytes_are_scanned_without_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let mut scan = Scan::new();
        let mut text = Vec::new();
        scan.feed(&bytes, &mut text).unwrap();
        let _ = scan.finish();
    }
}
