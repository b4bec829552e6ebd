//! Paging by line: offsets, budgets, totals, clamping.

use std::io::BufReader;

use super::*;

fn budget(offset: u64, max_lines: usize) -> PageBudget {
    PageBudget {
        offset,
        max_lines,
        max_bytes: 1 << 20,
    }
}

fn run(text: &[u8], budget: PageBudget) -> Result<TextPage, PageError> {
    // A tiny buffer makes every chunk boundary case happen.
    let mut reader = BufReader::with_capacity(3, text);
    page(&mut reader, budget)
}

#[test]
fn whole_file() {
    let page = run(b"a\r\nb\nc", budget(1, 10)).unwrap();
    assert_eq!(page.lines, vec!["a", "b", "c"]);
    assert_eq!((page.offset, page.total_lines, page.next), (1, 3, None));
}

#[test]
fn final_newline_is_not_a_line() {
    assert_eq!(run(b"a\nb\n", budget(1, 10)).unwrap().total_lines, 2);
    assert_eq!(run(b"", budget(1, 10)).unwrap().total_lines, 0);
    assert_eq!(run(b"\n", budget(1, 10)).unwrap().lines, vec![""]);
}

#[test]
fn offset_and_limit() {
    let text: String = (1..=10).map(|n| format!("line {n}\n")).collect();
    let page = run(text.as_bytes(), budget(4, 3)).unwrap();
    assert_eq!(page.lines, vec!["line 4", "line 5", "line 6"]);
    assert_eq!((page.offset, page.total_lines, page.next), (4, 10, Some(7)));
    let page = run(text.as_bytes(), budget(9, 3)).unwrap();
    assert_eq!(page.lines, vec!["line 9", "line 10"]);
    assert_eq!(page.next, None);
}

#[test]
fn offset_out_of_range() {
    assert!(matches!(
        run(b"a\nb\n", budget(3, 10)),
        Err(PageError::OffsetOutOfRange {
            offset: 3,
            total: 2
        })
    ));
    assert!(matches!(
        run(b"a\nb", budget(5, 10)),
        Err(PageError::OffsetOutOfRange {
            offset: 5,
            total: 2
        })
    ));
    assert!(matches!(
        run(b"", budget(2, 10)),
        Err(PageError::OffsetOutOfRange {
            offset: 2,
            total: 0
        })
    ));
    assert_eq!(run(b"a\nb", budget(2, 10)).unwrap().lines, vec!["b"]);
}

#[test]
fn byte_budget_caps_the_page() {
    let text: String = (1..=100).map(|n| format!("{n:0>9}\n")).collect();
    // Each line counts as shown: `N: `, 9 bytes and its newline (13 bytes up to line 9, 14
    // from line 10); 11 lines take 145 bytes, and the 12th does not fit in 13 more.
    let page = run(
        text.as_bytes(),
        PageBudget {
            offset: 1,
            max_lines: 1000,
            max_bytes: 9 * 13 + 2 * 14 + 13,
        },
    )
    .unwrap();
    assert_eq!(page.lines.len(), 11);
    assert!(page.capped);
    assert_eq!((page.next, page.total_lines), (Some(12), 100));
}

#[test]
fn long_lines_are_clamped_without_being_kept() {
    let long = "x".repeat(10_000);
    let text = format!("{long}\nshort\n");
    let page = run(text.as_bytes(), budget(1, 10)).unwrap();
    assert_eq!(
        page.lines.iter().next().unwrap(),
        format!("{}{LINE_TRUNCATED}", "x".repeat(2000))
    );
    assert_eq!(page.lines.iter().nth(1).unwrap(), "short");
    assert_eq!(page.clamped, 1);
    let wide = "😀".repeat(2500);
    let page = run(wide.as_bytes(), budget(1, 10)).unwrap();
    assert_eq!(
        page.lines.iter().next().unwrap(),
        format!("{}{LINE_TRUNCATED}", "😀".repeat(2000))
    );
}

#[test]
fn invalid_utf8_names_its_offset() {
    match run(b"ok\nab\xFFc\n", budget(1, 10)) {
        Err(PageError::NotUtf8 { offset, line }) => assert_eq!((offset, line), (5, 2)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn lines_count_with_their_numbers() {
    assert_eq!(numbered_len(7, "ab"), "7: ab\n".len());
    assert_eq!(numbered_len(1000, ""), "1000: \n".len());
}

#[test]
fn the_truncation_note_names_the_line_limit() {
    assert!(LINE_TRUNCATED.contains(&format!(" {MAX_LINE_CHARS} chars")));
}

#[test]
fn a_line_is_clamped_by_characters_not_bytes() {
    let at_limit = "é".repeat(MAX_LINE_CHARS);
    assert_eq!(
        decode_line(at_limit.as_bytes(), false),
        Ok((at_limit.as_str().into(), false))
    );
    let ascii = "a".repeat(MAX_LINE_CHARS);
    assert_eq!(
        decode_line(ascii.as_bytes(), false),
        Ok((ascii.as_str().into(), false))
    );
    let over = "é".repeat(MAX_LINE_CHARS + 1);
    let (shown, clamped) = decode_line(over.as_bytes(), false).unwrap();
    assert!(clamped);
    assert_eq!(
        shown,
        format!("{}{LINE_TRUNCATED}", "é".repeat(MAX_LINE_CHARS))
    );
    let longer = format!("{ascii}b");
    let (shown, clamped) = decode_line(longer.as_bytes(), false).unwrap();
    assert!(clamped);
    assert_eq!(shown, format!("{ascii}{LINE_TRUNCATED}"));
}
