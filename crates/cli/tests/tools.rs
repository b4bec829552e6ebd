use crate::{Workspace, tackle};

fn names(ws: &Workspace) -> Vec<String> {
    let out = ws.tackle(&["tools", "--format", "json"]).assert().success();
    let list: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn tools_json_lists_the_builtins_in_catalog_order() {
    let ws = Workspace::new();
    let names = names(&ws);
    let order = [
        "bash",
        "read",
        "edit",
        "write",
        "apply_patch",
        "glob",
        "grep",
        "question",
        "skill",
        "todowrite",
        "webfetch",
        "websearch",
        "job_output",
        "job_kill",
        "job_list",
    ];
    for required in ["read", "edit", "write", "todowrite"] {
        assert!(
            names.iter().any(|n| n == required),
            "{required} missing from {names:?}"
        );
    }
    let positions: Vec<usize> = names
        .iter()
        .map(|n| order.iter().position(|o| o == n).unwrap())
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "catalog order: {names:?}"
    );
    // Headless (no terminal in tests): question is not offered; no skills: skill is not either.
    assert!(
        !names.iter().any(|n| n == "question" || n == "skill"),
        "{names:?}"
    );
}

#[test]
fn a_configured_deny_hides_every_tool_of_that_action() {
    let ws = Workspace::new();
    ws.write("tackle.json", r#"{"permission": {"edit": "deny"}}"#);
    let names = names(&ws);
    assert!(names.iter().any(|n| n == "read"));
    for hidden in ["edit", "write", "apply_patch"] {
        assert!(
            !names.iter().any(|n| n == hidden),
            "{hidden} still offered: {names:?}"
        );
    }
}

#[test]
fn text_format_prints_one_line_per_tool() {
    let ws = Workspace::new();
    let out = ws.tackle(&["tools"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.lines().any(|l| l.starts_with("read ")), "{text}");
}

#[test]
fn an_unknown_format_is_a_usage_error() {
    tackle()
        .args(["tools", "--format", "yaml"])
        .assert()
        .code(2);
}

#[test]
fn skills_from_other_agents_places_and_the_users_home_are_offered() {
    let ws = Workspace::new();
    let skill = |dir: &std::path::Path, name: &str| {
        let file = dir.join(name).join("SKILL.md");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            &file,
            format!("---\nname: {name}\ndescription: The {name} skill.\n---\nBody.\n"),
        )
        .unwrap();
    };
    skill(&ws.dir.path().join(".agents/skills"), "from-agents");
    skill(&ws.dir.path().join(".kilocode/skills"), "from-kilocode");
    // The test's home is the data directory (see `tackle_in`).
    skill(&ws.data.path().join(".claude/skills"), "from-home");
    skill(&ws.data.path().join(".config/tackle/skills"), "from-config");
    let out = ws.tackle(&["tools", "--format", "json"]).assert().success();
    let list: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let description = list
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "skill")
        .expect("skill is offered")["description"]
        .as_str()
        .unwrap()
        .to_owned();
    for name in ["from-agents", "from-kilocode", "from-home", "from-config"] {
        assert!(description.contains(name), "{name} missing: {description}");
    }
}

fn exported(ws: &Workspace, args: &[&str]) -> serde_json::Value {
    let out = ws.tackle(args).assert().success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

#[test]
fn every_provider_format_lists_the_same_tools() {
    let ws = Workspace::new();
    let expected = names(&ws);
    let name_of = |tool: &serde_json::Value| {
        tool.get("name")
            .or_else(|| tool.pointer("/function/name"))
            .and_then(serde_json::Value::as_str)
            .unwrap()
            .to_owned()
    };
    for format in ["openai", "openai-strict", "openai-responses", "anthropic"] {
        let tools = exported(&ws, &["tools", "--format", format]);
        let listed: Vec<String> = tools.as_array().unwrap().iter().map(name_of).collect();
        assert_eq!(listed, expected, "{format}");
    }
    let gemini = exported(&ws, &["tools", "--format", "gemini"]);
    let listed: Vec<String> = gemini[0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(name_of)
        .collect();
    assert_eq!(listed, expected);
    let mcp = exported(&ws, &["tools", "--format", "mcp"]);
    let listed: Vec<String> = mcp["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(name_of)
        .collect();
    assert_eq!(listed, expected);
    let strict = exported(&ws, &["tools", "--format", "openai-strict"]);
    assert!(
        strict
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["function"]["strict"] == true)
    );
}

#[test]
fn the_model_decides_the_editing_tools() {
    let ws = Workspace::new();
    let listed = |model: &str| -> Vec<String> {
        let tools = exported(&ws, &["tools", "--format", "json", "--model", model]);
        tools
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap().to_owned())
            .filter(|n| ["edit", "write", "apply_patch"].contains(&n.as_str()))
            .collect()
    };
    assert_eq!(listed("gpt-5"), ["apply_patch"]);
    assert_eq!(listed("claude-sonnet-4-5"), ["edit", "write"]);
}
