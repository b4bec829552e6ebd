//! apply_patch's permission order and tool contract (reference PA6–PA12): every path is
//! resolved first, `external_directory` is asked once per outside directory, then one `edit`
//! with every resource; nothing is read before approval; a refusal changes nothing.

use std::fs;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tackle_builtins::Location;
use tackle_permission::{
    Asker, Effect, PendingRequest, Permission, Reply, Rule, Ruleset, SavedApprovals,
};
use tackle_tool_core::{Call, Context, Halt, Tool, ToolError};

use crate::apply_patch::{allow_all, patch_tool, settle};

type Log = Arc<Mutex<Vec<(String, Vec<String>, Vec<String>)>>>;
type Hook = Box<dyn Fn(&str) + Send + Sync>;

/// Records every request, runs `hook` with its action while "the user thinks", and answers
/// with `reply(action)`.
struct Recorder {
    log: Log,
    hook: Hook,
    reply: fn(&str) -> Reply,
}

impl Asker for Recorder {
    fn ask(&self, pending: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        let request = pending.request;
        self.log.lock().unwrap().push((
            request.action.clone(),
            request.resources.clone(),
            request.save.clone(),
        ));
        (self.hook)(&request.action);
        let reply = (self.reply)(&request.action);
        Box::pin(async move { reply })
    }
}

fn once(_: &str) -> Reply {
    Reply::Once
}

struct Setup {
    tool: Tool,
    log: Log,
}

fn setup(root: &Path, hook: Hook, reply: fn(&str) -> Reply) -> Setup {
    let log = Log::default();
    let asker = Recorder {
        log: log.clone(),
        hook,
        reply,
    };
    let permission = Permission::new(
        Ruleset::new(vec![]),
        SavedApprovals::in_memory(),
        Arc::new(asker),
    );
    let tool = patch_tool(Location::new(root).unwrap(), permission);
    Setup { tool, log }
}

fn no_hook() -> Hook {
    Box::new(|_| {})
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn read(root: &Path, name: &str) -> Option<String> {
    fs::read_to_string(root.join(name)).ok()
}

const ADD_UPDATE_DELETE: &str = "*** Begin Patch\n*** Add File: nested/new.txt\n+created\n*** Update File: update.txt\n@@\n-before\n+after\n*** Delete File: remove.txt\n*** End Patch";

#[tokio::test]
async fn add_update_delete_asks_one_edit_and_reports_each_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("update.txt"), "before\n").unwrap();
    fs::write(root.join("remove.txt"), "gone\n").unwrap();
    let s = setup(root, no_hook(), once);
    let call = Call::new(
        "c1",
        "apply_patch",
        json!({ "patchText": ADD_UPDATE_DELETE }),
    );
    let output = s
        .tool
        .run_unbounded(&call, &Context::new("session"))
        .await
        .unwrap();
    assert_eq!(
        output.content[0].as_text().unwrap(),
        "Success. Updated the following files:\nA nested/new.txt\nM update.txt\nD remove.txt"
    );
    insta::assert_json_snapshot!(output.structured, {".files[].target" => "[target]"});
    assert_eq!(
        *s.log.lock().unwrap(),
        [(
            "edit".to_owned(),
            strings(&["nested/new.txt", "update.txt", "remove.txt"]),
            strings(&["*"])
        )]
    );
    assert_eq!(read(root, "nested/new.txt").as_deref(), Some("created\n"));
    assert_eq!(read(root, "update.txt").as_deref(), Some("after\n"));
    assert!(!root.join("remove.txt").exists());
}

#[tokio::test]
async fn content_is_read_only_after_approval() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    fs::write(root.join("update.txt"), "before\n").unwrap();
    let during = root.join("update.txt");
    let hook: Hook = Box::new(move |action| {
        if action == "edit" {
            fs::write(&during, "written during approval\nbefore\n").unwrap();
        }
    });
    let s = setup(&root, hook, once);
    let patch = "*** Begin Patch\n*** Update File: update.txt\n@@\n-before\n+after\n*** End Patch";
    assert_eq!(
        settle(&s.tool, patch).await,
        "Success. Updated the following files:\nM update.txt"
    );
    // Had the file been read before the question, the commit would have found it changed.
    assert_eq!(
        read(&root, "update.txt").as_deref(),
        Some("written during approval\nafter\n")
    );
}

