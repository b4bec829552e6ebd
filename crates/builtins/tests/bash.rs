//! The bash tool's contract (reference BA1–BA11) with real processes: model texts,
//! structured results, the permission order, capture limits, normalisation and environment.

use std::fs;
use std::time::{Duration, Instant};

use insta::assert_snapshot;
use serde_json::json;
use tackle_builtins::bash::{BashOptions, FORCE_KILL_AFTER, MAX_CAPTURE_BYTES};
use tackle_permission::{Effect, Reply};

use crate::bash_support::{SLACK, Setup, bash, failure, redact, rule, settle, strings, text};

#[tokio::test]
async fn pwd_reports_the_real_cwd_and_asserts_the_command() {
    let bash = bash();
    let out = settle(&bash.tool, json!({"command": "pwd"})).await.unwrap();
    let root = bash.root.display().to_string();
    assert_eq!(
        text(&out),
        format!("{root}\n\n\nCommand exited with code 0.")
    );
    assert_eq!(
        out.structured,
        json!({"command": "pwd", "cwd": root, "shell": BashOptions::default().resolved_shell(), "exitCode": 0,
               "output": format!("{root}\n"), "truncated": false})
    );
    assert_eq!(
        bash.asked(),
        vec![("bash".to_owned(), strings(&["pwd"]), strings(&["pwd *"]))]
    );
}

