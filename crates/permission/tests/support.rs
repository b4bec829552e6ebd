//! Helpers shared by the service tests.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tackle_permission::{
    Asker, Effect, PendingRequest, Permission, Reply, Request, Rule, Ruleset, SavedApprovals,
};
use tackle_tool_core::Context;

pub(crate) fn rules(list: &[(&str, &str, Effect)]) -> Ruleset {
    Ruleset::new(
        list.iter()
            .map(|(action, resource, effect)| Rule::new(*action, *resource, *effect))
            .collect(),
    )
}

pub(crate) fn request(session: &str, action: &str, resources: &[&str]) -> Request {
    let ctx = Context::new(session).for_call("call_1");
    Request::new(
        &ctx,
        action,
        resources.iter().map(ToString::to_string).collect(),
    )
}

pub(crate) fn service(list: &[(&str, &str, Effect)], asker: impl Asker) -> Permission {
    Permission::new(rules(list), SavedApprovals::in_memory(), Arc::new(asker))
}

/// Waits until `session` has `count` pending requests (for 10 s or more: a loaded machine may be
/// slow to run the task that asks).
pub(crate) async fn until_pending(
    permission: &Permission,
    session: &str,
    count: usize,
) -> Vec<PendingRequest> {
    for _ in 0..5000 {
        let pending = permission.pending(session);
        if pending.len() == count {
            return pending;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!(
        "expected {count} pending in {session}, have {}",
        permission.pending(session).len()
    );
}

/// Records what it was asked and never answers.
#[derive(Default, Clone)]
pub(crate) struct Recorder(pub(crate) Arc<Mutex<Vec<PendingRequest>>>);

impl Asker for Recorder {
    fn ask(&self, request: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        self.0.lock().unwrap().push(request);
        Box::pin(std::future::pending())
    }
}
