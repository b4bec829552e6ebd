//! Tests of the preview selection, with property tests over arbitrary text and limits.

use super::*;
use crate::text::count_lines;
use proptest::prelude::*;

const REF: &str = "tool-output://fabcdefabcdefabcdefabcdefab";

static PAGING: std::sync::LazyLock<crate::PagingHint> =
    std::sync::LazyLock::new(|| crate::PagingHint::new("read", 1992));

fn info() -> MarkerInfo<'static> {
    MarkerInfo {
        reference: Ok(REF),
        paging: Some(&PAGING),
        note: None,
    }
}

fn run(text: Text<'_>, lines: usize, bytes: usize) -> (Preview, String) {
    let limits = Limits { lines, bytes };
    let preview = preview(text, count_lines(text.bytes), limits, &info());
    check(text, limits, &preview);
    let rendered = preview.render(text);
    (preview, rendered)
}

/// The invariants every preview keeps; panics with the offending detail.
fn check(text: Text<'_>, limits: Limits, preview: &Preview) {
    let rendered = preview.render(text);
    assert!(
        rendered.len() <= limits.bytes,
        "{} bytes > {}",
        rendered.len(),
        limits.bytes
    );
    let lines = count_lines(rendered.as_bytes());
    assert!(
        lines <= limits.lines as u64,
        "{lines} lines > {}",
        limits.lines
    );

    let len = text.bytes.len();
    let mut shown = 0;
    let mut last_end = 0;
    let mut markers = 0;
    for (i, piece) in preview.pieces.iter().enumerate() {
        match piece {
            Piece::Input(range) => {
                assert!(
                    range.start >= last_end && range.end <= len,
                    "{range:?} out of order"
                );
                if i == 0 {
                    assert_eq!(range.start, 0, "the preview starts with a prefix");
                }
                if i + 1 == preview.pieces.len() {
                    assert_eq!(range.end, len, "the preview ends with a suffix");
                }
                shown += range.len();
                last_end = range.end;
            }
            Piece::Owned(owned) if owned == "\n" => {}
            Piece::Owned(owned) if owned.starts_with(" [... ") => {
                // An inline marker sits between the two ends of one line and counts the middle.
                let (Some(Piece::Input(before)), Some(Piece::Input(after))) =
                    (preview.pieces.get(i - 1), preview.pieces.get(i + 1))
                else {
                    panic!("inline marker not between two input pieces");
                };
                let middle = after.start - before.end;
                assert_eq!(owned, &line_marker(middle as u64));
                assert!(!text.bytes[before.end..after.start].contains(&b'\n'));
            }
            Piece::Owned(owned) => {
                assert!(
                    owned.starts_with("[... ") && owned.ends_with(" ...]"),
                    "{owned}"
                );
                assert!(owned.contains(REF) || limits.bytes < 128, "{owned}");
                assert!(!owned.contains('\n'));
                markers += 1;
            }
        }
    }
    assert_eq!(markers, 1, "exactly one marker line");
    assert_eq!(
        preview.omitted_bytes,
        (len - shown) as u64,
        "omitted bytes are exact"
    );
}

