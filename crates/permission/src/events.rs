//! What a host with a user interface follows instead of (or beside) an [`Asker`]: every
//! request that starts waiting and every way it stops waiting.

use std::sync::OnceLock;

use tokio::sync::broadcast;

use crate::request::{PendingRequest, Reply};

#[cfg(doc)]
use crate::request::Asker;

/// How many events a subscriber may fall behind before it misses some
/// ([`broadcast::error::RecvError::Lagged`]); one that lags reads the current state with
/// [`Permission::all_pending`](crate::Permission::all_pending) and carries on.
pub const EVENT_CAPACITY: usize = 256;

/// A change to the pending permission requests, in the order it happened.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum PermissionEvent {
    /// A request is waiting for an answer: show it, then answer with
    /// [`Permission::reply`](crate::Permission::reply).
    Asked(PendingRequest),
    /// A request was answered: by [`Permission::reply`](crate::Permission::reply), by the
    /// [`Asker`], or along with another request of its session (an "always" or "this session"
    /// that covers it, a reject that declines it).
    Replied {
        /// The request's session.
        session_id: String,
        /// The request's id.
        request_id: String,
        /// The answer it got.
        reply: Reply,
    },
    /// A request stopped waiting without an answer taking effect: its call was dropped, its
    /// session was deleted, the service was closed, or the "always" it got could not be saved
    /// (the replier got the error). Stop showing it.
    Withdrawn {
        /// The request's session.
        session_id: String,
        /// The request's id.
        request_id: String,
    },
}

impl PermissionEvent {
    /// The session of the request the event is about.
    pub fn session_id(&self) -> &str {
        match self {
            Self::Asked(pending) => &pending.request.session_id,
            Self::Replied { session_id, .. } | Self::Withdrawn { session_id, .. } => session_id,
        }
    }

    /// The id of the request the event is about.
    pub fn request_id(&self) -> &str {
        match self {
            Self::Asked(pending) => &pending.id,
            Self::Replied { request_id, .. } | Self::Withdrawn { request_id, .. } => request_id,
        }
    }
}

/// The sending side, shared by every clone of a service. The channel is made at the first
/// subscription: its slots are a sizeable allocation, and a one-shot call has no subscriber.
#[derive(Debug, Default)]
pub(crate) struct Events(OnceLock<broadcast::Sender<PermissionEvent>>);

impl Events {
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<PermissionEvent> {
        self.0
            .get_or_init(|| broadcast::channel(EVENT_CAPACITY).0)
            .subscribe()
    }

    /// Sends `event` to the current subscribers; nobody listening is fine.
    pub(crate) fn send(&self, event: PermissionEvent) {
        if let Some(sender) = self.0.get() {
            let _ = sender.send(event);
        }
    }

    pub(crate) fn replied(&self, pending: &PendingRequest, reply: Reply) {
        self.send(PermissionEvent::Replied {
            session_id: pending.request.session_id.clone(),
            request_id: pending.id.clone(),
            reply,
        });
    }

    pub(crate) fn withdrawn(&self, pending: &PendingRequest) {
        self.send(PermissionEvent::Withdrawn {
            session_id: pending.request.session_id.clone(),
            request_id: pending.id.clone(),
        });
    }
}
