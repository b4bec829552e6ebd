//! One server's life: connect, register its tools as one batch, re-register when its list
//! changes, drop the batch when it goes away, and reconnect with backoff.

use std::collections::BTreeSet;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use rmcp::service::{Peer, RoleClient};
use tackle_registry::{Registration, Tools};
use tokio_util::sync::CancellationToken;

use crate::config::{ServerConfig, Transport};
use crate::connect::{Connection, connect};
use crate::convert::{Remote, tool};
use crate::error::McpClientError;
use crate::name;
use crate::nesting;
use crate::oversize::Spills;
use crate::status::{RegisteredTool, SkippedTool, State};
use crate::{Options, Shared};

/// What one server's task owns.
pub(crate) struct Supervisor {
    pub(crate) name: String,
    pub(crate) config: ServerConfig,
    pub(crate) tools: Tools,
    pub(crate) shared: Arc<Shared>,
    pub(crate) options: Arc<Options>,
    pub(crate) cancel: CancellationToken,
}

impl Supervisor {
    pub(crate) async fn run(self) {
        if let (Transport::Local { .. }, Some(error)) = (
            &self.config.transport,
            nesting::too_deep(self.options.depth),
        ) {
            // Not retried: the depth will not change.
            tracing::warn!(server = %self.name, %error, "MCP server not started");
            self.shared.update(&self.name, |status| {
                status.state = State::Failed;
                status.last_error = Some(error);
            });
            self.shared.attempted();
            return;
        }
        let mut delay = self.options.backoff.0;
        let mut first = true;
        loop {
            let attempt = tokio::time::timeout(
                self.config.timeout,
                connect(&self.name, &self.config, self.options.depth),
            );
            let outcome = tokio::select! {
                () = self.cancel.cancelled() => return,
                outcome = attempt => outcome,
            };
            let error = match outcome {
                Ok(Ok(connection)) => {
                    delay = self.options.backoff.0;
                    match self.serve(connection, &mut first).await {
                        None => return,
                        Some(error) => error,
                    }
                }
                Ok(Err(error)) => error.to_string(),
                Err(_) => McpClientError::Timeout(self.config.timeout.as_millis()).to_string(),
            };
            tracing::warn!(server = %self.name, %error, "MCP server not connected");
            self.shared.update(&self.name, |status| {
                status.state = State::Failed;
                status.last_error = Some(error);
                status.tools.clear();
                status.skipped.clear();
            });
            self.release_names();
            if std::mem::take(&mut first) {
                self.shared.attempted();
            }
            tokio::select! {
                () = self.cancel.cancelled() => return,
                () = tokio::time::sleep(delay) => {}
            }
            delay = (delay * 2).min(self.options.backoff.1);
        }
    }

    /// Registers the connection's tools and holds the batch until the connection ends (the
    /// reason, to retry) or the servers are stopped (`None`).
    async fn serve(&self, mut connection: Connection, first: &mut bool) -> Option<String> {
        let peer = connection.service.peer().clone();
        let stop = connection.service.cancellation_token();
        let stderr = Arc::clone(&connection.stderr);
        let spills = Arc::clone(&connection.spills);
        let mut list_changed = std::mem::replace(
            &mut connection.list_changed,
            tokio::sync::mpsc::unbounded_channel().1,
        );
        let service = connection.service;
        let mut closed = tokio::spawn(service.waiting());
        let mut listed = Vec::new();
        let mut guard = match self.register(&peer, &spills, &mut listed).await {
            // The first listing always registers (nothing to compare with yet).
            Ok(guard) => guard,
            Err(error) => {
                stop.cancel();
                let _ = closed.await;
                return Some(error);
            }
        };
        self.shared.update(&self.name, |status| {
            status.state = State::Connected;
            status.connections += 1;
        });
        if std::mem::take(first) {
            self.shared.attempted();
        }
        loop {
            tokio::select! {
                () = self.cancel.cancelled() => {
                    drop(guard);
                    stop.cancel();
                    let _ = closed.await;
                    return None;
                }
                _ = &mut closed => {
                    // The tools go before anything else: a call on a newer snapshot must not
                    // reach a connection that is gone.
                    drop(guard);
                    let tail = Connection::tail(&stderr);
                    return Some(if tail.is_empty() {
                        "the server closed the connection".to_owned()
                    } else {
                        format!("the server closed the connection: {tail}")
                    });
                }
                Some(()) = list_changed.recv() => match self.register(&peer, &spills, &mut listed).await {
                    // The new batch is in before the old one goes: no moment without tools.
                    Ok(Some(fresh)) => guard = Some(fresh),
                    Ok(None) => {}
                    Err(error) => self.shared.update(&self.name, |status| {
                        status.last_error = Some(error);
                    }),
                },
            }
        }
    }

