//! Integration tests of `tackle-mcp`'s public mapping, and of what only an embedding can cause
//! (tools registered while a client is connected). The server as a process, driven by the
//! official MCP client SDKs, is tested with the `tackle` binary (`crates/cli/tests/serve.rs`),
//! since only that crate's tests can run its binary.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on broken setup

mod http_limits;
mod list_changed;

use serde_json::{Value, json};
use tackle_formats::{Format, export};
use tackle_mcp::tools_list;
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_registry::{ApplicationTools, ToolRegistry};
use tackle_tool_core::{ShowAll, Tool, ToolClass, ToolError};

fn tool(output_schema: Option<Value>) -> Tool {
    let mut tool = Tool::dynamic(
        "does things",
        json!({"type": "object", "properties": {"path": {"type": "string"}},
            "required": ["path"], "additionalProperties": false}),
        |_, _| async { Ok::<_, ToolError>(json!({"ok": true})) },
    );
    if let Some(schema) = output_schema {
        tool = tool.output_schema(schema);
    }
    tool.build().unwrap()
}

/// The server lists exactly the MCP form `tackle tools --format mcp` shows: one mapping.
#[test]
fn the_server_lists_the_one_mcp_form_of_the_catalog() {
    let data = tempfile::tempdir().unwrap();
    let app = ApplicationTools::new();
    let registry = ToolRegistry::new(
        &app,
        OutputStore::new(StoreConfig::in_data_dir(data.path())),
    );
    let _guard = registry
        .tools()
        .register([
            (
                "read".to_owned(),
                tool(None).with_class(ToolClass::ReadOnly),
            ),
            (
                "bash".to_owned(),
                tool(Some(
                    json!({"type": "object", "properties": {"exit": {"type": "integer"}}}),
                )),
            ),
            (
                "webfetch".to_owned(),
                tool(None).with_class(ToolClass::OpenWorld),
            ),
            ("mine".to_owned(), tool(None)),
        ])
        .unwrap();
    let snapshot = registry.materialize(&ShowAll);
    let listed = serde_json::to_value(tools_list::tools(&snapshot)).unwrap();
    assert_eq!(listed, export(&snapshot, Format::Mcp).tools["tools"]);
    let by_name = |name: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    let read = by_name("read");
    assert_eq!(read["annotations"]["readOnlyHint"], true);
    assert_eq!(read["title"], "Read a file");
    let bash = by_name("bash");
    assert_eq!(bash["annotations"]["destructiveHint"], true);
    assert_eq!(bash["outputSchema"]["type"], "object");
    assert_eq!(bash["inputSchema"]["required"], json!(["path"]));
    assert_eq!(by_name("webfetch")["annotations"]["openWorldHint"], true);
    assert!(by_name("mine").get("title").is_none());
}

/// The result the server sends is the one MCP form of a settlement (`tackle_formats`), built
/// without a JSON detour: text, an image and an embedded blob, and a structured object.
#[tokio::test]
async fn the_server_sends_the_one_mcp_form_of_a_result() {
    use tackle_tool_core::{Call, Content, Context, from_fn};

    let data = tempfile::tempdir().unwrap();
    let app = ApplicationTools::new();
    let registry = ToolRegistry::new(
        &app,
        OutputStore::new(StoreConfig::in_data_dir(data.path())),
    );
    let attach = Tool::typed(
        "attaches files",
        from_fn(|_: Value, _: Context| async { Ok::<_, ToolError>(json!({"count": 2})) }),
    )
    .model_output(|_: &Value| {
        vec![
            Content::text("two files"),
            Content::File {
                mime: "image/png".into(),
                data: vec![0x89, b'P', b'N', b'G'],
                name: Some("pixel.png".into()),
            },
            Content::File {
                mime: "application/pdf".into(),
                data: b"%PDF-1.4".to_vec(),
                name: Some("doc.pdf".into()),
            },
        ]
    })
    .build();
    let _guard = registry
        .tools()
        .register([("attach".to_owned(), attach)])
        .unwrap();
    let snapshot = registry.materialize(&ShowAll);
    let call = Call::new("c1", "attach", json!({}));
    let settled = [
        snapshot
            .settle(&call, &Context::new("s").for_call("c1"))
            .await
            .unwrap(),
        tackle_registry::Settlement::error("Unknown tool: nope"),
    ];
    for settlement in &settled {
        let mut sent = serde_json::to_value(tackle_mcp::result::call_result(settlement)).unwrap();
        // rmcp adds the result type that newer protocol versions carry.
        sent.as_object_mut().unwrap().remove("resultType");
        assert_eq!(sent, tackle_formats::mcp::call_result(settlement));
    }
    let sent = serde_json::to_value(tackle_mcp::result::call_result(&settled[0])).unwrap();
    assert_eq!(sent["content"][1]["type"], "image");
    assert_eq!(
        sent["content"][2]["resource"]["uri"],
        "attachment:///doc.pdf"
    );
    assert_eq!(sent["structuredContent"], json!({"count": 2}));
    assert_eq!(sent["isError"], false);
}
