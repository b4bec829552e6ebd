//! Settlements in each provider's result shape.

use serde_json::{Value, json};
use tackle_formats::gemini::GeminiMedia;
use tackle_formats::{anthropic, gemini, mcp, openai};

use crate::support::*;

/// Every provider's answer to the same settled calls.
pub(crate) async fn shapes(fx: &Fixture) -> Value {
    let settled = settled_kinds(fx).await;
    let pairs = pairs(&settled);
    json!({
        "openai_chat": openai::chat_results(&pairs),
        "openai_responses": openai::responses_results(&pairs),
        "anthropic": anthropic::tool_results(&pairs),
        "gemini_follow_up": gemini::function_responses(&pairs, GeminiMedia::FollowUp),
        "gemini_inline": gemini::function_responses(&pairs, GeminiMedia::Inline),
        "mcp": settled.iter().map(|(_, s)| mcp::call_result(s)).collect::<Vec<_>>(),
    })
}

#[tokio::test]
async fn every_result_kind_in_every_provider_shape() {
    let fx = Fixture::new();
    let shapes = shapes(&fx).await;
    let text = fx.redact(&serde_json::to_string_pretty(&shapes).unwrap());
    insta::assert_snapshot!(text);
}

#[tokio::test]
async fn images_stay_inline_where_the_provider_takes_them_and_follow_otherwise() {
    let fx = Fixture::new();
    let shapes = shapes(&fx).await;
    // Chat Completions: every tool message first, then one user message with the image.
    let chat = shapes["openai_chat"].as_array().unwrap();
    let roles: Vec<&str> = chat.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["tool", "tool", "tool", "tool", "tool", "user"]);
    assert!(
        chat[2]["content"]
            .as_str()
            .unwrap()
            .contains("sent in the next user message")
    );
    let follow = &chat[5]["content"];
    assert_eq!(follow[1]["type"], "image_url");
    assert!(
        follow[1]["image_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,iVBOR")
    );
    // Responses and Anthropic: inline.
    let responses = &shapes["openai_responses"][2]["output"];
    assert_eq!(responses[1]["type"], "input_image");
    let anthropic = &shapes["anthropic"]["content"][2];
    assert_eq!(anthropic["content"][1]["type"], "image");
    assert_eq!(anthropic["content"][1]["source"]["media_type"], "image/png");
    // Gemini: after the function responses, or inside them.
    let parts = shapes["gemini_follow_up"]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 6);
    assert_eq!(parts[5]["inlineData"]["mimeType"], "image/png");
    let inline = &shapes["gemini_inline"]["parts"][2]["functionResponse"];
    assert_eq!(inline["parts"][0]["inlineData"]["mimeType"], "image/png");
}

#[tokio::test]
async fn errors_are_flagged_the_providers_way() {
    let fx = Fixture::new();
    let shapes = shapes(&fx).await;
    for index in [3, 4] {
        assert_eq!(shapes["anthropic"]["content"][index]["is_error"], true);
        let response = &shapes["gemini_follow_up"]["parts"][index]["functionResponse"]["response"];
        assert!(response["error"].is_string(), "{response}");
        assert_eq!(shapes["mcp"][index]["isError"], true);
    }
    for index in [0, 1, 2] {
        assert_eq!(shapes["anthropic"]["content"][index].get("is_error"), None);
        assert_eq!(shapes["mcp"][index]["isError"], false);
    }
    assert_eq!(
        shapes["openai_chat"][4]["content"], "Unknown tool: nope",
        "Chat Completions has no flag: the message is the result"
    );
    // A structured result goes to Gemini as the value, and to MCP as structured content.
    let todo = &shapes["gemini_follow_up"]["parts"][1]["functionResponse"]["response"]["output"];
    assert!(todo.is_object(), "{todo}");
    assert!(shapes["mcp"][1]["structuredContent"].is_object());
}
