//! Integration tests of `tackle-mcp`'s public mapping, and of what only an embedding can cause
//! (tools registered while a client is connected). The server as a process, driven by the
//! official MCP client SDKs, is tested with the `tackle` binary (`crates/cli/tests/serve.rs`),
//! since only that crate's tests can run its binary.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on broken setup

mod list_changed;

use serde_json::{Value, json};
use tackle_mcp::tools_list;
use tackle_tool_core::Definition;

fn definition(name: &str, output_schema: Value) -> Definition {
    Definition {
        name: name.into(),
        description: "does things".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}},
            "required": ["path"], "additionalProperties": false}),
        output_schema,
    }
}

#[test]
fn hints_follow_what_each_builtin_does() {
    let read = serde_json::to_value(tools_list::tool(&definition(
        "read",
        json!({"type": "string"}),
    )))
    .unwrap();
    assert_eq!(read["annotations"]["readOnlyHint"], true);
    assert_eq!(read["title"], "Read a file");
    // A text tool has no structured output to describe.
    assert!(read.get("outputSchema").is_none(), "{read}");
    let bash = serde_json::to_value(tools_list::tool(&definition(
        "bash",
        json!({"type": "object", "properties": {"exit": {"type": "integer"}}}),
    )))
    .unwrap();
    assert_eq!(bash["annotations"]["destructiveHint"], true);
    assert_eq!(bash["outputSchema"]["type"], "object");
    assert_eq!(bash["inputSchema"]["required"], json!(["path"]));
    let fetch = serde_json::to_value(tools_list::tool(&definition("webfetch", json!({})))).unwrap();
    assert_eq!(fetch["annotations"]["openWorldHint"], true);
    let other = serde_json::to_value(tools_list::tool(&definition("mine", json!({})))).unwrap();
    assert!(other.get("title").is_none(), "{other}");
}
