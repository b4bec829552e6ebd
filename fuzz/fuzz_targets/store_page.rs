//! The output store's preview (`bound_bytes`) and pager (`read_page_at`), with fuzzed limits.
//!
//! Input: `=== store <max_lines> <max_bytes> <spill_cap> <page_lines> <page_bytes>
//! <line_overhead>` (all optional), then `=== text` with the output's bytes (or the whole
//! input as the output).
//!
//! Properties:
//! - the bounded text has at most `max_lines` lines and `max_bytes` bytes, marker included;
//!   text within the limits comes back unchanged, with no reference;
//! - a saved output holds the exact bytes (a capped one: an exact head and tail whose sizes add
//!   up with the recorded gap);
//! - paging from line 1 by `next` and `next_column` ends; each page has at most `page_lines`
//!   lines; a page of more than one line fits `page_bytes` with `line_overhead` per line; each
//!   page moves forward; for an uncapped, valid UTF-8 output, the pieces of every line, joined,
//!   are exactly that line at its own number.
#![no_main]

use std::io::Read;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tackle_fuzz::harness::scratch_dir;
use tackle_fuzz::sections;
use tackle_output_store::{MIN_BYTES, MIN_SPILL_CAP, OutputStore, PageLimits, StoreConfig};

fn data_dir() -> &'static std::path::Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| scratch_dir("tackle-fuzz-store-"))
}

fuzz_target!(|data: &[u8]| {
    let Some(sections) = sections::split(data) else {
        return;
    };
    let text = sections::get(&sections, "text").map_or(data, |s| s.body);
    let store = sections::get(&sections, "store");
    let number = |i, default| store.map_or(default, |s| s.number(i, default)) as usize;
    let mut config = StoreConfig::in_data_dir(data_dir());
    config.max_lines = number(0, 20) % 200 + 1;
    config.max_bytes = number(1, 512) % 8192 + MIN_BYTES;
    config.spill_cap = (number(2, 1 << 20) as u64 % (1 << 16)).max(MIN_SPILL_CAP);
    let limits = PageLimits::new(
        number(3, 50) % 300,
        number(4, 4096) % 20_000,
        number(5, 12) % 64,
    );
    let store = OutputStore::new(config.clone());

    let bounded = store
        .bound_bytes("fuzz", "call", text.to_vec())
        .expect("bounding never fails on a writable directory");
    let shown = &bounded.text;
    assert!(
        shown.len() <= config.max_bytes,
        "preview of {} bytes over max_bytes {}",
        shown.len(),
        config.max_bytes
    );
    assert!(
        line_count(shown.as_bytes()) <= config.max_lines,
        "preview of {} lines over max_lines {}",
        line_count(shown.as_bytes()),
        config.max_lines
    );
    let Some(reference) = bounded.reference else {
        assert!(!bounded.truncated);
        assert_eq!(shown.as_bytes(), text, "text within the limits changed");
        return;
    };

    // The saved bytes.
    let mut managed = store.open(&reference).expect("a saved output opens");
    let mut stored = Vec::new();
    managed
        .read_to_end(&mut stored)
        .expect("a saved output reads");
    let capped = managed.dropped();
    match capped {
        None => assert_eq!(stored, text, "the saved output differs from the output"),
        Some(gap) => {
            let at = gap.at as usize;
            assert_eq!(stored.len() as u64 + gap.bytes, text.len() as u64);
            assert_eq!(&stored[..at], &text[..at], "the capped head differs");
            assert_eq!(
                &stored[at..],
                &text[at + gap.bytes as usize..],
                "the capped tail differs"
            );
        }
    }

    // Paging.
    let expected: Option<Vec<&str>> = std::str::from_utf8(text)
        .ok()
        .filter(|_| capped.is_none())
        .map(|t| t.strip_suffix('\n').unwrap_or(t).split('\n').collect());
    let (mut offset, mut column) = (1, 1);
    let mut pages = 0;
    // What paging showed of each line, pieces of a line cut across pages joined.
    let mut shown: Vec<String> = Vec::new();
    loop {
        pages += 1;
        assert!(pages <= text.len() + 2, "paging does not end");
        let page = match store.read_page_at(&reference, offset, column, limits) {
            Ok(page) => page,
            Err(err) => {
                assert!(limits.lines == 0, "page at {offset}:{column}: {err}");
                break;
            }
        };
        assert!(
            page.lines.len() <= limits.lines,
            "more lines than the page limit"
        );
        if page.lines.len() > 1 {
            let used: usize = page
                .lines
                .iter()
                .map(|l| l.len() + limits.line_overhead)
                .sum();
            assert!(
                used <= limits.bytes,
                "a page of several lines over its byte limit"
            );
        }
        for (i, line) in page.lines.iter().enumerate() {
            let number = offset + i;
            if shown.len() < number {
                shown.resize(number, String::new());
            }
            shown[number - 1].push_str(line);
        }
        match page.next {
            Some(next) => {
                let next_column = page.next_column.unwrap_or(1);
                assert!(
                    (next, next_column) > (offset, column),
                    "next {next}:{next_column} does not move past {offset}:{column}"
                );
                (offset, column) = (next, next_column);
            }
            None => break,
        }
    }
    if let Some(expected) = &expected {
        if limits.lines > 0 && !text.is_empty() {
            assert_eq!(shown.len(), expected.len(), "paging skipped lines");
            for (i, (got, want)) in shown.iter().zip(expected).enumerate() {
                assert_eq!(got, want, "line {} changed", i + 1);
            }
        }
    }
    store
        .remove_session("fuzz")
        .expect("the session's outputs are removed");
});

fn line_count(text: &[u8]) -> usize {
    let newlines = text.iter().filter(|&&b| b == b'\n').count();
    newlines + usize::from(!text.is_empty() && !text.ends_with(b"\n"))
}
