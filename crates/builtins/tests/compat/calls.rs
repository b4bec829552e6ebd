//! Per tool, the calls as models send them, and what the model reads.

use serde_json::json;

use super::support::Compat;
#[cfg(feature = "web")]
use super::support::decoded;

const TODO: &str = r#"[{"content":"write notes","status":"pending","priority":"high"}]"#;

#[tokio::test]
async fn read() {
    let fx = Compat::new();
    let seen = fx
        .transcript(&[
            ("read", json!({"filePath": "a.txt"})),
            (
                "Read",
                json!({"file_path": "a.txt", "offset": "2", "limit": "1"}),
            ),
            (
                "read",
                json!({"path": "a.txt", "offset": 0, "limit": 1, "filePath": null}),
            ),
            ("read", json!({"path": "a.txt", "filePath": "a.txt"})),
            ("read", json!({"path": "a.txt", "limit": 0})),
            ("read", json!({"path": "a.txt", "lines": 5})),
            ("read", json!({"file": "a.txt"})),
        ])
        .await;
    insta::assert_snapshot!(seen);
}

#[tokio::test]
async fn edit_and_write() {
    let fx = Compat::new();
    let seen = fx
        .transcript(&[
            (
                "edit",
                json!({"filePath": "a.txt", "oldString": "beta", "newString": "BETA"}),
            ),
            (
                "Edit",
                json!({"file_path": "a.txt", "old_string": "gamma", "new_string": "GAMMA", "replace_all": "true"}),
            ),
            (
                "edit",
                json!({"path": "a.txt", "old_string": "x", "oldString": "y", "newString": "z"}),
            ),
            (
                "edit",
                json!({"path": "a.txt", "oldString": "alpha", "newString": "A", "replaceAll": "yes"}),
            ),
            ("edit", json!({"path": "a.txt", "oldString": "alpha"})),
            ("write", json!({"filePath": "b.txt", "content": "hello\n"})),
            ("Write", json!({"file_path": "c.txt", "content": "c\n"})),
            ("write", json!({"path": "d.txt", "contents": "d\n"})),
            ("read", json!({"filePath": "a.txt"})),
        ])
        .await;
    insta::assert_snapshot!(seen);
}

#[cfg(feature = "apply-patch")]
#[tokio::test]
async fn apply_patch() {
    let fx = Compat::new();
    let add =
        |file: &str| format!("*** Begin Patch\n*** Add File: {file}\n+patched\n*** End Patch");
    let seen = fx
        .transcript(&[
            ("apply_patch", json!({"patch_text": add("p.txt")})),
            ("Apply_Patch", json!({"input": add("q.txt")})),
            (
                "apply_patch",
                json!({"patch": add("r.txt"), "patchText": add("r.txt")}),
            ),
            ("apply_patch", json!({"diff": add("s.txt")})),
        ])
        .await;
    insta::assert_snapshot!(seen);
}

#[cfg(feature = "search")]
#[tokio::test]
async fn glob_and_grep() {
    let fx = Compat::new();
    let seen = fx
        .transcript(&[
            ("Glob", json!({"pattern": "*.md"})),
            (
                "glob",
                json!({"pattern": "*.txt", "path": null, "limit": "1"}),
            ),
            ("glob", json!({"pattern": "*.txt", "limit": 0})),
            ("grep", json!({"pattern": "todo", "ignoreCase": true})),
            (
                "Grep",
                json!({"pattern": "todo", "glob": "*.md", "head_limit": "5"}),
            ),
            (
                "grep",
                json!({"pattern": "todo", "output_mode": "content", "-i": true}),
            ),
            (
                "grep",
                json!({"pattern": "beta", "include": "*.txt", "limit": "ten"}),
            ),
            ("grep", json!({"pattern": "beta", "includes": "*.txt"})),
        ])
        .await;
    insta::assert_snapshot!(seen);
}

#[cfg(feature = "bash")]
#[tokio::test]
async fn bash() {
    let fx = Compat::new();
    let seen = fx
        .transcript(&[
            (
                "Bash",
                json!({"command": "echo hi", "description": "Say hi", "timeout": "5000"}),
            ),
            ("bash", json!({"command": "echo hi", "timeout_ms": 5000.0})),
            ("bash", json!({"command": "echo hi", "timeout": 0})),
            (
                "bash",
                json!({"command": "echo hi", "run_in_background": true}),
            ),
            ("bash", json!({"cmd": "echo hi"})),
        ])
        .await;
    insta::assert_snapshot!(seen);
}

