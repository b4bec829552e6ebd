use super::*;
use crate::apply_patch::parse::{HunkKind, parse};

/// Applies the chunks of the single update hunk in `patch` to `file`.
fn apply(file: &str, patch: &str) -> Result<(String, usize, usize), String> {
    let parsed = parse(&format!(
        "*** Begin Patch\n*** Update File: f\n{patch}\n*** End Patch"
    ))
    .unwrap();
    let HunkKind::Update { chunks, .. } = &parsed.hunks[0].kind else {
        panic!("not an update");
    };
    let text = FileText::decode(file.as_bytes()).unwrap();
    let derived = derive("f", &text, chunks)?;
    Ok((
        String::from_utf8(derived.bytes.unwrap_or_else(|| text.encode())).unwrap(),
        derived.applied,
        derived.already_applied,
    ))
}

fn applied(file: &str, patch: &str) -> String {
    let (out, _, _) = apply(file, patch).unwrap();
    out
}

#[test]
fn replaces_in_place() {
    assert_eq!(applied("a\nb\nc\n", "@@\n a\n-b\n+B\n c"), "a\nB\nc\n");
}

#[test]
fn several_chunks_in_order() {
    let file = "1\n2\n3\n4\n5\n6\n";
    assert_eq!(
        applied(file, "@@\n-2\n+two\n@@\n 4\n-5\n+five"),
        "1\ntwo\n3\n4\nfive\n6\n"
    );
}

#[test]
fn context_anchor_picks_the_later_match() {
    let file = "fn a() {\n    x\n}\nfn b() {\n    x\n}\n";
    assert_eq!(
        applied(file, "@@ fn b() {\n-    x\n+    y"),
        "fn a() {\n    x\n}\nfn b() {\n    y\n}\n"
    );
}

#[test]
fn context_may_name_the_start_of_a_line() {
    let file = "def a(x):\n    return x\ndef b(x):\n    return x\n";
    assert_eq!(
        applied(file, "@@ def b\n-    return x\n+    return -x"),
        "def a(x):\n    return x\ndef b(x):\n    return -x\n"
    );
}

#[test]
fn nested_anchors() {
    let file = "class A:\n  def f():\n    pass\nclass B:\n  def f():\n    pass\n";
    assert_eq!(
        applied(file, "@@ class B:\n@@ def f():\n-    pass\n+    return 1"),
        "class A:\n  def f():\n    pass\nclass B:\n  def f():\n    return 1\n"
    );
}

#[test]
fn end_of_file_anchors_at_the_end() {
    let file = "x\nend\ny\nend\n";
    assert_eq!(
        applied(file, "@@\n-end\n+END\n*** End of File"),
        "x\nend\ny\nEND\n"
    );
}

#[test]
fn pure_insertion_appends() {
    assert_eq!(applied("a\nb\n", "@@ a\n+c"), "a\nb\nc\n");
}

#[test]
fn keeps_crlf_bom_and_missing_trailing_newline() {
    let (out, ..) = apply("\u{FEFF}a\r\nb\r\nc", "@@\n a\n-b\n+B\n+B2").unwrap();
    assert_eq!(out, "\u{FEFF}a\r\nB\r\nB2\r\nc");
    assert_eq!(applied("a\nb", "@@\n a\n-b\n+c"), "a\nc");
    assert_eq!(applied("a\nb", "@@\n a\n b\n+c"), "a\nb\nc");
}

#[test]
fn mixed_endings_keep_their_own() {
    assert_eq!(
        applied("a\r\nb\nc\r\n", "@@\n a\n-b\n+B\n+B2\n c"),
        "a\r\nB\nB2\r\nc\r\n"
    );
    assert_eq!(
        applied("a\nb\r\nc\n", "@@\n a\n b\n+x\n c"),
        "a\nb\r\nx\nc\n"
    );
}

#[test]
fn loose_match_keeps_the_files_own_context_text() {
    // The patch's context lost the trailing spaces and uses straight quotes; the kept lines
    // stay byte for byte as they were.
    let file = "say(\u{201C}hi\u{201D})  \nold\n";
    assert_eq!(
        applied(file, "@@\n say(\"hi\")\n-old\n+new"),
        "say(\u{201C}hi\u{201D})  \nnew\n"
    );
}

#[test]
fn trailing_blank_context_is_optional() {
    assert_eq!(applied("a\nb", "@@\n-a\n+A\n b\n\n"), "A\nb");
}

#[test]
fn replay_is_already_applied() {
    let file = "a\nb\nc\n";
    let patch = "@@\n a\n-b\n+B\n c";
    let (once, applied_now, _) = apply(file, patch).unwrap();
    assert_eq!(applied_now, 1);
    let (twice, applied_again, already) = apply(&once, patch).unwrap();
    assert_eq!(
        (twice.as_str(), applied_again, already),
        (once.as_str(), 0, 1)
    );
}

#[test]
fn replay_of_insertions_after_and_before_context() {
    for patch in ["@@\n a\n+new", "@@\n+new\n b", "@@\n a\n+new\n b"] {
        let (once, ..) = apply("a\nb\n", patch).unwrap();
        let (twice, applied_again, already) = apply(&once, patch).unwrap();
        assert_eq!((twice, applied_again, already), (once, 0, 1), "{patch}");
    }
}

#[test]
fn replay_with_a_pure_insertion_chunk() {
    let patch = "@@\n-a\n+A\n@@\n+tail";
    let (once, ..) = apply("a\nb\n", patch).unwrap();
    assert_eq!(once, "A\nb\ntail\n");
    let (twice, applied_again, already) = apply(&once, patch).unwrap();
    assert_eq!((twice, applied_again, already), (once, 0, 2));
}

#[test]
fn partly_applied_patch_applies_the_rest() {
    let patch = "@@\n-a\n+A\n@@\n-c\n+C";
    let (out, applied_now, already) = apply("A\nb\nc\n", patch).unwrap();
    assert_eq!((out.as_str(), applied_now, already), ("A\nb\nC\n", 1, 1));
}

#[test]
fn misses_name_the_chunk() {
    let err = apply("a\nb\n", "@@\n a\n-x\n+y").unwrap_err();
    assert!(
        err.starts_with("Failed to find expected lines in f (chunk 1 of 1, patch line 3)."),
        "{err}"
    );
    let err = apply("a\nb\n", "@@ nothing\n-a\n+y").unwrap_err();
    assert!(
        err.starts_with("Failed to find context 'nothing' in f (chunk 1 of 1, patch line 3)"),
        "{err}"
    );
}

proptest::proptest! {
    /// Replacing one line with itself changes no byte, whatever the endings and the BOM.
    #[test]
    fn identity_chunk_changes_nothing(
        lines in proptest::collection::vec("[a-z ]{1,4}", 1..8),
        crlf in proptest::collection::vec(proptest::bool::ANY, 8),
        bom in proptest::bool::ANY,
        trailing in proptest::bool::ANY,
        pick in 0usize..8,
    ) {
        let mut file = String::new();
        if bom {
            file.push('\u{FEFF}');
        }
        for (i, line) in lines.iter().enumerate() {
            file.push_str(line);
            if i + 1 < lines.len() || trailing {
                file.push_str(if crlf[i] { "\r\n" } else { "\n" });
            }
        }
        let line = &lines[pick % lines.len()];
        let (out, ..) = apply(&file, &format!("@@\n-{line}\n+{line}")).unwrap();
        proptest::prop_assert_eq!(out, file);
    }
}
