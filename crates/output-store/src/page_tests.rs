//! Tests of paged reading, including every layout of a capped file (property-tested).

use super::*;
use crate::spill;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// The per-line overhead these tests page with.
const OVERHEAD: usize = 12;

fn save(dir: &Path, body: &[u8], cap: u64) -> OutputRef {
    let directory = spill::open_dir(dir).unwrap();
    spill::write(&directory, dir, "s", "c", body, cap)
        .unwrap()
        .reference
}

fn page(dir: &Path, reference: &OutputRef, offset: usize, lines: usize, bytes: usize) -> Page {
    try_page(dir, reference, offset, lines, bytes).unwrap()
}

fn try_page(
    dir: &Path,
    reference: &OutputRef,
    offset: usize,
    lines: usize,
    bytes: usize,
) -> Result<Page, StoreError> {
    try_page_at(dir, reference, (offset, 1), lines, bytes)
}

fn try_page_at(
    dir: &Path,
    reference: &OutputRef,
    (offset, column): (usize, usize),
    lines: usize,
    bytes: usize,
) -> Result<Page, StoreError> {
    let file = spill::open(dir, reference)?;
    read(
        file,
        reference,
        offset,
        column,
        PageLimits::new(lines, bytes, OVERHEAD),
    )
}

/// The lines of `body` (as the store counts them) and their byte ranges, newline excluded.
fn original_lines(body: &str) -> Vec<(usize, &str)> {
    let mut lines = Vec::new();
    let mut start = 0;
    while start < body.len() {
        let end = body[start..].find('\n').map_or(body.len(), |i| start + i);
        lines.push((start, &body[start..end]));
        start = end + 1;
    }
    lines
}

/// Reads every page from line 1, joins the parts of lines cut between pages, and checks each
/// line against the original; returns the shown text per line number.
fn read_all(
    dir: &Path,
    reference: &OutputRef,
    body: &str,
    lines: usize,
    bytes: usize,
) -> BTreeMap<usize, String> {
    let original = original_lines(body);
    let (head_end, tail_start) = match reference.layout() {
        Layout::Full => (usize::MAX, usize::MAX),
        Layout::Capped => {
            let mut file = spill::open(dir, reference).unwrap();
            let cap = CapHeader::read(&mut file, reference).unwrap();
            (cap.head_end as usize, cap.tail_start as usize)
        }
    };
    let mut shown: BTreeMap<usize, String> = BTreeMap::new();
    let mut covered = 0;
    let (mut offset, mut column) = (1, 1);
    let mut pages = 0;
    loop {
        pages += 1;
        assert!(pages <= body.len() + 2, "paging does not end");
        let page = try_page_at(dir, reference, (offset, column), lines, bytes).unwrap();
        assert_eq!((page.offset, page.column), (offset, column));
        assert_eq!(page.total_lines, original.len());
        assert!(page.lines.len() <= lines);
        let used: usize = page.lines.iter().map(|l| l.len() + OVERHEAD).sum();
        assert!(used <= bytes || page.lines.len() == 1, "{used} > {bytes}");
        for (i, text) in page.lines.iter().enumerate() {
            let number = offset + i;
            let part = shown.entry(number).or_default();
            if i == 0 && column > 1 {
                assert!(!part.is_empty(), "line {number} continues a part");
            } else {
                assert!(part.is_empty(), "line {number} shown twice");
                covered += 1;
            }
            part.push_str(text);
        }
        if let Some(dropped) = page.dropped {
            assert_eq!(dropped.first_line, offset + page.lines.len());
            for number in dropped.first_line..=dropped.last_line {
                let (start, content) = original[number - 1];
                assert!(start >= head_end && start + content.len() < tail_start);
            }
            let bytes: usize = (dropped.first_line..=dropped.last_line)
                .map(|n| original[n - 1].1.len() + 1)
                .sum();
            assert_eq!(dropped.bytes, bytes as u64);
            covered += dropped.last_line - dropped.first_line + 1;
        }
        assert_eq!(page.truncated, page.next.is_some());
        match (page.next, page.next_column) {
            (Some(next), Some(next_column)) => {
                assert_eq!(
                    next,
                    offset + page.lines.len() - 1,
                    "a cut line is the last"
                );
                assert!(next > offset || next_column > column, "no progress");
                (offset, column) = (next, next_column);
            }
            (Some(next), None) => {
                assert!(next > offset);
                (offset, column) = (next, 1);
            }
            (None, column) => {
                assert_eq!(column, None);
                break;
            }
        }
    }
    assert_eq!(
        covered,
        original.len(),
        "every line is shown or reported dropped"
    );
    for (&number, text) in &shown {
        let (start, content) = original[number - 1];
        let whole_in_file = start + content.len() < head_end || start >= tail_start;
        if let Some((prefix, rest)) = text.split_once(" [... ") {
            let suffix = rest.rsplit_once(" ...] ").map_or("", |(_, s)| s);
            assert!(
                !whole_in_file,
                "line {number} was cut though it is whole: {text:?}"
            );
            assert!(content.starts_with(prefix), "line {number}: {text:?}");
            assert!(content.ends_with(suffix), "line {number}: {text:?}");
        } else {
            assert!(whole_in_file, "line {number} is not in the file: {text:?}");
            assert_eq!(text, content, "line {number}");
        }
    }
    shown
}

