//! The state of one Location registry, shared by its handle, its views and its snapshots.
//!
//! Both the registry handle (which registers and takes snapshots) and a snapshot (which checks
//! at settle time that a call's registration is still the effective one) need it, so it lives
//! below both.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use indexmap::IndexMap;

use crate::application::ApplicationTools;
use crate::changes::ChangeSignal;
use crate::layer::{Entry, Removable, Stacks, lock};
use crate::observe::SettleObserver;
use tackle_output_store::OutputStore;

pub(crate) struct RegistryInner {
    pub(crate) app: ApplicationTools,
    pub(crate) store: OutputStore,
    pub(crate) state: Mutex<LocalState>,
    /// Orders batches on this Location: calls of read-only tools share it, a call of any other
    /// tool holds it alone (`Materialization::settle_batch`).
    pub(crate) order: tokio::sync::RwLock<()>,
    /// Bumped after every change of the Location or a session layer.
    pub(crate) changed: ChangeSignal,
    /// Told of every settled call (a host's audit log).
    pub(crate) observer: Option<Arc<dyn SettleObserver>>,
}

#[derive(Debug, Default)]
pub(crate) struct LocalState {
    pub(crate) location: Stacks,
    pub(crate) sessions: HashMap<String, Stacks>,
}

impl std::fmt::Debug for RegistryInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryInner")
            .field("app", &self.app)
            .field("store", &self.store)
            .field("state", &self.state)
            .field("observed", &self.observer.is_some())
            .finish_non_exhaustive()
    }
}

impl Removable for RegistryInner {
    fn remove(&self, token: u64) {
        {
            let mut state = lock(&self.state);
            state.location.remove(token);
            state.sessions.retain(|_, stacks| {
                stacks.remove(token);
                !stacks.is_empty()
            });
        }
        self.changed.bump();
    }
}

impl RegistryInner {
    /// The id of the registration of `name` that a call made now would run.
    pub(crate) fn current(&self, session: Option<&str>, name: &str) -> Option<u64> {
        {
            let state = lock(&self.state);
            let session_entry = session
                .and_then(|s| state.sessions.get(s))
                .and_then(|stacks| stacks.current(name));
            if let Some(entry) = session_entry.or_else(|| state.location.current(name)) {
                return Some(entry.id);
            }
        }
        self.app.current(name)
    }

    /// The effective entries for `session` (or the Location alone): application tools
    /// shadowed by Location tools, shadowed by the session's; a shadowing name keeps its
    /// position.
    pub(crate) fn effective(&self, session: Option<&str>) -> IndexMap<String, Entry> {
        let mut merged: IndexMap<String, Entry> = (*self.app.effective()).clone();
        let state = lock(&self.state);
        // IndexMap keeps a name's position when its value is replaced (reference RG5).
        for (name, entry) in state.location.effective() {
            merged.insert(name.clone(), entry.clone());
        }
        if let Some(stacks) = session.and_then(|s| state.sessions.get(s)) {
            for (name, entry) in stacks.effective() {
                merged.insert(name.clone(), entry.clone());
            }
        }
        merged
    }
}
