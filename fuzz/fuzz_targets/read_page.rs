//! read's line pager, on a real file in a scratch Location, with a fuzzed budget.
//!
//! Input: `=== page <offset> <limit> <max_lines> <max_bytes>` (all optional), then
//! `=== file` with the file's bytes (or the whole input as the file).
//!
//! Properties:
//! - the requested page is consistent: numbered lines are consecutive from `offset`, as many
//!   as the structured output says, within `limit` and the budget's lines; a page of more than
//!   one line fits the budget's lines and bytes as a whole (tags, numbers and hint included);
//!   `next` is after the page;
//! - paging a UTF-8 file from line 1 by `next` ends, and returns every line of the file, in
//!   order and unchanged (lines split on `\n`, a `\r` before it dropped), except lines longer
//!   than 2000 characters, which are cut.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tackle_fuzz::harness::{self, Place, inside_only};
use tackle_fuzz::sections;
use tackle_permission::Reply;
use tackle_tool_core::Budget;

const MAX_LINE_CHARS: usize = 2000;

fn place() -> &'static Place {
    static PLACE: OnceLock<Place> = OnceLock::new();
    PLACE.get_or_init(|| Place::new("tackle-fuzz-read-", inside_only(&[]), Reply::Once))
}

fuzz_target!(|data: &[u8]| {
    let Some(sections) = sections::split(data) else {
        return;
    };
    let file = sections::get(&sections, "file").map_or(data, |s| s.body);
    let page = sections::get(&sections, "page");
    let number = |i, default| page.map_or(default, |p| p.number(i, default));
    let offset = number(0, 1) % 1000;
    let limit = number(1, 2000) % 3000;
    let budget = Budget::new(
        (number(2, 2000) % 2100).max(1) as usize,
        (number(3, 51_200) % 60_000).max(128) as usize,
    );
    let place = place();
    place.put("f.txt", file);

    let result = page_at(place, offset, Some(limit), budget);
    if let Ok((shown, out)) = &result {
        check_page(shown, out, offset.max(1), limit, budget);
    }
    if std::str::from_utf8(file).is_err() || file.starts_with(b"\xEF\xBB\xBF") {
        return;
    }
    // Page through the whole file.
    let expected = lines(std::str::from_utf8(file).unwrap_or_default());
    let mut got = Vec::new();
    let mut at = 1;
    for _ in 0..=expected.len() + 1 {
        let Ok((shown, out)) = page_at(place, at, None, budget) else {
            return; // binary or another encoding: read decides, not this target
        };
        if out["encoding"] != "UTF-8" {
            return;
        }
        check_page(&shown, &out, at, 2000, budget);
        got.extend(shown);
        match out["next"].as_u64() {
            Some(next) => at = next,
            None => break,
        }
    }
    assert_eq!(
        got.len(),
        expected.len(),
        "paging did not return every line"
    );
    for (number, (got, expected)) in got.iter().zip(&expected).enumerate() {
        if expected.chars().count() <= MAX_LINE_CHARS {
            assert_eq!(got, expected, "line {} changed", number + 1);
        } else {
            let kept: String = expected.chars().take(MAX_LINE_CHARS).collect();
            assert!(
                got.starts_with(&kept),
                "cut line {} lost its start",
                number + 1
            );
        }
    }
});

/// The shown lines (without their numbers) and the structured output of one page.
fn page_at(
    place: &Place,
    offset: u64,
    limit: Option<u64>,
    budget: Budget,
) -> Result<(Vec<String>, Value), ()> {
    let mut input = json!({"path": "f.txt", "offset": offset});
    if let Some(limit) = limit {
        input["limit"] = json!(limit);
    }
    let result = harness::call(&place.tool("read"), input, budget);
    harness::expect_failure_or_ok(&result, "read");
    let output = result.map_err(|_| ())?;
    let structured = output.structured.clone();
    if structured["type"] != "text-page" {
        return Err(());
    }
    let text = harness::text(&output);
    let count = structured["lines"].as_u64().expect("lines") as usize;
    if count > 1 {
        let lines = tackle_tool_core::count_lines(text.as_bytes()) as usize;
        assert!(lines <= budget.max_lines, "a page of {lines} lines in all");
        assert!(
            text.len() <= budget.max_bytes,
            "a page of {} bytes in all",
            text.len()
        );
    }
    let first = structured["offset"].as_u64().expect("offset");
    let body = text
        .split_once("<content>\n")
        .map(|(_, body)| body)
        .expect("a text page has a content tag");
    let mut shown = Vec::new();
    for (i, line) in body.split('\n').take(count).enumerate() {
        let prefix = format!("{}: ", first + i as u64);
        let rest = line
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("line {i} of the page is not numbered {prefix:?}: {line:?}"));
        shown.push(rest.to_owned());
    }
    assert_eq!(
        shown.len(),
        count,
        "fewer numbered lines than the page says"
    );
    Ok((shown, structured))
}

fn check_page(shown: &[String], out: &Value, offset: u64, limit: u64, budget: Budget) {
    assert_eq!(out["offset"].as_u64(), Some(offset));
    let limit = if limit == 0 { 2000 } else { limit.min(2000) } as usize;
    assert!(shown.len() <= limit.max(1), "more lines than the limit");
    // The frame (three tags, the blank line, the hint, one note) takes seven lines.
    assert!(
        shown.len() <= budget.max_lines.saturating_sub(7).max(1),
        "more lines than the budget"
    );
    if let Some(next) = out["next"].as_u64() {
        assert!(next > offset, "next ({next}) does not move past {offset}");
        assert_eq!(next, offset + shown.len() as u64, "next skips lines");
    }
}

/// The file's lines as read shows them.
fn lines(text: &str) -> Vec<String> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        return Vec::new();
    }
    let pieces: Vec<&str> = body.split('\n').collect();
    let last = pieces.len() - 1;
    // A `\r` ends a line only before a `\n`; at the very end (no newline) it is content.
    pieces
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let ended = i < last || text.ends_with('\n');
            match l.strip_suffix('\r') {
                Some(stripped) if ended => stripped.to_owned(),
                _ => (*l).to_owned(),
            }
        })
        .collect()
}
