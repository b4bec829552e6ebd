//! `todowrite` (reference TD1–TD3) and the todo store.

use serde_json::json;
use tackle_builtins::todo::{Todo, TodoPriority, TodoStatus, TodoStore};
use tackle_permission::Reply;
use tackle_tool_core::{Halt, ToolError};

/// The `todowrite` tool writing `store`.
fn todowrite_tool(
    permission: tackle_permission::Permission,
    store: TodoStore,
) -> tackle_tool_core::Tool {
    use super::interactive_support::{built, services};
    built(&services(permission).with_todos(store), "todowrite")
}

use super::interactive_support::{
    allowing, denying, failure, permission_with, settle, settle_in, text,
};

fn todos() -> serde_json::Value {
    json!({"todos": [
        {"content": "Write the parser", "status": "completed", "priority": "high"},
        {"content": "Test it", "status": "in_progress", "priority": "medium"},
        {"content": "Ship", "status": "pending", "priority": "low"},
        {"content": "Old idea", "status": "cancelled", "priority": "low"},
    ]})
}

#[tokio::test]
async fn replaces_the_session_list_and_notifies() {
    let (permission, recorder) = allowing();
    let store = TodoStore::new();
    let mut watcher = store.subscribe("s");
    let tool = todowrite_tool(permission, store.clone());
    let output = settle(&tool, "todowrite", todos()).await.unwrap();
    assert_eq!(output.structured, todos());
    assert_eq!(
        text(&output),
        serde_json::to_string_pretty(&todos()["todos"]).unwrap()
    );
    assert_eq!(
        recorder.summary(),
        [(
            "todowrite".to_owned(),
            vec!["*".to_owned()],
            vec!["*".to_owned()]
        )]
    );
    assert!(watcher.has_changed().unwrap());
    let seen = watcher.borrow_and_update().clone();
    assert_eq!(seen.len(), 4);
    assert_eq!(
        seen[1],
        Todo {
            content: "Test it".into(),
            status: TodoStatus::InProgress,
            priority: TodoPriority::Medium
        }
    );
    // Replace semantics: a shorter list replaces, other sessions are untouched.
    settle(
        &tool,
        "todowrite",
        json!({"todos": [{"content": "Only", "status": "pending", "priority": "high"}]}),
    )
    .await
    .unwrap();
    assert_eq!(store.get("s").len(), 1);
    settle_in(&tool, "todowrite", json!({"todos": []}), "other")
        .await
        .unwrap();
    assert_eq!(store.get("s").len(), 1);
    assert!(store.get("other").is_empty());
}

