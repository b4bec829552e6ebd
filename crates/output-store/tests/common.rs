//! Helpers shared by the integration tests.

use std::path::Path;

use serde_json::{Value, json};
use tackle_output_store::{OutputStore, PageLimits, PagingHint, StoreConfig};
use tackle_tool_core::{OutputContent, ToolOutput};

/// A store with the default limits whose managed directory is `<dir>/tool-output`.
pub(crate) fn store(dir: &Path) -> OutputStore {
    OutputStore::new(paging(StoreConfig::in_data_dir(dir)))
}

/// A store for `config`, with markers that name `read` as the paging tool.
pub(crate) fn paging_store(config: StoreConfig) -> OutputStore {
    OutputStore::new(paging(config))
}

/// A store with the given line and byte limits.
pub(crate) fn store_with(dir: &Path, max_lines: usize, max_bytes: usize) -> OutputStore {
    OutputStore::new(paging({
        let mut value = StoreConfig::in_data_dir(dir);
        value.max_lines = max_lines;
        value.max_bytes = max_bytes;
        value
    }))
}

pub(crate) fn text(text: impl Into<String>) -> OutputContent {
    OutputContent::Text { text: text.into() }
}

pub(crate) fn output(content: Vec<OutputContent>) -> ToolOutput {
    ToolOutput::new(json!({"ok": true}), content)
}

pub(crate) fn text_output(body: impl Into<String>) -> ToolOutput {
    output(vec![text(body)])
}

pub(crate) fn structured_only(structured: Value) -> ToolOutput {
    ToolOutput::new(structured, Vec::new())
}

/// The files in a managed directory, by name.
pub(crate) fn managed_files(store: &OutputStore) -> Vec<String> {
    let Ok(listing) = std::fs::read_dir(&store.config().directory) else {
        return Vec::new();
    };
    let mut names: Vec<String> = listing
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        // The sweep record is the store's bookkeeping, not an output.
        .filter(|name| name != ".sweep")
        .collect();
    names.sort();
    names
}

/// The model text of a bounded output (its one text part).
pub(crate) fn model_text(output: &ToolOutput) -> &str {
    let texts: Vec<&str> = output
        .content
        .iter()
        .filter_map(OutputContent::as_text)
        .collect();
    assert_eq!(texts.len(), 1, "one text part");
    texts[0]
}

pub(crate) fn lines(text: &str) -> usize {
    text.split_inclusive('\n').count()
}

/// The page limits a reader like the builtin `read` asks for: `limit` lines, at most the
/// store's line limit minus a frame of 8 lines, and its byte limit minus a frame of at most
/// 1 KiB, each line counted with 12 bytes for its number.
pub(crate) fn page_limits(store: &OutputStore, limit: usize) -> PageLimits {
    let config = store.config();
    PageLimits::new(
        limit.min(config.max_lines.saturating_sub(8).max(1)),
        config.max_bytes - 1024.min(config.max_bytes / 4),
        12,
    )
}

/// Markers that name the builtin `read` as the paging tool, as the tackle hosts configure.
pub(crate) fn paging(config: StoreConfig) -> StoreConfig {
    let lines = config.max_lines.saturating_sub(8).max(1);
    config.with_paging(PagingHint::new("read", lines))
}
