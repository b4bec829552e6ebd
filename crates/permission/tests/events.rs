//! The event stream: a host with a user interface answers through `reply`, without an asker.

use std::collections::HashMap;
use std::time::Duration;

use tackle_permission::{Effect, PermissionError, PermissionEvent, Reply, ReplyLater};
use tokio::sync::broadcast::Receiver;

use crate::support::{request, service, until_pending};

use Effect::Ask;

async fn next(events: &mut Receiver<PermissionEvent>) -> PermissionEvent {
    tokio::time::timeout(Duration::from_secs(30), events.recv())
        .await
        .expect("an event within 30 s")
        .unwrap()
}

#[tokio::test]
async fn a_host_answers_each_request_from_the_event_stream() {
    let permission = service(&[("*", "*", Ask)], ReplyLater);
    let mut events = permission.subscribe();
    // The host: answers every request it is shown, by its resource, until four were answered.
    let host = tokio::spawn({
        let permission = permission.clone();
        async move {
            let mut replied = HashMap::new();
            while replied.len() < 4 {
                match next(&mut events).await {
                    PermissionEvent::Asked(pending) => {
                        let reply = if pending.request.resources[0].starts_with("ok") {
                            Reply::Once
                        } else {
                            Reply::Reject {
                                message: Some("not that".into()),
                            }
                        };
                        permission.reply(&pending.id, reply).unwrap();
                    }
                    PermissionEvent::Replied {
                        request_id, reply, ..
                    } => {
                        replied.insert(request_id, reply);
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
            replied
        }
    });
    let calls: Vec<_> = ["ok 1", "no 2", "ok 3", "ok 4"]
        .into_iter()
        .enumerate()
        .map(|(i, command)| {
            let permission = permission.clone();
            // One session per call, so a reject declines no other.
            let session = format!("s{i}");
            tokio::spawn(async move {
                permission
                    .assert(request(&session, "bash", &[command]))
                    .await
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for call in calls {
        let outcome = tokio::time::timeout(Duration::from_secs(30), call)
            .await
            .expect("answered through the stream")
            .unwrap();
        outcomes.push(match outcome {
            Ok(()) => "allowed".to_owned(),
            Err(PermissionError::Corrected { feedback }) => feedback,
            Err(other) => panic!("{other:?}"),
        });
    }
    assert_eq!(outcomes, ["allowed", "not that", "allowed", "allowed"]);
    let replied = host.await.unwrap();
    assert_eq!(replied.values().filter(|r| **r == Reply::Once).count(), 3);
    assert!(permission.all_pending().is_empty());
}

#[tokio::test]
async fn every_way_a_request_ends_is_one_event() {
    let permission = service(&[("*", "*", Ask)], ReplyLater);
    let mut events = permission.subscribe();
    let ask = |session: &str, command: &str| {
        let permission = permission.clone();
        let request = request(session, "bash", &[command]).with_save(vec!["ls*".into()]);
        tokio::spawn(async move { permission.assert(request).await })
    };

    // A dropped call withdraws its request.
    let dropped = ask("a", "dropped");
    let asked = next(&mut events).await;
    assert!(matches!(asked, PermissionEvent::Asked(_)));
    dropped.abort();
    let withdrawn = next(&mut events).await;
    assert!(matches!(withdrawn, PermissionEvent::Withdrawn { .. }));
    assert_eq!(withdrawn.request_id(), asked.request_id());

    // A session approval answers the request it covers too, with the same reply.
    let (first, second) = (ask("a", "ls"), ask("a", "ls -l"));
    let PermissionEvent::Asked(one) = next(&mut events).await else {
        panic!()
    };
    next(&mut events).await;
    permission.reply(&one.id, Reply::Session).unwrap();
    for _ in 0..2 {
        let event = next(&mut events).await;
        assert!(
            matches!(&event, PermissionEvent::Replied { reply: Reply::Session, session_id, .. } if session_id == "a"),
            "{event:?}"
        );
    }
    first.await.unwrap().unwrap();
    second.await.unwrap().unwrap();

    // A reject declines the rest of its session, each with its event.
    let (first, second) = (ask("b", "rm 1"), ask("b", "rm 2"));
    until_pending(&permission, "b", 2).await;
    let asked: Vec<_> = [next(&mut events).await, next(&mut events).await].into();
    permission
        .reply(asked[0].request_id(), Reply::Reject { message: None })
        .unwrap();
    for _ in 0..2 {
        let event = next(&mut events).await;
        assert!(matches!(
            event,
            PermissionEvent::Replied {
                reply: Reply::Reject { message: None },
                ..
            }
        ));
    }
    assert!(first.await.unwrap().is_err() && second.await.unwrap().is_err());

    // Deleting a session and closing the service withdraw what is pending.
    let (c, d) = (ask("c", "rm"), ask("d", "rm"));
    next(&mut events).await;
    next(&mut events).await;
    permission.delete_session("c");
    let event = next(&mut events).await;
    assert!(matches!(event, PermissionEvent::Withdrawn { .. }) && event.session_id() == "c");
    permission.close();
    let event = next(&mut events).await;
    assert!(matches!(event, PermissionEvent::Withdrawn { .. }) && event.session_id() == "d");
    assert!(c.await.unwrap().is_err() && d.await.unwrap().is_err());
    assert!(events.try_recv().is_err());
}
