//! Registration layers: who holds which tool under which name, and the guards that remove them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use indexmap::IndexMap;
use tackle_tool_core::{RegistrationError, Tool, validate_name};

/// One registration of a tool under a name. `id` is unique in the process, so a snapshot can
/// tell whether the registration it advertised is still the effective one.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) id: u64,
    pub(crate) tool: Tool,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Validates every name of `batch` before anything changes, then gives each tool a fresh id.
pub(crate) fn prepare(
    batch: impl IntoIterator<Item = (String, Tool)>,
) -> Result<Vec<(String, Entry)>, RegistrationError> {
    let batch: Vec<(String, Tool)> = batch.into_iter().collect();
    for (name, _) in &batch {
        validate_name(name)?;
    }
    Ok(batch
        .into_iter()
        .map(|(name, tool)| {
            (
                name,
                Entry {
                    id: next_id(),
                    tool,
                },
            )
        })
        .collect())
}

/// Locks a layer's state, ignoring poisoning: every mutation below leaves the state consistent
/// before anything that could panic.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Something a [`Registration`] can remove its batch from.
pub(crate) trait Removable: Send + Sync {
    fn remove(&self, token: u64);
}

/// A guard for one registered batch: dropping it removes exactly that batch's entries and
/// reveals the next active registration of each name.
///
/// It does not keep its registry alive; if the registry is gone, dropping does nothing.
#[must_use = "dropping a Registration unregisters its tools"]
pub struct Registration {
    owner: Option<(Weak<dyn Removable>, u64)>,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("active", &self.is_active())
            .finish()
    }
}

impl Registration {
    pub(crate) fn new(owner: Weak<dyn Removable>, token: u64) -> Self {
        Self {
            owner: Some((owner, token)),
        }
    }

    /// A guard that registered nothing (an empty batch, or an owner that is already gone).
    pub(crate) fn inert() -> Self {
        Self { owner: None }
    }

    /// True while the batch is registered with a living owner.
    pub fn is_active(&self) -> bool {
        self.owner
            .as_ref()
            .is_some_and(|(owner, _)| owner.strong_count() > 0)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some((owner, token)) = self.owner.take()
            && let Some(owner) = owner.upgrade()
        {
            owner.remove(token);
        }
    }
}

/// A per-name stack of registrations (the Location and Session layers, reference RG1–RG5):
/// names keep the position of their first live registration; the newest entry wins.
#[derive(Debug, Default)]
pub(crate) struct Stacks {
    names: IndexMap<String, Vec<(u64, Entry)>>,
}

impl Stacks {
    pub(crate) fn push(&mut self, token: u64, batch: Vec<(String, Entry)>) {
        for (name, entry) in batch {
            self.names.entry(name).or_default().push((token, entry));
        }
    }

    pub(crate) fn remove(&mut self, token: u64) {
        self.names.retain(|_, stack| {
            stack.retain(|(t, _)| *t != token);
            !stack.is_empty()
        });
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The number of registrations, every name's stack counted in full.
    pub(crate) fn len(&self) -> usize {
        self.names.values().map(Vec::len).sum()
    }

    pub(crate) fn current(&self, name: &str) -> Option<&Entry> {
        self.names
            .get(name)
            .and_then(|stack| stack.last())
            .map(|(_, entry)| entry)
    }

    /// The newest entry of every name, in name order.
    pub(crate) fn effective(&self) -> impl Iterator<Item = (&String, &Entry)> {
        self.names
            .iter()
            .filter_map(|(name, stack)| stack.last().map(|(_, e)| (name, e)))
    }
}

pub(crate) fn next_token() -> u64 {
    next_id()
}

/// Registers `batch` into the layer behind `owner` with `insert`, returning the guard.
pub(crate) fn register_with<O: Removable + 'static>(
    owner: &Arc<O>,
    batch: impl IntoIterator<Item = (String, Tool)>,
    insert: impl FnOnce(&O, u64, Vec<(String, Entry)>),
) -> Result<Registration, RegistrationError> {
    let entries = prepare(batch)?;
    if entries.is_empty() {
        return Ok(Registration::inert());
    }
    let token = next_token();
    insert(owner, token, entries);
    let weak: Weak<dyn Removable> = Arc::downgrade(owner) as Weak<dyn Removable>;
    Ok(Registration::new(weak, token))
}
