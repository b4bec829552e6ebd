//! Credentials under short names (`DB_PASS`, `GITLAB_PAT`) and in connection strings
//! (`AccountKey=`, `SharedAccessKey=`, `Password=`, `Pwd=`): withheld from a real command's
//! environment, and redacted from the result when the command prints them anyway, as a host
//! redacts what `scrubbed_values` lists. Ordinary variables that look alike still pass.

use std::sync::Arc;

use serde_json::json;
use tackle_builtins::bash::{BashOptions, scrubbed_env, scrubbed_values};
use tackle_builtins::{FileMutation, Location, LocationServices, builtin_tools};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{AnswerAll, Effect, Permission, Reply, Rule, Ruleset, SavedApprovals};
use tackle_registry::{ApplicationTools, ToolRegistry};
use tackle_tool_core::{Call, Context, ShowAll};

const AZURE_KEY: &str = "c2VjcmV0LWF6dXJlLWtleS0xMjM0NTY3ODkw==";
const BUS_KEY: &str = "c2VjcmV0LWJ1cy1rZXk=";

/// Credentials the scrub missed before, each long enough to be redacted.
fn secrets() -> Vec<(&'static str, String)> {
    vec![
        ("DB_PASS", "db-pass-value-1".to_owned()),
        ("GITLAB_PAT", "gitlab-pat-value-1".to_owned()),
        ("SMTP_PASSWD", "smtp-passwd-value".to_owned()),
        ("REDIS_PWD", "redis-pwd-value-1".to_owned()),
        ("STORAGE_KEY", "storage-key-value".to_owned()),
        (
            "AZURE_STORAGE_CONNECTION_STRING",
            format!(
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={AZURE_KEY};\
                 EndpointSuffix=core.windows.net"
            ),
        ),
        (
            "SERVICE_BUS",
            format!(
                "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;\
                 SharedAccessKey={BUS_KEY}"
            ),
        ),
        (
            "SQL_CONNECTION",
            "Server=db;Database=app;User Id=app;Password=sql-password-1;".to_owned(),
        ),
        (
            "ODBC_CONNECTION",
            "Driver={PostgreSQL};Server=db;Uid=app;Pwd=odbc-password-1;".to_owned(),
        ),
    ]
}

/// Ordinary variables whose names or values resemble the credentials above.
const ORDINARY: &[(&str, &str)] = &[
    ("OLDPWD", "/tmp"),
    ("PATCH_LEVEL", "patch-level-3"),
    ("PASSES", "three-passes"),
    ("COMPASS_DIR", "/opt/compass-dir"),
    (
        "ACCOUNT_INFO",
        "AccountName=acct;EndpointSuffix=core.windows.net",
    ),
];

fn options() -> BashOptions {
    let mut options = BashOptions::default();
    let mut env = vec![
        ("PATH".into(), std::env::var_os("PATH").unwrap()),
        ("PWD".into(), "/nonexistent-pwd".into()),
    ];
    env.extend(secrets().into_iter().map(|(k, v)| (k.into(), v.into())));
    env.extend(ORDINARY.iter().map(|(k, v)| ((*k).into(), (*v).into())));
    options.env = Some(env);
    options
}

#[test]
fn the_shells_variables_and_look_alikes_are_given_to_commands() {
    let env = scrubbed_env(&options());
    let value = |name: &str| {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.to_string_lossy().into_owned())
    };
    assert_eq!(value("PWD").as_deref(), Some("/nonexistent-pwd"));
    assert!(value("PATH").is_some());
    for (name, expected) in ORDINARY {
        assert_eq!(value(name).as_deref(), Some(*expected), "{name}");
    }
    for (name, _) in secrets() {
        assert_eq!(value(name), None, "{name}");
    }
    // The keys of connection strings are reported alone as well as whole.
    let values = scrubbed_values(&options());
    for key in [AZURE_KEY, BUS_KEY, "sql-password-1", "odbc-password-1"] {
        assert!(values.iter().any(|v| v == key), "{key}: {values:?}");
    }
}

#[tokio::test]
async fn short_named_and_connection_string_credentials_are_withheld_and_redacted() {
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let options = options();
    // As a host does: what the scrub withholds is redacted from every result.
    let store = OutputStore::new(
        StoreConfig::in_data_dir(data.path()).with_redactions(scrubbed_values(&options)),
    );
    let permission = Permission::new(
        Ruleset::new(vec![Rule::new("*", "*", Effect::Allow)]),
        SavedApprovals::in_memory(),
        Arc::new(AnswerAll(Reply::Reject { message: None })),
    );
    let services = LocationServices::new(
        Location::new(root.path()).unwrap(),
        permission,
        store.clone(),
        FileMutation::new(),
    )
    .with_bash(options);
    let app = ApplicationTools::new();
    let registry = ToolRegistry::new(&app, store);
    let _registration = registry.tools().register(builtin_tools(&services)).unwrap();
    let snapshot = registry.materialize(&ShowAll);
    let run = |command: String| {
        let snapshot = &snapshot;
        async move {
            let settlement = snapshot
                .settle(
                    &Call::new("call_1", "bash", json!({ "command": command })),
                    &Context::new("ses_1"),
                )
                .await
                .unwrap();
            let output = settlement.output().unwrap();
            output
                .content
                .iter()
                .filter_map(|p| p.as_text())
                .collect::<String>()
        }
    };

    let env = run("env | sort".to_owned()).await;
    for (name, value) in secrets() {
        assert!(!env.contains(&format!("{name}=")), "{name} in {env}");
        assert!(!env.contains(&value), "{name}'s value in {env}");
    }
    for (name, value) in ORDINARY {
        let line = format!("{name}={value}");
        assert!(env.lines().any(|l| l == line), "{line} in {env}");
    }

    // Printed anyway (a command may find them elsewhere, e.g. in a file): redacted.
    let mut printed: Vec<String> = secrets().into_iter().map(|(_, v)| v).collect();
    printed.extend([AZURE_KEY, BUS_KEY].map(str::to_owned));
    for value in printed {
        let shown = run(format!("printf '%s\\n' '{value}'")).await;
        assert!(!shown.contains(&value), "{value} shown: {shown}");
        assert!(shown.contains("[REDACTED]"), "{shown}");
    }
}
