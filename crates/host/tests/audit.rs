//! The audit log: a scripted session through the host, read back record by record; a torn
//! last line left by a killed writer is skipped, never misread, and later records are fine.

use std::path::Path;

use serde_json::{Value, json};
use tackle_host::Host;
use tackle_host::audit::{AuditLine, read_log};
use tackle_permission::{AnswerAll, Reply};
use tackle_tool_core::Call;

use crate::Fixture;

const TOKEN: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

fn host(fx: &Fixture, log: &Path) -> Host {
    Host::builder(fx.location())
        .data_dir(fx.data.path())
        .env(fx.env())
        .asker(std::sync::Arc::new(AnswerAll(Reply::Once)))
        .set("audit.path", json!(log))
        // Commands start from the injected environment only when `bash.env` is set.
        .set("bash.env", json!({"TACKLE_AUDIT_TEST": "1"}))
        .set(
            "permission",
            json!({"bash": {"*": "ask", "rm *": "deny"}, "edit": "allow"}),
        )
        .build()
        .unwrap()
}

async fn script(host: &Host) {
    let session = host.session("ses_audit").with_agent("build");
    let calls = [
        (
            "c1",
            "write",
            json!({"path": "notes.txt", "content": "the secret plan\n"}),
        ),
        ("c2", "read", json!({"path": "notes.txt"})),
        ("c3", "bash", json!({"command": format!("echo {TOKEN}")})),
        ("c4", "bash", json!({"command": "rm -rf notes.txt"})),
        ("c5", "nope", json!({})),
    ];
    for (id, tool, input) in calls {
        session.settle(&Call::new(id, tool, input)).await.unwrap();
    }
}

fn records(path: &Path) -> Vec<serde_json::Map<String, Value>> {
    read_log(path)
        .unwrap()
        .into_iter()
        .filter_map(|line| match line {
            AuditLine::Record { record, .. } => Some(record),
            AuditLine::Skipped { .. } => None,
        })
        .collect()
}

fn kinds(records: &[serde_json::Map<String, Value>]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            let what = r
                .get("tool")
                .or_else(|| r.get("action"))
                .and_then(Value::as_str)
                .unwrap_or("");
            format!("{} {} {what}", r["seq"], r["kind"].as_str().unwrap())
        })
        .collect()
}