#[cfg(feature = "bash")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_jobs() {
    let fx = Compat::new();
    let seen = fx
        .transcript(&[
            (
                "bash",
                json!({"command": "exec sleep 30.2727", "background": true}),
            ),
            ("job_output", json!({"id": "job_1"})),
            ("job_kill", json!({"id": "job_1"})),
            ("job_output", json!({"id": "job_1"})),
        ])
        .await;
    insta::assert_snapshot!(seen);
}

#[tokio::test]
async fn todowrite_question_and_skill() {
    let fx = Compat::new();
    let options = json!([
        {"label": "A", "description": "first"},
        {"label": "B", "description": "second"}
    ]);
    let seen = fx
        .transcript(&[
            ("TodoWrite", json!({"todos": TODO})),
            (
                "todowrite",
                json!({"todos": [{"content": "a", "status": "in_progress", "priority": "medium", "id": "1", "activeForm": "Doing a"}]}),
            ),
            (
                "todowrite",
                json!({"todos": [{"content": "a", "status": "done", "priority": "high"}]}),
            ),
            ("todowrite", json!({"todos": [{"content": "a", "status": "pending"}]})),
            (
                "question",
                json!({"questions": [{"question": "Which?", "header": "Pick", "options": options, "multiSelect": "false"}]}),
            ),
            (
                "Question",
                json!({"questions": json!([{"question": "Which?", "header": "Pick", "options": options}]).to_string()}),
            ),
            ("Skill", json!({"skill": "demo"})),
            ("skill", json!({"name": "demo", "skill": "demo"})),
            ("nosuchtool", json!({})),
        ])
        .await;
    insta::assert_snapshot!(seen);
}

#[cfg(feature = "web")]
#[test]
fn webfetch_and_websearch() {
    use tackle_builtins::web::search::{SearchFuture, SearchRequest};
    use tackle_builtins::web::{SearchProvider, WebSearchConfig, WebServices};

    struct Stub;
    impl SearchProvider for Stub {
        fn name(&self) -> &str {
            "stub"
        }
        fn search<'a>(&'a self, _request: &'a SearchRequest) -> SearchFuture<'a> {
            Box::pin(async { Ok(None) })
        }
    }

    let fx = Compat::new();
    let url = "https://example.com/";
    let mut seen = decoded(
        &fx.tool("webfetch"),
        "webfetch",
        &[
            json!({"url": url, "timeout": "30"}),
            json!({"url": url, "format": "Markdown"}),
            json!({"url": url, "prompt": "Summarise the page"}),
            json!({"url": url, "timeout": 0}),
        ],
    );
    let mut web = WebServices::default();
    web.search = WebSearchConfig::new().with_provider(Stub);
    let services = fx.services.clone().with_web(web);
    let websearch = tackle_builtins::builtin_tool(&services, "websearch").unwrap();
    seen.push_str(&decoded(
        &websearch,
        "websearch",
        &[
            json!({"query": "rust", "num_results": "5", "type": "fast"}),
            json!({"query": "rust", "numResults": 50}),
            json!({"query": "rust", "type": "quick"}),
        ],
    ));
    insta::assert_snapshot!(seen);
}

/// The agent is the host's: it comes from the call's context, and a tool input naming one is
/// an unknown field, refused before anything is asked or run.
#[tokio::test]
async fn the_agent_is_the_hosts_and_never_an_input_field() {
    use crate::interactive_support::{allowing, failure, services_at, settle};

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let (permission, recorder) = allowing();
    let services = services_at(dir.path(), permission);
    // The families a build leaves out have no tool to call.
    let calls: Vec<(&str, serde_json::Value)> = [
        ("read", json!({"path": "a.txt"})),
        ("write", json!({"path": "b.txt", "content": "x\n"})),
        (
            "edit",
            json!({"path": "a.txt", "oldString": "alpha", "newString": "x"}),
        ),
        ("todowrite", json!({"todos": []})),
    ]
    .into_iter()
    .chain(cfg!(feature = "bash").then(|| ("bash", json!({"command": "touch c.txt"}))))
    .chain(cfg!(feature = "search").then(|| ("grep", json!({"pattern": "alpha"}))))
    .collect();
    for (name, input) in &calls {
        let mut hostile = input.clone();
        hostile["agent"] = json!("plan");
        let tool = crate::interactive_support::built(&services, name);
        let message = failure(settle(&tool, name, hostile).await);
        assert!(
            message.contains("agent: unknown field"),
            "{name}: {message}"
        );
    }
    assert!(recorder.asked().is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "alpha\n"
    );
    assert!(!dir.path().join("b.txt").exists());
    assert!(!dir.path().join("c.txt").exists());

    // The same call without the field is asked about as the context's agent.
    let tool = crate::interactive_support::built(&services, "read");
    settle(&tool, "read", json!({"path": "a.txt"}))
        .await
        .unwrap();
    let asked = recorder.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].agent, "build");
}