    /// Lists the server's tools and registers them as one batch; `None` when the list is the
    /// one `previous` holds (a notification that changed nothing keeps the batch, so calls on
    /// current snapshots do not turn stale for nothing).
    async fn register(
        &self,
        peer: &Peer<RoleClient>,
        spills: &Arc<Spills>,
        previous: &mut Vec<rmcp::model::Tool>,
    ) -> Result<Option<Registration>, String> {
        let listed = tokio::time::timeout(self.config.timeout, peer.list_all_tools())
            .await
            .map_err(|_| McpClientError::Timeout(self.config.timeout.as_millis()).to_string())?
            .map_err(|err| format!("listing tools failed: {err}"))?;
        if !previous.is_empty() && *previous == listed {
            return Ok(None);
        }
        let mut claims = self
            .shared
            .claims
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut taken: BTreeSet<String> = claims
            .iter()
            .filter(|(_, server)| **server != self.name)
            .map(|(name, _)| name.clone())
            .collect();
        let mut batch = Vec::new();
        let mut registered = Vec::new();
        let mut skipped = Vec::new();
        for listed in &listed {
            let original = listed.name.to_string();
            let plain = name::plain(&self.name, &original);
            if self.options.reserved.contains(&plain) {
                skipped.push(SkippedTool {
                    original,
                    reason: format!("its name {plain} would shadow the builtin {plain}"),
                });
                continue;
            }
            let Some(fitted) = name::fit(&self.name, &original, &taken) else {
                skipped.push(SkippedTool {
                    original,
                    reason: "its name collides with another tool's".to_owned(),
                });
                continue;
            };
            let destructive = listed
                .annotations
                .as_ref()
                .and_then(|a| a.destructive_hint)
                // The protocol's default for a tool that is not read-only is destructive.
                .unwrap_or_else(|| {
                    listed.annotations.as_ref().and_then(|a| a.read_only_hint) != Some(true)
                });
            let remote = Remote {
                server: self.name.clone(),
                name: fitted.clone(),
                original: original.clone(),
                destructive,
                timeout: self.config.timeout,
                peer: peer.clone(),
                gate: Arc::clone(&self.options.gate),
                structured: listed.output_schema.is_some(),
                spills: Arc::clone(spills),
                store: self.options.store.clone(),
            };
            match tool(listed, remote) {
                Ok(built) => {
                    taken.insert(fitted.clone());
                    registered.push(RegisteredTool {
                        name: fitted.clone(),
                        original,
                    });
                    batch.push((fitted, built));
                }
                Err(reason) => skipped.push(SkippedTool {
                    original,
                    reason: format!("invalid schema: {reason}"),
                }),
            }
        }
        for skip in &skipped {
            tracing::warn!(server = %self.name, tool = %skip.original, reason = %skip.reason, "MCP tool not registered");
        }
        let guard = self.tools.register(batch).map_err(|err| err.to_string())?;
        claims.retain(|_, server| *server != self.name);
        for tool in &registered {
            claims.insert(tool.name.clone(), self.name.clone());
        }
        drop(claims);
        self.shared.update(&self.name, |status| {
            status.tools = registered;
            status.skipped = skipped;
        });
        *previous = listed;
        Ok(Some(guard))
    }

    fn release_names(&self) {
        self.shared
            .claims
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, server| *server != self.name);
    }
}

/// The backoff between attempts: the first delay and the longest.
pub(crate) const BACKOFF: (Duration, Duration) =
    (Duration::from_millis(250), Duration::from_secs(30));
