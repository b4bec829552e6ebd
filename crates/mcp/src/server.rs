//! The MCP server: one connection, one tackle session (a new one when the client's roots move
//! it to another Location).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt as _};
use serde_json::Value;
use tackle_permission::Asker;
use tackle_tool_core::Call;
use tokio::sync::Mutex;

use crate::ask::Router;
use crate::catalog::{self, Known};
use crate::error::ServeError;
use crate::progress::CallProgress;
use crate::resources;
use crate::session::Active;
use crate::{ServeOptions, result, tools_list};

/// How long the client may take to list its roots before the current directory is used.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(5);

/// One MCP session's handler; clones share the session.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

struct Inner {
    options: ServeOptions,
    router: Arc<Router>,
    /// The session requests start on; replaced when the client's roots change.
    active: Mutex<Option<Arc<Active>>>,
    /// The catalog the client knows, across Locations.
    known: Arc<Known>,
    _slot: Option<SessionSlot>,
}

/// One live session in a count of them (HTTP's session limit); freed when the session ends.
#[derive(Debug)]
pub(crate) struct SessionSlot(Arc<AtomicUsize>);

impl SessionSlot {
    pub(crate) fn new(live: &Arc<AtomicUsize>) -> Self {
        live.fetch_add(1, Ordering::AcqRel);
        Self(Arc::clone(live))
    }
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Inner {
    fn close(&self) {
        // Never contended when the connection ends; a request still starting a session keeps
        // it, and that session goes when its last holder does.
        if let Ok(active) = self.active.try_lock()
            && let Some(active) = active.as_ref()
        {
            active.close();
        }
    }
}

impl Drop for Inner {
    // The last handle of a session is dropped when its connection ends, whatever the transport.
    fn drop(&mut self) {
        self.close();
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("options", &self.inner.options)
            .field("session", &self.session_id())
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server for one session; the host is built on the first request that needs it.
    pub fn new(options: ServeOptions) -> Self {
        Self::build(options, None)
    }

    pub(crate) fn with_slot(options: ServeOptions, slot: SessionSlot) -> Self {
        Self::build(options, Some(slot))
    }

    fn build(options: ServeOptions, slot: Option<SessionSlot>) -> Self {
        let router = Arc::new(Router::new(options.ask));
        Self {
            inner: Arc::new(Inner {
                options,
                router,
                active: Mutex::new(None),
                known: Arc::default(),
                _slot: slot,
            }),
        }
    }

    /// The current session's id, once the host is built (`None` while a request is starting
    /// or replacing it).
    pub fn session_id(&self) -> Option<String> {
        let active = self.inner.active.try_lock().ok()?;
        active.as_ref().map(|active| active.session.clone())
    }

    /// Ends the session: its pending asks are declined, its tools, "this session" approvals and
    /// todo list dropped.
    /// Idempotent; also done when the last handle is dropped.
    pub fn close(&self) {
        self.inner.close();
    }

    /// The session to serve a request from, started on first use.
    async fn active(&self, peer: &Peer<RoleServer>) -> Result<Arc<Active>, ErrorData> {
        let mut slot = self.inner.active.lock().await;
        if let Some(active) = slot.as_ref() {
            return Ok(Arc::clone(active));
        }
        let location = self.location(peer).await;
        let active = self.start(&location, peer).await?;
        *slot = Some(Arc::clone(&active));
        Ok(active)
    }

    /// A session on the host of `location`, its asks routed to `peer`, its catalog watched.
    async fn start(
        &self,
        location: &std::path::Path,
        peer: &Peer<RoleServer>,
    ) -> Result<Arc<Active>, ErrorData> {
        let asker: Arc<dyn Asker> = self.inner.router.clone();
        let host = (self.inner.options.build)(location, asker)
            .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
        // The consumed MCP servers' tools are re-exported: the first catalog has those that
        // connect quickly; a slower server's come later, announced as a catalog change.
        let _ = host.mcp_ready_within(tackle_host::MCP_STARTUP_WAIT).await;
        let active = Arc::new(Active::new(host, Arc::clone(&self.inner.router)));
        self.inner.router.attach(&active.session, peer.clone());
        catalog::watch(&active, Arc::clone(&self.inner.known), peer.clone());
        tracing::info!(location = %active.host.location().display(), session = %active.session,
            "session started");
        Ok(active)
    }

    /// `roots/list_changed` without `--dir`: a session on the new first root's Location
    /// replaces the current one (calls in flight finish on theirs), and the client hears of
    /// a catalog that differs there.
    async fn roots_changed(&self, peer: &Peer<RoleServer>) {
        if self.inner.options.dir.is_some() {
            return;
        }
        let mut slot = self.inner.active.lock().await;
        let Some(old) = slot.clone() else {
            // No session yet: the first request resolves the roots anyway.
            return;
        };
        let location = self.location(peer).await;
        if tackle_host::location(&location).is_ok_and(|dir| dir == old.host.location()) {
            return;
        }
        match self.start(&location, peer).await {
            Ok(active) => {
                *slot = Some(Arc::clone(&active));
                drop(slot);
                old.retired().cancel();
                drop(old);
                catalog::announce_if_changed(&active, &self.inner.known, peer).await;
            }
            Err(err) => tracing::warn!(location = %location.display(), %err.message,
                "the new root cannot be served; staying on the current Location"),
        }
    }

    /// `--dir`, else the client's first root, else the current directory.
    // Roots are deprecated by a newer protocol revision, but the clients in use today still
    // send them, and they are how a client says which workspace it means.
    #[allow(deprecated)]
    async fn location(&self, peer: &Peer<RoleServer>) -> PathBuf {
        if let Some(dir) = &self.inner.options.dir {
            return dir.clone();
        }
        let offers_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if offers_roots {
            match tokio::time::timeout(ROOTS_TIMEOUT, peer.list_roots()).await {
                Ok(Ok(roots)) => {
                    let first = roots.roots.first().and_then(|root| {
                        url::Url::parse(&root.uri)
                            .ok()
                            .filter(|url| url.scheme() == "file")
                            .and_then(|url| url.to_file_path().ok())
                    });
                    if let Some(path) = first {
                        return path;
                    }
                }
                Ok(Err(err)) => tracing::warn!(%err, "roots/list failed"),
                Err(_) => tracing::warn!("roots/list timed out"),
            }
        }
        PathBuf::from(".")
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .build(),
        );
        info.server_info = Implementation::new("tackle", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(
            "tackle's coding tools (read, edit, write, bash, grep, ...) for one workspace, with \
             its permission rules and bounded outputs."
                .to_owned(),
        );
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let active = self.active(&context.peer).await?;
        let snapshot = active.catalog();
        self.inner.known.listed(snapshot.definitions());
        Ok(ListToolsResult::with_all_items(tools_list::tools(
            &snapshot,
        )))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(self.active(&context.peer).await?.outputs.list())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let active = self.active(&context.peer).await?;
        let store = active.host.store().clone();
        let session = active.session.clone();
        // Paging reads a file: off the async workers.
        let page =
            tokio::task::spawn_blocking(move || resources::read(&store, &session, &request.uri))
                .await
                .map_err(|err| ErrorData::internal_error(err.to_string(), None))??;
        Ok(page.into())
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.roots_changed(&context.peer).await;
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let active = self.active(&context.peer).await?;
        let session = active.host.session(active.session.clone());
        let input = Value::Object(request.arguments.unwrap_or_default());
        let call = Call::new(format!("mcp_{}", context.id), request.name, input);
        let snapshot = active.catalog();
        let mut ctx = session.context(&call);
        // A `notifications/cancelled` for this request, or the client going away, cancels it.
        ctx.cancel = context.ct.clone();
        let progress = context.meta.get_progress_token().map(|token| {
            let (sink, progress) =
                CallProgress::start(context.peer.clone(), token, active.host.store().clone());
            ctx.progress = sink;
            progress
        });
        let settled = snapshot.settle(&call, &ctx).await;
        drop(ctx);
        if let Some(progress) = progress {
            // The last line goes out before the result.
            progress.finish().await;
        }
        match settled {
            Ok(settlement) => {
                active.outputs.remember(settlement.references());
                Ok(result::call_result(&settlement).into())
            }
            Err(err) => Err(result::settle_error(&err)),
        }
    }
}

/// Serves `server` over `transport` until the client disconnects.
pub(crate) async fn run<T, E, A>(server: McpServer, transport: T) -> Result<(), ServeError>
where
    T: rmcp::transport::IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let running = server
        .serve(transport)
        .await
        .map_err(|err| ServeError::Initialize(err.to_string()))?;
    let reason = running
        .waiting()
        .await
        .map_err(|err| ServeError::Session(err.to_string()))?;
    tracing::info!(?reason, "client disconnected");
    Ok(())
}
