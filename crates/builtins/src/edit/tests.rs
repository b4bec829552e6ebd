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
fn bytes_that_are_not_text_are_refused_with_their_offset() {
    // GBK: runs of high bytes are no Latin-1.
    match prepare(b"ok\n\xC4\xE3\xBA\xC3\n", &request("ok", "fine")) {
        Err(Failure::NotUtf8 { offset, line }) => assert_eq!((offset, line), (3, 2)),
        other => panic!("{other:?}"),
    }
    match prepare(b"\xFF\xFEa\0\0\xDC", &request("a", "b")) {
        Err(Failure::Malformed { encoding, error }) => {
            assert_eq!(encoding, "UTF-16LE");
            assert_eq!(error, Malformed::Invalid { offset: 4 });
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn other_encodings_are_kept() {
    let prepared = prepare(b"\xFF\xFEa\0\n\0", &request("a", "\u{e9}")).unwrap();
    assert_eq!(prepared.bytes, b"\xFF\xFE\xE9\0\n\0");
    let prepared = prepare(b"caf\xE9\n", &request("caf\u{e9}", "\u{20AC}5")).unwrap();
    assert_eq!(prepared.bytes, b"\x805\n");
    match prepare(b"caf\xE9\n", &request("caf", "\u{1F600}")) {
        Err(Failure::Unencodable(unencodable)) => {
            assert_eq!(
                (unencodable.character, unencodable.line, unencodable.column),
                ('\u{1F600}', 1, 1)
            );
        }
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
