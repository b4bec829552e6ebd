//! Calls read back from each provider's response.

use serde_json::{Value, json};
use tackle_formats::gemini::GeminiMedia;
use tackle_formats::{FormatError, anthropic, gemini, openai};
use tackle_tool_core::Call;

use crate::support::*;

#[test]
fn responses_function_calls_in_order() {
    let response = json!({
        "id": "resp_1",
        "object": "response",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "read", "arguments": "{\"path\":\"a.txt\"}"},
            {"type": "message", "id": "msg_1", "role": "assistant", "content": []},
            {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "glob", "arguments": ""}
        ]
    });
    let calls = openai::responses_calls(&response).unwrap();
    assert_eq!(
        calls,
        [
            Call::new("call_a", "read", json!({"path": "a.txt"})),
            Call::new("call_b", "glob", json!({})),
        ]
    );
    assert!(matches!(
        openai::responses_calls(&json!({"output": [{"type": "function_call", "name": "x"}]})),
        Err(FormatError::Response {
            provider: "Responses",
            ..
        })
    ));
}

#[tokio::test]
async fn arguments_that_are_not_json_reach_the_model_as_an_input_error() {
    let message = json!({
        "role": "assistant",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\": \"a.txt\""}}]
    });
    let calls = openai::chat_calls(&message).unwrap();
    assert_eq!(calls[0].input, Value::from("{\"path\": \"a.txt\""));
    let fx = Fixture::new();
    let settled = fx.snapshot().settle(&calls[0], &ctx()).await.unwrap();
    assert!(settled.is_error(), "{:?}", settled.result());
}

#[tokio::test]
async fn gemini_calls_without_an_id_are_answered_without_one() {
    let response = json!({
        "candidates": [{
            "content": {"role": "model", "parts": [
                {"text": "Reading both."},
                {"functionCall": {"name": "read", "args": {"path": "a.txt"}}},
                {"functionCall": {"id": "fc-7", "name": "glob", "args": {"pattern": "*.txt"}}}
            ]},
            "finishReason": "STOP"
        }]
    });
    let calls = gemini::calls(&response).unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].id, "fc-7");
    let fx = Fixture::new();
    let results = fx.snapshot().settle_batch(&calls, &ctx()).await;
    let settled: Vec<_> = results.into_iter().map(Result::unwrap).collect();
    let pairs: Vec<_> = calls.iter().zip(&settled).collect();
    let content = gemini::function_responses(&pairs, GeminiMedia::FollowUp);
    assert_eq!(content["parts"][0]["functionResponse"].get("id"), None);
    assert_eq!(content["parts"][0]["functionResponse"]["name"], "read");
    assert_eq!(content["parts"][1]["functionResponse"]["id"], "fc-7");
}

#[test]
fn anthropic_tool_use_blocks_in_order() {
    let message = json!({
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "…", "signature": "x"},
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.txt"}},
            {"type": "text", "text": "and"},
            {"type": "tool_use", "id": "toolu_2", "name": "grep", "input": {"pattern": "a"}}
        ]
    });
    let calls = anthropic::calls(&message).unwrap();
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["toolu_1", "toolu_2"]);
    assert!(anthropic::calls(&json!({"role": "assistant"})).is_err());
}
