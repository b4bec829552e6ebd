//! `notifications/tools/list_changed`: the client hears when its session's catalog changes.
//!
//! The registry signals every registration and removal, in any layer; a watcher per session
//! waits a moment so a burst of them is one announcement, re-materializes the session's
//! catalog and announces it only when it differs from what the client was last shown (or
//! told about), so another session's tools never cause a notification here.

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use rmcp::service::{Peer, RoleServer};
use tackle_tool_core::Definition;

use crate::session::Active;

/// How long a change waits for the ones that follow it (a connection registering its batch,
/// a plugin several) before the catalog is compared and announced.
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(50);

/// The catalog the client last saw or was told changed; `None` before it first listed tools.
#[derive(Debug, Default)]
pub(crate) struct Known(Mutex<Option<Vec<Arc<Definition>>>>);

impl Known {
    /// The client was just sent `catalog` (`tools/list`).
    pub(crate) fn listed(&self, catalog: &[Arc<Definition>]) {
        *self.lock() = Some(catalog.to_vec());
    }

    /// Records `current` and says whether the client should hear that it changed: it listed
    /// tools before, and what it has differs.
    fn changed(&self, current: &[Arc<Definition>]) -> bool {
        let mut known = self.lock();
        match known.as_deref() {
            Some(seen) if !same(seen, current) => {
                *known = Some(current.to_vec());
                true
            }
            _ => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Vec<Arc<Definition>>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Definitions are shared `Arc`s while a registration is unchanged, so pointers decide most
/// comparisons; equal values from another registration (a reconnect, a rebuilt host) change
/// nothing the client sees.
fn same(a: &[Arc<Definition>], b: &[Arc<Definition>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y) || x == y)
}

/// Announces `active`'s catalog to `peer` if it differs from what the client knows.
pub(crate) async fn announce_if_changed(active: &Active, known: &Known, peer: &Peer<RoleServer>) {
    let current = active.materialize();
    if known.changed(current.definitions())
        && let Err(err) = peer.notify_tool_list_changed().await
    {
        tracing::debug!(%err, "cannot announce the changed tool list");
    }
}

/// Watches `active`'s registry until the session is retired or gone.
pub(crate) fn watch(active: &Arc<Active>, known: Arc<Known>, peer: Peer<RoleServer>) {
    let mut changes = active.host.registry().catalog_changes();
    let retired = active.retired().clone();
    let active: Weak<Active> = Arc::downgrade(active);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = retired.cancelled() => return,
                changed = changes.changed() => if !changed { return },
            }
            tokio::select! {
                () = retired.cancelled() => return,
                () = tokio::time::sleep(DEBOUNCE) => {}
            }
            let Some(active) = active.upgrade() else {
                return;
            };
            announce_if_changed(&active, &known, &peer).await;
        }
    });
}
