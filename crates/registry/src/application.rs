//! The process-wide application layer.

use std::sync::{Arc, Mutex};

use indexmap::IndexMap;
use tackle_tool_core::{RegistrationError, Tool};

use crate::changes::ChangeSignal;
use crate::layer::{Entry, Registration, Removable, lock, register_with};

/// Tools registered once for the whole process and visible in every Location.
///
/// Cheap to clone; every clone is the same set. Create one per process and hand clones to each
/// [`ToolRegistry`](crate::ToolRegistry) — it is a value, not a global, so tests stay isolated.
#[derive(Debug, Clone, Default)]
pub struct ApplicationTools {
    inner: Arc<AppInner>,
}

#[derive(Debug, Default)]
struct AppInner {
    state: Mutex<AppState>,
    /// Bumped after every registration and removal, for every Location's watchers.
    changed: ChangeSignal,
}

#[derive(Debug, Default)]
struct AppState {
    /// Live batches in registration order.
    batches: Vec<(u64, Vec<(String, Entry)>)>,
    /// The replay of `batches` (reference R3): the latest live registration of a name wins and
    /// names are ordered by their first appearance among the live batches.
    effective: Arc<IndexMap<String, Entry>>,
}

impl AppState {
    fn replay(&mut self) {
        let mut effective = IndexMap::new();
        for (_, batch) in &self.batches {
            for (name, entry) in batch {
                effective.insert(name.clone(), entry.clone());
            }
        }
        self.effective = Arc::new(effective);
    }
}

impl Removable for AppInner {
    fn remove(&self, token: u64) {
        let removed = {
            let mut state = lock(&self.state);
            let before = state.batches.len();
            state.batches.retain(|(t, _)| *t != token);
            let removed = state.batches.len() != before;
            if removed {
                state.replay();
            }
            removed
        };
        if removed {
            self.changed.bump();
        }
    }
}

impl ApplicationTools {
    /// An empty application layer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `batch` for every Location. Every name is validated first: one invalid name
    /// fails the whole batch and nothing is registered. Dropping the guard unregisters it.
    pub fn register(
        &self,
        batch: impl IntoIterator<Item = (String, Tool)>,
    ) -> Result<Registration, RegistrationError> {
        let registration = register_with(&self.inner, batch, |inner, token, entries| {
            let mut state = lock(&inner.state);
            state.batches.push((token, entries));
            state.replay();
        })?;
        self.inner.changed.bump();
        Ok(registration)
    }

    /// Signals every registration and removal in this layer.
    pub(crate) fn subscribe(&self) -> tokio::sync::watch::Receiver<()> {
        self.inner.changed.subscribe()
    }

    /// The effective application entries, in order.
    pub(crate) fn effective(&self) -> Arc<IndexMap<String, Entry>> {
        Arc::clone(&lock(&self.inner.state).effective)
    }

    /// The id of the effective application registration of `name`.
    pub(crate) fn current(&self, name: &str) -> Option<u64> {
        lock(&self.inner.state)
            .effective
            .get(name)
            .map(|entry| entry.id)
    }
}
