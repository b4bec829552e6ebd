//! A file changed while its `edit` approval is pending: the asker below swaps it (for a link to
//! a file outside the Location, for other content, or its parent directory for a link outside)
//! before answering "once". edit, write and apply_patch then write nothing outside, never
//! write through the swapped-in link, never change content they did not read, and say why.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Value, json};

use super::Host;

const INSIDE: &str = "one\ntwo\n";
const OUTSIDE: &str = "outside secret\n";

/// The three tools' inputs that change `path` (holding [`INSIDE`]).
fn changes(path: &str) -> [(&'static str, Value); 3] {
    [
        (
            "edit",
            json!({"path": path, "oldString": "two", "newString": "TWO"}),
        ),
        ("write", json!({"path": path, "content": "written\n"})),
        (
            "apply_patch",
            json!({"patchText": format!(
                "*** Begin Patch\n*** Update File: {path}\n@@\n one\n-two\n+TWO\n*** End Patch\n"
            )}),
        ),
    ]
}

/// A Location with `rel` holding [`INSIDE`], an outside directory with `f.txt` holding
/// [`OUTSIDE`], and `swap` run once, at the `edit` ask.
struct Swap {
    host: Host,
    outside: PathBuf,
    _dirs: [tempfile::TempDir; 3],
}

impl Swap {
    fn new(rel: &str, swap: impl Fn(&Path, &Path) + Send + Sync + 'static) -> Self {
        let dirs = [
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        ];
        let root = std::fs::canonicalize(dirs[0].path()).unwrap();
        let outside = std::fs::canonicalize(dirs[1].path()).unwrap();
        std::fs::write(outside.join("f.txt"), OUTSIDE).unwrap();
        let target = root.join(rel);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(&target, INSIDE).unwrap();
        let done = Mutex::new(false);
        let (hook_target, hook_outside) = (target.clone(), outside.clone());
        let hook = Box::new(move |action: &str| {
            let mut done = done.lock().unwrap();
            if action == "edit" && !*done {
                *done = true;
                swap(&hook_target, &hook_outside);
            }
        });
        let host = Host::new(&root, &dirs[2].path().join("data"), hook);
        Self {
            host,
            outside,
            _dirs: dirs,
        }
    }

    /// The outside directory holds exactly its `f.txt`, unchanged.
    fn assert_outside_untouched(&self) {
        let names: Vec<_> = std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["f.txt"], "something was created outside");
        assert_eq!(
            std::fs::read_to_string(self.outside.join("f.txt")).unwrap(),
            OUTSIDE,
            "the outside file was written"
        );
    }
}

/// Runs each tool on `rel` with `swap` at its ask; returns the rendered outcomes and checks
/// the outside is untouched.
async fn each_tool(rel: &str, swap: fn(&Path, &Path), check: fn(&Path)) -> String {
    let mut out = String::new();
    for (tool, input) in changes(rel) {
        let case = Swap::new(rel, swap);
        let message = case.host.error(tool, input).await;
        assert_eq!(case.host.asked(), ["edit"], "{tool}");
        case.assert_outside_untouched();
        check(&case.host.root.join(rel));
        out.push_str(&format!("{tool}: {}\n", case.host.redact(&message)));
    }
    out
}

#[tokio::test]
async fn a_file_swapped_for_a_link_outside_is_not_written_through() {
    let out = each_tool(
        "f.txt",
        |target, outside| {
            std::fs::remove_file(target).unwrap();
            std::os::unix::fs::symlink(outside.join("f.txt"), target).unwrap();
        },
        |target| assert!(target.is_symlink(), "the swapped-in link was replaced"),
    )
    .await;
    insta::assert_snapshot!("file_swapped_for_a_link", out);
}

