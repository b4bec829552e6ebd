//! A session's parts live and die together; an agent's configured rules decide its calls.

use serde_json::json;
use tackle_host::Host;
use tackle_permission::{AnswerAll, Reply};
use tackle_tool_core::{Call, Context, Tool, ToolError, from_fn};

use crate::Fixture;

fn host(fx: &Fixture) -> Host {
    Host::builder(fx.location())
        .data_dir(fx.data.path())
        .env(fx.env())
        .asker(std::sync::Arc::new(AnswerAll(Reply::Once)))
        .build()
        .unwrap()
}

fn todos(list: &[&str]) -> serde_json::Value {
    let todos: Vec<_> = list
        .iter()
        .map(|content| json!({"content": content, "status": "pending", "priority": "high"}))
        .collect();
    json!({ "todos": todos })
}

/// Every managed output under the data directory, as file names.
fn managed(fx: &Fixture) -> Vec<String> {
    let mut names = Vec::new();
    for entry in walk(fx.data.path()) {
        // The directory's sweep record is the store's bookkeeping, not an output.
        if entry.to_string_lossy().contains("tool-output") && !entry.ends_with(".sweep") {
            names.push(entry.display().to_string());
        }
    }
    names
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[tokio::test]
async fn a_todo_list_outlives_the_host_and_dies_with_its_session() {
    let fx = Fixture::new();
    let first = host(&fx);
    let session = first.session("s1");
    let written = session
        .settle(&Call::new("t1", "todowrite", todos(&["ship it"])))
        .await
        .unwrap();
    assert!(!written.is_error(), "{:?}", written.result());
    drop(first);

    // A later process with the same data directory finds the list of the same session.
    let second = host(&fx);
    assert_eq!(second.services().todos().get("s1").len(), 1);
    assert!(second.services().todos().get("s2").is_empty());
    second.delete_session("s1").unwrap();
    assert!(second.services().todos().get("s1").is_empty());
    assert!(host(&fx).services().todos().get("s1").is_empty());
}

#[tokio::test]
async fn deleting_a_session_removes_its_managed_outputs_and_keeps_the_others() {
    let fx = Fixture::new();
    let host = host(&fx);
    let big = Tool::typed(
        "Prints a lot",
        from_fn(|_: serde_json::Value, _: Context| async move {
            Ok::<_, ToolError>("line\n".repeat(10_000))
        }),
    )
    .build();
    let (doomed, kept) = (host.session("doomed"), host.session("kept"));
    doomed
        .register(vec![("big".to_owned(), big.clone())])
        .unwrap();
    kept.register(vec![("big".to_owned(), big)]).unwrap();
    for session in [&doomed, &kept] {
        let settled = session
            .settle(&Call::new("b", "big", json!({})))
            .await
            .unwrap();
        assert!(format!("{:?}", settled.result()).contains("tool-output://"));
    }
    assert_eq!(managed(&fx).len(), 2, "{:?}", managed(&fx));

    host.delete_session("doomed").unwrap();
    assert_eq!(managed(&fx).len(), 1, "{:?}", managed(&fx));
    assert!(!host.session("doomed").materialize().contains("big"));
    assert!(host.session("kept").materialize().contains("big"));
}

#[tokio::test]
async fn an_agents_configured_rules_decide_its_calls_and_its_catalog() {
    let fx = Fixture::new();
    fx.write_user(r#"{"agent": {"plan": {"permission": {"edit": "deny", "bash": "deny"}}}}"#);
    std::fs::write(fx.location().join("notes.md"), "hello\n").unwrap();
    let host = host(&fx);
    let edit = json!({"path": "notes.md", "oldString": "hello", "newString": "bye"});

    let plan = host.create_session().with_agent("plan");
    let catalog = plan.materialize();
    assert!(!catalog.contains("edit") && !catalog.contains("bash"));
    assert!(catalog.contains("read"));
    let denied = plan
        .settle(&Call::new("e1", "edit", edit.clone()))
        .await
        .unwrap();
    assert!(denied.is_error(), "{:?}", denied.result());
    assert_eq!(
        std::fs::read_to_string(fx.location().join("notes.md")).unwrap(),
        "hello\n"
    );

    // Any other agent keeps the global rules (asked, and answered "once" here).
    let build = host.create_session().with_agent("build");
    assert!(build.materialize().contains("edit"));
    let edited = build.settle(&Call::new("e2", "edit", edit)).await.unwrap();
    assert!(!edited.is_error(), "{:?}", edited.result());
    assert_eq!(
        std::fs::read_to_string(fx.location().join("notes.md")).unwrap(),
        "bye\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_session_kills_its_background_jobs() {
    let fx = Fixture::new();
    let host = host(&fx);
    let session = host.session("ses_jobs");
    let call = Call::new(
        "call_1",
        "bash",
        json!({"command": "exec sleep 1000.3131", "background": true}),
    );
    let started = session.settle(&call).await.unwrap();
    assert!(!started.is_error(), "{:?}", started.result());
    assert_eq!(host.services().jobs().running("ses_jobs"), 1);
    host.delete_session("ses_jobs").unwrap();
    assert_eq!(host.services().jobs().running("ses_jobs"), 0);
    // Its process is terminated by the job's own thread, at once (TERM).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while running_with("1000.3131") {
        assert!(
            std::time::Instant::now() < deadline,
            "the job outlived its session"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

fn running_with(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(marker))
    })
}
