//! `settle_batch`: read-only calls side by side, the others alone and in call order.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tackle_registry::SettleError;
use tackle_tool_core::{Call, Context, Halt, ShowAll, Tool, ToolClass, ToolError, from_fn};
use tokio::sync::Barrier;

use crate::support::*;

/// A read-only tool whose calls each wait until `parties` calls are running at once.
fn meeting(barrier: Arc<Barrier>) -> Tool {
    Tool::typed(
        "Waits for the others",
        from_fn(move |_: serde_json::Value, _ctx: Context| {
            let barrier = Arc::clone(&barrier);
            async move {
                barrier.wait().await;
                Ok::<_, ToolError>("met".to_owned())
            }
        }),
    )
    .build()
    .with_class(ToolClass::ReadOnly)
}

/// What the calls of [`counted`] tools saw: how many ran at once, how many of them
/// mutating, and whether a mutating call ever shared the Location with another call.
#[derive(Default)]
struct Overlaps {
    running: AtomicUsize,
    writers: AtomicUsize,
    most: AtomicUsize,
    clashes: AtomicUsize,
    log: std::sync::Mutex<Vec<String>>,
}

/// A tool (mutating unless `read_only`) that records its overlaps with other calls.
fn counted(seen: &Arc<Overlaps>, read_only: bool) -> Tool {
    let seen = Arc::clone(seen);
    let tool = Tool::typed(
        "Counts overlaps",
        from_fn(move |input: Echo, _ctx: Context| {
            let seen = Arc::clone(&seen);
            async move {
                let now = seen.running.fetch_add(1, Ordering::SeqCst) + 1;
                let writers = if read_only {
                    seen.writers.load(Ordering::SeqCst)
                } else {
                    seen.writers.fetch_add(1, Ordering::SeqCst) + 1
                };
                if writers > 1 || (writers == 1 && now > 1) {
                    seen.clashes.fetch_add(1, Ordering::SeqCst);
                }
                seen.most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(30)).await;
                seen.log.lock().unwrap().push(input.text.clone());
                if !read_only {
                    seen.writers.fetch_sub(1, Ordering::SeqCst);
                }
                seen.running.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, ToolError>(input.text)
            }
        }),
    )
    .build();
    if read_only {
        tool.with_class(ToolClass::ReadOnly)
    } else {
        tool
    }
}

fn call(id: &str, name: &str) -> Call {
    Call::new(id, name, json!({"text": id}))
}

#[tokio::test]
async fn read_only_calls_run_side_by_side() {
    let fx = Fixture::new();
    let tool = meeting(Arc::new(Barrier::new(3)));
    let _guard = fx
        .registry
        .tools()
        .register(named(&[("meet", tool)]))
        .unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    let calls: Vec<Call> = (0..3).map(|i| call(&format!("c{i}"), "meet")).collect();
    // One after another, the first call would wait for the others forever.
    let results = tokio::time::timeout(
        Duration::from_secs(30),
        snapshot.settle_batch(&calls, &ctx()),
    )
    .await
    .expect("read-only calls did not run side by side");
    assert_eq!(results.len(), 3);
    for result in results {
        assert_eq!(result.unwrap().into_result(), text("met"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutating_calls_run_alone_in_call_order_and_results_keep_call_order() {
    let fx = Fixture::new();
    let seen = Arc::new(Overlaps::default());
    let (writer, reader) = (counted(&seen, false), counted(&seen, true));
    let _guard = fx
        .registry
        .tools()
        .register(named(&[("write", writer), ("look", reader)]))
        .unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    let calls = vec![
        call("w1", "write"),
        call("w2", "write"),
        call("nope", "missing"),
        call("w3", "write"),
    ];
    let results = snapshot.settle_batch(&calls, &ctx()).await;
    let shown: Vec<_> = results
        .into_iter()
        .map(|r| r.unwrap().into_result())
        .collect();
    assert_eq!(
        shown,
        vec![
            text("w1"),
            text("w2"),
            error("Unknown tool: missing"),
            text("w3")
        ]
    );
    assert_eq!(*seen.log.lock().unwrap(), ["w1", "w2", "w3"]);
    assert_eq!(
        seen.most.load(Ordering::SeqCst),
        1,
        "mutating calls overlapped"
    );

    // Two batches on one Location at once: a mutating call never overlaps another call.
    let other = fx.registry.materialize(&ShowAll);
    let first = [call("a1", "write"), call("a2", "look"), call("a3", "write")];
    let second = [call("b1", "look"), call("b2", "write"), call("b3", "look")];
    let context = ctx();
    let (one, two) = tokio::join!(
        snapshot.settle_batch(&first, &context),
        other.settle_batch(&second, &context)
    );
    assert!(one.into_iter().chain(two).all(|r| r.is_ok()));
    assert_eq!(
        seen.clashes.load(Ordering::SeqCst),
        0,
        "a mutating call overlapped another"
    );
    let order = seen.log.lock().unwrap().clone();
    let position = |id: &str| order.iter().position(|seen| seen == id).unwrap();
    assert!(
        position("a1") < position("a2") && position("a2") < position("a3"),
        "{order:?}"
    );
    assert!(
        position("b1") < position("b2") && position("b2") < position("b3"),
        "{order:?}"
    );
}

#[tokio::test]
async fn after_a_halt_the_rest_of_the_batch_is_not_run() {
    let fx = Fixture::new();
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&ran);
    let halting = Tool::typed(
        "Declined",
        from_fn(|_: serde_json::Value, _ctx: Context| async move {
            Err::<String, _>(ToolError::Halt(Halt::Declined))
        }),
    )
    .build();
    let later = Tool::typed(
        "Counts",
        from_fn(move |_: serde_json::Value, _ctx: Context| {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok::<_, ToolError>("ran".to_owned())
            }
        }),
    )
    .build();
    let _guard = fx
        .registry
        .tools()
        .register(named(&[("halt", halting), ("later", later)]))
        .unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    let calls = [call("c1", "later"), call("c2", "halt"), call("c3", "later")];
    let results = snapshot.settle_batch(&calls, &ctx()).await;
    assert!(results[0].is_ok());
    assert!(matches!(results[1], Err(SettleError::Halt(Halt::Declined))));
    assert!(matches!(results[2], Err(SettleError::NotRun)));
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[test]
fn a_tool_is_mutating_unless_it_declares_otherwise() {
    assert_eq!(echo("x").class(), ToolClass::Mutating);
    assert!(!ToolClass::Mutating.is_read_only());
    assert!(ToolClass::ReadOnly.is_read_only() && ToolClass::OpenWorld.is_read_only());
    let tool = echo("x");
    let declared = tool.with_class(ToolClass::ReadOnly);
    assert_eq!(declared.class(), ToolClass::ReadOnly);
    assert_eq!(
        tool.class(),
        ToolClass::Mutating,
        "the original is unchanged"
    );
    assert!(declared.same_runtime(&tool));
}

#[tokio::test]
async fn a_filtered_snapshot_no_longer_settles_what_it_left_out() {
    let fx = Fixture::new();
    let _guard = fx
        .registry
        .tools()
        .register(named(&[("a", echo("a:")), ("b", echo("b:"))]))
        .unwrap();
    let snapshot = fx.registry.materialize(&ShowAll);
    let only_a = snapshot.filtered(|name, _| name == "a");
    assert_eq!(names(&only_a), ["a"]);
    assert_eq!(settle_echo(&only_a, "a").await, text("a:echo"));
    assert_eq!(settle_echo(&only_a, "b").await, error("Unknown tool: b"));
    assert_eq!(names(&snapshot), ["a", "b"]);
}