#[tokio::test]
async fn model_text_matches_the_reference_pretty_json() {
    let (permission, _) = allowing();
    let tool = todowrite_tool(permission, TodoStore::new());
    let output = settle(
        &tool,
        "todowrite",
        json!({"todos": [{"content": "a", "status": "pending", "priority": "high"}]}),
    )
    .await
    .unwrap();
    insta::assert_snapshot!(text(&output), @r#"
    [
      {
        "content": "a",
        "status": "pending",
        "priority": "high"
      }
    ]
    "#);
}

#[tokio::test]
async fn a_denial_keeps_the_old_list() {
    let store = TodoStore::new();
    store
        .replace(
            "s",
            vec![Todo {
                content: "keep me".into(),
                status: TodoStatus::Pending,
                priority: TodoPriority::High,
            }],
        )
        .unwrap();
    let (permission, _) = denying("todowrite");
    let tool = todowrite_tool(permission, store.clone());
    let message = failure(settle(&tool, "todowrite", todos()).await);
    assert!(
        message.starts_with("Unable to update todos: Permission denied: todowrite"),
        "{message}"
    );
    assert_eq!(store.get("s")[0].content, "keep me");

    let (declining, _) = permission_with(Reply::Reject { message: None }, &[]);
    let tool = todowrite_tool(declining, store.clone());
    let result = settle(&tool, "todowrite", todos()).await;
    assert!(
        matches!(result, Err(ToolError::Halt(Halt::Declined))),
        "{result:?}"
    );
    assert_eq!(store.get("s")[0].content, "keep me");
}

#[tokio::test]
async fn bad_status_and_priority_name_the_allowed_values() {
    let (permission, recorder) = allowing();
    let store = TodoStore::new();
    let tool = todowrite_tool(permission, store.clone());
    let status = failure(
        settle(
            &tool,
            "todowrite",
            json!({"todos": [{"content": "a", "status": "done", "priority": "high"}]}),
        )
        .await,
    );
    let priority = failure(
        settle(
            &tool,
            "todowrite",
            json!({"todos": [{"content": "a", "status": "pending", "priority": "urgent"}]}),
        )
        .await,
    );
    insta::assert_snapshot!(format!("{status}\n{priority}"), @r#"
    Invalid tool input: todos[0].status: expected one of: pending, in_progress, completed, cancelled, got "done"

    Correct the input so that it matches the tool's input schema, then call the tool again.
    Invalid tool input: todos[0].priority: expected one of: high, medium, low, got "urgent"

    Correct the input so that it matches the tool's input schema, then call the tool again.
    "#);
    assert!(recorder.asked().is_empty());
    assert!(store.sessions().is_empty());
}

#[tokio::test]
async fn a_legacy_id_field_is_accepted() {
    let (permission, _) = allowing();
    let tool = todowrite_tool(permission, TodoStore::new());
    let output = settle(
        &tool,
        "todowrite",
        json!({"todos": [{"id": "1", "content": "a", "status": "pending", "priority": "low"}]}),
    )
    .await
    .unwrap();
    assert_eq!(
        output.structured,
        json!({"todos": [{"content": "a", "status": "pending", "priority": "low"}]})
    );
}

#[test]
fn the_definition() {
    let (permission, _) = allowing();
    let definition = todowrite_tool(permission, TodoStore::new())
        .definition("todowrite")
        .unwrap();
    insta::assert_json_snapshot!(definition.as_ref());
}

#[tokio::test]
async fn a_session_list_survives_the_store_and_is_deleted_with_the_session() {
    let data = tempfile::tempdir().unwrap();
    let (permission, _) = allowing();
    let first = TodoStore::in_data_dir(data.path());
    let tool = todowrite_tool(permission.clone(), first.clone());
    settle(&tool, "todowrite", todos()).await.unwrap();
    settle_in(
        &tool,
        "todowrite",
        json!({"todos": [
            {"content": "theirs", "status": "pending", "priority": "low"}
        ]}),
        "../other session",
    )
    .await
    .unwrap();
    drop((tool, first));

    // A new store over the same data directory, as a new process would make.
    let second = TodoStore::in_data_dir(data.path());
    assert_eq!(second.get("s").len(), 4);
    assert_eq!(second.get("s")[1].content, "Test it");
    assert_eq!(second.get("../other session")[0].content, "theirs");
    assert!(second.get("new").is_empty());
    let directory = second.directory().unwrap();
    assert_eq!(directory, data.path().join("todos"));
    let mut names: Vec<String> = std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["%2E%2E%2Fother%20session.json", "s.json"]);
    use std::os::unix::fs::PermissionsExt;
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&directory), 0o700);
    assert_eq!(mode(&directory.join("s.json")), 0o600);
    let stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(directory.join("s.json")).unwrap()).unwrap();
    assert_eq!(stored["version"], 1);
    assert_eq!(stored["session"], "s");
    assert_eq!(stored["todos"], todos()["todos"]);

    // Deleting the session removes its list and its file; subscribers see it emptied.
    let mut watcher = second.subscribe("s");
    assert_eq!(watcher.borrow_and_update().len(), 4);
    second.delete_session("s").unwrap();
    assert!(watcher.borrow_and_update().is_empty());
    assert!(second.get("s").is_empty());
    assert!(!directory.join("s.json").exists());
    assert!(TodoStore::in_data_dir(data.path()).get("s").is_empty());
    assert_eq!(second.get("../other session").len(), 1);
    second.delete_session("never").unwrap();
}

#[tokio::test]
async fn a_list_that_cannot_be_saved_fails_the_call_and_changes_nothing() {
    let data = tempfile::tempdir().unwrap();
    let store = TodoStore::in_data_dir(data.path());
    let (permission, _) = allowing();
    let tool = todowrite_tool(permission, store.clone());
    settle(&tool, "todowrite", todos()).await.unwrap();
    // The list's file is now a directory: it cannot be replaced.
    let file = data.path().join("todos/s.json");
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    std::fs::write(file.join("x"), "").unwrap();
    let message = failure(settle(&tool, "todowrite", json!({"todos": []})).await);
    assert!(
        message.starts_with("Unable to update todos: cannot write "),
        "{message}"
    );
    assert_eq!(store.get("s").len(), 4);
}

#[tokio::test]
async fn a_planted_link_is_never_written_through() {
    let data = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), data.path().join("todos")).unwrap();
    let store = TodoStore::in_data_dir(data.path());
    let (permission, _) = allowing();
    let tool = todowrite_tool(permission, store.clone());
    let message = failure(settle(&tool, "todowrite", todos()).await);
    assert!(
        message.starts_with("Unable to update todos: cannot write "),
        "{message}"
    );
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    assert!(store.get("s").is_empty());
}

#[test]
fn a_planted_link_is_never_read_through() {
    let data = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let writer = TodoStore::in_data_dir(elsewhere.path());
    let list = vec![Todo {
        content: "planted".into(),
        status: TodoStatus::Pending,
        priority: TodoPriority::High,
    }];
    writer.replace("s", list).unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("todos"), data.path().join("todos")).unwrap();
    assert!(TodoStore::in_data_dir(data.path()).get("s").is_empty());
}