#[tokio::test]
async fn a_scripted_session_leaves_one_record_per_call_and_decision() {
    let mut fx = Fixture::new();
    fx.var("GITHUB_TOKEN", TOKEN);
    let log = fx.data.path().join("logs/audit.jsonl");
    {
        let host = host(&fx, &log);
        script(&host).await;
    } // Dropping the host writes what is queued.
    let records = records(&log);
    assert_eq!(
        kinds(&records),
        [
            "1 decision edit",
            "2 call write",
            "3 decision read",
            "4 call read",
            "5 decision bash",
            "6 call bash",
            "7 decision bash",
            "8 call bash",
            "9 call nope",
        ]
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("secret plan"), "file contents in {text}");
    assert!(!text.contains(TOKEN), "a secret in {text}");
    let write = &records[1];
    assert_eq!(write["session"], "ses_audit");
    assert_eq!(write["agent"], "build");
    assert_eq!(write["call_id"], "c1");
    assert_eq!(
        write["input"],
        json!({"path": "notes.txt", "content": {"bytes": 16, "lines": 1}})
    );
    assert_eq!(write["result"], "text");
    assert_eq!(
        records[0]["rule"],
        json!({"action": "edit", "resource": "*", "effect": "allow"})
    );
    assert!(
        records[0]["origin"].as_str().unwrap().contains("--set"),
        "{:?}",
        records[0]
    );
    assert_eq!(records[0]["verdict"], "allowed");
    let echo = &records[4];
    assert_eq!(echo["resources"], json!(["echo [REDACTED]"]));
    assert_eq!(echo["reply"], "once");
    assert_eq!(records[5]["input"], json!({"command": "echo [REDACTED]"}));
    let rm = &records[6];
    assert_eq!(rm["verdict"], "blocked");
    assert_eq!(rm["effect"], "deny");
    assert_eq!(records[7]["result"], "error");
    assert_eq!(records[8]["result"], "error");
    // Mode 0600: the log says who ran what.
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&log).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[tokio::test]
async fn a_torn_last_line_is_skipped_and_the_next_records_are_whole() {
    let fx = Fixture::new();
    let log = fx.data.path().join("audit.jsonl");
    {
        let host = host(&fx, &log);
        let session = host.session("s1");
        session
            .settle(&Call::new("a", "nope", json!({})))
            .await
            .unwrap();
    }
    // A writer killed mid-record leaves half a line.
    let mut text = std::fs::read(&log).unwrap();
    text.extend_from_slice(br#"{"seq":2,"time_ms":1,"kind":"call","session":"s1","tool":"wri"#);
    std::fs::write(&log, &text).unwrap();
    let lines = read_log(&log).unwrap();
    assert!(matches!(lines[0], AuditLine::Record { seq: 1, .. }));
    assert!(
        matches!(lines[1], AuditLine::Skipped { line: 2, .. }),
        "{lines:?}"
    );
    {
        let host = host(&fx, &log);
        let session = host.session("s2");
        session
            .settle(&Call::new("b", "nope", json!({})))
            .await
            .unwrap();
    }
    let lines = read_log(&log).unwrap();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        matches!(lines[1], AuditLine::Skipped { line: 2, .. }),
        "{lines:?}"
    );
    match &lines[2] {
        // The torn record's number is never reused as if it had been written: numbering goes
        // on from the last whole record.
        AuditLine::Record { seq, record } => {
            assert_eq!(*seq, 2);
            assert_eq!(record["session"], "s2");
        }
        other => panic!("expected a record, got {other:?}"),
    }
}

#[tokio::test]
async fn the_log_rotates_by_size_and_keeps_what_it_is_told() {
    let fx = Fixture::new();
    let log = fx.data.path().join("audit.jsonl");
    let host = Host::builder(fx.location())
        .data_dir(fx.data.path())
        .env(fx.env())
        .set("audit", json!({"path": log, "max_bytes": 4096, "keep": 2}))
        .build()
        .unwrap();
    let session = host.session("s");
    for i in 0..200 {
        session
            .settle(&Call::new(format!("c{i}"), "nope", json!({})))
            .await
            .unwrap();
    }
    drop(host);
    let rotated = |n| tackle_host::audit::rotated_path(&log, n);
    assert!(rotated(1).exists() && rotated(2).exists());
    assert!(!rotated(3).exists());
    // Numbers run on across files: the newest file continues the rotated one.
    let last_rotated = records(&rotated(1)).last().unwrap()["seq"]
        .as_u64()
        .unwrap();
    let first_current = records(&log).first().map(|r| r["seq"].as_u64().unwrap());
    assert_eq!(first_current.unwrap_or(last_rotated + 1), last_rotated + 1);
    assert_eq!(
        records(&log)
            .last()
            .map_or(last_rotated, |r| r["seq"].as_u64().unwrap()),
        200
    );
}

/// A host logging to `log`, `required` or not, that allows `bash` and `edit` without asking.
fn host_logging(fx: &Fixture, log: &Path, required: bool) -> Host {
    Host::builder(fx.location())
        .data_dir(fx.data.path())
        .env(fx.env())
        .set("audit", json!({"path": log, "required": required}))
        .set("permission", json!({"bash": "allow", "edit": "allow"}))
        .build()
        .unwrap()
}

