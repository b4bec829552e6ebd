//! Secret values are redacted from everything bounded: text, structured value, raw bytes, and
//! what is saved as a managed output.

use std::io::Read;

use serde_json::json;
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_tool_core::ToolOutput;

use crate::common::*;

const SECRET: &str = "ghp_0123456789abcdefSECRET";

fn redacting(dir: &std::path::Path) -> OutputStore {
    let config =
        StoreConfig::in_data_dir(dir).with_redactions([SECRET.to_owned(), "short".to_owned()]);
    OutputStore::new(config)
}

fn saved(store: &OutputStore, output: &tackle_output_store::OutputRef) -> String {
    let mut text = String::new();
    store
        .open(output)
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    text
}

#[test]
fn small_results_are_redacted_in_text_and_structured_value() {
    let dir = tempfile::tempdir().unwrap();
    let store = redacting(dir.path());
    let output = ToolOutput::new(
        json!({"token": SECRET, SECRET: [format!("x{SECRET}y")]}),
        vec![text(format!("a {SECRET} b short"))],
    );
    let bounded = store.bound("ses", "call", output).unwrap();
    assert_eq!(model_text(&bounded.output), "a [REDACTED] b short");
    assert_eq!(
        bounded.output.structured,
        json!({"token": "[REDACTED]", "[REDACTED]": ["x[REDACTED]y"]})
    );
    let raw = store
        .bound_bytes("ses", "call", format!("error: {SECRET}").into_bytes())
        .unwrap();
    assert_eq!(raw.text, "error: [REDACTED]");
}

#[test]
fn a_spilled_result_holds_no_secret_in_its_preview_or_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = redacting(dir.path());
    // Occurrences at the start, across 64 KiB boundaries, at the preview's cut and at the end.
    let mut body = format!("{SECRET}\n");
    while body.len() < 300_000 {
        let line = format!("{:0>1$}\n", "", 60);
        body.push_str(&line);
        if body.len() % 65_536 < 64 {
            body.truncate(body.len() - 10);
            body.push_str(SECRET);
        }
    }
    body.push_str(SECRET);
    let occurrences = body.matches(SECRET).count();
    assert!(occurrences >= 5, "{occurrences}");
    let bounded = store.bound("ses", "call", text_output(body)).unwrap();
    assert!(bounded.truncated);
    let preview = model_text(&bounded.output);
    assert!(!preview.contains(SECRET) && preview.contains("[REDACTED]"));
    let file = saved(&store, &bounded.references[0]);
    assert!(!file.contains(SECRET));
    assert_eq!(file.matches("[REDACTED]").count(), occurrences);
}

#[test]
fn without_secrets_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let store = OutputStore::new(StoreConfig::in_data_dir(dir.path()).with_redactions(Vec::new()));
    let bounded = store
        .bound("ses", "call", text_output(format!("{SECRET} [REDACTED]")))
        .unwrap();
    assert_eq!(model_text(&bounded.output), format!("{SECRET} [REDACTED]"));
}
