//! The opencode/Kilo `permission` object and config files of that shape.

use tackle_permission::{
    Effect, Rule, RuleOrigin, Ruleset, UnknownKeys, parse_config, parse_permission,
};

use Effect::{Allow, Ask, Deny};

fn parse(text: &str) -> Ruleset {
    parse_config(text, "opencode.json", UnknownKeys::Ignore).unwrap()
}

fn error(text: &str, unknown: UnknownKeys) -> String {
    parse_config(text, "tackle.json", unknown)
        .unwrap_err()
        .to_string()
}

#[test]
fn strings_and_objects_in_file_order() {
    let set = parse(
        r#"{
          "$schema": "https://opencode.ai/config.json",
          "model": "whatever",
          "permission": {
            "edit": "ask",
            "bash": {"*": "ask", "git status*": "allow", "rm *": "deny"},
            "webfetch": "deny",
            "*": {"secret/*": "deny"}
          }
        }"#,
    );
    assert_eq!(
        set.rules(),
        &[
            Rule::new("edit", "*", Ask),
            Rule::new("bash", "*", Ask),
            Rule::new("bash", "git status*", Allow),
            Rule::new("bash", "rm *", Deny),
            Rule::new("webfetch", "*", Deny),
            Rule::new("*", "secret/*", Deny),
        ]
    );
    assert_eq!(
        set.origin(2),
        Some(&RuleOrigin::Config {
            file: "opencode.json".into(),
            key: r#"permission.bash["git status*"]"#.into(),
            index: 2,
        })
    );
    assert_eq!(set.evaluate("bash", "git status"), Allow);
    // RG7: the last rule matching `webfetch` is `* secret/*`, so it is not wholly disabled.
    assert!(!set.wholly_disabled("webfetch"));
    assert!(parse(r#"{"permission": {"webfetch": "deny"}}"#).wholly_disabled("webfetch"));
}

#[test]
fn order_is_file_order_not_alphabetical() {
    let set = parse(r#"{"permission": {"bash": {"z*": "allow", "*": "deny", "a*": "ask"}}}"#);
    let resources: Vec<&str> = set.rules().iter().map(|r| r.resource.as_str()).collect();
    assert_eq!(resources, ["z*", "*", "a*"]);
    assert_eq!(set.evaluate("bash", "zip"), Deny);
}

#[test]
fn a_repeated_key_keeps_its_first_place_and_last_value() {
    // As JSON.parse does.
    let set = parse(r#"{"permission": {"bash": {"*": "ask", "ls": "allow", "*": "deny"}}}"#);
    assert_eq!(
        set.rules(),
        &[Rule::new("bash", "*", Deny), Rule::new("bash", "ls", Allow)]
    );
}

#[test]
fn jsonc_comments_and_trailing_commas() {
    let set = parse(
        "{\n  // rules for this repo\n  \"permission\": {\n    /* shell */ \"bash\": {\"*\": \"ask\", \"git *\": \"allow\",},\n  },\n}\n",
    );
    assert_eq!(
        set.rules(),
        &[
            Rule::new("bash", "*", Ask),
            Rule::new("bash", "git *", Allow)
        ]
    );
}

#[test]
fn a_string_permission_applies_to_everything() {
    let set = parse(r#"{"permission": "allow"}"#);
    assert_eq!(set.rules(), &[Rule::new("*", "*", Allow)]);
    let value = serde_json::json!({"read": "allow"});
    assert_eq!(
        parse_permission(&value, "inline").unwrap().rules(),
        &[Rule::new("read", "*", Allow)]
    );
}

#[test]
fn files_without_permission_have_no_rules() {
    assert!(parse(r#"{"model": "x"}"#).is_empty());
    assert!(parse(r#"{"permission": {}}"#).is_empty());
    assert!(parse(r#"{"permission": {"bash": {}}}"#).is_empty());
}

#[test]
fn unknown_top_level_keys() {
    let text = r#"{"$schema": "x", "permission": {}, "model": "gpt"}"#;
    assert!(parse_config(text, "opencode.json", UnknownKeys::Ignore).is_ok());
    insta::assert_snapshot!(error(text, UnknownKeys::Reject), @r#"tackle.json: unknown key "model"; this file accepts only "permission" and "$schema""#);
}

#[test]
fn bad_entries_name_their_key_path() {
    let cases = [
        r#"{"permission": {"bash": {"git *": "maybe"}}}"#,
        r#"{"permission": {"edit": "Allow"}}"#,
        r#"{"permission": {"edit": true}}"#,
        r#"{"permission": {"bash": {"ls": 1}}}"#,
        r#"{"permission": {"bash": ["ls"]}}"#,
        r#"{"permission": {"": "allow"}}"#,
        r#"{"permission": {"bash": {"": "allow"}}}"#,
        r#"{"permission": 3}"#,
        r#"{"permission": "sometimes"}"#,
        r#"["permission"]"#,
        "{\"permission\": {\n  \"bash\": \"ask\"\n  \"edit\": \"ask\"\n}}",
        "{\"permission\": {} /* open",
        "",
    ];
    let messages: Vec<String> = cases
        .iter()
        .map(|text| error(text, UnknownKeys::Reject))
        .collect();
    insta::assert_snapshot!(messages.join("\n"), @r#"
    tackle.json: permission.bash["git *"]: unknown effect "maybe"; expected "allow", "ask" or "deny"
    tackle.json: permission.edit: unknown effect "Allow"; expected "allow", "ask" or "deny"
    tackle.json: permission.edit: expected an effect ("allow", "ask" or "deny") or an object of resource patterns to effects, found a boolean
    tackle.json: permission.bash.ls: expected an effect ("allow", "ask" or "deny"), found a number
    tackle.json: permission.bash: expected an effect ("allow", "ask" or "deny") or an object of resource patterns to effects, found an array
    tackle.json: permission[""]: an action pattern is empty
    tackle.json: permission.bash[""]: a resource pattern is empty
    tackle.json: permission: expected an object of actions or an effect ("allow", "ask" or "deny"), found a number
    tackle.json: permission: unknown effect "sometimes"; expected "allow", "ask" or "deny"
    tackle.json: expected a JSON object at the top level, found an array
    tackle.json: invalid JSON at line 3 column 3: expected `,` or `}`
    tackle.json: unterminated /* comment starting at line 1 column 19
    tackle.json: invalid JSON at line 1 column 0: EOF while parsing a value
    "#);
}
