//! The Location registry and its register-only views.

use std::sync::{Arc, Mutex, Weak};

use tackle_output_store::OutputStore;
use tackle_tool_core::{RegistrationError, Tool, Visibility};

use crate::application::ApplicationTools;
use crate::changes::{CatalogChanges, ChangeSignal};
use crate::inner::{LocalState, RegistryInner};
use crate::layer::{Registration, lock, register_with};
use crate::observe::SettleObserver;
use crate::snapshot::Materialization;

/// The tools of one Location (workspace directory): the shared application layer, this
/// Location's own layer and per-session layers above it.
///
/// Cheap to clone; clones share one registry.
#[derive(Debug, Clone)]
pub struct ToolRegistry {
    inner: Arc<RegistryInner>,
}

impl ToolRegistry {
    /// A registry for one Location over the process's `application` tools; successful results
    /// are bounded by `store`.
    pub fn new(application: &ApplicationTools, store: OutputStore) -> Self {
        Self::build(application, store, None)
    }

    /// Like [`new`](Self::new), telling `observer` of every call any snapshot of this registry
    /// settles (a host's audit log).
    pub fn with_observer(
        application: &ApplicationTools,
        store: OutputStore,
        observer: Arc<dyn SettleObserver>,
    ) -> Self {
        Self::build(application, store, Some(observer))
    }

    fn build(
        application: &ApplicationTools,
        store: OutputStore,
        observer: Option<Arc<dyn SettleObserver>>,
    ) -> Self {
        let inner = RegistryInner {
            app: application.clone(),
            store,
            state: Mutex::new(LocalState::default()),
            order: tokio::sync::RwLock::new(()),
            changed: ChangeSignal::default(),
            observer,
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// The register-only view of this Location's layer, for Location producers.
    pub fn tools(&self) -> Tools {
        Tools {
            owner: Arc::downgrade(&self.inner),
            session: None,
        }
    }

    /// The register-only view of `session_id`'s layer: its tools shadow Location and
    /// application tools, and only that session's snapshots see them.
    pub fn session_tools(&self, session_id: &str) -> Tools {
        Tools {
            owner: Arc::downgrade(&self.inner),
            session: Some(session_id.into()),
        }
    }

    /// Removes `session_id`'s layer at once, whoever still holds its registrations (an MCP
    /// connection of the session, say): when a host deletes the session. Its snapshots' later
    /// calls to those tools are refused as stale (a started call finishes), the guards of its
    /// batches become inert, and the Location and other sessions are untouched. Registering
    /// through [`session_tools`](Self::session_tools) afterwards starts a new layer. Returns
    /// how many registrations were removed.
    pub fn close_session(&self, session_id: &str) -> usize {
        let removed = lock(&self.inner.state)
            .sessions
            .remove(session_id)
            .map_or(0, |stacks| stacks.len());
        if removed > 0 {
            self.inner.changed.bump();
        }
        removed
    }

    /// Wakes its holder whenever this registry's catalog may have changed: a registration
    /// added or removed in any layer (the application layer included), or a session closed. A
    /// host watching one session re-materializes it and compares (an MCP server announcing
    /// `tools/list_changed`, say).
    pub fn catalog_changes(&self) -> CatalogChanges {
        CatalogChanges::new(self.inner.app.subscribe(), self.inner.changed.subscribe())
    }

    /// An immutable snapshot of the Location's effective tools (application tools shadowed by
    /// Location tools), minus those whose permission action `visibility` wholly disables.
    pub fn materialize(&self, visibility: &dyn Visibility) -> Materialization {
        self.snapshot(None, visibility)
    }

    /// Like [`materialize`](Self::materialize), with `session_id`'s layer on top.
    pub fn materialize_session(
        &self,
        session_id: &str,
        visibility: &dyn Visibility,
    ) -> Materialization {
        self.snapshot(Some(session_id), visibility)
    }

    fn snapshot(&self, session: Option<&str>, visibility: &dyn Visibility) -> Materialization {
        Materialization::new(Arc::clone(&self.inner), session, visibility)
    }
}

/// A register-only view of one layer of a [`ToolRegistry`], handed to Location producers.
///
/// It does not keep the registry alive: registering after the registry is gone registers
/// nothing and leaves no trace.
#[derive(Debug, Clone)]
pub struct Tools {
    owner: Weak<RegistryInner>,
    session: Option<String>,
}

impl Tools {
    /// Registers `batch` in this layer. Every name is validated first: one invalid name fails
    /// the whole batch and nothing is registered. Dropping the guard unregisters it.
    pub fn register(
        &self,
        batch: impl IntoIterator<Item = (String, Tool)>,
    ) -> Result<Registration, RegistrationError> {
        let Some(owner) = self.owner.upgrade() else {
            // Still validate, so a bad name is reported the same way whether or not the
            // registry is alive.
            crate::layer::prepare(batch)?;
            return Ok(Registration::inert());
        };
        let session = self.session.clone();
        let registration = register_with(&owner, batch, move |inner, token, entries| {
            let mut state = lock(&inner.state);
            match session {
                None => state.location.push(token, entries),
                Some(session) => state
                    .sessions
                    .entry(session)
                    .or_default()
                    .push(token, entries),
            }
        })?;
        owner.changed.bump();
        Ok(registration)
    }
}
