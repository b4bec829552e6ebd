//! The ladder, rung by rung.

use super::*;

fn edit(text: &str, old: &str, new: &str, all: bool) -> Result<(Rung, String), Miss> {
    let plan = find(text, old, new, all)?;
    Ok((plan.rung, plan.apply(text)))
}

#[test]
fn exact_first() {
    assert_eq!(
        edit("before\nrest\n", "before", "after", false),
        Ok((Rung::Exact, "after\nrest\n".to_owned()))
    );
}

#[test]
fn exact_converts_line_endings_to_crlf() {
    assert_eq!(
        edit("before\r\nrest\r\n", "before\nrest", "after\nrest", false),
        Ok((Rung::Exact, "after\r\nrest\r\n".to_owned()))
    );
}

#[test]
fn exact_converts_crlf_needles_to_lf() {
    assert_eq!(
        edit("a\nb\nc\n", "a\r\nb", "x\r\ny", false),
        Ok((Rung::Exact, "x\ny\nc\n".to_owned()))
    );
}

#[test]
fn lines_added_by_an_exact_match_take_the_line_ending_of_its_region() {
    let cases = [
        // CRLF file: the new line is CRLF too (it was LF: `x\r\np\nq\r\nz\r\n`).
        ("x\r\ny\r\nz\r\n", "y", "p\nq", "x\r\np\r\nq\r\nz\r\n"),
        // LF file: CRLF in newString becomes LF.
        ("x\ny\nz\n", "y", "p\r\nq", "x\np\nq\nz\n"),
        // Mixed file: each region's own ending, the other lines as they are.
        ("a\r\nb\nc\r\n", "b", "b1\nb2", "a\r\nb1\nb2\nc\r\n"),
        ("a\r\nb\nc\r\n", "a", "a1\na2", "a1\r\na2\r\nb\nc\r\n"),
        // The last line has no ending: the file's (CRLF when it has any).
        ("x\r\ny", "y", "p\nq", "x\r\np\r\nq"),
        ("x\ny", "y", "p\r\nq", "x\np\nq"),
        // newString copying the endings of a mixed region is written as it is.
        ("a\r\nb\nc\r\n", "a\r\nb\n", "A\r\nB\n", "A\r\nB\nc\r\n"),
    ];
    for (text, old, new, want) in cases {
        assert_eq!(
            edit(text, old, new, false),
            Ok((Rung::Exact, want.to_owned())),
            "{text:?}: {old:?} -> {new:?}"
        );
    }
    assert_eq!(
        edit("y\r\ny\n", "y", "p\nq", true),
        Ok((Rung::Exact, "p\r\nq\r\np\nq\n".to_owned()))
    );
}

#[test]
fn multiple_exact_matches_stop_the_ladder() {
    assert_eq!(
        edit("same\nx\nsame\n", "same", "other", false),
        Err(Miss::Multiple {
            rung: Rung::Exact,
            lines: vec![1, 3]
        })
    );
    assert_eq!(
        edit("same same same", "same", "x", true),
        Ok((Rung::Exact, "x x x".to_owned()))
    );
}

#[test]
fn trailing_whitespace_and_mixed_endings() {
    // The file's line 2 has trailing spaces and CRLF, line 3 LF: each keeps its own ending.
    let text = "a\nfn x() {  \r\n    body\n}\n";
    let (rung, out) = edit(
        text,
        "fn x() {\n    body\n}",
        "fn y() {\n    body\n}",
        false,
    )
    .unwrap();
    assert_eq!(rung, Rung::Whitespace);
    assert_eq!(out, "a\nfn y() {\r\n    body\r\n}\n");
}

#[test]
fn trailing_whitespace_in_old_single_line() {
    let (rung, out) = edit(
        "let a = 1;\nlet b = 2;\n",
        "let a = 1;   ",
        "let a = 3;",
        false,
    )
    .unwrap();
    assert_eq!(rung, Rung::Whitespace);
    assert_eq!(out, "let a = 3;\nlet b = 2;\n");
}

#[test]
fn partial_first_and_last_lines() {
    let text = "x = call(a,   \n  b)\nend\n";
    let (rung, out) = edit(text, "call(a,\n  b)", "call(c)", false).unwrap();
    assert_eq!(rung, Rung::Whitespace);
    assert_eq!(out, "x = call(c)\nend\n");
}

