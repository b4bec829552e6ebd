//! Decoding, prefix stripping and the stale-commit check of the edit leaf.

use super::*;
use crate::mutation::FileMutation;

fn request(old: &str, new: &str) -> Request {
    Request {
        resource: "f.txt".to_owned(),
        old: old.to_owned(),
        new: new.to_owned(),
        replace_all: false,
    }
}

#[test]
fn read_prefixes_are_stripped_only_when_every_line_has_one() {
    assert_eq!(
        strip_line_numbers("12: a\n13:   b\n", true).as_deref(),
        Some("a\n  b\n")
    );
    assert_eq!(
        strip_line_numbers("7: x\n8:\n9: y", true).as_deref(),
        Some("x\n\ny")
    );
    assert_eq!(strip_line_numbers("12: a\nb", true), None);
    assert_eq!(strip_line_numbers("1: a\n3: b", true), None);
    assert_eq!(
        strip_line_numbers("1: a\n3: b", false).as_deref(),
        Some("a\nb")
    );
    assert_eq!(strip_line_numbers("1:a", true), None);
    assert_eq!(strip_line_numbers("key: value", true), None);
}

#[test]
fn prefixed_old_string_still_matches() {
    let prepared = prepare(
        b"one\ntwo\nthree\n",
        &request("2: two\n3: three", "2: deux\n3: trois"),
    )
    .unwrap();
    assert!(prepared.stripped);
    assert_eq!(prepared.bytes, b"one\ndeux\ntrois\n");
    // A file whose text really has such prefixes is edited literally.
    let prepared = prepare(b"1: a\n2: b\n", &request("1: a", "1: c")).unwrap();
    assert!(!prepared.stripped);
    assert_eq!(prepared.bytes, b"1: c\n2: b\n");
}

#[test]
fn bom_is_kept_once() {
    let prepared = prepare(
        b"\xEF\xBB\xBFbefore\r\nrest\r\n",
        &request("before\nrest", "after\nrest"),
    )
    .unwrap();
    assert_eq!(prepared.bytes, b"\xEF\xBB\xBFafter\r\nrest\r\n");
    let prepared = prepare(b"\xEF\xBB\xBFa", &request("a", "\u{FEFF}b")).unwrap();
    assert_eq!(prepared.bytes, b"\xEF\xBB\xBFb");
    let prepared = prepare(b"a", &request("a", "\u{FEFF}b")).unwrap();
    assert_eq!(prepared.bytes, b"\xEF\xBB\xBFb");
}

#[test]
fn non_utf8_is_refused_with_its_offset() {
    match prepare(b"ok\ncaf\xE9\n", &request("ok", "fine")) {
        Err(Failure::NotUtf8 {
            offset,
            line,
            utf16,
        }) => assert_eq!((offset, line, utf16), (6, 2, false)),
        other => panic!("{other:?}"),
    }
    match prepare(b"\xFF\xFEa\0", &request("a", "b")) {
        Err(Failure::NotUtf8 { utf16, .. }) => assert!(utf16),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_file_changed_after_matching_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.txt");
    std::fs::write(&path, "before\nrest\n").unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let prepared = prepare(&bytes, &request("before", "after")).unwrap();
    // Another writer gets in between matching and the commit.
    std::fs::write(&path, "theirs\n").unwrap();
    let files = FileMutation::new();
    let outcome = files.transact(&path, move |tx| commit(tx, &prepared)).await;
    let failure = outcome.unwrap_err();
    assert_eq!(
        failure.message("f.txt"),
        "File changed after permission approval. Read it again before editing."
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "theirs\n");
}
