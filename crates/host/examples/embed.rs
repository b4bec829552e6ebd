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
    let script = json!([
        ["write", {"path": "notes.md", "content": "# Notes\nhello\n"}],
        ["edit", {"path": "notes.md", "oldString": "hello", "newString": "hello, world"}],
        ["grep", {"pattern": "world"}],
        ["read", {"path": "notes.md"}],
    ]);
    for (index, step) in script.as_array().into_iter().flatten().enumerate() {
        let (tool, input) = (step[0].as_str().unwrap_or_default(), step[1].clone());
        let call = Call::new(format!("call_{index}"), tool, input);
        let settlement = session.settle(&call).await?;
        println!(
            "--- {tool}\n{}",
            serde_json::to_string(&settlement.result())?
        );
        if settlement.is_error() {
            return Err(format!("{tool} failed").into());
        }
    }
    host.delete_session(session.id())?;
    Ok(())
}