#[test]
fn indentation_is_reapplied() {
    let text =
        "class A:\n    def f(self):\n        if x:\n            return 1\n        return 2\n";
    let old = "if x:\n    return 1\nreturn 2";
    let new = "if x:\n    return 10\nreturn 20";
    let (rung, out) = edit(text, old, new, false).unwrap();
    assert_eq!(rung, Rung::Indentation);
    assert_eq!(
        out,
        "class A:\n    def f(self):\n        if x:\n            return 10\n        return 20\n"
    );
}

#[test]
fn deeper_old_indentation_is_removed() {
    let text = "fn main() {\n  let a = 1;\n  let b = 2;\n}\n";
    let (rung, out) = edit(
        text,
        "        let a = 1;\n        let b = 2;",
        "        let a = 1;\n\n        let c = 3;",
        false,
    )
    .unwrap();
    assert_eq!(rung, Rung::Indentation);
    assert_eq!(out, "fn main() {\n  let a = 1;\n\n  let c = 3;\n}\n");
}

#[test]
fn inconsistent_indentation_is_not_a_match() {
    let text = "    a\n        b\n";
    assert_eq!(edit(text, "a\nb", "x\ny", false), Err(Miss::NotFound));
}

#[test]
fn typographic_punctuation_folds() {
    let text = "say(“hello” – it’s\u{a0}fine)\n";
    let (rung, out) = edit(text, "say(\"hello\" - it's fine)", "say(\"bye\")", false).unwrap();
    assert_eq!(rung, Rung::Unicode);
    assert_eq!(out, "say(\"bye\")\n");
    let (rung, out) = edit("a ‘b’ c\n", "'b'", "'d'", false).unwrap();
    assert_eq!(rung, Rung::Unicode);
    assert_eq!(out, "a 'd' c\n");
}

#[test]
fn nothing_scored_ever_matches() {
    assert_eq!(
        edit("alpha\nbeta\n", "alpah", "x", false),
        Err(Miss::NotFound)
    );
    assert_eq!(edit("a\n\n", "  \n", "x", false), Err(Miss::NotFound));
}

#[test]
fn multiple_loose_matches_are_reported_with_their_rung() {
    let text = "  x  \n  y\n  x\t\n";
    assert_eq!(
        edit(text, "x \n", "z\n", false),
        Err(Miss::Multiple {
            rung: Rung::Whitespace,
            lines: vec![1, 3]
        })
    );
}

#[test]
fn no_trailing_newline_is_kept() {
    let (_, out) = edit("a\r\nb", "a\nb", "c\nd", false).unwrap();
    assert_eq!(out, "c\r\nd");
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Whatever the text, an exact unique edit changes only its span, and the lines it
        /// adds end like the line it is in (the file's ending when that line has none).
        #[test]
        fn bytes_outside_the_span_are_kept(
            before in "[a-c \t\r\n😀é]{0,40}",
            needle in "[x-z]{1,6}",
            after in "[a-c \t\r\n😀é]{0,40}",
            replacement in "[a-z\n]{0,8}",
        ) {
            let text = format!("{before}{needle}{after}");
            prop_assume!(text.matches(needle.as_str()).count() == 1);
            let (rung, out) = edit(&text, &needle, &replacement, false).unwrap();
            prop_assert_eq!(rung, Rung::Exact);
            let ending = match after.find('\n') {
                Some(at) if after[..at].ends_with('\r') => "\r\n",
                Some(_) => "\n",
                None if text.contains("\r\n") => "\r\n",
                None => "\n",
            };
            let replacement = replacement.replace('\n', ending);
            prop_assert_eq!(out, format!("{before}{replacement}{after}"));
        }

        /// A loose rung never touches the lines around the region it matched.
        #[test]
        fn loose_matches_keep_the_other_lines(
            head in proptest::collection::vec("[a-d]{0,5}", 0..5),
            tail in proptest::collection::vec("[a-d]{0,5}", 0..5),
            indent in "[ \t]{0,4}",
            crlf in any::<bool>(),
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut lines: Vec<String> = head.clone();
            lines.push(format!("{indent}zz1  "));
            lines.push(format!("{indent}zz2"));
            lines.extend(tail.iter().cloned());
            let text = lines.join(eol) + eol;
            let (_, out) = edit(&text, "zz1\nzz2", "yy", false).unwrap();
            let mut expected: Vec<String> = head;
            expected.push(format!("{indent}yy"));
            expected.extend(tail);
            prop_assert_eq!(out, expected.join(eol) + eol);
        }
    }
}
