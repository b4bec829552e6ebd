//! Learning that a catalog changed: every registration, removal and closed session bumps a
//! signal its layer owns, and [`CatalogChanges`] waits on the application layer's and one
//! Location registry's signals together.
//!
//! The signal carries no detail on purpose: a watcher re-materializes its own catalog and
//! compares, so a change in another session's layer costs it one snapshot and nothing else.

use tokio::sync::watch;

/// The sending side kept by a layer; bumping never blocks and works with no one watching.
#[derive(Debug)]
pub(crate) struct ChangeSignal(watch::Sender<()>);

impl Default for ChangeSignal {
    fn default() -> Self {
        Self(watch::Sender::new(()))
    }
}

impl ChangeSignal {
    pub(crate) fn bump(&self) {
        self.0.send_modify(|()| ());
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<()> {
        self.0.subscribe()
    }
}

/// Wakes a watcher when a [`ToolRegistry`](crate::ToolRegistry)'s catalog may have changed:
/// a batch registered or removed in the application layer, the Location layer or any session
/// layer, or a session closed. Made by
/// [`ToolRegistry::catalog_changes`](crate::ToolRegistry::catalog_changes).
///
/// It keeps neither the registry nor the application layer alive. Changes that happen while
/// nobody waits are not lost: the next [`changed`](Self::changed) returns at once.
#[derive(Debug, Clone)]
pub struct CatalogChanges {
    application: Option<watch::Receiver<()>>,
    location: watch::Receiver<()>,
}

impl CatalogChanges {
    pub(crate) fn new(application: watch::Receiver<()>, location: watch::Receiver<()>) -> Self {
        Self {
            application: Some(application),
            location,
        }
    }

    /// True when nothing has changed since this value was made (or last waited), checked
    /// without waiting: a few atomic loads.
    pub(crate) fn quiet(&self) -> bool {
        let unchanged =
            |receiver: &watch::Receiver<()>| matches!(receiver.has_changed(), Ok(false));
        unchanged(&self.location) && self.application.as_ref().is_some_and(unchanged)
    }

    /// Waits for a change since the last call (or since this value was made). `false` once the
    /// registry is gone: nothing will change any more.
    pub async fn changed(&mut self) -> bool {
        loop {
            let Some(application) = self.application.as_mut() else {
                return self.location.changed().await.is_ok();
            };
            tokio::select! {
                location = self.location.changed() => return location.is_ok(),
                application = application.changed() => {
                    if application.is_ok() {
                        return true;
                    }
                    // The application layer went first; the Location alone can still change.
                    self.application = None;
                }
            }
        }
    }
}