#[tokio::test]
async fn printf_and_echo_texts_as_the_reference() {
    let bash = bash();
    let out = settle(&bash.tool, json!({"command": "printf core-bash"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "core-bash\n\nCommand exited with code 0.");
    let out = settle(&bash.tool, json!({"command": "echo hello"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "hello\n\n\nCommand exited with code 0.");
}

#[tokio::test]
async fn model_texts() {
    let bash = bash();
    let mut texts = Vec::new();
    for command in [
        "true",
        "echo out; echo err >&2",
        "echo only-err >&2",
        "exit 7",
        "printf '\\033[1;31mred\\033[0m and \\033]0;title\\007plain\\n'",
        "printf 'fetch 10%%\\rfetch 50%%\\rfetch 100%%\\nspin |\\b/\\b-\\bdone\\n'",
        "printf 'ok \\377\\376 end\\n'",
        "kill -9 $$",
    ] {
        let out = settle(&bash.tool, json!({"command": command}))
            .await
            .unwrap();
        texts.push(format!("$ {command}\n{}", text(&out)));
    }
    assert_snapshot!(texts.join("\n\n----------\n\n"));
}

#[tokio::test]
async fn signal_death_is_exit_code_128_plus_the_signal() {
    let bash = bash();
    let out = settle(&bash.tool, json!({"command": "kill -9 $$"}))
        .await
        .unwrap();
    assert_eq!(out.structured["exitCode"], 137);
    assert_eq!(out.structured["signal"], 9);
}

#[tokio::test]
async fn a_relative_workdir_runs_there() {
    let bash = bash();
    fs::create_dir(bash.root.join("src")).unwrap();
    let out = settle(&bash.tool, json!({"command": "pwd", "workdir": "src"}))
        .await
        .unwrap();
    let cwd = bash.root.join("src").display().to_string();
    assert_eq!(out.structured["cwd"], cwd.as_str());
    assert_eq!(out.structured["output"], format!("{cwd}\n"));
}

#[tokio::test]
async fn a_workdir_replaced_by_a_file_during_approval_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let work = fs::canonicalize(dir.path()).unwrap().join("work");
    fs::create_dir(&work).unwrap();
    let replaced = work.clone();
    let bash = Setup {
        hook: Box::new(move |_| {
            if replaced.is_dir() {
                fs::remove_dir(&replaced).unwrap();
                fs::write(&replaced, "now a file").unwrap();
            }
        }),
        ..Setup::default()
    }
    .build();
    let command = format!("touch {}", bash.root.join("ran").display());
    let message = failure(
        settle(
            &bash.tool,
            json!({"command": command, "workdir": work.display().to_string()}),
        )
        .await,
    );
    assert_eq!(
        message,
        format!("Working directory is not a directory: {}", work.display())
    );
    assert!(!bash.root.join("ran").exists());
}

#[tokio::test]
async fn an_external_workdir_asks_external_directory_first() {
    let outside = tempfile::tempdir().unwrap();
    let real = fs::canonicalize(outside.path()).unwrap();
    let bash = bash();
    let out = settle(
        &bash.tool,
        json!({"command": "pwd", "workdir": real.display().to_string()}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["cwd"], real.display().to_string());
    let pattern = format!("{}/*", real.display());
    assert_eq!(
        bash.asked(),
        vec![
            (
                "external_directory".to_owned(),
                vec![pattern.clone()],
                vec![pattern]
            ),
            ("bash".to_owned(), strings(&["pwd"]), strings(&["pwd *"])),
        ]
    );
}

#[tokio::test]
async fn a_denial_of_either_assertion_runs_nothing() {
    let outside = tempfile::tempdir().unwrap();
    let real = fs::canonicalize(outside.path()).unwrap();
    for denied in ["external_directory", "bash"] {
        let bash = Setup {
            rules: vec![rule(denied, "*", Effect::Deny)],
            ..Setup::default()
        }
        .build();
        let message = failure(
            settle(
                &bash.tool,
                json!({"command": "touch ran", "workdir": real.display().to_string()}),
            )
            .await,
        );
        assert!(
            message.starts_with("Unable to execute command: touch ran: Permission denied"),
            "{message}"
        );
        assert!(!real.join("ran").exists(), "{denied}");
    }
}

#[tokio::test]
async fn reading_outside_only_warns() {
    let outside = tempfile::tempdir().unwrap();
    let real = fs::canonicalize(outside.path()).unwrap();
    fs::write(real.join("secret.txt"), "s3cret\n").unwrap();
    let bash = Setup {
        rules: vec![rule("external_directory", "*", Effect::Deny)],
        ..Setup::default()
    }
    .build();
    let command = format!("cat {}/secret.txt", real.display());
    let out = settle(&bash.tool, json!({"command": command}))
        .await
        .unwrap();
    assert_eq!(bash.actions(), ["bash"]);
    let warning = format!(
        "Command argument references external directory {}/*. Bash runs with host-user \
         filesystem, process, and network authority; this scan is advisory only.",
        real.display()
    );
    assert_eq!(out.structured["warnings"], json!([warning]));
    let text = text(&out);
    assert!(text.contains("Warnings:"), "{text}");
    assert!(text.starts_with("s3cret\n"), "{text}");
}

#[tokio::test]
async fn a_non_zero_exit_is_a_result() {
    let bash = bash();
    let out = settle(&bash.tool, json!({"command": "exit 7"}))
        .await
        .unwrap();
    assert!(text(&out).contains("Command exited with code 7"));
    assert_eq!(out.structured["exitCode"], 7);
}

#[tokio::test]
async fn stdout_over_the_limit_keeps_head_and_tail_and_counts_the_rest() {
    let bash = bash();
    let command = "head -c 3000000 /dev/zero | tr '\\0' a; printf END";
    let out = settle(&bash.tool, json!({"command": command}))
        .await
        .unwrap();
    let s = &out.structured;
    assert_eq!(s["truncated"], true);
    assert_eq!(s["stdoutTruncated"], true);
    assert!(s.get("stderrTruncated").is_none());
    assert!(s.get("resource").is_none());
    let dropped = 3_000_003 - MAX_CAPTURE_BYTES as u64;
    assert_eq!(s["stdoutDroppedBytes"], dropped);
    let text = text(&out);
    assert!(
        text.contains("stdout capture truncated"),
        "{}",
        &text[text.len() - 400..]
    );
    assert!(text.contains(&format!("[... {dropped} bytes of stdout dropped here ...]")));
    assert!(text.contains(&format!(
        "[stdout capture truncated at the in-memory safety limit] {dropped} bytes of stdout \
         were dropped from the middle"
    )));
    // Over the structured budget, the output is in the model text only (saved once by settle).
    assert!(s.get("output").is_none());
    assert!(text.starts_with(&"a".repeat(1000)));
    assert!(text.contains("aaaEND\n\n[stdout capture"));
}

#[tokio::test]
async fn truncation_notices_for_each_stream() {
    let bash = Setup {
        options: {
            let mut value = BashOptions::default();
            value.capture_limit = 16;
            value
        },
        ..Setup::default()
    }
    .build();
    let mut texts = Vec::new();
    for command in [
        "echo 0123456789abcdefghijklmnopqrstuvwxyz",
        "echo 0123456789abcdefghijklmnopqrstuvwxyz >&2",
        "echo 0123456789abcdefghijklmnopqrstuvwxyz; echo ABCDEFGHIJKLMNOPQRSTUVWXYZ >&2",
    ] {
        let out = settle(&bash.tool, json!({"command": command}))
            .await
            .unwrap();
        texts.push(format!("$ {command}\n{}", text(&out)));
    }
    assert_snapshot!(texts.join("\n\n----------\n\n"));
}

#[tokio::test]
async fn a_timeout_is_a_successful_result_with_the_partial_output() {
    let bash = bash();
    let started = Instant::now();
    let out = settle(
        &bash.tool,
        // Not last in the line, so no shell runs `sleep` in its own place: it is a child left
        // running at the timeout.
        json!({"command": "echo started; sleep 60; echo never", "timeout": 300}),
    )
    .await
    .unwrap();
    // At the timeout, long before the 60 s sleep ends (slack for a loaded machine).
    assert!(started.elapsed() < Duration::from_millis(300) + FORCE_KILL_AFTER + SLACK);
    let s = &out.structured;
    assert_eq!(s["timedOut"], true);
    assert_eq!(s["truncated"], false);
    assert!(s.get("exitCode").is_none());
    let text = redact(&text(&out), &bash.root);
    assert_snapshot!(text);

    let out = settle(&bash.tool, json!({"command": "sleep 60", "timeout": 200}))
        .await
        .unwrap();
    assert_eq!(out.structured["command"], "sleep 60");
    // bash runs a line's last command in its own place: `sleep` is the command's process,
    // stopped at the timeout, not a process left over.
    assert_eq!(
        out.structured["output"],
        "Command exceeded timeout of 200 ms. Retry with a larger timeout if the command is \
         expected to take longer."
    );
}

/// Credentials by name and by value shape, and URLs with a password, each with a value long
/// enough to be reported for redaction.
const SECRETS: &[(&str, &str)] = &[
    (
        "DATABASE_URL",
        "postgres://app:db-password-1@db.internal:5432/app",
    ),
    (
        "SENTRY_DSN",
        "https://0123456789abcdef@o1.ingest.sentry.io/42",
    ),
    (
        "SLACK_WEBHOOK_URL",
        "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
    ),
    (
        "HTTPS_PROXY",
        "http://proxy-user:proxy-password@proxy.internal:3128",
    ),
    (
        "all_proxy",
        "socks5-user:socks-password@socks.internal:1080",
    ),
    ("COOKIE", "session=0123456789abcdef"),
    ("JWT", "not-even-jwt-shaped"),
    ("BW_SESSION", "bitwarden-session-key=="),
    ("SSH_AUTH_SOCK", "/tmp/ssh-XXXX/agent.1234"),
    ("NEUTRAL_OPENAI", "sk-proj-abcdefghijklmnopqrstuvwxyz0123"),
    ("NEUTRAL_GITHUB", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    (
        "NEUTRAL_GITHUB_PAT",
        "github_pat_11ABCDEFG0abcdefghijklmnop_qrstuvwxyz",
    ),
    ("NEUTRAL_AWS", "AKIAIOSFODNN7EXAMPLE"),
    ("NEUTRAL_SLACK_BOT", "xoxb-1234567890-abcdefghij"),
    ("NEUTRAL_SLACK_USER", "xoxp-1234567890-abcdefghij"),
    (
        "NEUTRAL_JWT",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl",
    ),
];

/// What commands keep: ordinary variables, and URLs without a password.
const ORDINARY: &[(&str, &str)] = &[
    ("HOME", "/nonexistent-home"),
    ("LANG", "C.UTF-8"),
    ("CARGO_HOME", "/nonexistent-home/.cargo"),
    ("CARGO_TARGET_DIR", "/nonexistent-target"),
    ("URL", "https://example.com/path?q=1"),
    ("REPO_URL", "https://git@example.com/repo.git"),
    ("NO_PROXY", "localhost,127.0.0.1"),
];

fn secrets_options() -> BashOptions {
    let mut options = BashOptions::default();
    let mut env = vec![("PATH".into(), std::env::var_os("PATH").unwrap())];
    env.extend(
        SECRETS
            .iter()
            .chain(ORDINARY)
            .map(|(k, v)| ((*k).into(), (*v).into())),
    );
    options.env = Some(env);
    options
}

#[tokio::test]
async fn credentials_are_withheld_by_name_and_by_value_shape() {
    let bash = Setup {
        options: secrets_options(),
        ..Setup::default()
    }
    .build();
    let out = settle(&bash.tool, json!({"command": "env | sort"}))
        .await
        .unwrap();
    let output = out.structured["output"].as_str().unwrap().to_owned();
    for (name, value) in ORDINARY {
        let line = format!("{name}={value}");
        assert!(output.lines().any(|l| l == line), "{line} in {output}");
    }
    // The URLs keep everything but their password.
    for line in [
        "DATABASE_URL=postgres://app@db.internal:5432/app",
        "HTTPS_PROXY=http://proxy-user@proxy.internal:3128",
        "all_proxy=socks5-user@socks.internal:1080",
    ] {
        assert!(output.lines().any(|l| l == line), "{line} in {output}");
    }
    for (name, value) in SECRETS {
        assert!(!output.contains(value), "{name}'s value in {output}");
    }
    for name in [
        "SENTRY_DSN",
        "SLACK_WEBHOOK_URL",
        "COOKIE",
        "JWT",
        "BW_SESSION",
    ] {
        assert!(!output.contains(&format!("{name}=")), "{name} in {output}");
    }
    for password in ["db-password-1", "proxy-password", "socks-password"] {
        assert!(!output.contains(password), "{password} in {output}");
    }
}

#[test]
fn scrubbed_values_are_what_commands_do_not_see() {
    let values = tackle_builtins::bash::scrubbed_values(&secrets_options());
    for (name, value) in SECRETS {
        assert!(values.iter().any(|v| v == value), "{name}: {values:?}");
    }
    for password in ["db-password-1", "proxy-password", "socks-password"] {
        assert!(
            values.iter().any(|v| v == password),
            "{password}: {values:?}"
        );
    }
    for (name, value) in ORDINARY {
        assert!(!values.iter().any(|v| v == value), "{name}: {values:?}");
    }
    // Longest first, so replacing them in order never leaves part of a longer one.
    assert!(
        values.windows(2).all(|w| w[0].len() >= w[1].len()),
        "{values:?}"
    );
    // An allowed variable is given to commands, so it is not reported.
    let mut allowed = secrets_options();
    allowed.env_allow = strings(&["NEUTRAL_*"]);
    let values = tackle_builtins::bash::scrubbed_values(&allowed);
    assert!(!values.iter().any(|v| v.starts_with("ghp_")), "{values:?}");
}

#[tokio::test]
async fn the_environment_is_non_interactive_and_scrubbed() {
    let path = std::env::var_os("PATH").unwrap();
    let bash = Setup {
        options: {
            let mut value = BashOptions::default();
            value.env = Some(vec![
                ("PATH".into(), path),
                ("HOME".into(), "/nonexistent-home".into()),
                ("PAGER".into(), "less".into()),
                ("GIT_PAGER".into(), "less".into()),
                ("OPENAI_API_KEY".into(), "sk-secret".into()),
                ("GITHUB_TOKEN".into(), "gh-allowed".into()),
                ("AWS_SECRET_ACCESS_KEY".into(), "aws-secret".into()),
                ("FORCE_COLOR".into(), "1".into()),
            ]);
            value.env_allow = strings(&["GITHUB_TOKEN"]);
            value
        },
        ..Setup::default()
    }
    .build();
    let out = settle(&bash.tool, json!({"command": "env | sort"}))
        .await
        .unwrap();
    let output = out.structured["output"].as_str().unwrap().to_owned();
    for expected in [
        "PAGER=cat",
        "GIT_PAGER=cat",
        "GIT_EDITOR=true",
        "GIT_TERMINAL_PROMPT=0",
        "GIT_MERGE_AUTOEDIT=no",
        "DEBIAN_FRONTEND=noninteractive",
        "NO_COLOR=1",
        "GITHUB_TOKEN=gh-allowed",
        "HOME=/nonexistent-home",
    ] {
        assert!(
            output.lines().any(|l| l == expected),
            "{expected} in {output}"
        );
    }
    for absent in ["sk-secret", "aws-secret", "FORCE_COLOR", "PAGER=less"] {
        assert!(!output.contains(absent), "{absent} in {output}");
    }
}

#[tokio::test]
async fn stdin_is_empty_and_there_is_no_terminal() {
    let bash = bash();
    let out = settle(
        &bash.tool,
        json!({"command": "cat; echo cat=$?; read x; echo read=$?; exec 3</dev/tty"}),
    )
    .await
    .unwrap();
    let output = out.structured["output"].as_str().unwrap();
    assert!(output.starts_with("cat=0\nread=1\n"), "{output}");
    assert!(output.contains("/dev/tty"), "{output}");
    assert_ne!(out.structured["exitCode"], 0);
}

#[tokio::test]
async fn bad_input_is_refused_before_anything_runs() {
    let bash = bash();
    let mut texts = Vec::new();
    for input in [
        json!({"command": "true", "timeout": 0}),
        json!({"command": "true", "timeout": 600_001}),
        json!({"command": "true", "timeout": -5}),
        json!({"command": "true", "timeout": 1.5}),
        json!({"command": "   "}),
        json!({"command": "echo a\u{0}b"}),
        json!({"command": "true", "workdir": "../elsewhere"}),
        json!({"command": "vi notes.txt"}),
        json!({"command": "git status && nano x"}),
        json!({"workdir": "."}),
    ] {
        let message = failure(settle(&bash.tool, input.clone()).await);
        texts.push(format!("{input}\n{message}"));
    }
    assert_snapshot!(texts.join("\n\n"));
    assert!(bash.asked().is_empty());
    // The largest timeout is accepted.
    let out = settle(&bash.tool, json!({"command": "true", "timeout": 600_000}))
        .await
        .unwrap();
    assert_eq!(out.structured["exitCode"], 0);
}

#[tokio::test]
async fn the_definition_offers_background_jobs() {
    let bash = bash();
    let definition = bash.tool.definition("bash").unwrap();
    assert_eq!(
        definition.input_schema["properties"]["background"]["type"],
        "boolean"
    );
    insta::assert_json_snapshot!(definition.input_schema);
    // The default shell is the host's bash, wherever it is installed.
    let shell = BashOptions::default().resolved_shell();
    assert_snapshot!(
        definition
            .description
            .replace(&*shell.to_string_lossy(), "[SHELL]")
    );
}

#[tokio::test]
async fn the_default_shell_is_bash() {
    if !std::path::Path::new("/bin/bash").exists() {
        eprintln!("no bash on this host: the default is /bin/sh, and this test is skipped");
        return;
    }
    let bash = bash();
    let shell = BashOptions::default().resolved_shell();
    assert_eq!(shell.file_name().unwrap(), "bash", "{}", shell.display());
    // What models write, and dash refuses.
    for (command, expected) in [
        ("echo {1..3}", "1 2 3\n"),
        ("[[ abc == a* ]] && echo yes", "yes\n"),
        ("a=(x y z); echo ${#a[@]} ${a[1]}", "3 y\n"),
        ("set -o pipefail; false | true; echo $?", "1\n"),
        ("echo $'tab\\there' | cat -A", "tab^Ihere$\n"),
    ] {
        let out = settle(&bash.tool, json!({"command": command}))
            .await
            .unwrap();
        assert_eq!(out.structured["output"], expected, "{command}");
        assert_eq!(out.structured["shell"], shell.to_string_lossy().as_ref());
    }
}

#[tokio::test]
async fn a_configured_shell_is_used_and_named() {
    let bash = Setup {
        options: {
            let mut value = BashOptions::default();
            value.shell = Some("/bin/bash".into());
            value
        },
        ..Setup::default()
    }
    .build();
    let out = settle(
        &bash.tool,
        json!({"command": "[[ -n $BASH_VERSION ]] && echo bash"}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["shell"], "/bin/bash");
    assert_eq!(out.structured["output"], "bash\n");
}

#[tokio::test]
async fn without_a_configured_shell_bash_is_found_on_the_path_commands_start_with() {
    // A host's own environment decides which bash runs, not the PATH of the process that
    // built the tool.
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("bash");
    std::fs::write(&fake, "#!/bin/sh\necho \"fake bash\"\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut options = BashOptions::default();
    options.env = Some(vec![("PATH".into(), bin.path().into())]);
    assert_eq!(options.resolved_shell(), fake);
    let bash = Setup {
        options,
        ..Setup::default()
    }
    .build();
    let out = settle(&bash.tool, json!({"command": "true"}))
        .await
        .unwrap();
    assert_eq!(out.structured["shell"], fake.to_string_lossy().as_ref());
    assert_eq!(out.structured["output"], "fake bash\n");
}

#[tokio::test]
async fn a_shell_that_cannot_start_is_a_failure() {
    let bash = Setup {
        options: {
            let mut value = BashOptions::default();
            value.shell = Some("/nonexistent/sh".into());
            value
        },
        ..Setup::default()
    }
    .build();
    let message = failure(settle(&bash.tool, json!({"command": "true"})).await);
    assert_eq!(message, "Unable to execute command: true");
}

#[tokio::test]
async fn a_rejection_with_feedback_reaches_the_model_and_runs_nothing() {
    fn reject(_: &str) -> Reply {
        Reply::Reject {
            message: Some("use make instead".to_owned()),
        }
    }
    let bash = Setup {
        reply: reject,
        ..Setup::default()
    }
    .build();
    let message = failure(settle(&bash.tool, json!({"command": "touch ran"})).await);
    assert!(message.ends_with("use make instead"), "{message}");
    assert!(!bash.root.join("ran").exists());
}

#[tokio::test]
async fn output_is_reported_as_it_arrives_and_the_result_is_unchanged() {
    use std::sync::{Arc, Mutex};
    use tackle_tool_core::{Context, OutputStream, Progress, ProgressSink};

    let bash = bash();
    type Seen = Vec<(Instant, OutputStream, Vec<u8>)>;
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let sink = {
        let seen = Arc::clone(&seen);
        ProgressSink::new(move |progress| {
            if let Progress::Output { stream, bytes } = progress {
                seen.lock()
                    .unwrap()
                    .push((Instant::now(), stream, bytes.to_vec()));
            }
        })
    };
    let ctx = Context::new("ses_1").with_progress(sink);
    let command = "echo first; echo oops >&2; sleep 2; echo second";
    let out = crate::bash_support::settle_with(&bash.tool, json!({"command": command}), &ctx)
        .await
        .unwrap();
    let ended = Instant::now();
    let seen: Seen = std::mem::take(&mut *seen.lock().unwrap());
    let joined = |wanted: OutputStream| -> String {
        let bytes: Vec<u8> = seen
            .iter()
            .filter(|(_, stream, _)| *stream == wanted)
            .flat_map(|(_, _, bytes)| bytes.clone())
            .collect();
        String::from_utf8(bytes).unwrap()
    };
    assert_eq!(joined(OutputStream::Stdout), "first\nsecond\n");
    assert_eq!(joined(OutputStream::Stderr), "oops\n");
    // "first" was reported while the command still slept, not when it ended.
    let first_at = seen[0].0;
    assert!(
        ended - first_at > Duration::from_millis(1500),
        "{:?}",
        ended - first_at
    );
    // The model's text is the same as without a sink.
    let plain = settle(&bash.tool, json!({"command": command}))
        .await
        .unwrap();
    assert_eq!(text(&out), text(&plain));
}
