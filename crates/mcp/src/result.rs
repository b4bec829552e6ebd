//! A settlement in MCP form.
//!
//! The result itself is `tackle_formats::mcp::call_result`'s (text content, images and embedded
//! blobs, `isError`, an object's structured value as `structuredContent`); this module
//! hands it to rmcp, and maps a call that could not be settled (a halt, a defect) to a JSON-RPC
//! error.

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, ErrorCode};
use tackle_registry::{SettleError, Settlement};

/// The JSON-RPC error code of a call that stopped without a result (declined, cancelled).
pub const HALTED: ErrorCode = ErrorCode(-32001);

/// `settlement` as a tool result.
pub fn call_result(settlement: &Settlement) -> CallToolResult {
    let value = tackle_formats::mcp::call_result(settlement);
    serde_json::from_value(value).unwrap_or_else(|err| {
        // Every field of the shared form has the type MCP gives it.
        tracing::error!(%err, "a result is not in MCP form");
        CallToolResult::error(vec![ContentBlock::text(
            "The result could not be sent in MCP form.",
        )])
    })
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
