//! What a user is asked for a command line: every permission request the real `bash` tool
//! makes, rendered as a prompt shows it (the action and its resources), with what an "always"
//! would save, whether the request asks every time, and the parts that could not be resolved.
//! One snapshot per family of command lines.
//!
//! The rules ask about everything, except that `curl` is denied (so a stray `curl` word makes a
//! request ask every time). The tool's shell is `/bin/echo`: an approved line only prints
//! itself, so nothing in this suite runs a command it names.

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

use serde_json::{Value, json};
use tackle_builtins::bash::BashOptions;
use tackle_permission::{Effect, Reply, Rule};
use tackle_tool_core::{Tool, ToolError};

use crate::interactive_support::{Recorder, built, permission_ruled, services_at, settle};

/// The tool in a fresh Location with `sub/` and `notes.txt`, and its recorder.
struct Prompts {
    tool: Tool,
    recorder: Recorder,
    root: PathBuf,
    home: PathBuf,
    _dirs: [tempfile::TempDir; 2],
}

impl Prompts {
    fn new() -> Self {
        Self::with_env_before(Vec::new())
    }

    /// The tool with `before` in its environment ahead of its own `HOME`.
    fn with_env_before(before: Vec<(String, String)>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home_dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let home = fs::canonicalize(home_dir.path()).unwrap();
        fs::create_dir(root.join("sub")).unwrap();
        fs::write(root.join("notes.txt"), "a\n").unwrap();
        let (permission, recorder) = permission_ruled(
            Reply::Once,
            vec![
                Rule::new("*", "*", Effect::Ask),
                Rule::new("bash", "curl *", Effect::Deny),
            ],
        );
        let mut options = BashOptions::default();
        options.shell = Some("/bin/echo".into());
        let mut env = before;
        env.push(("HOME".into(), home.display().to_string()));
        options.env = Some(env.into_iter().map(|(k, v)| (k.into(), v.into())).collect());
        let services = services_at(&root, permission).with_bash(options);
        Self {
            tool: built(&services, "bash"),
            recorder,
            root,
            home,
            _dirs: [dir, home_dir],
        }
    }

    /// Runs each command and renders what was asked, and the outcome.
    async fn render(&self, commands: &[&str]) -> String {
        let mut out = String::new();
        for command in commands {
            let before = self.recorder.asked().len();
            let result = settle(&self.tool, "bash", json!({"command": command})).await;
            writeln!(out, "$ {command}").unwrap();
            for request in &self.recorder.asked()[before..] {
                writeln!(
                    out,
                    "  ask {}: {}",
                    request.action,
                    request.resources.join(", ")
                )
                .unwrap();
                writeln!(out, "    always saves: {}", request.save.join(", ")).unwrap();
                if request.always_ask {
                    writeln!(out, "    asked every time (an always reply saves nothing)").unwrap();
                }
                if let Some(Value::Array(parts)) = request.metadata.get("unresolved") {
                    for part in parts {
                        writeln!(
                            out,
                            "    unresolved: {} ({})",
                            part["text"].as_str().unwrap(),
                            part["reason"].as_str().unwrap()
                        )
                        .unwrap();
                    }
                }
            }
            let outcome = match result {
                Ok(_) => "ran".to_owned(),
                Err(ToolError::Failure(failure)) => format!("failed: {}", failure.message),
                Err(other) => format!("{other:?}"),
            };
            writeln!(out, "  => {outcome}\n").unwrap();
        }
        out.replace(&self.root.display().to_string(), "[ROOT]")
            .replace(&self.home.display().to_string(), "[HOME]")
    }
}

#[tokio::test]
async fn of_a_variable_given_twice_the_last_value_is_the_one_checked_as_the_command_gets_it() {
    // A process's environment keeps the last of two values of a name; `~` in a path must be
    // checked as the `HOME` the command will expand it to, not the first one listed.
    let decoy = tempfile::tempdir().unwrap();
    let decoy = fs::canonicalize(decoy.path())
        .unwrap()
        .display()
        .to_string();
    let prompts = Prompts::with_env_before(vec![("HOME".into(), decoy.clone())]);
    let text = prompts.render(&["echo hi >> ~/notes.txt"]).await;
    assert!(text.contains("ask external_directory: [HOME]/*"), "{text}");
    assert!(!text.contains(&decoy), "{text}");
}

async fn snapshot(name: &str, commands: &[&str]) {
    let text = Prompts::new().render(commands).await;
    insta::assert_snapshot!(name, text);
}

#[tokio::test]
async fn pipelines_and_lists() {
    snapshot(
        "pipelines_and_lists",
        &[
            "ls -la",
            "cat notes.txt | grep a | sort | uniq -c",
            "git status && git diff --stat",
            "make; make test || echo failed",
            "git log --oneline\ngit status",
        ],
    )
    .await;
}

#[tokio::test]
async fn cd_then_command() {
    snapshot(
        "cd_then_command",
        &[
            "cd sub && ls",
            "cd sub; cd ..; rm notes.txt",
            "cd .. && ls",
            "cd /usr/share && ls",
            "cd \"$DIR\" && rm -rf build",
        ],
    )
    .await;
}

#[tokio::test]
async fn wrappers() {
    snapshot(
        "wrappers",
        &[
            "sudo rm -rf build",
            "env FOO=1 BAR=2 make test",
            "env - ls",
            "timeout 5 cargo test",
            "nice -n 10 nohup make",
            "xargs rm < notes.txt",
            "command -v git",
            "git -C sub status",
            "flock /tmp/lock make",
        ],
    )
    .await;
}

#[tokio::test]
async fn shells_and_subshells() {
    snapshot(
        "shells_and_subshells",
        &[
            "sh -c 'ls -la'",
            "bash -c \"git status; rm notes.txt\"",
            "sh +x -c 'make'",
            "(cd sub && make)",
            "{ ls; pwd; }",
            "echo $(whoami) `date`",
            "for f in a b; do wc -l $f; done",
            "eval 'git status'",
        ],
    )
    .await;
}

#[tokio::test]
async fn redirections() {
    snapshot(
        "redirections",
        &[
            "echo hi > out.txt",
            "ls 2>/dev/null",
            "echo hi >> ~/notes.txt",
            "echo hi > /var/tmp/tackle-never-written.txt",
            "cat < ../outside.txt",
            "echo hi > \"$OUT\"",
        ],
    )
    .await;
}

#[tokio::test]
async fn unresolved_and_always_ask() {
    snapshot(
        "unresolved_and_always_ask",
        &[
            "$CMD --help",
            "eval \"$x\"",
            "source ./setup.sh",
            "sh setup.sh",
            "PATH=/tmp/bin:$PATH ls",
            "ls | xargs -I{} sh -c '{}'",
            "ssh host ls",
            "read cmd; $cmd",
            "echo curl is denied",
            "curl https://example.com",
        ],
    )
    .await;
}
