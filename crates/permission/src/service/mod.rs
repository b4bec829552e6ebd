//! The permission service: assert, ask, reply, close (reference P11–P16); what it would decide
//! and which tools it hides are in [`query`].

mod query;

pub use query::AgentVisibility;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::{broadcast, oneshot};

use crate::agent::{Agents, Chains};
use crate::decide::{self, SessionApprovals};
use crate::decision::{DecisionObserver, Report};
use crate::error::PermissionError;
use crate::events::{Events, PermissionEvent};
use crate::protect::Protected;
use crate::request::{Asker, PendingRequest, Reply, Request};
use crate::rule::Ruleset;
use crate::saved::SavedApprovals;

/// Outcome sent to a waiting [`Permission::assert`]: the answer that allowed it, or why not.
type Outcome = Result<Reply, PermissionError>;

/// The permission service of one host: configured rules, saved approvals and the requests
/// waiting for an answer. Clones share everything.
#[derive(Clone)]
pub struct Permission {
    inner: Arc<Inner>,
}

struct Inner {
    rules: Ruleset,
    agents: Agents,
    /// The rulesets deciding each agent's requests, built from `rules` and `agents`.
    chains: Chains,
    saved: SavedApprovals,
    asker: Arc<dyn Asker>,
    protected: Protected,
    state: Mutex<State>,
    events: Events,
    /// Told of every decision (a host's audit log).
    observer: Option<Arc<dyn DecisionObserver>>,
}

/// A [`Permission`] being set up: [`Permission::builder`]. What is not set is as
/// [`Permission::new`] has it.
#[must_use]
pub struct PermissionBuilder {
    rules: Ruleset,
    saved: SavedApprovals,
    asker: Arc<dyn Asker>,
    agents: Agents,
    /// `None`: the process environment's ([`Protected::from_env`]), looked up at `build`.
    protected: Option<Protected>,
    observer: Option<Arc<dyn DecisionObserver>>,
}

impl fmt::Debug for PermissionBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PermissionBuilder")
            .field("rules", &self.rules)
            .field("protected", &self.protected)
            .finish_non_exhaustive()
    }
}

impl PermissionBuilder {
    /// `protected` decides which writes always ask ([`Permission::with_protected`]).
    pub fn protected(mut self, protected: Protected) -> Self {
        self.protected = Some(protected);
        self
    }

    /// `agents` decide each agent's requests ([`Permission::with_agents`]).
    pub fn agents(mut self, agents: Agents) -> Self {
        self.agents = agents;
        self
    }

    /// `observer` is told of every decision ([`Permission::with_observer`]).
    pub fn observer(mut self, observer: Arc<dyn DecisionObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// The service.
    pub fn build(self) -> Permission {
        let protected = self
            .protected
            .unwrap_or_else(|| Protected::from_env(|key| std::env::var_os(key)));
        Permission {
            inner: Arc::new(Inner {
                chains: self.agents.chains(&self.rules),
                rules: self.rules,
                agents: self.agents,
                saved: self.saved,
                asker: self.asker,
                protected,
                state: Mutex::new(State::default()),
                events: Events::default(),
                observer: self.observer,
            }),
        }
    }
}

#[derive(Default)]
struct State {
    /// In the order they were asked.
    pending: Vec<Waiting>,
    /// "This session only" approvals; under the lock replies take, like the pending requests.
    sessions: SessionApprovals,
    closed: bool,
}

struct Waiting {
    pending: PendingRequest,
    done: oneshot::Sender<Outcome>,
}

impl fmt::Debug for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.lock();
        f.debug_struct("Permission")
            .field("rules", &self.inner.rules.len())
            .field("saved", &self.inner.saved.path())
            .field("pending", &state.pending.len())
            .field("closed", &state.closed)
            .finish()
    }
}

impl Permission {
    /// A service deciding with the configured `rules`, the `saved` approvals, and asking
    /// through `asker`. Writes to the protected resources of the process environment
    /// ([`Protected::from_env`]) always ask.
    pub fn new(rules: Ruleset, saved: SavedApprovals, asker: Arc<dyn Asker>) -> Self {
        Self::builder(rules, saved, asker).build()
    }

    /// A service as [`new`](Self::new) makes it, with the agents, the protection and the
    /// observer set before it is built: a host setting them pays for building it once.
    pub fn builder(
        rules: Ruleset,
        saved: SavedApprovals,
        asker: Arc<dyn Asker>,
    ) -> PermissionBuilder {
        PermissionBuilder {
            rules,
            saved,
            asker,
            agents: Agents::new(),
            protected: None,
            observer: None,
        }
    }

