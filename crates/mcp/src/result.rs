//! A settlement in MCP form.
//!
//! The result itself is `tackle_formats::mcp::CallResult`'s (text content, images and embedded
//! blobs, `isError`, an object's structured value as `structuredContent`); this module
//! builds rmcp's result from it, and maps a call that could not be settled (a halt, a defect)
//! to a JSON-RPC error.

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, ErrorCode, ResourceContents};
use tackle_formats::mcp::{CallContent, CallResult};
use tackle_registry::{SettleError, Settlement};

/// The JSON-RPC error code of a call that stopped without a result (declined, cancelled).
pub const HALTED: ErrorCode = ErrorCode(-32001);

/// `settlement` as a tool result.
pub fn call_result(settlement: &Settlement) -> CallToolResult {
    let CallResult {
        content,
        is_error,
        structured_content,
        ..
    } = CallResult::of(settlement);
    let content = content
        .into_iter()
        .map(|item| match item {
            CallContent::Text(text) => ContentBlock::text(text),
            CallContent::Image { data, mime_type } => ContentBlock::image(data, mime_type),
            CallContent::Blob {
                uri,
                mime_type,
                blob,
            } => {
                ContentBlock::resource(ResourceContents::blob(blob, uri).with_mime_type(mime_type))
            }
            // A kind of content added later: its JSON form is MCP's, so rmcp reads it from that.
            other => serde_json::from_value(other.to_json()).unwrap_or_else(|err| {
                tracing::error!(%err, "a result's content is not in MCP form");
                ContentBlock::text("The result could not be sent in MCP form.")
            }),
        })
        .collect();
    let mut result = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = structured_content;
    result
}

/// A call that produced no result, as a JSON-RPC error.
pub fn settle_error(err: &SettleError) -> ErrorData {
    match err {
        SettleError::Halt(halt) => ErrorData::new(HALTED, halt.to_string(), None),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_result_is_an_is_error_result() {
        let result = call_result(&Settlement::error("Unknown tool: nope"));
        assert_eq!(result.is_error, Some(true));
        let value = serde_json::to_value(&result).unwrap_or_default();
        assert_eq!(value["content"][0]["text"], "Unknown tool: nope");
    }
}
