//! Byte faithfulness: every edit and write leaves each byte outside its span unchanged,
//! whatever the encoding details of the file.

use proptest::prelude::*;
use serde_json::json;

use super::support::{Fixture, text_of};

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

/// The encodings besides UTF-8 a file keeps, with how its text becomes bytes (BOM included).
#[derive(Debug, Clone, Copy)]
enum Legacy {
    Utf16Le,
    Utf16Be,
    Windows1252,
}

impl Legacy {
    const ALL: [Self; 3] = [Self::Utf16Le, Self::Utf16Be, Self::Windows1252];

    fn name(self) -> &'static str {
        match self {
            Self::Utf16Le => "utf16le.txt",
            Self::Utf16Be => "utf16be.txt",
            Self::Windows1252 => "cp1252.txt",
        }
    }

    /// `text` in this encoding, without a BOM.
    fn bytes(self, text: &str) -> Vec<u8> {
        match self {
            Self::Utf16Le => text.encode_utf16().flat_map(u16::to_le_bytes).collect(),
            Self::Utf16Be => text.encode_utf16().flat_map(u16::to_be_bytes).collect(),
            Self::Windows1252 => text
                .chars()
                .map(|c| match c {
                    '€' => 0x80,
                    '“' => 0x93,
                    '”' => 0x94,
                    '—' => 0x97,
                    c => u8::try_from(u32::from(c)).unwrap(),
                })
                .collect(),
        }
    }

    /// A whole file holding `text`.
    fn file(self, text: &str) -> Vec<u8> {
        let bom: &[u8] = match self {
            Self::Utf16Le => b"\xFF\xFE",
            Self::Utf16Be => b"\xFE\xFF",
            Self::Windows1252 => b"",
        };
        [bom, &self.bytes(text)].concat()
    }
}

/// Latin-1-shaped text (read's rule: at most a quarter of the bytes, and two in a row, are not
/// ASCII) with CRLF endings, Windows-1252 punctuation and no final newline.
const LEGACY_TEXT: &str = "caf\u{e9} cr\u{e8}me\r\n\u{201c}the TARGET word\u{201d} \u{2014} 5\u{20ac}\r\n\
     plain ASCII text, as most of a source file is\r\n\u{fc}ber";

#[tokio::test]
async fn utf16_and_windows1252_files_keep_their_encoding_through_edit() {
    let fx = Fixture::new();
    for legacy in Legacy::ALL {
        let name = legacy.name();
        let bytes = legacy.file(LEGACY_TEXT);
        fx.put(name, &bytes);
        let output = fx
            .call(
                "edit",
                json!({"path": name, "oldString": "TARGET word”", "newString": "Zïel — 3€”"}),
            )
            .await
            .unwrap();
        assert_eq!(
            fx.bytes(name),
            splice(
                &bytes,
                &legacy.bytes("TARGET word”"),
                &legacy.bytes("Zïel — 3€”")
            ),
            "{name}"
        );
        let text = text_of(&output);
        assert!(text.contains("The file keeps its encoding, "), "{text}");
        // A multi-line edit written with LF keeps the file's CRLF.
        fx.call(
            "edit",
            json!({"path": name, "oldString": "crème\n“the Zïel", "newString": "crème\nnew line\n“the Zïel"}),
        )
        .await
        .unwrap();
        assert_eq!(
            fx.bytes(name),
            legacy.file(
                &LEGACY_TEXT
                    .replace("TARGET word”", "Zïel — 3€”")
                    .replace("crème\r\n", "crème\r\nnew line\r\n")
            ),
            "{name}"
        );
    }
}

#[tokio::test]
async fn utf16_and_windows1252_files_keep_their_encoding_through_write() {
    let fx = Fixture::new();
    for legacy in Legacy::ALL {
        let name = legacy.name();
        fx.put(name, legacy.file(LEGACY_TEXT));
        let text = LEGACY_TEXT.replace("TARGET", "€ “new”");
        let output = fx
            .call("write", json!({"path": name, "content": text}))
            .await
            .unwrap();
        assert_eq!(fx.bytes(name), legacy.file(&text), "{name}");
        assert_eq!(output.structured["additions"], json!(1), "{name}");
        assert_eq!(output.structured["deletions"], json!(1), "{name}");
        // A BOM in the content is the file's own BOM, written once.
        fx.call(
            "write",
            json!({"path": name, "content": format!("\u{FEFF}{text}")}),
        )
        .await
        .unwrap();
        assert_eq!(fx.bytes(name), legacy.file(&text), "{name}");
    }
    insta::assert_snapshot!(
        fx.text("write", json!({"path": "utf16be.txt", "content": "x"})).await,
        @"Wrote file successfully: utf16be.txt (kept its encoding, UTF-16BE)"
    );
    // A new file, and one that is not text in any encoding read knows, become UTF-8.
    fx.put("gbk.txt", b"ok\n\xC4\xE3\xBA\xC3\n");
    for name in ["gbk.txt", "new.txt"] {
        fx.call("write", json!({"path": name, "content": "é"}))
            .await
            .unwrap();
        assert_eq!(fx.bytes(name), "é".as_bytes(), "{name}");
    }
}

