use predicates::str::contains;

use crate::{Workspace, tackle};

#[test]
fn read_settles_through_the_registry_and_prints_the_model_text() {
    let ws = Workspace::new();
    ws.write("notes.txt", "alpha\nbeta\n");
    let out = ws
        .tackle(&["call", "read", r#"{"path":"notes.txt"}"#])
        .assert()
        .code(0);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let text = text.replace(&ws.dir.path().display().to_string(), "[dir]");
    insta::assert_snapshot!(text, @r"
    <path>notes.txt</path>
    <type>file</type>
    <content>
    1: alpha
    2: beta

    (End of file - total 2 lines)
    </content>
    ");
}

#[test]
fn an_unknown_tool_is_an_error_result() {
    let ws = Workspace::new();
    ws.tackle(&["call", "no_such_tool", "{}"])
        .assert()
        .code(1)
        .stdout("Unknown tool: no_such_tool\n");
}

#[test]
fn json_prints_the_settlement() {
    let ws = Workspace::new();
    let out = ws.tackle(&["call", "nope", "--json"]).assert().code(1);
    let settlement: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        settlement,
        serde_json::json!({"result": {"type": "error", "value": "Unknown tool: nope"}})
    );
}

#[test]
fn invalid_json_input_is_a_clear_usage_error() {
    tackle()
        .args(["call", "read", "{path:"])
        .assert()
        .code(2)
        .stderr(contains(
            "tackle: the input is not valid JSON: key must be a string at line 1 column 2",
        ));
}

#[test]
fn input_can_come_from_stdin() {
    let ws = Workspace::new();
    ws.write("a.txt", "from stdin\n");
    ws.tackle(&["call", "read", "-"])
        .write_stdin(r#"{"path":"a.txt"}"#)
        .assert()
        .code(0)
        .stdout(contains("1: from stdin"));
    tackle()
        .args(["call", "x", "-"])
        .write_stdin("[1,")
        .assert()
        .code(2)
        .stderr(contains("not valid JSON"));
}

#[test]
fn a_large_input_from_stdin_is_read_past_its_first_mebibyte() {
    // Inputs up to 1 MiB are parsed from memory; a larger one continues as a stream after the
    // part read whole, and must arrive intact.
    let ws = Workspace::new();
    let content = "0123456789abcdef\n".repeat(200_000);
    let input = serde_json::json!({ "filePath": "big.txt", "content": content }).to_string();
    assert!(input.len() > 3 << 20);
    ws.tackle(&["call", "write", "-", "--yes"])
        .write_stdin(input.clone())
        .assert()
        .code(0);
    assert_eq!(
        std::fs::read_to_string(ws.dir.path().join("big.txt")).unwrap(),
        content
    );
    // Cut short past the first mebibyte, it is still invalid JSON, not a partial file.
    ws.tackle(&["call", "write", "-", "--yes"])
        .write_stdin(input[..2 << 20].to_owned())
        .assert()
        .code(2)
        .stderr(contains("not valid JSON"));
}

#[test]
fn a_missing_location_is_a_usage_error() {
    let ws = Workspace::new();
    let missing = ws.dir.path().join("missing");
    tackle()
        .args(["call", "read", "{}", "--dir"])
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(contains("No such file or directory"));
    ws.write("file", "x");
    tackle()
        .args(["call", "read", "{}", "--dir"])
        .arg(ws.dir.path().join("file"))
        .assert()
        .code(2)
        .stderr(contains("not a directory"));
}

#[test]
fn without_a_terminal_an_ask_is_declined_and_nothing_is_written() {
    let ws = Workspace::new();
    ws.tackle(&["call", "write", r#"{"path":"new.txt","content":"x"}"#])
        .assert()
        .code(2)
        .stderr(contains("halted"));
    assert!(!ws.dir.path().join("new.txt").exists());
}

#[test]
fn yes_answers_once() {
    let ws = Workspace::new();
    ws.tackle(&[
        "call",
        "write",
        r#"{"path":"new.txt","content":"hello\n"}"#,
        "--yes",
    ])
    .assert()
    .code(0)
    .stdout(contains("Created file successfully"));
    assert_eq!(
        std::fs::read_to_string(ws.dir.path().join("new.txt")).unwrap(),
        "hello\n"
    );
}

#[test]
fn a_configured_deny_still_denies_with_yes() {
    let ws = Workspace::new();
    ws.write(
        "opencode.json",
        r#"{"model": "x", "permission": {"edit": {"*": "allow", "secret*": "deny"}}}"#,
    );
    ws.trust();
    ws.tackle(&[
        "call",
        "write",
        r#"{"path":"secret.txt","content":"x"}"#,
        "--yes",
    ])
    .assert()
    .code(1);
    assert!(!ws.dir.path().join("secret.txt").exists());
    // Allowed by the same configuration without asking.
    ws.tackle(&["call", "write", r#"{"path":"open.txt","content":"x"}"#])
        .assert()
        .code(0);
}

#[test]
fn a_bad_configuration_is_a_clear_error() {
    let ws = Workspace::new();
    ws.write(
        "tackle.json",
        r#"{"permission": {"edit": "sometimes"}, "model": "x"}"#,
    );
    ws.tackle(&["call", "read", r#"{"path":"x"}"#])
        .assert()
        .code(2)
        .stderr(contains("tackle.json"));
}

#[test]
fn a_protected_write_asks_even_where_the_rules_allow() {
    let ws = Workspace::new();
    // The user's own configuration (named on the command line) allows every edit.
    let config = ws.data.path().join("mine.json");
    std::fs::write(&config, r#"{"permission": {"edit": "allow"}}"#).unwrap();
    let config = config.to_str().unwrap();
    ws.tackle(&["call", "write", r#"{"path":"notes.md","content":"x"}"#])
        .args(["--config", config])
        .assert()
        .code(0);
    // Without a terminal nobody can answer the ask: declined, nothing written.
    let out = ws
        .tackle(&[
            "call",
            "write",
            r#"{"path":"tackle.json","content":"{\"permission\":\"allow\"}"}"#,
        ])
        .args(["--config", config])
        .assert()
        .code(2);
    assert!(!ws.dir.path().join("tackle.json").exists());
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    insta::assert_snapshot!(stderr, @r"
    tackle: edit tackle.json needs permission and there is no terminal to ask, so it is declined; pass --yes to allow it once
      protected: tackle.json (a configuration file): rules and saved approvals cannot allow writing it
    tackle: halted: the user declined the tool call
    ");
    // --yes answers asks, protected ones included: it is the user's consent for this run.
    ws.tackle(&[
        "call",
        "write",
        r#"{"path":".git/info/exclude","content":"x\n"}"#,
        "--yes",
    ])
    .args(["--config", config])
    .assert()
    .code(0);
    assert!(ws.dir.path().join(".git/info/exclude").exists());
}

#[test]
fn commands_cannot_read_the_environment_of_tackle() {
    let ws = Workspace::new();
    // Commands run as tackle's user; what protects tackle's environment is that it is not
    // dumpable. Root's CAP_SYS_PTRACE would read it anyway, so as root tackle runs without
    // capabilities (setpriv empties the bounding set: still uid 0, no capability), as an
    // ordinary user does. The second reading, of the command's own (dumpable) shell, shows
    // the reader itself works.
    let command = "echo parent=$(cat /proc/$PPID/environ 2>/dev/null | tr '\\0' '\\n' \
                   | grep -c '^TACKLE_TEST_CANARY='); \
                   echo self=$(cat /proc/$$/environ 2>/dev/null | tr '\\0' '\\n' \
                   | grep -c '^TACKLE_TEST_CANARY=')";
    let input = serde_json::json!({ "command": command }).to_string();
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    let mut run = if root {
        let mut run = assert_cmd::Command::new("setpriv");
        run.args(["--bounding-set=-all", "--inh-caps=-all", "--"])
            .arg(assert_cmd::cargo::cargo_bin("tackle"));
        run
    } else {
        assert_cmd::Command::cargo_bin("tackle").unwrap()
    };
    let out = run
        .arg("--data-dir")
        .arg(ws.data.path())
        .args(["call", "bash", "--yes", &input, "--dir"])
        .arg(ws.dir.path())
        .env("TACKLE_TEST_CANARY", "canary-value")
        .assert()
        .code(0);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("parent=0\n"), "{text}");
    assert!(text.contains("self=1\n"), "{text}");
}

/// A managed output that cannot be saved (the store's directory is a file here) still prints
/// its bounded preview, which says so; stderr tells the user why. Before, the call failed with
/// a storage error and printed no result.
#[test]
fn an_output_that_cannot_be_saved_still_prints_its_preview() {
    let ws = Workspace::new();
    std::fs::write(ws.data.path().join("tool-output"), "not a directory").unwrap();
    let out = ws
        .tackle(&["call", "bash", r#"{"command":"seq 1 20000"}"#, "--yes"])
        .assert()
        .code(0)
        .stderr(contains(
            "tackle: the full output was not saved: the managed output directory",
        ));
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.starts_with("1\n2\n") && text.contains("\n20000"),
        "{text}"
    );
    assert!(text.len() <= 50 * 1024, "{}", text.len());
    assert!(
        text.contains("The full output could not be saved (the managed output directory is not a directory), so only this preview is left."),
        "{text}"
    );
}

#[test]
fn calls_written_for_opencode_kilo_and_claude_code_settle() {
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\n");
    ws.tackle(&["call", "read", r#"{"filePath":"a.txt"}"#])
        .assert()
        .code(0)
        .stdout(contains("1: alpha"));
    let out = ws
        .tackle(&[
            "call",
            "Read",
            r#"{"file_path":"a.txt","limit":"1"}"#,
            "--json",
        ])
        .assert()
        .code(0);
    let settlement: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(settlement["settledAs"], "read");
    ws.tackle(&["call", "grep", r#"{"pattern":"ALPHA","-i":true}"#])
        .assert()
        .code(0)
        .stdout(contains("Line 1: alpha"));
    ws.tackle(&["call", "grep", r#"{"pattern":"alpha","ignorecase":true}"#])
        .assert()
        .code(1)
        .stdout(contains("ignorecase: unknown field"));
}

/// `--session` keeps a todo list across processes in the data directory, and `tackle session
/// delete` removes it (with the session's managed outputs).
#[test]
fn a_sessions_todos_outlive_the_call_until_the_session_is_deleted() {
    let ws = Workspace::new();
    let todos = r#"{"todos": [{"content": "ship it", "status": "pending", "priority": "high"}]}"#;
    ws.tackle(&["call", "todowrite", todos, "--session", "review-42"])
        .assert()
        .code(0);
    let saved = || {
        std::fs::read_dir(ws.data.path().join("todos"))
            .map(|dir| dir.count())
            .unwrap_or(0)
    };
    assert_eq!(saved(), 1);
    ws.tackle(&["session", "delete", "review-42"])
        .assert()
        .code(0);
    assert_eq!(saved(), 0);
}

#[test]
fn a_one_shot_call_refuses_a_background_job_and_runs_nothing() {
    let ws = Workspace::new();
    let out = ws
        .tackle(&[
            "call",
            "bash",
            r#"{"command":"touch started","background":true}"#,
            "--yes",
        ])
        .assert()
        .code(1);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    insta::assert_snapshot!(text, @"Background jobs need a host that keeps running: `tackle call` exits when the call returns, and the job would end with it. Run the command without `background` (it then has a timeout), or start it through `tackle serve`, which keeps jobs across calls.");
    assert!(!ws.dir.path().join("started").exists());
    // Nor are the job tools offered.
    ws.tackle(&["call", "job_list", "{}"])
        .assert()
        .code(1)
        .stdout("Unknown tool: job_list\n");
}

/// A 1×1 RGBA PNG.
const TINY_PNG: [u8; 70] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0x60, 0xf8, 0x5f,
    0x0f, 0x00, 0x02, 0x87, 0x01, 0x80, 0xeb, 0x47, 0xba, 0x92, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

#[test]
fn an_image_is_decoded_by_the_binary_as_its_own_worker() {
    let ws = Workspace::new();
    std::fs::write(ws.dir.path().join("dot.png"), TINY_PNG).unwrap();
    let out = ws
        .tackle(&["call", "read", r#"{"path":"dot.png"}"#, "--json"])
        .assert()
        .code(0);
    let settlement: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        settlement["output"]["structured"]["width"], 1,
        "{settlement}"
    );
}

#[test]
fn the_media_worker_subcommand_is_hidden_and_answers_only_its_protocol() {
    // A request it cannot read: it says nothing on stdout and stderr and exits 2.
    tackle()
        .arg("media-worker")
        .write_stdin("not a request")
        .assert()
        .code(2)
        .stdout("")
        .stderr("");
    let help = tackle().arg("--help").assert().success();
    let help = String::from_utf8(help.get_output().stdout.clone()).unwrap();
    assert!(!help.contains("media-worker"), "{help}");
    for shell in ["bash", "zsh", "fish"] {
        let out = tackle().args(["completions", shell]).assert().success();
        let script = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        assert!(!script.contains("media-worker"), "{shell}");
    }
    let man = tackle().arg("man").assert().success();
    let man = String::from_utf8(man.get_output().stdout.clone()).unwrap();
    assert!(!man.contains("media-worker") && !man.contains("media\\-worker"));
}
