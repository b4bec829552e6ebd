use super::*;

fn ok(text: &str) -> Vec<Hunk> {
    match parse(text) {
        Ok(patch) => patch.hunks,
        Err(err) => panic!("{err}"),
    }
}

fn err(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

fn keep(s: &str) -> Op {
    Op::Keep(s.to_owned())
}
fn remove(s: &str) -> Op {
    Op::Remove(s.to_owned())
}
fn insert(s: &str) -> Op {
    Op::Insert(s.to_owned())
}

#[test]
fn every_hunk_kind() {
    let hunks = ok("*** Begin Patch\n\
                    *** Add File: a.txt\n\
                    +one\n\
                    +two\n\
                    *** Delete File: b.txt\n\
                    *** Update File: c.txt\n\
                    *** Move to: d.txt\n\
                    @@ fn main\n\
                    \x20keep\n\
                    -old\n\
                    +new\n\
                    *** End of File\n\
                    *** End Patch");
    assert_eq!(
        hunks,
        vec![
            Hunk {
                line: 2,
                kind: HunkKind::Add {
                    path: "a.txt".into(),
                    lines: vec!["one".into(), "two".into()],
                },
            },
            Hunk {
                line: 5,
                kind: HunkKind::Delete {
                    path: "b.txt".into()
                },
            },
            Hunk {
                line: 6,
                kind: HunkKind::Update {
                    path: "c.txt".into(),
                    move_to: Some("d.txt".into()),
                    chunks: vec![Chunk {
                        line: 8,
                        contexts: vec!["fn main".into()],
                        ops: vec![keep("keep"), remove("old"), insert("new")],
                        end_of_file: true,
                    }],
                },
            },
        ]
    );
}

#[test]
fn lenient_wrappers_and_markers() {
    let plain = ok("*** Begin Patch\n*** Delete File: x\n*** End Patch\n");
    for text in [
        "  *** Begin Patch \n   *** Delete File: x  \n *** End Patch  ",
        "\n\n*** Begin Patch\r\n*** Delete File: x\r\n*** End Patch\r\n\n",
        "<<'EOF'\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEOF",
        "cat <<\"PATCH\"\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nPATCH\n",
        "apply_patch <<EOF\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEOF",
    ] {
        let hunks = ok(text);
        assert_eq!(hunks.len(), 1, "{text:?}");
        assert_eq!(hunks[0].kind, plain[0].kind, "{text:?}");
    }
}

#[test]
fn first_chunk_without_header_and_blank_context_lines() {
    let hunks =
        ok("*** Begin Patch\n*** Update File: f\n a\n\n-b\n+c\n@@\n d\n+e\n\n*** End Patch");
    let HunkKind::Update { chunks, .. } = &hunks[0].kind else {
        panic!("not an update");
    };
    assert_eq!(chunks.len(), 2);
    assert_eq!(
        chunks[0].ops,
        vec![keep("a"), keep(""), remove("b"), insert("c")]
    );
    assert_eq!(chunks[0].line, 3);
    assert_eq!(chunks[1].ops, vec![keep("d"), insert("e"), keep("")]);
    assert_eq!(chunks[1].line, 7);
}

#[test]
fn nested_and_range_contexts() {
    let hunks = ok(
        "*** Begin Patch\n*** Update File: f\n@@ class A\n@@   def b(self):\n-x\n+y\n@@ -10,3 +10,4 @@ fn c()\n-p\n+q\n@@ -1 +1 @@\n-r\n+s\n*** End Patch",
    );
    let HunkKind::Update { chunks, .. } = &hunks[0].kind else {
        panic!("not an update");
    };
    assert_eq!(chunks[0].contexts, ["class A", "def b(self):"]);
    assert_eq!(chunks[1].contexts, ["fn c()"]);
    assert!(chunks[2].contexts.is_empty());
}

#[test]
fn add_file_blank_lines() {
    let hunks =
        ok("*** Begin Patch\n*** Add File: a\n+x\n\n+y\n\n\n*** Add File: empty\n*** End Patch");
    assert_eq!(
        hunks[0].kind,
        HunkKind::Add {
            path: "a".into(),
            lines: vec!["x".into(), String::new(), "y".into()],
        }
    );
    assert_eq!(
        hunks[1].kind,
        HunkKind::Add {
            path: "empty".into(),
            lines: vec![],
        }
    );
}

#[test]
fn move_without_chunks_is_a_rename() {
    let hunks = ok("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch");
    assert_eq!(
        hunks[0].kind,
        HunkKind::Update {
            path: "a".into(),
            move_to: Some("b".into()),
            chunks: vec![],
        }
    );
}

#[test]
fn empty_patch_has_no_hunks() {
    assert!(ok("*** Begin Patch\n*** End Patch").is_empty());
}

#[test]
fn errors_name_the_line_and_the_text() {
    insta::assert_snapshot!(err(""), @"line 1: the patch is empty; it must start with '*** Begin Patch'");
    insta::assert_snapshot!(err("\n\nhello\n*** Begin Patch\n*** End Patch"), @"line 3: the first line of the patch must be '*** Begin Patch', got 'hello'");
    insta::assert_snapshot!(err("*** Begin Patch\n*** Delete File: a"), @"line 2: the patch ends without '*** End Patch'");
    insta::assert_snapshot!(err("*** Begin Patch\n*** End Patch\nmore"), @"line 3: unexpected text after '*** End Patch': 'more'");
    insta::assert_snapshot!(err("*** Begin Patch\n*** Frobnicate File: a\n*** End Patch"), @"line 2: Invalid patch line: '*** Frobnicate File: a'. Expected '*** Add File: <path>', '*** Delete File: <path>', '*** Update File: <path>' or '*** End Patch'");
    insta::assert_snapshot!(err("*** Begin Patch\n*** Add File: \n*** End Patch"), @"line 2: Invalid add file path: '*** Add File: '");
    insta::assert_snapshot!(err("*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch"), @"line 4: Invalid add file line: 'y'. Every line of an added file starts with '+'");
    insta::assert_snapshot!(err("*** Begin Patch\n*** Delete File:\n*** End Patch"), @"line 2: Invalid delete file path: '*** Delete File:'");
    insta::assert_snapshot!(err("*** Begin Patch\n*** Update File: a\n*** End Patch"), @"line 2: Invalid update hunk for a: expected at least one @@ chunk");
    insta::assert_snapshot!(err("*** Begin Patch\n*** Update File: a\n*** Move to:\n@@\n-x\n*** End Patch"), @"line 3: Invalid move file path: '*** Move to:'");
    insta::assert_snapshot!(err("*** Begin Patch\n*** Update File: a\n@@\n-x\nbad line\n*** End Patch"), @"line 5: Invalid update chunk line: 'bad line'. Every line of a chunk starts with ' ' (context), '-' (removed) or '+' (added)");
    insta::assert_snapshot!(err("*** Begin Patch\n*** Update File: a\n@@ ctx\n*** End Patch"), @"line 3: the @@ chunk has no lines; each line starts with ' ', '-' or '+'");
    insta::assert_snapshot!(err("*** Begin Patch\n*** Update File: a\n*** End of File\n*** End Patch"), @"line 3: '*** End of File' must follow the lines of a chunk");
    insta::assert_snapshot!(err("*** Begin Patch\n*** Update File: a\n-x\n*** End of File\n+y\n*** End Patch"), @"line 5: Invalid update file line: '+y'. A new chunk must start with '@@' after '*** End of File'");
}

#[test]
fn line_numbers_count_from_the_raw_text() {
    // Leading blank lines and a heredoc opener still count.
    let text = "\n<<EOF\n*** Begin Patch\n*** Update File: a\n@@\n oops\n\tbad\n*** End Patch\nEOF";
    assert!(err(text).starts_with("line 7: Invalid update chunk line: '\tbad'"));
}

#[test]
fn heredoc_tags() {
    assert_eq!(heredoc_tag("<<EOF"), Some("EOF"));
    assert_eq!(heredoc_tag("cat <<'EOF'"), Some("EOF"));
    assert_eq!(heredoc_tag("cat << \"END_1\" "), Some("END_1"));
    assert_eq!(heredoc_tag("<<-EOF"), Some("EOF"));
    assert_eq!(heredoc_tag("<<'EOF"), None);
    assert_eq!(heredoc_tag("echo <<EOF"), None);
    assert_eq!(heredoc_tag("<<"), None);
}

proptest::proptest! {
    /// The parser never panics, and every error names a line of the text.
    #[test]
    fn never_panics(text in "(\\*\\*\\* (Begin Patch|End Patch|Add File: a|Update File: b|Delete File: c|Move to: d|End of File)|@@ ?x?|[ +-]?[a-z]{0,3}|\t|\r|<<EOF|EOF|\n){0,24}") {
        if let Err(err) = parse(&text) {
            proptest::prop_assert!(err.line >= 1 && err.line <= text.split('\n').count());
        }
    }
}
