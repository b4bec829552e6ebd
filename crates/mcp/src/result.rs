//! A settlement in MCP form.
//!
//! Text parts become text content, a file part an image (or, for other media, an embedded
//! blob resource), a structured output `structuredContent` (for tools that advertise an output
//! schema), an error result (an input error included) an `isError` result with its text; a call
//! that could not be settled (a halt, a defect) a JSON-RPC error.

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, ErrorCode, ResourceContents};
use tackle_registry::{SettleError, Settlement};
use tackle_tool_core::{OutputContent, ResultValue};

/// The JSON-RPC error code of a call that stopped without a result (declined, cancelled).
pub const HALTED: ErrorCode = ErrorCode(-32001);

/// `settlement` as a tool result; `structured` says whether the tool advertises an output
/// schema, so its structured value is sent as `structuredContent`.
pub fn call_result(settlement: Settlement, structured: bool) -> CallToolResult {
    let value = settlement.output().map(|output| output.structured.clone());
    match settlement.into_result() {
        ResultValue::Error(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        ResultValue::Text(text) => {
            with_structured(vec![ContentBlock::text(text)], value, structured)
        }
        ResultValue::Json(json) => with_structured(
            vec![ContentBlock::text(json.to_string())],
            value,
            structured,
        ),
        ResultValue::Content(parts) => with_structured(
            parts.into_iter().map(content_block).collect(),
            value,
            structured,
        ),
    }
}

fn with_structured(
    content: Vec<ContentBlock>,
    value: Option<serde_json::Value>,
    structured: bool,
) -> CallToolResult {
    let mut result = CallToolResult::success(content);
    if structured {
        result.structured_content = value.filter(serde_json::Value::is_object);
    }
    result
}

/// One part of a result's content.
pub fn content_block(part: OutputContent) -> ContentBlock {
    match part {
        OutputContent::Text { text } => ContentBlock::text(text),
        OutputContent::File { uri, mime, name } => {
            // tool-core carries files as `data:<mime>;base64,<data>`: MCP wants the base64 alone.
            let data = uri
                .split_once(";base64,")
                .map_or(uri.as_str(), |(_, data)| data)
                .to_owned();
            if mime.starts_with("image/") {
                ContentBlock::image(data, mime)
            } else {
                let uri = format!("attachment:///{}", name.as_deref().unwrap_or("file"));
                ContentBlock::resource(ResourceContents::blob(data, uri).with_mime_type(mime))
            }
        }
    }
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
    fn a_pdf_is_an_embedded_blob_and_an_image_is_an_image() {
        let image = content_block(OutputContent::File {
            uri: "data:image/png;base64,iVBO".into(),
            mime: "image/png".into(),
            name: None,
        });
        let image = serde_json::to_value(image).unwrap_or_default();
        assert_eq!(image["type"], "image");
        assert_eq!(image["data"], "iVBO");
        assert_eq!(image["mimeType"], "image/png");
        let pdf = content_block(OutputContent::File {
            uri: "data:application/pdf;base64,JVBE".into(),
            mime: "application/pdf".into(),
            name: Some("a.pdf".into()),
        });
        let pdf = serde_json::to_value(pdf).unwrap_or_default();
        assert_eq!(pdf["type"], "resource");
        assert_eq!(pdf["resource"]["blob"], "JVBE");
        assert_eq!(pdf["resource"]["mimeType"], "application/pdf");
        assert_eq!(pdf["resource"]["uri"], "attachment:///a.pdf");
    }

    #[test]
    fn an_error_result_is_an_is_error_result() {
        let result = call_result(Settlement::error("Unknown tool: nope"), false);
        assert_eq!(result.is_error, Some(true));
        let value = serde_json::to_value(&result).unwrap_or_default();
        assert_eq!(value["content"][0]["text"], "Unknown tool: nope");
    }
}