/// Settles a `bash` call that leaves `ran` in the Location, and says whether it ran.
async fn run_touch(fx: &Fixture, host: &Host) -> (bool, tackle_registry::Settlement) {
    let call = Call::new("c", "bash", json!({"command": "touch ran"}));
    let settled = host.session("s").settle(&call).await.unwrap();
    (fx.location().join("ran").exists(), settled)
}

fn text(settled: &tackle_registry::Settlement) -> String {
    match settled.result() {
        tackle_tool_core::ResultValue::Text(text) | tackle_tool_core::ResultValue::Error(text) => {
            text
        }
        other => format!("{other:?}"),
    }
}

#[tokio::test]
async fn a_required_log_replaced_by_a_link_refuses_every_call_unrun() {
    let fx = Fixture::new();
    let log = fx.data.path().join("audit.jsonl");
    let elsewhere = fx.data.path().join("elsewhere.txt");
    std::fs::write(&elsewhere, "untouched\n").unwrap();
    std::os::unix::fs::symlink(&elsewhere, &log).unwrap();
    {
        let host = host_logging(&fx, &log, true);
        for _ in 0..2 {
            let (ran, settled) = run_touch(&fx, &host).await;
            assert!(!ran, "the call ran");
            assert!(settled.is_error());
            insta::assert_snapshot!("required_log_is_a_link", fx.redact(&text(&settled)));
        }
    }
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "untouched\n");
}

#[tokio::test]
async fn a_required_log_that_cannot_be_opened_for_writing_refuses_calls() {
    let fx = Fixture::new();
    // A directory where the file should be: nothing can be appended (whoever runs the test).
    let log = fx.data.path().join("audit.jsonl");
    std::fs::create_dir(&log).unwrap();
    let host = host_logging(&fx, &log, true);
    let (ran, settled) = run_touch(&fx, &host).await;
    assert!(!ran, "the call ran");
    assert!(
        text(&settled).contains("audit.required"),
        "{}",
        text(&settled)
    );
}

#[tokio::test]
async fn a_required_log_that_works_admits_calls_and_records_them() {
    let fx = Fixture::new();
    let log = fx.data.path().join("logs/audit.jsonl");
    {
        let host = host_logging(&fx, &log, true);
        let (ran, settled) = run_touch(&fx, &host).await;
        assert!(ran && !settled.is_error(), "{}", text(&settled));
    }
    assert!(
        kinds(&records(&log))
            .iter()
            .any(|kind| kind.ends_with("call bash"))
    );
}

#[tokio::test]
async fn without_required_a_linked_log_is_skipped_and_calls_go_on() {
    let fx = Fixture::new();
    let log = fx.data.path().join("audit.jsonl");
    let elsewhere = fx.data.path().join("elsewhere.txt");
    std::fs::write(&elsewhere, "untouched\n").unwrap();
    std::os::unix::fs::symlink(&elsewhere, &log).unwrap();
    {
        let host = host_logging(&fx, &log, false);
        let (ran, settled) = run_touch(&fx, &host).await;
        assert!(ran && !settled.is_error(), "{}", text(&settled));
    }
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "untouched\n");
}

#[tokio::test]
async fn a_log_inside_the_location_is_a_protected_write() {
    let fx = Fixture::new();
    let log = fx.location().join("audit.jsonl");
    let host = host_logging(&fx, &log, false);
    host.session("s")
        .settle(&Call::new("a", "nope", json!({})))
        .await
        .unwrap();
    for path in ["audit.jsonl", "audit.jsonl.1"] {
        let call = Call::new("w", "write", json!({"path": path, "content": "{}\n"}));
        let settled = host.session("s").settle(&call).await;
        assert!(
            matches!(settled, Err(tackle_registry::SettleError::Halt(_))),
            "{path}: {settled:?}"
        );
    }
    assert!(!fx.location().join("audit.jsonl.1").exists());
    let call = Call::new("w", "write", json!({"path": "notes.md", "content": "x"}));
    assert!(!host.session("s").settle(&call).await.unwrap().is_error());
}
