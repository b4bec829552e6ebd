//! Step progress of long work: grep, glob and apply_patch report running counts to a call's
//! progress sink (growing, the last one complete), and nothing when there is no sink.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tackle_tool_core::{Call, Context, Progress, ProgressSink, Tool};

/// One recorded `Progress::Step`.
#[derive(Debug, Clone, PartialEq)]
struct Step {
    done: u64,
    total: Option<u64>,
    message: String,
}

/// A sink that records every step.
fn recording() -> (ProgressSink, Arc<Mutex<Vec<Step>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = Arc::clone(&seen);
        ProgressSink::new(move |progress| {
            if let Progress::Step {
                done,
                total,
                message,
            } = progress
            {
                seen.lock().unwrap().push(Step {
                    done,
                    total,
                    message: message.to_owned(),
                });
            }
        })
    };
    (sink, seen)
}

async fn run(tool: &Tool, name: &str, input: serde_json::Value, sink: ProgressSink) {
    let ctx = Context::new("session").with_progress(sink);
    tool.run_unbounded(&Call::new("call_1", name, input), &ctx)
        .await
        .unwrap();
}

/// Steps never go back, and the last one holds the whole count.
fn assert_growing(steps: &[Step]) {
    assert!(!steps.is_empty(), "no step reported");
    for pair in steps.windows(2) {
        assert!(pair[0].done <= pair[1].done, "{steps:?}");
    }
}

#[cfg(feature = "search")]
mod search {
    use super::*;
    use crate::search::fixture::Fixture;

    /// 300 files, every third with one `needle`.
    fn tree() -> Fixture {
        let f = Fixture::new();
        for i in 0..300 {
            let text = if i % 3 == 0 { "hay\nneedle\n" } else { "hay\n" };
            f.write(&format!("d{}/f{i}.txt", i % 7), text);
        }
        f
    }

    #[tokio::test]
    async fn grep_reports_files_searched_and_matches_so_far() {
        let f = tree();
        let (sink, seen) = recording();
        run(&f.grep, "grep", json!({"pattern": "needle"}), sink).await;
        let steps = seen.lock().unwrap().clone();
        assert_growing(&steps);
        let last = steps.last().unwrap();
        assert_eq!(last.done, 300);
        assert_eq!(last.total, None);
        assert_eq!(last.message, "files searched, 100 matches");
    }

    #[tokio::test]
    async fn glob_reports_paths_scanned_and_matching() {
        let f = tree();
        let (sink, seen) = recording();
        run(&f.glob, "glob", json!({"pattern": "**/f1*.txt"}), sink).await;
        let steps = seen.lock().unwrap().clone();
        assert_growing(&steps);
        let last = steps.last().unwrap();
        // 300 files, 7 directories and the root.
        assert_eq!(last.done, 308);
        // f1, f10..f19, f100..f199.
        assert_eq!(last.message, "paths scanned, 111 matching");
    }

    #[tokio::test]
    async fn without_a_sink_nothing_is_reported() {
        let f = tree();
        // The default context has no sink: the search runs as before.
        let out = f.call("grep", json!({"pattern": "needle"})).await.unwrap();
        assert!(f.text(&out).starts_with("Found 100 matches"));
        assert!(!Context::new("s").progress.is_active());
    }
}

#[cfg(feature = "apply-patch")]
#[tokio::test]
async fn apply_patch_reports_chunks_applied_of_all() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.txt"),
        "one\ntwo\nthree\nfour\nfive\nsix\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("b.txt"), "x\n").unwrap();
    let location = tackle_builtins::Location::new(dir.path()).unwrap();
    let tool = crate::apply_patch::patch_tool(location, crate::apply_patch::allow_all());
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n@@\n five\n-six\n+6\n*** Add File: c.txt\n+new\n*** Delete File: b.txt\n*** End Patch";
    let (sink, seen) = recording();
    run(&tool, "apply_patch", json!({ "patchText": patch }), sink).await;
    let steps = seen.lock().unwrap().clone();
    assert_growing(&steps);
    assert!(steps.iter().all(|s| s.total == Some(4)), "{steps:?}");
    let last = steps.last().unwrap();
    assert_eq!(last.done, 4);
    assert_eq!(last.message, "chunks applied");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n2\nthree\nfour\nfive\n6\n"
    );
}
