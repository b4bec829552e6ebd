//! Every builtin in every format.

use serde_json::Value;
use tackle_formats::{Format, export};

use crate::support::*;

fn names(tools: &Value, format: Format) -> Vec<String> {
    let list = match format {
        Format::Gemini => &tools[0]["functionDeclarations"],
        Format::Mcp => &tools["tools"],
        _ => tools,
    };
    list.as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            let name = tool.get("name").or_else(|| tool.pointer("/function/name"));
            name.and_then(Value::as_str).unwrap().to_owned()
        })
        .collect()
}

#[test]
fn every_builtin_exports_to_every_format() {
    let fx = Fixture::new();
    let snapshot = fx.snapshot();
    for format in Format::ALL {
        let catalog = export(&snapshot, format);
        assert_eq!(
            names(&catalog.tools, format),
            BUILTINS,
            "{}",
            format.as_str()
        );
        assert!(
            catalog.not_strict.is_empty(),
            "{}: {:?}",
            format.as_str(),
            catalog.not_strict
        );
        let text = serde_json::to_string_pretty(&catalog.tools).unwrap();
        // The one machine-dependent string: the shell bash found.
        let text = regex_free_shell(&fx.redact(&text));
        insta::assert_snapshot!(format.as_str(), text);
    }
}

/// The bash description names the shell it found on this machine's PATH.
fn regex_free_shell(text: &str) -> String {
    let mut out = text.to_owned();
    for shell in [
        "/usr/local/bin/bash",
        "/usr/bin/bash",
        "/bin/bash",
        "/bin/sh",
    ] {
        out = out.replace(shell, "[shell]");
    }
    out
}

#[test]
fn gemini_gets_only_its_subset() {
    let fx = Fixture::new();
    let catalog = export(&fx.snapshot(), Format::Gemini);
    let declarations = catalog.tools[0]["functionDeclarations"].as_array().unwrap();
    for declaration in declarations {
        let name = declaration["name"].as_str().unwrap();
        let mut used = Vec::new();
        keys(&declaration["parameters"], &mut used);
        for refused in [
            "$ref",
            "$defs",
            "additionalProperties",
            "const",
            "oneOf",
            "$schema",
        ] {
            assert!(!used.iter().any(|k| k == refused), "{name} uses {refused}");
        }
        let mut found = Vec::new();
        objects(&declaration["parameters"], "", &mut found);
        for (path, object) in found {
            if let Some(Value::Array(values)) = object.get("enum") {
                assert!(values.iter().all(Value::is_string), "{name}{path}");
            }
        }
    }
    // An enumeration of constants becomes a string enum, each constant's meaning kept.
    let webfetch = declarations
        .iter()
        .find(|d| d["name"] == "webfetch")
        .unwrap();
    let format = &webfetch["parameters"]["properties"]["format"];
    assert_eq!(format["type"], "STRING");
    assert_eq!(
        format["enum"],
        serde_json::json!(["markdown", "text", "html"])
    );
    assert!(
        format["description"].as_str().unwrap().contains("`text`: "),
        "{format}"
    );
}

#[test]
fn mcp_annotations_follow_each_tools_class() {
    let fx = Fixture::new();
    let catalog = export(&fx.snapshot(), Format::Mcp);
    let hints = |name: &str| {
        let tool = catalog.tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap();
        let a = &tool["annotations"];
        (
            a["readOnlyHint"].as_bool().unwrap(),
            a.get("destructiveHint")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            a["openWorldHint"].as_bool().unwrap(),
        )
    };
    for name in ["read", "glob", "grep", "skill", "job_output", "job_list"] {
        assert_eq!(hints(name), (true, false, false), "{name}");
    }
    for name in ["write", "edit", "apply_patch", "bash", "job_kill"] {
        assert_eq!(hints(name), (false, true, false), "{name}");
    }
    for name in ["webfetch", "websearch"] {
        assert_eq!(hints(name), (true, false, true), "{name}");
    }
    // An output schema only where the structured output is an object (MCP requires one).
    for tool in catalog.tools["tools"].as_array().unwrap() {
        if let Some(schema) = tool.get("outputSchema") {
            assert_eq!(schema["type"], "object", "{}", tool["name"]);
        }
    }
}
