//! Layers merge in the documented order, each value remembering its origin; a project's file
//! only tightens until trusted.

use serde_json::json;
use tackle_host::{Config, Origin};
use tackle_permission::Effect;

use crate::Fixture;

#[test]
fn layers_merge_in_order_and_remember_their_origin() {
    let mut fx = Fixture::new();
    let user = fx.write_user(
        r#"{"output": {"max_lines": 100}, "bash": {"default_timeout_ms": 1000, "env": {"A": "1"}}}"#,
    );
    let root_opencode = fx.write(
        "opencode.json",
        r#"{"model": "x", "theme": "dark", "permission": {"bash": "deny"}}"#,
    );
    fx.write("tackle.json", r#"{"output": {"max_lines": 200}}"#);
    let app_tackle = fx.write(
        "app/tackle.jsonc",
        "// comments and trailing commas\n{\"search\": {\"budget_ms\": 5000,}, \"output\": {\"max_bytes\": 4096},}\n",
    );
    let explicit = fx.write(
        "elsewhere/extra.json",
        r#"{"webfetch": {"timeout_seconds": 10}}"#,
    );
    fx.var("TACKLE_OUTPUT_MAX_LINES", "300");
    fx.var("TACKLE_BASH_ENV_ALLOW", "GITHUB_TOKEN, AWS_*");
    let config = Config::load(&fx.sources(Some(&explicit), &[])).unwrap();
    let output = config.settings.output.clone().unwrap();
    assert_eq!(output.max_lines, Some(300));
    assert_eq!(
        config.origin("output.max_lines"),
        Origin::Environment("TACKLE_OUTPUT_MAX_LINES".to_owned())
    );
    assert_eq!(output.max_bytes, Some(4096));
    assert_eq!(
        config.origin("output.max_bytes"),
        Origin::Project(app_tackle)
    );
    let bash = config.settings.bash.clone().unwrap();
    assert_eq!(bash.default_timeout_ms, Some(1000));
    assert_eq!(
        config.origin("bash.default_timeout_ms"),
        Origin::User(user.clone())
    );
    assert_eq!(config.origin("bash.env.A"), Origin::User(user));
    assert_eq!(
        bash.env_allow,
        Some(vec!["GITHUB_TOKEN".to_owned(), "AWS_*".to_owned()])
    );
    assert_eq!(
        config.origin("webfetch.timeout_seconds"),
        Origin::File(explicit.clone())
    );
    assert_eq!(
        config.origin("search.budget_ms"),
        config.origin("output.max_bytes")
    );
    assert_eq!(config.origin("websearch.provider"), Origin::Default);
    // opencode.json's own keys are ignored; its rules apply (a deny needs no trust).
    assert_eq!(config.rules.evaluate("bash", "ls"), Effect::Deny);
    assert!(
        config
            .layers
            .iter()
            .any(|l| l.origin == Origin::Project(root_opencode.clone()))
    );

    // A flag wins over everything.
    let flags = [("output.max_lines", json!(400))];
    let config = Config::load(&fx.sources(Some(&explicit), &flags)).unwrap();
    assert_eq!(config.settings.output.clone().unwrap().max_lines, Some(400));
    assert_eq!(
        config.origin("output.max_lines"),
        Origin::Flag("--set output.max_lines=400".to_owned())
    );
}

#[test]
fn project_files_in_one_directory_have_a_precedence() {
    let fx = Fixture::new();
    fx.write("app/opencode.json", r#"{"permission": {"read": "deny"}}"#);
    fx.write(
        "app/.opencode/opencode.jsonc",
        r#"{"permission": {"read": "ask",}}"#,
    );
    fx.write(
        "app/tackle.json",
        r#"{"permission": {"read": {"*.md": "allow"}}}"#,
    );
    fx.trust();
    let config = fx.load().unwrap();
    // Later files' rules come later, and the last matching rule wins.
    assert_eq!(config.rules.evaluate("read", "a.rs"), Effect::Ask);
    assert_eq!(config.rules.evaluate("read", "a.md"), Effect::Allow);
    let names: Vec<String> = config
        .project_files()
        .map(|(path, _)| fx.redact(&path.display().to_string()))
        .collect();
    assert_eq!(
        names,
        [
            "[repo]/app/opencode.json",
            "[repo]/app/.opencode/opencode.jsonc",
            "[repo]/app/tackle.json"
        ]
    );
}

#[test]
fn an_untrusted_project_only_tightens_and_cannot_widen_reach() {
    let fx = Fixture::new();
    fx.write(
        "tackle.json",
        r#"{
            "permission": {"bash": {"*": "allow", "rm *": "deny"}},
            "webfetch": {"allow": ["10.0.0.0/8"], "timeout_seconds": 5},
            "bash": {"env_allow": ["*"], "shell": "/tmp/evil"},
            "websearch": {"provider": "exa", "api_key_env": "AWS_SECRET_ACCESS_KEY"},
            "output": {"max_lines": 50}
        }"#,
    );
    let config = fx.load().unwrap();
    assert_eq!(config.rules.evaluate("bash", "ls"), Effect::Ask);
    assert_eq!(config.rules.evaluate("bash", "rm x"), Effect::Deny);
    let web = config.settings.webfetch.clone().unwrap();
    assert_eq!(web.allow, None);
    // Limits and timeouts widen nothing: they apply.
    assert_eq!(web.timeout_seconds, Some(5));
    assert_eq!(config.settings.output.clone().unwrap().max_lines, Some(50));
    let bash = config.settings.bash.clone().unwrap();
    assert_eq!((bash.env_allow, bash.shell), (None, None));
    assert_eq!(config.settings.websearch.clone().unwrap().api_key_env, None);
    let warnings = fx.redact(&config.warnings.join("\n"));
    insta::assert_snapshot!(warnings, @r#"
    tackle: [repo]/tackle.json is not trusted: its bash.shell, bash.env_allow, webfetch.allow, websearch.api_key_env settings are ignored (run `tackle trust [repo]/app` if you trust it)
    tackle: [repo]/tackle.json is not trusted: its allow rules are ignored (permission.bash["*"]); its deny and ask rules apply.
      If you trust this project, review the file and run: tackle trust [repo]/app
    "#);

    fx.trust();
    let config = fx.load().unwrap();
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    assert_eq!(config.rules.evaluate("bash", "ls"), Effect::Allow);
    assert_eq!(
        config.settings.webfetch.unwrap().allow,
        Some(vec!["10.0.0.0/8".to_owned()])
    );
}

#[test]
fn agent_rules_are_kept_per_agent() {
    let fx = Fixture::new();
    fx.write(
        "opencode.json",
        r#"{"agent": {"plan": {"model": "m", "prompt": "p", "permission": {"edit": "deny"}}}}"#,
    );
    fx.write_user(r#"{"agent": {"build": {"permission": {"bash": {"git *": "allow"}}}}}"#);
    let config = fx.load().unwrap();
    assert_eq!(config.agents["plan"].evaluate("edit", "a.rs"), Effect::Deny);
    assert_eq!(
        config.agents["build"].evaluate("bash", "git log"),
        Effect::Allow
    );
    // The global rules are not changed by an agent's.
    assert_eq!(config.rules.evaluate("edit", "a.rs"), Effect::Ask);
}

#[test]
fn outside_a_repository_only_the_location_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let inner = dir.path().join("inner");
    std::fs::create_dir_all(&inner).unwrap();
    assert_eq!(
        tackle_host::config::project_dirs(&inner),
        std::slice::from_ref(&inner)
    );
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    assert_eq!(
        tackle_host::config::project_dirs(&inner),
        [dir.path().to_owned(), inner]
    );
}

#[test]
fn mcp_servers_are_read_and_kept() {
    let fx = Fixture::new();
    fx.write_user(r#"{"mcp": {"docs": {"type": "remote", "url": "https://x"}}}"#);
    let config = fx.load().unwrap();
    assert_eq!(
        serde_json::to_value(config.settings.mcp.unwrap()).unwrap(),
        json!({"docs": {"type": "remote", "url": "https://x"}})
    );
}
