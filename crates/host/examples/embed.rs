//! An agent host in a few lines: the host of a project directory, and one session settling a
//! scripted sequence of calls, as a model's turns would arrive.

use std::sync::Arc;

use serde_json::json;
use tackle_host::{Environment, Host};
use tackle_permission::{AnswerAll, Reply};
use tackle_tool_core::Call;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (project, data) = (tempfile::tempdir()?, tempfile::tempdir()?);
    std::fs::write(
        project.path().join("tackle.json"),
        r#"{"output": {"max_lines": 500}}"#,
    )?;
    let host = Host::builder(project.path())
        .data_dir(data.path())
        .env(Environment::from_vars([("HOME", data.path())]))
        // A real host asks its user; this script answers every ask "once".
        .asker(Arc::new(AnswerAll(Reply::Once)))
        .build()?;
    let session = host.create_session().with_agent("build");
    let script = [
        (
            "write",
            json!({"path": "notes.md", "content": "# Notes\nhello\n"}),
        ),
        (
            "edit",
            json!({"path": "notes.md", "oldString": "hello", "newString": "hello, world"}),
        ),
        ("grep", json!({"pattern": "world"})),
        ("read", json!({"path": "notes.md"})),
    ];
    for (index, (tool, input)) in script.into_iter().enumerate() {
        let settlement = session
            .settle(&Call::new(format!("call_{index}"), tool, input))
            .await?;
        println!(
            "--- {tool}\n{}",
            serde_json::to_string(&settlement.result())?
        );
        if settlement.is_error() {
            return Err(format!("{tool} failed").into());
        }
    }
    host.delete_session(session.id());
    Ok(())
}
