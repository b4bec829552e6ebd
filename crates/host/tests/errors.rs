//! A bad value in any key is an error naming the file, the key path and the problem.

use crate::Fixture;

/// Each case: the user's file text. Every one must fail.
const CASES: &[&str] = &[
    "{\"output\": {\"max_lines\": 10,,}}",
    "{/* never closed",
    "[1, 2]",
    "{\"bsh\": {}}",
    "{\"output\": {\"max_line\": 10}}",
    "{\"output\": {\"max_lines\": 0}}",
    "{\"output\": {\"max_bytes\": 10}}",
    "{\"output\": {\"retention_days\": \"7\"}}",
    "{\"output\": {\"max_file_bytes\": 100}}",
    "{\"output\": {\"quota_bytes\": -1}}",
    "{\"read\": {\"image_max_width\": 0}}",
    "{\"read\": {\"image_max_height\": -5}}",
    "{\"read\": {\"image_max_bytes\": 100}}",
    "{\"read\": {\"image_max_bytes\": 6000000}}",
    "{\"read\": {\"image_input\": \"no\"}}",
    "{\"read\": {\"images\": {}}}",
    "{\"bash\": {\"shell\": \"\"}}",
    "{\"bash\": {\"default_timeout_ms\": 0}}",
    "{\"bash\": {\"max_timeout_ms\": 700000}}",
    "{\"bash\": {\"env_allow\": \"GITHUB_TOKEN\"}}",
    "{\"bash\": {\"env\": {\"A=B\": \"x\"}}}",
    "{\"webfetch\": {\"allow\": [\"http://x\"]}}",
    "{\"webfetch\": {\"timeout_seconds\": 500}}",
    "{\"webfetch\": {\"max_bytes\": 0}}",
    "{\"websearch\": {\"provider\": \"bing\"}}",
    "{\"websearch\": {\"api_key_env\": \"MY_KEY\"}}",
    "{\"search\": {\"budget_ms\": 0}}",
    "{\"skills\": {\"paths\": \"dir\"}}",
    "{\"permission\": {\"bash\": \"maybe\"}}",
    "{\"agent\": {\"plan\": {\"permission\": {\"edit\": 3}}}}",
    "{\"agent\": {\"plan\": {\"model\": \"x\"}}}",
    "{\"mcp\": 3}",
];

#[test]
fn every_key_has_a_clear_error() {
    let mut text = String::new();
    for case in CASES {
        let fx = Fixture::new();
        fx.write_user(case);
        let err = fx.load().expect_err(case);
        text.push_str(&format!("{case}\n  {}\n", fx.redact(&err.to_string())));
    }
    insta::assert_snapshot!(text);
}

#[test]
fn variables_and_flags_are_named_too() {
    let mut fx = Fixture::new();
    fx.var("TACKLE_OUTPUT_MAX_LINES", "many");
    let err = fx.load().unwrap_err().to_string();
    assert_eq!(
        err,
        "bad configuration: environment TACKLE_OUTPUT_MAX_LINES: output.max_lines: expected a whole number, found \"many\""
    );
    let fx = Fixture::new();
    let flags = [("bash.max_timeout_ms", serde_json::json!("soon"))];
    let err = tackle_host::Config::load(&fx.sources(None, &flags))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "bad configuration: flag --set bash.max_timeout_ms=\"soon\": bash.max_timeout_ms: invalid type: string \"soon\", expected a whole number"
    );
}

#[test]
fn an_opencode_file_ignores_what_it_does_not_share() {
    let fx = Fixture::new();
    fx.write(
        "opencode.json",
        r#"{"model": "x", "bash": "whatever", "agent": {"plan": {"model": "y"}}}"#,
    );
    fx.load().unwrap();
    // But a tackle file is held to its keys.
    fx.write("tackle.json", r#"{"modle": "x"}"#);
    let err = fx.load().unwrap_err();
    assert!(err.to_string().contains("unknown key \"modle\""), "{err}");
}
