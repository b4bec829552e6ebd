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

/// Every limit set looser than the user's (or the default) by the same project file.
const LOOSER: &str = r#"{
    "output": {"max_lines": 100000, "max_bytes": 100000000, "retention_days": 3650,
               "max_file_bytes": 1099511627776, "quota_bytes": 1125899906842624},
    "read": {"image_max_width": 100000, "image_max_height": 100000,
             "image_max_bytes": 5242880, "image_input": true},
    "bash": {"default_timeout_ms": 600000, "max_timeout_ms": 600000},
    "webfetch": {"timeout_seconds": 120, "max_bytes": 3000000000},
    "search": {"budget_ms": 100000000},
    "audit": {"required": false}
}"#;

/// What the user sets where the default is already the loosest a file may give.
const USER: &str = r#"{
    "read": {"image_max_bytes": 100000, "image_input": false},
    "bash": {"max_timeout_ms": 60000},
    "audit": {"required": true}
}"#;

#[test]
fn an_untrusted_project_cannot_loosen_any_limit() {
    let fx = Fixture::new();
    fx.write_user(USER);
    fx.write("tackle.json", LOOSER);
    let config = fx.load().unwrap();
    let settings = &config.settings;
    let output = settings.output.clone().unwrap_or_default();
    assert_eq!(output, tackle_host::config::OutputConfig::default());
    let read = settings.read.clone().unwrap();
    assert_eq!((read.image_max_width, read.image_max_height), (None, None));
    assert_eq!(
        (read.image_max_bytes, read.image_input),
        (Some(100_000), Some(false))
    );
    let bash = settings.bash.clone().unwrap();
    assert_eq!(
        (bash.default_timeout_ms, bash.max_timeout_ms),
        (None, Some(60_000))
    );
    assert_eq!(
        settings.webfetch.clone().unwrap_or_default(),
        tackle_host::config::WebfetchConfig::default()
    );
    assert_eq!(settings.search.clone().unwrap_or_default().budget_ms, None);
    assert_eq!(settings.audit.clone().unwrap().required, Some(true));
    insta::assert_snapshot!(
        "untrusted_limits_warning",
        fx.redact(&config.warnings.join("\n"))
    );
    // `tackle config` says where each value came from and what was ignored.
    let described = fx.redact(&config.describe());
    assert!(
        described.contains(
            "output.max_bytes         = 51200  # default; 100000000 from [repo]/tackle.json \
             ignored (untrusted: loosens a limit)"
        ),
        "{described}"
    );
    // The shell found on `PATH` differs between machines.
    let described: Vec<&str> = described
        .lines()
        .filter(|line| !line.starts_with("bash.shell"))
        .collect();
    let described = described.join("\n");
    insta::assert_snapshot!("untrusted_limits_described", described);
}

/// The saved outputs' directory is shared by every session of the data directory: a
/// repository that shortened its retention or shrank its quota would sweep the outputs of
/// other sessions, so an untrusted project cannot set either, not even lower.
#[test]
fn an_untrusted_project_cannot_sweep_the_shared_saved_outputs() {
    let fx = Fixture::new();
    fx.write(
        "tackle.json",
        r#"{"output": {"retention_days": 1, "quota_bytes": 1, "max_lines": 10}}"#,
    );
    let config = fx.load().unwrap();
    let output = config.settings.output.clone().unwrap();
    assert_eq!(
        (output.retention_days, output.quota_bytes, output.max_lines),
        (None, None, Some(10))
    );
    let warnings = config.warnings.join("\n");
    assert!(
        warnings.contains("output.retention_days") && warnings.contains("output.quota_bytes"),
        "{warnings}"
    );
    fx.trust();
    let output = fx.load().unwrap().settings.output.unwrap();
    assert_eq!(
        (output.retention_days, output.quota_bytes),
        (Some(1), Some(1))
    );
}

#[test]
fn an_untrusted_project_may_tighten_every_limit_and_a_trusted_one_loosen_them() {
    let fx = Fixture::new();
    fx.write_user(USER);
    fx.write(
        "tackle.json",
        r#"{
            "output": {"max_lines": 10, "max_bytes": 1000, "max_file_bytes": 8192},
            "read": {"image_max_width": 100, "image_max_height": 100,
                     "image_max_bytes": 20000, "image_input": false},
            "bash": {"default_timeout_ms": 1000, "max_timeout_ms": 2000},
            "webfetch": {"timeout_seconds": 2, "max_bytes": 1000},
            "search": {"budget_ms": 500},
            "audit": {"required": true}
        }"#,
    );
    let config = fx.load().unwrap();
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    let output = config.settings.output.unwrap();
    assert_eq!(
        (output.max_lines, output.max_bytes, output.max_file_bytes),
        (Some(10), Some(1000), Some(8192))
    );
    let read = config.settings.read.unwrap();
    assert_eq!(
        (read.image_max_width, read.image_max_bytes),
        (Some(100), Some(20000))
    );
    assert_eq!(config.settings.bash.unwrap().max_timeout_ms, Some(2000));
    let web = config.settings.webfetch.unwrap();
    assert_eq!((web.timeout_seconds, web.max_bytes), (Some(2), Some(1000)));
    assert_eq!(config.settings.search.unwrap().budget_ms, Some(500));

    fx.write("tackle.json", LOOSER);
    fx.trust();
    let config = fx.load().unwrap();
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    let settings = serde_json::to_value(&config.settings).unwrap();
    let looser: serde_json::Value = serde_json::from_str(LOOSER).unwrap();
    for (section, keys) in looser.as_object().unwrap() {
        for (key, value) in keys.as_object().unwrap() {
            assert_eq!(&settings[section][key], value, "{section}.{key}");
        }
    }
}

#[test]
fn an_untrusted_project_may_require_the_audit_log_but_not_move_or_trim_it() {
    let fx = Fixture::new();
    fx.write(
        "tackle.json",
        r#"{"audit": {"path": "/tmp/elsewhere.jsonl", "keep": 0, "max_bytes": 4096, "required": true}}"#,
    );
    let config = fx.load().unwrap();
    let audit = config.settings.audit.clone().unwrap();
    assert_eq!(
        (audit.path, audit.keep, audit.max_bytes, audit.required),
        (None, None, None, Some(true))
    );
    insta::assert_snapshot!(fx.redact(&config.warnings.join("\n")), @"tackle: [repo]/tackle.json is not trusted: its audit.path, audit.max_bytes, audit.keep settings are ignored (run `tackle trust [repo]/app` if you trust it)");
}