    /// The same rules, saved approvals and asker, with `protected` deciding which writes always
    /// ask. Meant for building: requests pending on `self` stay with `self`.
    #[must_use]
    pub fn with_protected(&self, protected: Protected) -> Self {
        self.rebuilt().protected(protected).build()
    }

    /// The same rules, saved approvals, asker and protection, with `agents` deciding each
    /// agent's requests ([`Request::agent`]): the global rules then the agent's own, and a
    /// subagent's also as its parents'. Meant for building: requests pending on `self` stay
    /// with `self`.
    #[must_use]
    pub fn with_agents(&self, agents: Agents) -> Self {
        self.rebuilt().agents(agents).build()
    }

    /// The same service, telling `observer` of every decision [`assert`](Self::assert) makes
    /// (a host's audit log). Meant for building: requests pending on `self` stay with `self`.
    #[must_use]
    pub fn with_observer(&self, observer: Arc<dyn DecisionObserver>) -> Self {
        self.rebuilt().observer(observer).build()
    }

    /// A builder holding what `self` was built from, for a `with_*` that changes one part.
    fn rebuilt(&self) -> PermissionBuilder {
        let inner = &self.inner;
        PermissionBuilder {
            rules: inner.rules.clone(),
            saved: inner.saved.clone(),
            asker: Arc::clone(&inner.asker),
            agents: inner.agents.clone(),
            protected: Some(inner.protected.clone()),
            observer: inner.observer.clone(),
        }
    }

    /// Succeeds when `request` may proceed.
    ///
    /// A configured deny of any resource fails with [`PermissionError::Blocked`] (saved
    /// approvals cannot override it). When every resource is allowed by the configured rules
    /// plus the saved approvals, it succeeds at once, unless the request is
    /// [`always_ask`](Request::always_ask) or writes a [protected](Protected) resource (such a
    /// request is always asked; its `protected` metadata says why). Otherwise the request
    /// becomes pending,
    /// the asker is asked, and this waits for the first answer: the asker's, a
    /// [`reply`](Self::reply), an "always" that covers it, a reject in its session, or
    /// [`close`](Self::close). Dropping the future withdraws the request.
    ///
    /// Every decision is a `tracing` event (`permission decision`: action, resources, effect,
    /// deciding rule and its origin, reply, verdict), and the service's
    /// [`DecisionObserver`], if any, is told of it.
    pub async fn assert(&self, request: Request) -> Result<(), PermissionError> {
        let report = Report::start(&request, self.inner.observer.as_ref(), |resource| {
            let (session, agent) = (&request.session_id, &request.agent);
            self.explain_in_session(session, agent, &request.action, resource)
        });
        let outcome = self.decide(request).await;
        if let Some(report) = report {
            report.finish(&outcome);
        }
        outcome.map(drop)
    }

    /// [`assert`](Self::assert)'s decision: the answer when the request was asked and allowed.
    async fn decide(&self, request: Request) -> Result<Option<Reply>, PermissionError> {
        request.validate()?;
        let request = self.inner.protect(request);
        if let Some(blocked) = self.inner.blocked(&request) {
            return Err(blocked);
        }
        let (id, mut done) = {
            // Deciding and queueing under the lock that replies take, so an "always" cannot
            // slip between the check and the queueing.
            let mut state = self.inner.lock();
            if !request.always_ask && self.inner.allowed(&state, &request) {
                return Ok(None);
            }
            if state.closed {
                return Err(PermissionError::Declined);
            }
            let id = next_id();
            let (tx, rx) = oneshot::channel();
            let pending = PendingRequest {
                id: id.clone(),
                request: request.clone(),
            };
            self.inner
                .events
                .send(PermissionEvent::Asked(pending.clone()));
            state.pending.push(Waiting { pending, done: tx });
            (id, rx)
        };
        let _withdraw = Withdraw {
            inner: &self.inner,
            id: &id,
        };
        let ask = self.inner.asker.ask(PendingRequest {
            id: id.clone(),
            request,
        });
        let outcome = tokio::select! {
            biased;
            outcome = &mut done => outcome,
            reply = ask => {
                // NotFound: something else resolved the request first; its outcome is in
                // `done`. Any other error was also sent to `done`. An "always" saves a file,
                // which is blocking work for the blocking pool.
                if matches!(reply, Reply::Always) {
                    let service = self.clone();
                    let id = id.clone();
                    let saved = tokio::task::spawn_blocking(move || service.reply(&id, reply));
                    if let Err(join) = saved.await
                        && join.is_panic()
                    {
                        std::panic::resume_unwind(join.into_panic());
                    }
                } else {
                    let _ = self.reply(&id, reply);
                }
                done.await
            }
        };
        // The sender is only dropped without a value by `Withdraw`, which runs after this.
        outcome.unwrap_or(Err(PermissionError::Declined)).map(Some)
    }

