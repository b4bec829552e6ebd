//! OpenAI's strict mode: the schemas, what cannot be strict, and calls coming back.

use serde_json::{Value, json};
use tackle_formats::{Format, export, openai, strict_schema};
use tackle_tool_core::{Call, Definition, ResultValue};

use crate::support::*;

#[test]
fn every_builtin_is_strict_with_every_property_required() {
    let fx = Fixture::new();
    let catalog = export(&fx.snapshot(), Format::OpenAiStrict);
    for tool in catalog.tools.as_array().unwrap() {
        let function = &tool["function"];
        let name = function["name"].as_str().unwrap();
        assert_eq!(function["strict"], true, "{name}");
        let mut found = Vec::new();
        objects(&function["parameters"], "", &mut found);
        for (path, object) in found {
            assert_eq!(object["additionalProperties"], false, "{name}{path}");
            let properties: Vec<&String> =
                object["properties"].as_object().unwrap().keys().collect();
            let required: Vec<&str> = object["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap())
                .collect();
            assert_eq!(properties, required, "{name}{path}");
        }
    }
}

#[test]
fn an_optional_becomes_nullable_and_unsupported_keywords_go() {
    let schema = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "default": null},
            "mode": {"oneOf": [
                {"type": "string", "const": "a", "description": "First."},
                {"type": "string", "const": "b", "description": "Second."}
            ]},
            "url": {"type": "string", "format": "uri"},
            "when": {"type": "string", "format": "date-time"}
        },
        "required": ["path"],
        "additionalProperties": false
    });
    let strict = strict_schema(&schema).unwrap();
    assert_eq!(
        strict,
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "limit": {"type": ["integer", "null"], "minimum": 1},
                "mode": {
                    "type": ["string", "null"],
                    "enum": ["a", "b", null],
                    "description": "`a`: First.\n`b`: Second."
                },
                "url": {"type": ["string", "null"]},
                "when": {"type": ["string", "null"], "format": "date-time"}
            },
            "required": ["path", "limit", "mode", "url", "when"],
            "additionalProperties": false
        })
    );
}

#[test]
fn a_schema_strict_mode_cannot_express_is_offered_non_strict_and_says_why() {
    let map = json!({
        "type": "object",
        "properties": {
            "env": {"type": "object", "additionalProperties": {"type": "string"}}
        },
        "additionalProperties": false
    });
    let why = strict_schema(&map).unwrap_err();
    assert_eq!(why.path, "/properties/env");
    assert_eq!(
        why.to_string(),
        "/properties/env: an object with free-form keys"
    );
    let definition = Definition {
        name: "setenv".into(),
        description: "Sets variables".into(),
        input_schema: map.clone(),
        output_schema: json!({"type": "string"}),
    };
    let chat = openai::chat_tool_strict(&definition);
    assert_eq!(chat.not_strict, Some(why.clone()));
    assert_eq!(chat.tool["function"].get("strict"), None);
    assert_eq!(chat.tool["function"]["parameters"], map);
    let responses = openai::responses_tool(&definition);
    assert_eq!(responses.tool["strict"], false);
    assert_eq!(responses.not_strict, Some(why));

    for (schema, reason) in [
        (json!({"type": "array"}), "the input is not an object"),
        (
            json!({"type": "object", "properties": {"x": {"allOf": [{"type": "string"}]}}}),
            "`allOf` is not supported",
        ),
        (
            json!({"type": "object", "properties": {"x": {}}}),
            "a value of any type",
        ),
    ] {
        assert_eq!(
            strict_schema(&schema).unwrap_err().reason,
            reason,
            "{schema}"
        );
    }
}

#[test]
fn nesting_past_strict_modes_limit_is_not_strict() {
    let mut schema = json!({"type": "string"});
    for _ in 0..11 {
        schema = json!({"type": "object", "properties": {"inner": schema}, "required": ["inner"]});
    }
    let why = strict_schema(&schema).unwrap_err();
    assert_eq!(why.reason, "objects nested more than 10 deep");
}

/// `sample` as a strict-mode model writes it: every optional field it leaves out `null`, in
/// nested objects too (array items included), following the strict schema.
fn with_nulls(schema: &Value, sample: &mut Value, nulls: &mut usize) {
    match sample {
        Value::Object(fields) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            for (name, property) in properties {
                let nullable = property["type"]
                    .as_array()
                    .is_some_and(|types| types.contains(&Value::from("null")));
                match fields.get_mut(name) {
                    Some(value) => with_nulls(property, value, nulls),
                    None if nullable => {
                        fields.insert(name.clone(), Value::Null);
                        *nulls += 1;
                    }
                    None => {}
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                with_nulls(&schema["items"], item, nulls);
            }
        }
        _ => {}
    }
}

#[test]
fn a_strict_call_with_null_optionals_decodes_as_if_they_were_absent() {
    let fx = Fixture::new();
    let snapshot = fx.snapshot();
    let catalog = export(&snapshot, Format::OpenAiStrict);
    let samples = [
        ("bash", json!({"command": "true"})),
        ("read", json!({"path": "a.txt"})),
        (
            "edit",
            json!({"path": "a.txt", "oldString": "a", "newString": "b"}),
        ),
        ("write", json!({"path": "a.txt", "content": "x"})),
        (
            "apply_patch",
            json!({"patchText": "*** Begin Patch\n*** End Patch"}),
        ),
        ("glob", json!({"pattern": "*"})),
        ("grep", json!({"pattern": "a"})),
        (
            "question",
            json!({"questions": [{"question": "Q?", "header": "Q", "options": [{"label": "a", "description": "A"}]}]}),
        ),
        ("skill", json!({"name": "demo"})),
        (
            "todowrite",
            json!({"todos": [{"content": "x", "status": "pending", "priority": "low"}]}),
        ),
        ("webfetch", json!({"url": "https://example.com/"})),
        ("websearch", json!({"query": "rust"})),
    ];
    let mut nulls = 0;
    for (name, required) in samples {
        let tool = snapshot.tool(name).unwrap();
        let parameters = catalog
            .tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == name)
            .unwrap()["function"]["parameters"]
            .clone();
        let mut strict_input = required.clone();
        with_nulls(&parameters, &mut strict_input, &mut nulls);
        let plain = tool
            .check_input(&required)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let decoded = tool
            .check_input(&strict_input)
            .unwrap_or_else(|e| panic!("{name} {strict_input}: {e}"));
        assert_eq!(decoded, plain, "{name}");
    }
    assert!(nulls >= 25, "only {nulls} optional fields tried");
}

#[tokio::test]
async fn a_strict_call_settles_end_to_end() {
    let fx = Fixture::new();
    let snapshot = fx.snapshot();
    let call = Call::new(
        "call_1",
        "read",
        json!({"path": "a.txt", "offset": null, "limit": null, "column": null}),
    );
    let settled = snapshot.settle(&call, &ctx()).await.unwrap();
    let ResultValue::Text(text) = settled.result() else {
        panic!("{:?}", settled.result());
    };
    assert!(
        text.contains("1: alpha") && text.contains("3: gamma"),
        "{text}"
    );
}
