//! Many tasks registering, dropping, materializing and settling at once.

use std::time::Duration;

use tackle_tool_core::{ResultValue, ShowAll};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_registration_and_settlement() {
    let fx = Fixture::new();
    let registry = fx.registry.clone();
    let app = fx.app.clone();
    let mut tasks = Vec::new();
    for task in 0..8 {
        let (registry, app) = (registry.clone(), app.clone());
        tasks.push(tokio::spawn(async move {
            for iter in 0..150 {
                let tag = format!("{task}-{iter}:");
                let own = format!("t{task}");
                let guard = if iter % 3 == 0 {
                    app.register(named(&[(&own, echo(&tag)), ("shared", echo(&tag))]))
                } else {
                    registry
                        .tools()
                        .register(named(&[(&own, echo(&tag)), ("shared", echo(&tag))]))
                }
                .unwrap();
                let snapshot = registry.materialize(&ShowAll);
                // This task's own name is touched by nobody else: it must settle its own tool.
                assert_eq!(
                    settle_echo(&snapshot, &own).await,
                    ResultValue::Text(format!("{tag}echo"))
                );
                // The shared name is either still ours, or stale: never a tool the snapshot did
                // not advertise.
                match settle_echo(&snapshot, "shared").await {
                    ResultValue::Text(text) => {
                        let advertised = snapshot.definitions().iter().any(|d| d.name == "shared");
                        assert!(advertised);
                        let winner = text.trim_end_matches("echo").to_owned();
                        assert!(winner.contains('-'), "{text}");
                    }
                    ResultValue::Error(message) => assert_eq!(message, "Stale tool call: shared"),
                    other => panic!("unexpected {other:?}"),
                }
                drop(guard);
                tokio::task::yield_now().await;
            }
        }));
    }
    let all = async {
        for task in tasks {
            task.await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(60), all)
        .await
        .expect("deadlock: tasks did not finish");
    // Every batch was dropped: nothing is left behind, nothing was lost on the way.
    assert!(names(&fx.registry.materialize(&ShowAll)).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn registrations_are_not_lost_under_contention() {
    let fx = Fixture::new();
    let mut tasks = Vec::new();
    for task in 0..16 {
        let tools = fx.registry.tools();
        tasks.push(tokio::spawn(async move {
            (0..20)
                .map(|i| {
                    tools
                        .register(named(&[(&format!("n{task}_{i}"), echo(""))]))
                        .unwrap()
                })
                .collect::<Vec<_>>()
        }));
    }
    let mut guards = Vec::new();
    for task in tasks {
        guards.extend(task.await.unwrap());
    }
    assert_eq!(fx.names(&ShowAll).len(), 16 * 20);
    drop(guards);
    assert!(fx.names(&ShowAll).is_empty());
}
