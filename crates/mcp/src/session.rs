//! One tackle session on the host of one Location: what an MCP connection serves from.
//!
//! A connection starts one when it first needs tools, and starts another when the client's
//! roots move it to another Location. Requests hold an `Arc` of the session they started on,
//! so a call in flight finishes on its Location; the session is deleted (its tools, asks,
//! approvals, todo list and managed outputs) when it is closed or its last holder lets go.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tackle_host::Host;
use tackle_registry::Materialization;
use tokio_util::sync::CancellationToken;

use crate::ask::Router;
use crate::resources::Outputs;

/// The host and the session, once the Location is known.
pub(crate) struct Active {
    pub(crate) host: Host,
    pub(crate) session: String,
    pub(crate) outputs: Outputs,
    router: Arc<Router>,
    /// The catalog calls settle against, kept while no registration changes: taking a
    /// snapshot per call was a noticeable part of a small call's cost.
    catalog: Mutex<Option<Arc<Materialization>>>,
    /// Cancelled when the session is closed or replaced: its watchers stop.
    retired: CancellationToken,
    closed: AtomicBool,
}

impl Active {
    pub(crate) fn new(host: Host, router: Arc<Router>) -> Self {
        let session = host.create_session().id().to_owned();
        Self {
            host,
            session,
            outputs: Outputs::default(),
            router,
            catalog: Mutex::new(None),
            retired: CancellationToken::new(),
            closed: AtomicBool::new(false),
        }
    }

    /// Cancelled once this session no longer speaks for the connection.
    pub(crate) fn retired(&self) -> &CancellationToken {
        &self.retired
    }

    /// This session's catalog now, taken afresh.
    pub(crate) fn materialize(&self) -> Materialization {
        self.host.session(self.session.clone()).materialize()
    }

    /// This session's catalog now: the one kept, unless a registration changed since it was
    /// taken. The permission rules that filter it cannot change while the host lives.
    pub(crate) fn catalog(&self) -> Arc<Materialization> {
        let mut kept = self.catalog.lock().unwrap_or_else(PoisonError::into_inner);
        match kept.as_ref() {
            Some(catalog) if catalog.is_current() => Arc::clone(catalog),
            _ => Arc::clone(kept.insert(Arc::new(self.materialize()))),
        }
    }

    /// Deletes the session and everything that was its own; idempotent.
    pub(crate) fn close(&self) {
        self.retired.cancel();
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        self.router.detach(&self.session);
        if let Err(err) = self.host.delete_session(&self.session) {
            tracing::warn!(%err, "cannot delete all of the session's state");
        }
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        self.close();
    }
}