#[test]
fn pages_of_a_full_file() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    let reference = save(dir.path(), body.as_bytes(), 1 << 20);
    let first = page(dir.path(), &reference, 1, 4, 10_000);
    assert_eq!(first.lines, ["line 1", "line 2", "line 3", "line 4"]);
    assert_eq!(
        (first.total_lines, first.next, first.truncated),
        (10, Some(5), true)
    );
    let last = page(dir.path(), &reference, 9, 4, 10_000);
    assert_eq!(last.lines, ["line 9", "line 10"]);
    assert_eq!((last.next, last.truncated), (None, false));
    let exact = page(dir.path(), &reference, 7, 4, 10_000);
    assert_eq!(exact.next, None);
    let err = try_page(dir.path(), &reference, 11, 4, 10_000).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("offset 11 is out of range: {reference} has 10 lines")
    );
    assert_eq!(read_all(dir.path(), &reference, &body, 3, 10_000).len(), 10);
}

#[test]
fn empty_and_unterminated_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let empty = save(dir.path(), b"", 4096);
    let page_one = page(dir.path(), &empty, 1, 10, 1000);
    assert_eq!(
        (page_one.lines.len(), page_one.total_lines, page_one.next),
        (0, 0, None)
    );
    assert!(try_page(dir.path(), &empty, 2, 10, 1000).is_err());
    let open = save(dir.path(), b"a\n\nb", 4096);
    assert_eq!(page(dir.path(), &open, 1, 10, 1000).lines, ["a", "", "b"]);
}

#[test]
fn the_byte_budget_ends_a_page_and_a_long_line_continues_on_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let body = format!("short\n{}\nafter\n", "w".repeat(5000));
    let reference = save(dir.path(), body.as_bytes(), 1 << 20);
    let first = page(dir.path(), &reference, 1, 10, 1000);
    assert_eq!(first.lines, ["short"]);
    assert_eq!((first.next, first.next_column), (Some(2), None));
    let second = page(dir.path(), &reference, 2, 10, 1000);
    assert_eq!(second.lines, ["w".repeat(1000 - OVERHEAD)]);
    assert_eq!(second.clamped_lines, 1);
    assert_eq!((second.next, second.next_column), (Some(2), Some(989)));
    let third = try_page_at(dir.path(), &reference, (2, 989), 10, 1000).unwrap();
    assert_eq!(third.lines, ["w".repeat(1000 - OVERHEAD)]);
    assert_eq!((third.next, third.next_column), (Some(2), Some(1977)));
    let last = try_page_at(dir.path(), &reference, (2, 4941), 10, 1000).unwrap();
    assert_eq!(last.lines, ["w".repeat(60), "after".to_owned()]);
    assert_eq!((last.next, last.next_column), (None, None));
    read_all(dir.path(), &reference, &body, 10, 1000);
}

/// Found by the `store_page` fuzz target: a long first line over a 10-byte budget, then empty
/// lines that cost no bytes of content. The cut line is alone on its page, and paging with
/// that budget still reaches every byte.
#[test]
fn a_cut_first_line_is_alone_on_its_page() {
    let dir = tempfile::tempdir().unwrap();
    let body = format!("{}\n\n\nlast\n", "a".repeat(300));
    let reference = save(dir.path(), body.as_bytes(), 1 << 20);
    let first = try_page_at(dir.path(), &reference, (1, 1), 50, 10).unwrap();
    assert_eq!(first.lines.len(), 1, "{:?}", first.lines);
    assert_eq!(first.next, Some(1));
    assert!(first.next_column.is_some());
    read_all(dir.path(), &reference, &body, 50, 10);
}