    /// Answers the pending request `request_id` (see [`Reply`]). An "always" whose approvals
    /// cannot be saved fails the request and returns the error; nothing else is resolved.
    pub fn reply(&self, request_id: &str, reply: Reply) -> Result<(), PermissionError> {
        let mut state = self.inner.lock();
        let Some(index) = state
            .pending
            .iter()
            .position(|w| w.pending.id == request_id)
        else {
            return Err(PermissionError::NotFound {
                request_id: request_id.to_owned(),
            });
        };
        let session = state.pending[index].pending.request.session_id.clone();
        match reply {
            Reply::Once => {
                let waiting = state.pending.remove(index);
                self.inner.events.replied(&waiting.pending, Reply::Once);
                let _ = waiting.done.send(Ok(Reply::Once));
            }
            Reply::Always | Reply::Session => {
                let waiting = state.pending.remove(index);
                let request = &waiting.pending.request;
                if reply == Reply::Session {
                    state.sessions.add(&session, &request.action, &request.save);
                } else if !request.save.is_empty() {
                    // Saving writes and syncs a file under a cross-process lock: never while
                    // holding the state every other check needs. A request queued meanwhile
                    // is resolved below, once the approval is in.
                    drop(state);
                    if let Err(err) = self.inner.saved.add(&request.action, &request.save) {
                        let _ = waiting.done.send(Err(duplicate(&err)));
                        self.inner.events.withdrawn(&waiting.pending);
                        return Err(err);
                    }
                    state = self.inner.lock();
                }
                self.inner.events.replied(&waiting.pending, reply.clone());
                let _ = waiting.done.send(Ok(reply.clone()));
                let mut i = 0;
                while i < state.pending.len() {
                    let request = &state.pending[i].pending.request;
                    if request.session_id == session
                        && !request.always_ask
                        && self.inner.blocked(request).is_none()
                        && self.inner.allowed(&state, request)
                    {
                        let waiting = state.pending.remove(i);
                        self.inner.events.replied(&waiting.pending, reply.clone());
                        let _ = waiting.done.send(Ok(reply.clone()));
                    } else {
                        i += 1;
                    }
                }
            }
            Reply::Reject { message } => {
                let waiting = state.pending.remove(index);
                let reply = Reply::Reject {
                    message: message.clone(),
                };
                self.inner.events.replied(&waiting.pending, reply);
                let outcome = match message {
                    Some(feedback) => PermissionError::Corrected { feedback },
                    None => PermissionError::Declined,
                };
                let _ = waiting.done.send(Err(outcome));
                let (declined, kept): (Vec<_>, _) = std::mem::take(&mut state.pending)
                    .into_iter()
                    .partition(|w| w.pending.request.session_id == session);
                state.pending = kept;
                for w in &declined {
                    let reply = Reply::Reject { message: None };
                    self.inner.events.replied(&w.pending, reply);
                }
                decline_all(declined, || PermissionError::Declined);
            }
        }
        Ok(())
    }

    /// Forgets `session_id`: every request of it still pending ends with
    /// [`PermissionError::SessionDeleted`] (a halt for the call; a
    /// [`Withdrawn`](PermissionEvent::Withdrawn) event for subscribers), and its "this session
    /// only" approvals are dropped. A request the session makes later is decided afresh.
    pub fn delete_session(&self, session_id: &str) {
        let ended = {
            let mut state = self.inner.lock();
            state.sessions.remove(session_id);
            let (ended, kept): (Vec<_>, _) = std::mem::take(&mut state.pending)
                .into_iter()
                .partition(|w| w.pending.request.session_id == session_id);
            state.pending = kept;
            for w in &ended {
                self.inner.events.withdrawn(&w.pending);
            }
            ended
        };
        decline_all(ended, || PermissionError::SessionDeleted {
            session_id: session_id.to_owned(),
        });
    }