#[tokio::test]
async fn a_refused_edit_reads_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // Reading this file would fail the patch with a UTF-8 error; the refusal comes first.
    fs::write(root.join("latin1.txt"), b"caf\xe9\n").unwrap();
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Update File: latin1.txt\n@@\n-caf\n+cafe\n*** End Patch";
    let s = setup(root, no_hook(), |_| Reply::Reject {
        message: Some("not now".into()),
    });
    insta::assert_snapshot!(settle(&s.tool, patch).await, @"error: The user rejected permission to use this specific tool call with the following feedback: not now");
    let s = setup(root, no_hook(), |_| Reply::Reject { message: None });
    let call = Call::new("c1", "apply_patch", json!({ "patchText": patch }));
    let err = s
        .tool
        .run_unbounded(&call, &Context::new("session"))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Halt(Halt::Declined)), "{err:?}");
    assert!(!root.join("new.txt").exists());
    assert_eq!(fs::read(root.join("latin1.txt")).unwrap(), b"caf\xe9\n");
}

#[tokio::test]
async fn outside_files_ask_external_directory_once_per_directory_first() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let real = fs::canonicalize(outside.path()).unwrap();
    let real = real.to_string_lossy();
    fs::write(outside.path().join("a.txt"), "a\n").unwrap();
    fs::write(outside.path().join("b.txt"), "b\n").unwrap();
    let s = setup(dir.path(), no_hook(), once);
    let patch = format!(
        "*** Begin Patch\n*** Update File: {real}/a.txt\n@@\n-a\n+A\n*** Update File: {real}/b.txt\n@@\n-b\n+B\n*** End Patch"
    );
    assert_eq!(
        settle(&s.tool, &patch).await,
        format!("Success. Updated the following files:\nM {real}/a.txt\nM {real}/b.txt")
    );
    let pattern = format!("{real}/*");
    assert_eq!(
        *s.log.lock().unwrap(),
        [
            (
                "external_directory".to_owned(),
                vec![pattern.clone()],
                vec![pattern]
            ),
            (
                "edit".to_owned(),
                vec![format!("{real}/a.txt"), format!("{real}/b.txt")],
                strings(&["*"])
            ),
        ]
    );
    assert_eq!(read(outside.path(), "a.txt").as_deref(), Some("A\n"));
}

#[tokio::test]
async fn a_refused_external_directory_stops_before_edit() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let real = fs::canonicalize(outside.path()).unwrap();
    fs::write(outside.path().join("a.txt"), "a\n").unwrap();
    let s = setup(dir.path(), no_hook(), |_| Reply::Reject {
        message: Some("stay inside".into()),
    });
    let patch = format!(
        "*** Begin Patch\n*** Update File: {}/a.txt\n@@\n-a\n+A\n*** End Patch",
        real.display()
    );
    assert!(settle(&s.tool, &patch).await.contains("stay inside"));
    let log = s.log.lock().unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].0, "external_directory");
    assert_eq!(read(outside.path(), "a.txt").as_deref(), Some("a\n"));
}

#[tokio::test]
async fn a_later_update_of_a_missing_file_keeps_the_earlier_add_out() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path(), no_hook(), once);
    let patch = "*** Begin Patch\n*** Add File: created.txt\n+x\n*** Update File: missing.txt\n@@\n-a\n+b\n*** End Patch";
    insta::assert_snapshot!(settle(&s.tool, patch).await, @r"
    error: Unable to apply patch at missing.txt: the file to update does not exist
    No files were changed.
    ");
    assert!(!dir.path().join("created.txt").exists());
}