#[tokio::test]
async fn a_character_the_encoding_cannot_hold_is_refused_and_nothing_is_written() {
    let fx = Fixture::new();
    let bytes = Legacy::Windows1252.file(LEGACY_TEXT);
    fx.put("cp1252.txt", &bytes);
    insta::assert_snapshot!(
        fx.failure("edit", json!({"path": "cp1252.txt", "oldString": "TARGET", "newString": "smile 😀"})).await,
        @"Cannot edit cp1252.txt: the file is Windows-1252 (Latin-1) and cannot hold '😀' (U+1F600) at line 2, column 12; nothing was written. Use characters the encoding has, or convert the file to UTF-8 first."
    );
    insta::assert_snapshot!(
        fx.failure("write", json!({"path": "cp1252.txt", "content": "one\ntwo Ω"})).await,
        @"Unable to write cp1252.txt: the file is Windows-1252 (Latin-1) and cannot hold 'Ω' (U+03A9) at line 2, column 5; nothing was written. Use characters the encoding has, or convert the file to UTF-8 first."
    );
    assert_eq!(fx.bytes("cp1252.txt"), bytes);
    // Every character fits in UTF-16.
    fx.put("utf16le.txt", Legacy::Utf16Le.file("a"));
    fx.call("write", json!({"path": "utf16le.txt", "content": "😀 Ω"}))
        .await
        .unwrap();
    assert_eq!(fx.bytes("utf16le.txt"), Legacy::Utf16Le.file("😀 Ω"));
}

#[tokio::test]
async fn malformed_utf16_is_refused_by_edit() {
    let fx = Fixture::new();
    // An unpaired low surrogate after "a".
    let bytes = b"\xFF\xFEa\0\0\xDCb\0".to_vec();
    fx.put("bad16.txt", &bytes);
    insta::assert_snapshot!(
        fx.failure("edit", json!({"path": "bad16.txt", "oldString": "a", "newString": "c"})).await,
        @"Cannot edit bad16.txt: the file is not valid UTF-16: an unpaired surrogate at byte offset 4 (read as UTF-16LE). edit never rewrites bytes it cannot read; use write to replace the whole file."
    );
    assert_eq!(fx.bytes("bad16.txt"), bytes);
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Text Windows-1252 can hold, Latin-1-shaped (no more than two non-ASCII characters in a
/// row, as read's rule wants): ASCII words and single accented letters or punctuation.
fn latin1_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-zA-Z0-9 .,;]{1,8}",
        1 => "[éèüßçñ€“”—]",
        1 => Just("\r\n".to_owned()),
        1 => Just("\n".to_owned()),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|pieces| {
        // Keep it Latin-1-shaped: three ASCII letters after every non-ASCII character.
        pieces
            .into_iter()
            .map(|p| if p.is_ascii() { p } else { format!("{p}abc") })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Edits of random Windows-1252 and UTF-16 files change exactly the edited span's bytes, and
    /// writing a file's own text back gives its bytes again.
    #[test]
    fn edit_and_write_round_trip(
        before in latin1_text(),
        after in latin1_text(),
        new in "[a-z]{0,3}[é€]?[a-z]{0,3}",
    ) {
        let fx = Fixture::new();
        // A byte that is not ASCII makes the file Windows-1252 (all ASCII is UTF-8), and enough
        // ASCII keeps it Latin-1-shaped whatever the edit inserts.
        let text = format!("{before}#MARK#{after}\ncaf\u{e9}, then ASCII");
        for legacy in Legacy::ALL {
            let name = legacy.name();
            let bytes = legacy.file(&text);
            fx.put(name, &bytes);
            runtime()
                .block_on(fx.call("edit", json!({"path": name, "oldString": "#MARK#", "newString": new})))
                .unwrap();
            prop_assert_eq!(
                fx.bytes(name),
                splice(&bytes, &legacy.bytes("#MARK#"), &legacy.bytes(&new))
            );
            runtime()
                .block_on(fx.call("write", json!({"path": name, "content": text})))
                .unwrap();
            prop_assert_eq!(fx.bytes(name), bytes);
        }
    }
}