#[tokio::test]
async fn a_parent_swapped_for_a_link_outside_is_not_followed() {
    let out = each_tool(
        "sub/f.txt",
        |target, outside| {
            let sub = target.parent().unwrap();
            std::fs::rename(sub, sub.with_extension("orig")).unwrap();
            std::os::unix::fs::symlink(outside, sub).unwrap();
        },
        |target| {
            let parent = target.parent().unwrap();
            assert!(parent.is_symlink());
            assert_eq!(
                std::fs::read_to_string(parent.with_extension("orig").join("f.txt")).unwrap(),
                INSIDE
            );
        },
    )
    .await;
    insta::assert_snapshot!("parent_swapped_for_a_link", out);
}

/// edit and apply_patch read the file only once approved, in the same transaction that
/// writes it: other content swapped in meanwhile is what they match against, so a change
/// that no longer applies fails and the other content stays. write replaces the whole file,
/// whatever it held, by definition (the approval names the path, not the content).
#[tokio::test]
async fn content_changed_during_the_ask_is_never_overwritten_by_an_edit() {
    fn other_content(target: &Path, _: &Path) {
        let temp = target.with_extension("new");
        std::fs::write(&temp, "one\nthree\n").unwrap();
        std::fs::rename(&temp, target).unwrap();
    }
    let mut out = String::new();
    for (tool, input) in changes("f.txt") {
        let case = Swap::new("f.txt", other_content);
        let settled = case.host.settle(tool, input).await;
        let content = std::fs::read_to_string(case.host.root.join("f.txt")).unwrap();
        let outcome = match settled.into_result() {
            tackle_tool_core::ResultValue::Error(message) => message,
            other => format!("{other:?}"),
        };
        out.push_str(&format!(
            "{tool}: {}\n  file now: {content:?}\n",
            case.host.redact(&outcome)
        ));
        let expected = if tool == "write" {
            "written\n"
        } else {
            "one\nthree\n"
        };
        assert_eq!(content, expected, "{tool}");
        case.assert_outside_untouched();
    }
    insta::assert_snapshot!("content_changed", out);
}

/// Creations and removals act through the parent directory's descriptor too: with `sub`
/// swapped for a link outside while the call is asked about, a new file (write of a missing
/// path, a patch adding a file), a deleted file and a moved file's source are never created
/// or removed outside.
#[tokio::test]
async fn creations_and_removals_under_a_parent_swapped_for_a_link_stay_inside() {
    fn swap_parent(target: &Path, outside: &Path) {
        let sub = target.parent().unwrap();
        std::fs::rename(sub, sub.with_extension("orig")).unwrap();
        std::os::unix::fs::symlink(outside, sub).unwrap();
    }
    let patch =
        |body: &str| json!({"patchText": format!("*** Begin Patch\n{body}*** End Patch\n")});
    let calls = [
        (
            "write",
            json!({"path": "sub/new.txt", "content": "created\n"}),
        ),
        (
            "apply_patch",
            patch("*** Add File: sub/new.txt\n+created\n"),
        ),
        ("apply_patch", patch("*** Delete File: sub/f.txt\n")),
        (
            "apply_patch",
            patch("*** Update File: sub/f.txt\n*** Move to: moved.txt\n@@\n one\n-two\n+TWO\n"),
        ),
    ];
    let mut out = String::new();
    for (tool, input) in calls {
        let case = Swap::new("sub/f.txt", swap_parent);
        let settled = case.host.settle(tool, input.clone()).await;
        assert_eq!(case.host.asked().first().map(String::as_str), Some("edit"));
        assert!(case.host.root.join("sub").is_symlink(), "{input}");
        case.assert_outside_untouched();
        let moved = case.host.root.join("moved.txt");
        assert!(
            std::fs::read_to_string(&moved).map_or(true, |text| !text.contains("outside")),
            "the outside file was moved in"
        );
        let outcome = match settled.into_result() {
            tackle_tool_core::ResultValue::Error(message) => message,
            other => format!("{other:?}"),
        };
        out.push_str(&format!("{tool} {input}: {}\n", case.host.redact(&outcome)));
    }
    insta::assert_snapshot!("creations_and_removals_under_a_swapped_parent", out);
}
