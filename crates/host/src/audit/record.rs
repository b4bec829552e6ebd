//! What one audit record holds: for a call, who made it, what it was, how it ended, and the
//! shape of its input (never file contents); for a decision, what was asked, which rule decided
//! and what the answer was.

use serde_json::{Map, Value, json};
use tackle_permission::Decision;

use super::facts::{CallFacts, Input};
use super::shape::shape;

/// A new record of `kind` made at `time_ms`, its number left for the writer.
pub(crate) fn start(kind: &str, time_ms: u64) -> Map<String, Value> {
    let mut record = Map::new();
    record.insert("seq".into(), Value::Null);
    record.insert("time_ms".into(), time_ms.into());
    record.insert("kind".into(), kind.into());
    record
}

/// The record of one settled call, built by the writer from the caller's facts. The slot's
/// strings are copied, not taken: their buffers go back to the callers.
pub(crate) fn call(facts: &mut CallFacts) -> Map<String, Value> {
    let mut record = start("call", facts.time_ms);
    record.insert("session".into(), facts.session.clone().into());
    record.insert("agent".into(), facts.agent.clone().into());
    record.insert("call_id".into(), facts.call_id.clone().into());
    record.insert("tool".into(), facts.tool.clone().into());
    if !facts.settled_as.is_empty() {
        record.insert("settled_as".into(), facts.settled_as.clone().into());
    }
    let input = match std::mem::take(&mut facts.input) {
        Input::Shaped(shaped) => shaped,
        // The caller copied what serializing a `Value` wrote: it reads back.
        Input::Json => serde_json::from_slice(&facts.json)
            .map_or(Value::Null, |input| shape(&input, facts.edits, None)),
    };
    record.insert("input".into(), input);
    let millis = facts.duration.as_secs_f64() * 1000.0;
    record.insert(
        "duration_ms".into(),
        json!((millis * 1000.0).round() / 1000.0),
    );
    record.insert("result".into(), facts.result.into());
    record.insert("bytes_in".into(), facts.bytes_in.into());
    record.insert("bytes_out".into(), facts.bytes_out.into());
    record.insert("truncated".into(), facts.truncated.into());
    if !facts.references.is_empty() {
        let references: Vec<Value> = facts.references.drain(..).map(Value::from).collect();
        record.insert("references".into(), references.into());
    }
    if let Some(error) = facts.error.take() {
        record.insert("error".into(), error.into());
    }
    record
}

/// The record of one permission decision.
pub(crate) fn decision(decision: &Decision, time_ms: u64) -> Map<String, Value> {
    let mut record = start("decision", time_ms);
    record.insert("session".into(), decision.session_id.clone().into());
    record.insert("agent".into(), decision.agent.clone().into());
    record.insert("call_id".into(), decision.call_id.clone().into());
    record.insert("action".into(), decision.action.clone().into());
    record.insert("resources".into(), json!(decision.resources));
    record.insert("effect".into(), decision.effect.as_str().into());
    if let Some(by) = decision.deciding().and_then(|e| e.decided_by.as_ref()) {
        let rule = &by.rule;
        record.insert(
            "rule".into(),
            json!({"action": rule.action, "resource": rule.resource, "effect": rule.effect}),
        );
        record.insert("origin".into(), by.origin.to_string().into());
    }
    if let Some(reply) = decision.reply_kind() {
        record.insert("reply".into(), reply.into());
    }
    record.insert("verdict".into(), decision.verdict.as_str().into());
    record
}
