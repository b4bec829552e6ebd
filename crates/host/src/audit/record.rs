//! What one audit record holds: for a call, who made it, what it was, how it ended, and the
//! shape of its input (never file contents); for a decision, what was asked, which rule decided
//! and what the answer was.
//!
//! A record is written straight from what the caller handed over, as typed fields borrowing
//! it, every free string redacted on the way out: no intermediate JSON value is built, since
//! the writer thread shares two cores with the calls it records. Field order is the log's
//! format: `seq`, `time_ms` and `kind` first.

use serde::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;
use tackle_output_store::Redactions;

use super::facts::{CallFacts, DecisionFacts, Input};
use super::shape::{self, shape};

/// A free string of a record (a name, an id, a path), redacted as it is written.
struct Text<'a> {
    text: &'a str,
    redactions: &'a Redactions,
}

impl<'a> Text<'a> {
    fn of(text: &'a str, redactions: &'a Redactions) -> Self {
        Self { text, redactions }
    }
}

impl Serialize for Text<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.redactions.text(self.text))
    }
}

/// A call's input as the log keeps it: the caller's compact JSON as it is when nothing in it
/// needs shaping or redacting (the common case), else its shape with every string redacted.
enum InputRecord<'a> {
    AsIs(&'a RawValue),
    Shaped(Value),
}

impl Serialize for InputRecord<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::AsIs(raw) => raw.serialize(serializer),
            Self::Shaped(value) => value.serialize(serializer),
        }
    }
}

impl<'a> InputRecord<'a> {
    /// `input` is the slot's, taken; `json` the caller's copy of it when it travelled as JSON.
    fn of(input: Input, json: &'a [u8], edits: bool, redactions: &Redactions) -> Self {
        let mut shaped = match input {
            Input::Shaped(shaped) => shaped,
            // An input no longer than the longest string kept as it is holds no string to
            // shape: unless it writes files, its shape is itself.
            Input::Json
                if !edits
                    && json.len() <= shape::MAX_INPUT_STRING
                    && !redactions.may_occur_in_json(json) =>
            {
                // The caller copied what serializing a `Value` wrote: it reads back.
                return serde_json::from_slice(json).map_or(Self::Shaped(Value::Null), Self::AsIs);
            }
            Input::Json => {
                serde_json::from_slice(json).map_or(Value::Null, |input| shape(&input, edits, None))
            }
        };
        redactions.value(&mut shaped);
        Self::Shaped(shaped)
    }
}

/// The fields every record starts with.
#[derive(Serialize)]
struct Head {
    seq: u64,
    time_ms: u64,
    kind: &'static str,
}

/// Who made a call or a permission request.
#[derive(Serialize)]
struct Caller<'a> {
    session: Text<'a>,
    agent: Text<'a>,
    call_id: Text<'a>,
}

impl<'a> Caller<'a> {
    fn of(session: &'a str, agent: &'a str, call_id: &'a str, redactions: &'a Redactions) -> Self {
        Self {
            session: Text::of(session, redactions),
            agent: Text::of(agent, redactions),
            call_id: Text::of(call_id, redactions),
        }
    }
}

#[derive(Serialize)]
struct CallRecord<'a> {
    #[serde(flatten)]
    head: Head,
    #[serde(flatten)]
    caller: Caller<'a>,
    tool: Text<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    settled_as: Option<Text<'a>>,
    input: InputRecord<'a>,
    duration_ms: f64,
    result: &'static str,
    bytes_in: u64,
    bytes_out: u64,
    truncated: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    references: Vec<Text<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Text<'a>>,
}

#[derive(Serialize)]
struct RuleRecord<'a> {
    action: Text<'a>,
    resource: Text<'a>,
    effect: &'static str,
}

#[derive(Serialize)]
struct DecisionRecord<'a> {
    #[serde(flatten)]
    head: Head,
    #[serde(flatten)]
    caller: Caller<'a>,
    action: Text<'a>,
    resources: Vec<Text<'a>>,
    effect: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<RuleRecord<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    origin: Option<Text<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reply: Option<&'static str>,
    verdict: &'static str,
}

#[derive(Serialize)]
struct GapRecord {
    #[serde(flatten)]
    head: Head,
    dropped: u64,
}

/// Appends one line to `out`.
fn line(out: &mut Vec<u8>, record: &impl Serialize) {
    // Writing typed fields and JSON values into memory cannot fail.
    let _ = serde_json::to_writer(&mut *out, record);
    out.push(b'\n');
}

/// Appends the record of one settled call, numbered `seq`; the slot's input is taken.
pub(crate) fn call(out: &mut Vec<u8>, seq: u64, facts: &mut CallFacts, redactions: &Redactions) {
    let input = std::mem::take(&mut facts.input);
    let facts = &*facts;
    let millis = facts.duration.as_secs_f64() * 1000.0;
    let record = CallRecord {
        head: Head {
            seq,
            time_ms: facts.time_ms,
            kind: "call",
        },
        caller: Caller::of(&facts.session, &facts.agent, &facts.call_id, redactions),
        tool: Text::of(&facts.tool, redactions),
        settled_as: (!facts.settled_as.is_empty()).then(|| Text::of(&facts.settled_as, redactions)),
        input: InputRecord::of(input, &facts.json, facts.edits, redactions),
        duration_ms: (millis * 1000.0).round() / 1000.0,
        result: facts.result,
        bytes_in: facts.bytes_in,
        bytes_out: facts.bytes_out,
        truncated: facts.truncated,
        references: facts
            .references
            .iter()
            .map(|r| Text::of(r, redactions))
            .collect(),
        error: facts
            .error
            .as_deref()
            .map(|error| Text::of(error, redactions)),
    };
    line(out, &record);
}

