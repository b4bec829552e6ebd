//! `settle_batch` with real builtins: a read and an edit of one file keep their call order;
//! read-only calls run side by side, mutating ones alone.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tackle_permission::{Asker, Effect, PendingRequest, Reply, Rule};
use tackle_tool_core::{Call, ResultValue};
use tokio::sync::Barrier;

use crate::support::*;

fn text(result: ResultValue) -> String {
    match result {
        ResultValue::Text(text) => text,
        other => panic!("not text: {other:?}"),
    }
}

#[tokio::test]
async fn a_read_before_an_edit_sees_the_old_text_and_one_after_it_the_new() {
    let fx = Fixture::new();
    let calls = [
        Call::new("c1", "read", json!({"path": "a.txt"})),
        Call::new(
            "c2",
            "edit",
            json!({"path": "a.txt", "oldString": "beta", "newString": "BETA"}),
        ),
        Call::new("c3", "read", json!({"path": "a.txt"})),
        Call::new("c4", "grep", json!({"pattern": "BETA"})),
    ];
    let results = fx.snapshot().settle_batch(&calls, &ctx()).await;
    let mut results = results.into_iter().map(|r| r.unwrap());
    let before = text(results.next().unwrap().into_result());
    assert!(before.contains("2: beta"), "{before}");
    assert!(!results.next().unwrap().is_error());
    let after = text(results.next().unwrap().into_result());
    assert!(after.contains("2: BETA"), "{after}");
    let found = text(results.next().unwrap().into_result());
    assert!(found.contains("Line 2: BETA"), "{found}");
}

/// Answers only once `parties` asks are waiting together (read-only calls side by side);
/// refuses if they never are.
struct Together(Arc<Barrier>);

impl Asker for Together {
    fn ask(&self, _request: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        let barrier = Arc::clone(&self.0);
        Box::pin(async move {
            match tokio::time::timeout(Duration::from_secs(20), barrier.wait()).await {
                Ok(_) => Reply::Once,
                Err(_) => Reply::Reject {
                    message: Some("the other call never asked at the same time".into()),
                },
            }
        })
    }
}

/// Counts how many asks are waiting at once.
#[derive(Default)]
struct Counting {
    now: AtomicUsize,
    most: AtomicUsize,
}

struct CountingAsker(Arc<Counting>);

impl Asker for CountingAsker {
    fn ask(&self, _request: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        let this = Arc::clone(&self.0);
        Box::pin(async move {
            let now = this.now.fetch_add(1, Ordering::SeqCst) + 1;
            this.most.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(100)).await;
            this.now.fetch_sub(1, Ordering::SeqCst);
            Reply::Once
        })
    }
}

/// Every rule allows, but going outside the Location asks.
fn asking_outside() -> Vec<Rule> {
    vec![
        Rule::new("*", "*", Effect::Allow),
        Rule::new("external_directory", "*", Effect::Ask),
    ]
}

#[tokio::test]
async fn read_only_builtins_run_side_by_side() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("one.txt"), "one\n").unwrap();
    std::fs::write(outside.path().join("two.txt"), "two\n").unwrap();
    let fx = Fixture::with(
        asking_outside(),
        Arc::new(Together(Arc::new(Barrier::new(2)))),
    );
    let path = |name: &str| outside.path().join(name).display().to_string();
    // Each call waits in its permission ask until the other asks too.
    let calls = [
        Call::new("c1", "read", json!({"path": path("one.txt")})),
        Call::new(
            "c2",
            "grep",
            json!({"pattern": "two", "path": outside.path()}),
        ),
    ];
    let results = fx.snapshot().settle_batch(&calls, &ctx()).await;
    let results: Vec<String> = results
        .into_iter()
        .map(|r| text(r.unwrap().into_result()))
        .collect();
    assert!(results[0].contains("1: one"), "{}", results[0]);
    assert!(results[1].contains("Line 1: two"), "{}", results[1]);
}

#[tokio::test]
async fn mutating_builtins_run_one_at_a_time() {
    let outside = tempfile::tempdir().unwrap();
    let counting = Arc::new(Counting::default());
    let fx = Fixture::with(
        asking_outside(),
        Arc::new(CountingAsker(Arc::clone(&counting))),
    );
    let path = |name: &str| outside.path().join(name).display().to_string();
    let calls = [
        Call::new(
            "c1",
            "write",
            json!({"path": path("one.txt"), "content": "1"}),
        ),
        Call::new("c2", "read", json!({"path": path("one.txt")})),
        Call::new(
            "c3",
            "write",
            json!({"path": path("two.txt"), "content": "2"}),
        ),
        Call::new(
            "c4",
            "edit",
            json!({"path": path("one.txt"), "oldString": "1", "newString": "one"}),
        ),
    ];
    let results = fx.snapshot().settle_batch(&calls, &ctx()).await;
    for result in results {
        let settled = result.unwrap();
        assert!(!settled.is_error(), "{:?}", settled.result());
    }
    assert_eq!(
        counting.most.load(Ordering::SeqCst),
        1,
        "two calls asked at once"
    );
    assert_eq!(
        std::fs::read_to_string(outside.path().join("one.txt")).unwrap(),
        "one"
    );
    assert_eq!(
        std::fs::read_to_string(outside.path().join("two.txt")).unwrap(),
        "2"
    );
}