#[tokio::test]
async fn an_add_over_a_file_created_during_approval_keeps_that_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let during = root.join("new.txt");
    let hook: Hook = Box::new(move |_| fs::write(&during, "theirs\n").unwrap());
    let s = setup(&root, hook, once);
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+ours\n*** End Patch";
    insta::assert_snapshot!(settle(&s.tool, patch).await, @r"
    error: Unable to apply patch at new.txt: the file already exists. Add File never replaces a file; use Update File to change it
    No files were changed.
    ");
    assert_eq!(read(&root, "new.txt").as_deref(), Some("theirs\n"));
}

#[tokio::test]
async fn a_move_asks_for_source_and_destination() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "x\n").unwrap();
    let s = setup(dir.path(), no_hook(), once);
    let patch = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: sub/b.txt\n@@\n-x\n+y\n*** End Patch";
    assert_eq!(
        settle(&s.tool, patch).await,
        "Success. Updated the following files:\nM sub/b.txt"
    );
    assert_eq!(s.log.lock().unwrap()[0].1, strings(&["a.txt", "sub/b.txt"]));
    assert_eq!(read(dir.path(), "sub/b.txt").as_deref(), Some("y\n"));
    assert!(!dir.path().join("a.txt").exists());
}

#[tokio::test]
async fn a_configured_deny_blocks_without_asking() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let permission = Permission::new(
        Ruleset::new(vec![Rule::new("edit", "*", Effect::Deny)]),
        SavedApprovals::in_memory(),
        Arc::new(tackle_permission::AnswerAll(Reply::Once)),
    );
    let tool = patch_tool(Location::new(dir.path()).unwrap(), permission);
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch";
    let text = settle(&tool, patch).await;
    assert!(
        text.starts_with(
            "error: Unable to apply patch: Permission denied: edit \"a.txt\" is blocked"
        ),
        "{text}"
    );
    assert_eq!(read(dir.path(), "a.txt").as_deref(), Some("a\n"));
}

#[tokio::test]
async fn input_errors_come_before_any_question() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path(), no_hook(), once);
    let texts = [
        settle(&s.tool, "  \n").await,
        settle(&s.tool, "*** Begin Patch\n*** End Patch").await,
        settle(&s.tool, "*** Begin Patch\n*** Add File: x\n+x\n").await,
        settle(
            &s.tool,
            "*** Begin Patch\n*** Add File: ../x\n+x\n*** End Patch",
        )
        .await,
    ];
    insta::assert_snapshot!(texts.join("\n"), @r"
    error: patchText is required
    error: patch rejected: empty patch
    error: apply_patch verification failed: line 3: the patch ends without '*** End Patch'
    error: Unable to apply patch at ../x: the relative path leads outside the working directory; use an absolute path for files outside it. No files were changed.
    ");
    assert!(s.log.lock().unwrap().is_empty());
}

#[tokio::test]
async fn large_outputs_are_compacted_to_counts() {
    let dir = tempfile::tempdir().unwrap();
    let tool = patch_tool(Location::new(dir.path()).unwrap(), allow_all());
    let mut patch = String::from("*** Begin Patch\n*** Add File: big.txt\n");
    for i in 0..3000 {
        patch.push_str(&format!(
            "+line number {i} with some padding to make it longer\n"
        ));
    }
    patch.push_str("*** End Patch");
    let call = Call::new("c1", "apply_patch", json!({ "patchText": patch }));
    let output = tool
        .run_unbounded(&call, &Context::new("session"))
        .await
        .unwrap();
    assert_eq!(output.structured["compacted"], json!(true));
    let file = &output.structured["files"][0];
    assert_eq!(file["additions"], json!(3000));
    assert!(file.get("patch").is_none());
}

#[test]
fn the_tool_declares_edit_and_takes_only_patch_text() {
    let dir = tempfile::tempdir().unwrap();
    let tool = patch_tool(Location::new(dir.path()).unwrap(), allow_all());
    assert_eq!(tool.permission("apply_patch"), "edit");
    let definition = tool.definition("apply_patch").unwrap();
    let properties = definition.input_schema["properties"].as_object().unwrap();
    assert_eq!(properties.keys().collect::<Vec<_>>(), ["patchText"]);
    assert_eq!(definition.input_schema["required"], json!(["patchText"]));
}
