//! Shared setup of the bash tests: a Location in a temporary directory, a permission service
//! whose asker records every request, settling calls, and finding a process group's members.

use std::fs;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tackle_builtins::bash::BashOptions;
use tackle_permission::{
    Asker, Effect, PendingRequest, Permission, Reply, Rule, Ruleset, SavedApprovals,
};
use tackle_tool_core::{Call, Context, Tool, ToolError, ToolOutput};

/// Slack for a loaded machine (both cores busy) on top of a call's timeout and grace period:
/// killing and reaping the hang suite's fork bomb alone takes a second or more there. Still far
/// below what a hang would take (the commands timed with it sleep for 60 s or more).
pub(crate) const SLACK: Duration = Duration::from_secs(5);

/// One asked request: action, resources, save patterns.
pub(crate) type Asked = (String, Vec<String>, Vec<String>);

pub(crate) type Log = Arc<Mutex<Vec<Asked>>>;

type Hook = Box<dyn Fn(&PendingRequest) + Send + Sync>;

/// Records every request, runs a hook "while the user thinks", answers with `reply`.
pub(crate) struct Recorder {
    log: Log,
    hook: Hook,
    reply: fn(&str) -> Reply,
}

impl Asker for Recorder {
    fn ask(&self, pending: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        (self.hook)(&pending);
        let request = pending.request;
        let reply = (self.reply)(&request.action);
        self.log
            .lock()
            .unwrap()
            .push((request.action, request.resources, request.save));
        Box::pin(async move { reply })
    }
}

pub(crate) fn once(_: &str) -> Reply {
    Reply::Once
}

/// The tool in a fresh Location, and what its permission service was asked.
pub(crate) struct Bash {
    pub(crate) tool: Tool,
    pub(crate) log: Log,
    /// The Location's canonical directory.
    pub(crate) root: PathBuf,
    _dir: tempfile::TempDir,
}

impl Bash {
    /// What was asked, in order.
    pub(crate) fn asked(&self) -> Vec<Asked> {
        self.log.lock().unwrap().clone()
    }

    /// The actions asked, in order.
    pub(crate) fn actions(&self) -> Vec<String> {
        self.asked()
            .into_iter()
            .map(|(action, _, _)| action)
            .collect()
    }
}

pub(crate) struct Setup {
    pub(crate) rules: Vec<Rule>,
    pub(crate) reply: fn(&str) -> Reply,
    pub(crate) hook: Hook,
    pub(crate) options: BashOptions,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            rules: Vec::new(),
            reply: once,
            hook: Box::new(|_| {}),
            options: BashOptions::default(),
        }
    }
}

impl Setup {
    pub(crate) fn build(self) -> Bash {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        self.build_in(dir, root)
    }

    fn build_in(self, dir: tempfile::TempDir, root: PathBuf) -> Bash {
        let log = Log::default();
        let asker = Recorder {
            log: log.clone(),
            hook: self.hook,
            reply: self.reply,
        };
        let permission = Permission::new(
            Ruleset::new(self.rules),
            SavedApprovals::in_memory(),
            Arc::new(asker),
        );
        let services = crate::interactive_support::services_at(&root, permission);
        let tool = crate::interactive_support::built(&services.with_bash(self.options), "bash");
        Bash {
            tool,
            log,
            root,
            _dir: dir,
        }
    }
}

/// The tool with no rules (everything asks) and every ask answered "once".
pub(crate) fn bash() -> Bash {
    Setup::default().build()
}

pub(crate) fn rule(action: &str, resource: &str, effect: Effect) -> Rule {
    Rule::new(action, resource, effect)
}

pub(crate) fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

pub(crate) async fn settle_with(
    tool: &Tool,
    input: Value,
    ctx: &Context,
) -> Result<ToolOutput, ToolError> {
    tool.run_unbounded(&Call::new("call_1", "bash", input), ctx)
        .await
}

pub(crate) async fn settle(tool: &Tool, input: Value) -> Result<ToolOutput, ToolError> {
    settle_with(tool, input, &Context::new("ses_1")).await
}

pub(crate) use crate::interactive_support::{failure, text};

/// Live (not zombie) processes whose process group is `group`.
pub(crate) fn group_members(group: i32) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let state = fields[0];
        let pgrp: i32 = fields[2].parse().unwrap();
        if pgrp == group && state != "Z" && state != "X" {
            found.push((pid, stat[..close + 1].to_owned()));
        }
    }
    found
}

/// Replaces the temporary root and the pids in `text`, for snapshots.
pub(crate) fn redact(text: &str, root: &Path) -> String {
    let text = text.replace(&root.display().to_string(), "[ROOT]");
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("(pid ") {
        out.push_str(&rest[..at + 5]);
        rest = &rest[at + 5..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        out.push_str("[PID]");
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// Answers every `bash` ask with a rejection (so a test sees the command was asked, not run)
/// and anything else once.
pub(crate) fn reject_bash(action: &str) -> Reply {
    if action == "bash" {
        Reply::Reject {
            message: Some("asked".to_owned()),
        }
    } else {
        Reply::Once
    }
}