fn numbered(lines: usize) -> String {
    (1..=lines).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn many_short_lines_keep_head_and_tail() {
    let text = numbered(100_000);
    let (preview, rendered) = run(Text::str(&text), 2000, 51_200);
    assert!(rendered.starts_with("line 1\nline 2\n"));
    assert!(rendered.ends_with("line 99999\nline 100000\n"));
    assert_eq!(count_lines(rendered.as_bytes()), 2000);
    // 40% of the 1999 content lines are the head.
    assert!(rendered.contains(
        "line 799\n[... output truncated: omitted 98001 of 100000 lines (lines 800-98800)"
    ));
    assert!(rendered.contains("...]\nline 98801\n"));
    assert_eq!(preview.omitted_lines, 98_001);
}

#[test]
fn one_huge_line_gets_the_whole_budget() {
    let text = format!("HEAD-{}-TAIL", "x".repeat(5_000_000));
    let (preview, rendered) = run(Text::str(&text), 2000, 51_200);
    // The one line is shortened in the middle; the marker follows it.
    assert!(rendered.starts_with("HEAD-xxx"));
    assert!(rendered.contains("xxx-TAIL\n[... output truncated: "));
    assert!(rendered.len() > 50_000, "{}", rendered.len());
    assert_eq!(preview.omitted_lines, 0);
    assert!(rendered.contains("omitted 0 of 1 lines and"));
    assert!(rendered.contains("; long lines shortened: 1."));
}

#[test]
fn a_short_first_line_then_a_huge_one() {
    let text = format!("$ build\n{}\n", "z".repeat(200_000));
    let (_, rendered) = run(Text::str(&text), 2000, 51_200);
    assert!(rendered.starts_with("$ build\nzzz"));
    assert!(rendered.contains(" bytes of this line omitted ...] zzz"));
    assert!(rendered.len() > 40_000);
}

#[test]
fn three_wide_lines_show_both_ends() {
    let line = |c: char| format!("{c}-start {} {c}-end\n", c.to_string().repeat(40 * 1024));
    let text = format!("{}{}{}", line('A'), line('B'), line('C'));
    let (preview, rendered) = run(Text::str(&text), 2000, 51_200);
    assert!(rendered.starts_with("A-start AAA"));
    assert!(rendered.ends_with("CCC C-end\n"));
    assert!(!rendered.contains('B'), "the middle line is omitted");
    assert_eq!(preview.omitted_lines, 1);
    assert!(rendered.contains("omitted 1 of 3 lines (lines 2-2)"));
}

#[test]
fn cuts_never_split_a_code_point() {
    let text = "日本語😀é".repeat(10_000);
    let (_, rendered) = run(Text::str(&text), 2000, 51_200);
    // The rendering is a String; the check is that its ends are real prefixes and suffixes.
    let head = rendered.split(" [... ").next().unwrap();
    assert!(text.starts_with(head) && head.len() > 10_000);
    let tail = rendered.rsplit(" ...] ").next().unwrap();
    let tail = tail.split('\n').next().unwrap();
    assert!(text.ends_with(tail) && tail.len() > 10_000);
}

#[test]
fn tiny_limits_still_name_the_reference() {
    let text = numbered(10);
    let (_, rendered) = run(Text::str(&text), 1, 51_200);
    assert!(rendered.starts_with("[... output truncated: omitted 10 of 10 lines (lines 1-10)"));
    let (_, rendered) = run(Text::str(&text), 2, 51_200);
    assert!(rendered.starts_with("[... ") && rendered.ends_with("...]\nline 10\n"));
    let (_, rendered) = run(Text::str(&text), 50, 128);
    let minimal = format!("[... truncated; full output: {REF} ...]");
    assert!(rendered.starts_with("line 1\nline 2\n"), "{rendered}");
    assert!(rendered.contains(&format!("\n{minimal}\n")), "{rendered}");
    let (_, rendered) = run(Text::str(&text), 50, 300);
    assert!(rendered.contains("[... truncated: omitted "), "{rendered}");
}

#[test]
fn everything_fits_when_the_caller_saves_anyway() {
    let bytes = b"ok\n\xff\n";
    let limits = Limits {
        lines: 10,
        bytes: 1000,
    };
    let info = MarkerInfo {
        note: Some("NOTE."),
        ..info()
    };
    let text = Text::bytes(bytes);
    let preview = preview(text, 2, limits, &info);
    check(text, limits, &preview);
    let rendered = preview.render(text);
    assert!(
        rendered
            .starts_with("ok\n\u{fffd}\n[... nothing omitted (2 lines, 5 bytes). Full output: ")
    );
    assert!(rendered.ends_with("per page). NOTE. ...]"));
}

fn text_strategy() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        4 => "[a-z0-9 ]{0,30}",
        2 => "[é日本😀a]{0,20}",
        1 => (1usize..4000, "[xé😀]").prop_map(|(n, c)| c.repeat(n)),
    ];
    (prop::collection::vec(line, 0..150), any::<bool>()).prop_map(|(lines, trailing)| {
        let mut text = lines.join("\n");
        if trailing {
            text.push('\n');
        }
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn previews_keep_their_invariants(
        text in text_strategy(),
        lines in 1usize..60,
        bytes in 128usize..4000,
    ) {
        let text = Text::str(&text);
        let limits = Limits { lines, bytes };
        let preview = preview(text, count_lines(text.bytes), limits, &info());
        check(text, limits, &preview);
    }

    #[test]
    fn lossy_previews_keep_their_invariants(
        raw in prop::collection::vec(prop_oneof![Just(b'\n'), Just(0xff), Just(0xe6), any::<u8>()], 0..2000),
        lines in 1usize..40,
        bytes in 128usize..2000,
    ) {
        let text = Text::bytes(&raw);
        let limits = Limits { lines, bytes };
        let preview = preview(text, count_lines(text.bytes), limits, &info());
        check(text, limits, &preview);
    }
}