/// Appends the record of one permission decision, numbered `seq`.
pub(crate) fn decision(
    out: &mut Vec<u8>,
    seq: u64,
    facts: &DecisionFacts,
    redactions: &Redactions,
) {
    let record = DecisionRecord {
        head: Head {
            seq,
            time_ms: facts.time_ms,
            kind: "decision",
        },
        caller: Caller::of(&facts.session, &facts.agent, &facts.call_id, redactions),
        action: Text::of(&facts.action, redactions),
        resources: facts
            .resources
            .iter()
            .map(|r| Text::of(r, redactions))
            .collect(),
        effect: facts.effect,
        rule: facts.ruled.then(|| RuleRecord {
            action: Text::of(&facts.rule_action, redactions),
            resource: Text::of(&facts.rule_resource, redactions),
            effect: facts.rule_effect,
        }),
        origin: facts.ruled.then(|| Text::of(&facts.origin, redactions)),
        reply: facts.reply,
        verdict: facts.verdict,
    };
    line(out, &record);
}

/// Appends a `gap` record: `dropped` records were lost before it.
pub(crate) fn gap(out: &mut Vec<u8>, seq: u64, dropped: u64) {
    let record = GapRecord {
        head: Head {
            seq,
            time_ms: shape::now_ms(),
            kind: "gap",
        },
        dropped,
    };
    line(out, &record);
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;
    use tackle_output_store::{OutputStore, StoreConfig};

    use super::*;

    fn redactions(secrets: &[&str]) -> Redactions {
        let dir = tempfile::tempdir().unwrap();
        let config = StoreConfig::in_data_dir(dir.path())
            .with_redactions(secrets.iter().map(|s| (*s).to_owned()));
        OutputStore::new(config).redactions()
    }

    #[test]
    fn an_input_kept_as_it_is_reads_as_its_shape_would() {
        let none = redactions(&["hunter2hunter2"]);
        for input in [
            json!({"path": "src/main.rs", "offset": 10, "limit": 2.5}),
            json!({"command": "echo \"hi\"\n\tü \u{1}", "timeout": null, "list": [1, {"a": true}]}),
            json!([]),
        ] {
            let json = serde_json::to_vec(&input).unwrap();
            let kept = InputRecord::of(Input::Json, &json, false, &none);
            assert!(matches!(kept, InputRecord::AsIs(_)), "{input}");
            assert_eq!(
                serde_json::to_string(&kept).unwrap(),
                serde_json::to_string(&shape(&input, false, None)).unwrap()
            );
        }
    }

    #[test]
    fn an_input_is_shaped_and_redacted_when_it_must_be() {
        let secret = redactions(&["hunter2hunter2"]);
        let input = json!({"command": "echo hunter2hunter2"});
        let json = serde_json::to_vec(&input).unwrap();
        let record = InputRecord::of(Input::Json, &json, false, &secret);
        assert_eq!(
            serde_json::to_value(&record).unwrap(),
            json!({"command": "echo [REDACTED]"})
        );
        // A value JSON escapes is found in the strings themselves.
        let quoted = redactions(&["pass\"word-1"]);
        let json = serde_json::to_vec(&json!({"command": "echo pass\"word-1"})).unwrap();
        let record = InputRecord::of(Input::Json, &json, false, &quoted);
        assert_eq!(
            serde_json::to_value(&record).unwrap(),
            json!({"command": "echo [REDACTED]"})
        );
        // The tools that write files keep only the shape of what they write.
        let json = serde_json::to_vec(&json!({"path": "a.txt", "content": "x\ny\n"})).unwrap();
        let record = InputRecord::of(Input::Json, &json, true, &secret);
        assert_eq!(
            serde_json::to_value(&record).unwrap(),
            json!({"path": "a.txt", "content": {"bytes": 4, "lines": 2}})
        );
    }

    #[test]
    fn a_call_record_is_one_line_with_its_fields_in_the_log_s_order() {
        let mut facts = CallFacts {
            time_ms: 7,
            session: "s".into(),
            agent: "build".into(),
            call_id: "c1".into(),
            tool: "Bash".into(),
            settled_as: "bash".into(),
            json: br#"{"command":"ls"}"#.to_vec(),
            bytes_in: 16,
            duration: Duration::from_micros(1234),
            result: "text",
            bytes_out: 3,
            references: vec!["tool-output://x".into()],
            error: Some("hunter2hunter2 failed".into()),
            ..CallFacts::default()
        };
        let mut out = Vec::new();
        call(&mut out, 3, &mut facts, &redactions(&["hunter2hunter2"]));
        gap(&mut out, 4, 2);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            r#"{"seq":3,"time_ms":7,"kind":"call","session":"s","agent":"build","call_id":"c1","tool":"Bash","settled_as":"bash","input":{"command":"ls"},"duration_ms":1.234,"result":"text","bytes_in":16,"bytes_out":3,"truncated":false,"references":["tool-output://x"],"error":"[REDACTED] failed"}"#
        );
        assert!(
            lines[1].starts_with(r#"{"seq":4,"time_ms":"#),
            "{}",
            lines[1]
        );
        assert!(
            lines[1].ends_with(r#","kind":"gap","dropped":2}"#),
            "{}",
            lines[1]
        );
    }
}
