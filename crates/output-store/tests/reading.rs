//! Reading managed outputs back: pages with stable line numbers, capped spills, raw bytes.

use std::io::Read;

use tackle_output_store::{OutputStore, StoreConfig};

use crate::common::*;

#[test]
fn the_marker_names_lines_that_read_page_serves() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let body: String = (1..=10_000).map(|i| format!("row {i}\n")).collect();
    let bounded = store.bound("ses", "call", text_output(body)).unwrap();
    let preview = model_text(&bounded.output);
    assert!(preview.contains("(lines 800-8800)"), "{}", &preview[..200]);
    let page = store
        .read_page(&bounded.references[0], 800, page_limits(&store, 3))
        .unwrap();
    assert_eq!(page.lines, ["row 800", "row 801", "row 802"]);
    assert_eq!((page.total_lines, page.next), (10_000, Some(803)));
    // The page size is bounded so the read tool's frame fits the same limits.
    let page = store
        .read_page(&bounded.references[0], 1, page_limits(&store, usize::MAX))
        .unwrap();
    assert_eq!(page.lines.len(), 2000 - 8);
}

#[test]
fn a_spill_over_the_cap_keeps_both_ends_and_says_what_was_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let store = OutputStore::new({
        let mut value = StoreConfig::in_data_dir(dir.path());
        value.spill_cap = 64 * 1024;
        value
    });
    let body: String = (1..=100_000).map(|i| format!("entry {i}\n")).collect();
    let bounded = store
        .bound("ses", "call", text_output(body.clone()))
        .unwrap();
    let reference = &bounded.references[0];
    let file = store
        .config()
        .directory
        .join(format!("tool_{}", reference.id()));
    assert!(std::fs::metadata(file).unwrap().len() <= 64 * 1024);

    let first = store
        .read_page(reference, 1, page_limits(&store, 2))
        .unwrap();
    assert_eq!(
        (first.lines[0].as_str(), first.total_lines),
        ("entry 1", 100_000)
    );
    let last = store
        .read_page(reference, 100_000, page_limits(&store, 10))
        .unwrap();
    assert_eq!(last.lines, ["entry 100000"]);
    let middle = store
        .read_page(reference, 50_000, page_limits(&store, 10))
        .unwrap();
    let dropped = middle.dropped.unwrap();
    assert!(middle.lines.is_empty());
    assert!(dropped.first_line < 50_000 && 50_000 < dropped.last_line);
    let resumed = store
        .read_page(reference, middle.next.unwrap(), page_limits(&store, 1))
        .unwrap();
    assert_eq!(resumed.lines, [format!("entry {}", dropped.last_line + 1)]);

    let mut stored = String::new();
    let mut managed = store.open(reference).unwrap();
    managed.read_to_string(&mut stored).unwrap();
    let gap = managed.dropped().unwrap();
    let (at, len) = (gap.at as usize, gap.bytes as usize);
    assert_eq!(stored.len() as u64, managed.stored_bytes());
    assert_eq!(format!("{}{}", &stored[..at], &stored[at..]), stored);
    assert_eq!(&stored[..at], &body[..at]);
    assert_eq!(&stored[at..], &body[at + len..]);
    managed.rewind().unwrap();
    let mut again = String::new();
    managed.read_to_string(&mut again).unwrap();
    assert_eq!(again, stored);
}

#[test]
fn one_minified_line_is_never_an_empty_preview() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let line = format!("<html>{}</html>", "<div class=\"a\"></div>".repeat(250_000));
    let bounded = store
        .bound("ses", "call", text_output(line.clone()))
        .unwrap();
    let preview = model_text(&bounded.output);
    assert!(preview.len() > 50_000, "{}", preview.len());
    assert!(preview.starts_with("<html><div"));
    assert!(preview.contains("</div></html>\n[... output truncated: omitted 0 of 1 lines and "));
    // Read back, the line continues from page to page until every byte was shown.
    let (mut column, mut shown) = (1, String::new());
    loop {
        let page = store
            .read_page_at(&bounded.references[0], 1, column, page_limits(&store, 10))
            .unwrap();
        assert_eq!((page.lines.len(), page.clamped_lines), (1, 1));
        shown.push_str(&page.lines[0]);
        match (page.next, page.next_column) {
            (Some(1), Some(next)) => column = next,
            (None, None) => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(shown, line);
}

#[test]
fn without_a_paging_tool_the_marker_names_only_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let store = OutputStore::new(StoreConfig::in_data_dir(dir.path()));
    let bounded = store
        .bound("s", "c", text_output("z\n".repeat(3000)))
        .unwrap();
    let text = bounded.output.content[0].as_text().unwrap().to_owned();
    let reference = bounded.references[0].to_string();
    assert!(
        text.contains(&format!("Full output: {reference}. ...]")),
        "{text}"
    );
    assert!(!text.contains("tool accepts"), "{text}");
}

#[test]
fn the_spill_decision_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let small = text_output("a\n".repeat(10));
    assert!(!store.needs_spill(&small).unwrap());
    let bounded = store.bound("s", "c", small.clone()).unwrap();
    assert_eq!(bounded.output, small);
    assert!(bounded.references.is_empty() && !bounded.truncated);
    assert!(store.needs_spill(&text_output("a\n".repeat(3000))).unwrap());
    // Nothing was written for either decision.
    assert!(!dir.path().join("tool-output").exists());
}

#[test]
fn another_sessions_reference_reads_as_missing() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let bounded = store
        .bound("ses_a", "call", text_output("a\n".repeat(3000)))
        .unwrap();
    let reference = &bounded.references[0];
    reference.check_session("ses_a").unwrap();
    let foreign = reference.check_session("ses_b").unwrap_err().to_string();
    // Once removed, the owner gets the very same error: the text tells nothing apart.
    store.remove_session("ses_a").unwrap();
    let missing = store
        .read_page(reference, 1, page_limits(&store, 1))
        .unwrap_err()
        .to_string();
    assert_eq!(foreign, missing);
    assert_eq!(
        reference.check_session("ses_b").unwrap_err().to_string(),
        missing
    );
    insta::assert_snapshot!(
        foreign.replace(reference.id(), "<id>"),
        @"managed output tool-output://<id> does not exist (it may have expired or been removed)"
    );
}