#[test]
fn a_cut_never_splits_a_character_and_columns_count_characters() {
    let dir = tempfile::tempdir().unwrap();
    let body = "日".repeat(1000);
    let reference = save(dir.path(), body.as_bytes(), 1 << 20);
    // 100 bytes of room: 33 characters of 3 bytes.
    let first = page(dir.path(), &reference, 1, 10, 100 + OVERHEAD);
    assert_eq!(first.lines, ["日".repeat(33)]);
    assert_eq!(first.next_column, Some(34));
    // Less room than one character: one is shown anyway.
    let tiny = try_page_at(dir.path(), &reference, (1, 999), 10, 1).unwrap();
    assert_eq!(
        (tiny.lines[0].as_str(), tiny.next_column),
        ("日", Some(1000))
    );
    let end = try_page_at(dir.path(), &reference, (1, 1000), 10, 1).unwrap();
    assert_eq!((end.lines[0].as_str(), end.next), ("日", None));
    let err = try_page_at(dir.path(), &reference, (1, 1001), 10, 100).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("column 1001 is out of range: line 1 of {reference} has 1000 characters")
    );
    let shown = read_all(dir.path(), &reference, &body, 10, 100 + OVERHEAD);
    assert_eq!(shown[&1], body);
    // Room for 25 four-byte characters and three bytes of the next: the page ends before it.
    let wide = "😀".repeat(1000);
    let reference = save(dir.path(), wide.as_bytes(), 1 << 20);
    let first = page(dir.path(), &reference, 1, 10, 103 + OVERHEAD);
    assert_eq!(
        (first.lines[0].clone(), first.next_column),
        ("😀".repeat(25), Some(26))
    );
    assert!(!first.invalid_utf8);
    assert_eq!(
        read_all(dir.path(), &reference, &wide, 10, 103 + OVERHEAD)[&1],
        wide
    );
}

#[test]
fn capped_files_keep_original_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (1..=20_000).map(|i| format!("line {i}\n")).collect();
    let reference = save(dir.path(), body.as_bytes(), 16 * 1024);
    assert_eq!(reference.layout(), Layout::Capped);
    let shown = read_all(dir.path(), &reference, &body, 500, 100_000);
    assert_eq!(shown[&1], "line 1");
    assert_eq!(shown[&20_000], "line 20000");
    // Jumping straight into the tail gives the same line as reading through.
    let tail = page(dir.path(), &reference, 19_990, 1, 1000);
    assert_eq!(tail.lines, ["line 19990"]);
    // An offset in the dropped middle reports the gap and where to continue.
    let gap = page(dir.path(), &reference, 10_000, 10, 1000);
    let dropped = gap.dropped.unwrap();
    assert!(gap.lines.is_empty() && dropped.first_line < 10_000 && dropped.last_line > 10_000);
    assert_eq!(gap.next, Some(dropped.last_line + 1));
}

#[test]
fn a_capped_single_line_shows_both_kept_ends() {
    let dir = tempfile::tempdir().unwrap();
    let body = format!("HEAD{}TAIL", "m".repeat(100_000));
    let reference = save(dir.path(), body.as_bytes(), 8192);
    let only = page(dir.path(), &reference, 1, 10, 100_000);
    assert_eq!((only.total_lines, only.next), (1, None));
    assert!(only.lines[0].starts_with("HEADmmm") && only.lines[0].ends_with("mmmTAIL"));
    read_all(dir.path(), &reference, &body, 10, 100_000);
}

#[test]
fn invalid_bytes_are_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let reference = save(dir.path(), b"ok\nbad \xff\n", 4096);
    let page = page(dir.path(), &reference, 1, 10, 1000);
    assert_eq!(page.lines, ["ok", "bad \u{fffd}"]);
    assert!(page.invalid_utf8);
}

#[test]
fn a_truncated_capped_file_is_reported_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let body = "x\n".repeat(10_000);
    let reference = save(dir.path(), body.as_bytes(), 4096);
    let path = dir.path().join(reference.file_name());
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(1000).unwrap();
    let err = try_page(dir.path(), &reference, 1, 10, 1000).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
}

fn body_strategy() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        4 => "[a-z0-9 ]{0,40}",
        1 => "[é日😀]{0,30}",
        1 => (1usize..3000, "[qé]").prop_map(|(n, c)| c.repeat(n)),
    ];
    (prop::collection::vec(line, 0..400), any::<bool>()).prop_map(|(lines, trailing)| {
        let mut text = lines.join("\n");
        if trailing && !text.is_empty() {
            text.push('\n');
        }
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_line_is_shown_or_reported_dropped(
        body in body_strategy(),
        cap in 4096u64..12_000,
        lines in 1usize..50,
        bytes in 200usize..3000,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let reference = save(dir.path(), body.as_bytes(), cap);
        let shown = read_all(dir.path(), &reference, &body, lines, bytes);
        // Any line can be reached directly with the same start.
        for (&number, text) in shown.iter().step_by(7) {
            let direct = page(dir.path(), &reference, number, 1, bytes);
            prop_assert!(text.starts_with(direct.lines[0].as_str()));
        }
    }
}
