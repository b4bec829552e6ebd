//! Snapshots of what a model or a user reads: previews and error messages.
//!
//! Previews are shown exactly, except that long runs of one repeated unit are written as
//! `⟨unit×count⟩` so a 50 KiB preview stays reviewable; the reference's random id is redacted.

use serde_json::json;
use tackle_output_store::{Bounded, OutputStore, StoreConfig, StoreError};
use tackle_tool_core::OutputContent;

use crate::common::*;

/// Runs of at least four `unit`s become `⟨unit×count⟩`.
fn condense(text: &str, unit: &str) -> String {
    let mut out = String::with_capacity(text.len() / 4);
    let mut rest = text;
    while let Some(at) = rest.find(unit) {
        let mut count = 0;
        let mut end = at;
        while rest[end..].starts_with(unit) {
            count += 1;
            end += unit.len();
        }
        out.push_str(&rest[..at]);
        if count >= 4 {
            out.push_str(&format!("⟨{}×{count}⟩", unit.escape_debug()));
        } else {
            out.push_str(&rest[at..end]);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The facts and the (condensed) preview of a bounded output.
fn show(bounded: &Bounded, unit: &str) -> String {
    let preview = model_text(&bounded.output);
    format!(
        "truncated: {}\nomitted_lines: {}\nomitted_bytes: {}\nreferences: {}\npreview: {} lines, {} bytes\n---\n{}",
        bounded.truncated,
        bounded.omitted_lines,
        bounded.omitted_bytes,
        bounded.references.len(),
        lines(preview),
        preview.len(),
        condense(preview, unit),
    )
}

macro_rules! snapshot {
    ($name:expr, $value:expr) => {
        insta::with_settings!({filters => vec![
            (r"tool-output://[a-z2-7]{27}", "tool-output://[ref]"),
            (r"/[^ ]*/tool-output", "[dir]/tool-output"),
            (r"tool_[a-z2-7]{27}", "tool_[id]"),
        ]}, {
            insta::assert_snapshot!($name, $value);
        });
    };
}

fn bound(store: &OutputStore, body: String) -> Bounded {
    store.bound("ses", "call", text_output(body)).unwrap()
}

#[test]
fn preview_of_100k_short_lines() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (1..=100_000).map(|i| format!("line {i}\n")).collect();
    snapshot!(
        "100k_short_lines",
        show(&bound(&store(dir.path()), body), "\u{0}")
    );
}

#[test]
fn preview_of_three_40_kib_lines() {
    let dir = tempfile::tempdir().unwrap();
    let line = |n: u32| format!("line {n} begins {} line {n} ends\n", "=".repeat(40 * 1024));
    let body = format!("{}{}{}", line(1), line(2), line(3));
    snapshot!(
        "three_40_kib_lines",
        show(&bound(&store(dir.path()), body), "=")
    );
}

#[test]
fn preview_of_one_5_mb_line() {
    let dir = tempfile::tempdir().unwrap();
    let body = format!("START{}END", "0123456789".repeat(500_000));
    snapshot!(
        "one_5_mb_line",
        show(&bound(&store(dir.path()), body), "0123456789")
    );
}

#[test]
fn preview_of_cjk_and_emoji_cut_at_the_byte_limit() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    // One line: the cuts fall inside the repeated unit, on code-point boundaries.
    let body = format!("开始{}结束", "日本語😀é".repeat(6000));
    snapshot!("cjk_one_line", show(&bound(&store, body), "日本語😀é"));
    // Many lines: the byte limit is reached before the line limit; cuts are between lines.
    let body = "第一行：日本語のテキスト😀\n".repeat(1500);
    snapshot!(
        "cjk_lines",
        show(&bound(&store, body), "第一行：日本語のテキスト😀\n")
    );
}

/// 2000 lines of exactly 51 200 bytes (1200 lines of 26 bytes and 800 of 25), plus `extra`
/// bytes on the last line.
fn at_the_limits(extra: usize) -> String {
    (1..=2000)
        .map(|i| {
            let width = if i <= 1200 { 25 } else { 24 } + if i == 2000 { extra } else { 0 };
            format!("{i:04} {}\n", "x".repeat(width - 5))
        })
        .collect()
}

#[test]
fn preview_at_the_limits_and_one_byte_over() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let body = at_the_limits(0);
    assert_eq!((body.len(), lines(&body)), (51_200, 2000));
    let bounded = bound(&store, body.clone());
    assert_eq!(model_text(&bounded.output), body);
    snapshot!("exactly_at_the_limits", show(&bounded, "x"));
    let over = at_the_limits(1);
    assert_eq!((over.len(), lines(&over)), (51_201, 2000));
    snapshot!("one_byte_over", show(&bound(&store, over), "x"));
}

#[test]
fn structured_replacement() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let structured = json!({"rows": vec!["row"; 5000]});
    let bounded = store
        .bound("ses", "call", structured_only(structured))
        .unwrap();
    snapshot!(
        "structured_replacement",
        serde_json::to_string_pretty(&bounded.output.structured).unwrap()
    );
}

#[test]
fn invalid_utf8_preview() {
    let dir = tempfile::tempdir().unwrap();
    let mut raw = b"compiling \xff\xfe module\n".repeat(3000);
    raw.extend_from_slice(b"error: done \xc3(\n");
    let bounded = store(dir.path()).bound_bytes("ses", "call", raw).unwrap();
    let text = condense(&bounded.text, "compiling \u{fffd}\u{fffd} module\n");
    snapshot!(
        "invalid_utf8",
        format!("omitted_bytes: {}\n---\n{text}", bounded.omitted_bytes)
    );
}

#[test]
fn error_messages() {
    let dir = tempfile::tempdir().unwrap();
    let file_dir = dir.path().join("data");
    std::fs::create_dir(&file_dir).unwrap();
    std::fs::write(file_dir.join("tool-output"), "").unwrap();
    let store = OutputStore::new(StoreConfig::in_data_dir(&file_dir));
    let mut messages = Vec::new();
    let big = text_output("x\n".repeat(3000));
    // A spill there keeps its preview (see `faults`); cleanup reports the directory.
    messages.push(store.cleanup().unwrap_err());
    let image = OutputContent::File {
        uri: format!("data:image/png;base64,{}", "A".repeat(8 << 20)),
        mime: "image/png".into(),
        name: None,
    };
    messages.push(store.bound("s", "c", output(vec![image])).unwrap_err());
    messages.push(
        store_with(dir.path(), 0, 50)
            .bound("s", "c", big)
            .unwrap_err(),
    );
    let working = tackle_output_store::OutputStore::new(StoreConfig::in_data_dir(dir.path()));
    let reference = working
        .bound("s", "c", text_output("y\n".repeat(3000)))
        .unwrap()
        .references[0]
        .clone();
    messages.push(
        working
            .read_page(&reference, 3001, page_limits(&working, 10))
            .unwrap_err(),
    );
    messages.push(
        working
            .read_page(&reference, 0, page_limits(&working, 10))
            .unwrap_err(),
    );
    messages.push(
        "C:/x"
            .parse::<tackle_output_store::OutputRef>()
            .unwrap_err(),
    );
    let gone =
        tackle_output_store::OutputRef::parse("tool-output://faaaaaaaaaaaaaaaaaaaaaaaaaa").unwrap();
    messages.push(
        working
            .read_page(&gone, 1, page_limits(&working, 10))
            .unwrap_err(),
    );
    let rendered: Vec<String> = messages.iter().map(StoreError::to_string).collect();
    snapshot!("error_messages", rendered.join("\n"));
}
