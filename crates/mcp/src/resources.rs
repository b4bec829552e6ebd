//! Managed outputs as MCP resources: the `tool-output://` references this session's results
//! named are listed by `resources/list` and read, a page at a time, with `resources/read`.
//!
//! A page is what `read` would show of the output (the store's line and byte limits); a
//! `?offset=LINE` (and `&column=N` inside a long line) query reads on, and each page's `_meta`
//! names the next page's URI. Another session's reference reads as not found, whether or not it
//! exists, so references cannot be probed.

use std::sync::{Mutex, PoisonError};

use rmcp::model::{ErrorData, ListResourcesResult, ReadResourceResult};
use serde_json::{Value, json};
use tackle_output_store::{OutputRef, OutputStore, PageLimits};

/// The references this session's results named, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Outputs(Mutex<Vec<OutputRef>>);

impl Outputs {
    pub(crate) fn remember(&self, references: &[OutputRef]) {
        let mut known = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        for reference in references {
            if !known.contains(reference) {
                known.push(reference.clone());
            }
        }
    }

    pub(crate) fn list(&self) -> ListResourcesResult {
        let known = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let resources: Vec<Value> = known
            .iter()
            .map(|reference| {
                json!({
                    "uri": reference.to_string(),
                    "name": reference.to_string(),
                    "description": "The full output of a tool call, as bounding left it out.",
                    "mimeType": "text/plain",
                })
            })
            .collect();
        serde_json::from_value(json!({ "resources": resources })).unwrap_or_default()
    }
}

/// One page of the managed output `uri` for `session`.
pub(crate) fn read(
    store: &OutputStore,
    session: &str,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let not_found = || ErrorData::resource_not_found(format!("no such resource: {uri}"), None);
    let (base, query) = uri.split_once('?').unwrap_or((uri, ""));
    let reference = OutputRef::parse(base).ok_or_else(not_found)?;
    reference.check_session(session).map_err(|_| not_found())?;
    let mut offset = 1;
    let mut column = 1;
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let parsed = pair.split_once('=').and_then(|(key, value)| {
            let value = value.parse::<usize>().ok().filter(|n| *n >= 1)?;
            Some((key, value))
        });
        match parsed {
            Some(("offset", value)) => offset = value,
            Some(("column", value)) => column = value,
            _ => {
                return Err(ErrorData::invalid_params(
                    format!("{uri}: expected ?offset=LINE[&column=N], 1-based"),
                    None,
                ));
            }
        }
    }
    let config = store.config();
    let limits = PageLimits::new(config.max_lines, config.max_bytes, 1);
    let page = store
        .read_page_at(&reference, offset, column, limits)
        .map_err(|err| match err {
            tackle_output_store::StoreError::NotFound { .. } => not_found(),
            other => ErrorData::invalid_params(other.to_string(), None),
        })?;
    let mut meta = json!({
        "offset": page.offset,
        "totalLines": page.total_lines,
    });
    match (page.next, page.next_column) {
        (Some(line), Some(column)) => {
            meta["next"] = format!("{base}?offset={line}&column={column}").into();
        }
        (Some(line), None) => meta["next"] = format!("{base}?offset={line}").into(),
        _ => {}
    }
    let mut text = page.lines.join("\n");
    if !page.lines.is_empty() {
        text.push('\n');
    }
    let result = json!({
        "contents": [{
            "uri": uri,
            "mimeType": "text/plain",
            "text": text,
            "_meta": meta,
        }],
    });
    serde_json::from_value(result).map_err(|err| ErrorData::internal_error(err.to_string(), None))
}