    /// Follows the pending requests as they are asked and answered: the non-blocking way for a
    /// host with a user interface to ask. Show each [`Asked`](PermissionEvent::Asked) request,
    /// answer it with [`reply`](Self::reply), and drop it on its
    /// [`Replied`](PermissionEvent::Replied) or [`Withdrawn`](PermissionEvent::Withdrawn).
    /// Requests asked before subscribing are in [`all_pending`](Self::all_pending). Such a
    /// host builds the service with [`ReplyLater`](crate::ReplyLater) as its asker.
    pub fn subscribe(&self) -> broadcast::Receiver<PermissionEvent> {
        self.inner.events.subscribe()
    }

    /// The requests of `session_id` waiting for an answer, in the order they were asked.
    pub fn pending(&self, session_id: &str) -> Vec<PendingRequest> {
        self.inner
            .lock()
            .pending
            .iter()
            .filter(|w| w.pending.request.session_id == session_id)
            .map(|w| w.pending.clone())
            .collect()
    }

    /// Every request waiting for an answer, in the order they were asked.
    pub fn all_pending(&self) -> Vec<PendingRequest> {
        self.inner
            .lock()
            .pending
            .iter()
            .map(|w| w.pending.clone())
            .collect()
    }

    /// Declines every pending request; later requests that would ask are declined at once
    /// (allowed and denied ones are still decided by the rules).
    pub fn close(&self) {
        let declined = {
            let mut state = self.inner.lock();
            state.closed = true;
            let declined = std::mem::take(&mut state.pending);
            for w in &declined {
                self.inner.events.withdrawn(&w.pending);
            }
            declined
        };
        decline_all(declined, || PermissionError::Declined);
    }

    /// The configured global rules.
    pub fn rules(&self) -> &Ruleset {
        &self.inner.rules
    }

    /// The agents' rules and subagents ([`with_agents`](Self::with_agents)).
    pub fn agents(&self) -> &Agents {
        &self.inner.agents
    }

    /// The saved approvals (to list or revoke them).
    pub fn saved(&self) -> &SavedApprovals {
        &self.inner.saved
    }

    /// Which writes always ask.
    pub fn protected(&self) -> &Protected {
        &self.inner.protected
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `request`, always asked when it writes a protected resource, with a `protected`
    /// metadata entry (`[{resource, reason}]`) for the asker to show.
    fn protect(&self, mut request: Request) -> Request {
        let reasons: Vec<serde_json::Value> = request
            .resources
            .iter()
            .filter_map(|resource| {
                let reason = self.protected.check(&request.action, resource)?;
                Some(serde_json::json!({"resource": resource, "reason": reason.to_string()}))
            })
            .collect();
        if !reasons.is_empty() {
            request.always_ask = true;
            request
                .metadata
                .insert("protected".to_owned(), serde_json::Value::Array(reasons));
        }
        request
    }

    /// `Blocked` when a configured rule of the request's agent, or of a parent of it, denies
    /// any resource (P11: before any approval).
    fn blocked(&self, request: &Request) -> Option<PermissionError> {
        decide::blocked(self.chains.of(&request.agent), request)
    }

    /// True when every resource is allowed, as the request's agent and each of its parents
    /// decide, by the configured rules or an approval (saved, or for this session), and no
    /// tightening rule asks for it. Assumes nothing is denied.
    fn allowed(&self, state: &State, request: &Request) -> bool {
        let chain = self.chains.of(&request.agent);
        decide::allowed(chain, &self.saved, &state.sessions, request)
    }
}

/// A copy of a save error for the waiting request; the original goes to the replier.
fn duplicate(err: &PermissionError) -> PermissionError {
    match err {
        PermissionError::Saved { path, message } => PermissionError::Saved {
            path: path.clone(),
            message: message.clone(),
        },
        other => PermissionError::InvalidRequest {
            reason: other.to_string(),
        },
    }
}

fn decline_all(waiting: Vec<Waiting>, error: impl Fn() -> PermissionError) {
    for w in waiting {
        let _ = w.done.send(Err(error()));
    }
}

/// Removes a still-pending request when its `assert` ends or is dropped.
struct Withdraw<'a> {
    inner: &'a Inner,
    id: &'a str,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        let mut state = self.inner.lock();
        if let Some(index) = state.pending.iter().position(|w| w.pending.id == self.id) {
            let waiting = state.pending.remove(index);
            self.inner.events.withdrawn(&waiting.pending);
        }
    }
}

/// `per_<process start nanoseconds>_<sequence>`: unique within the process, and unlikely to
/// repeat across processes.
fn next_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static START: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let start = *START.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    format!("per_{start:x}_{}", NEXT.fetch_add(1, Ordering::Relaxed))
}
