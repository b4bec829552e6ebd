//! The MCP server: one connection, one tackle session.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt as _};
use serde_json::Value;
use tackle_host::Host;
use tackle_permission::Asker;
use tackle_tool_core::Call;
use tokio::sync::OnceCell;

use crate::ask::Router;
use crate::error::ServeError;
use crate::resources::{self, Outputs};
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
    active: OnceCell<Active>,
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
        if let Some(active) = self.active.get() {
            self.router.detach(&active.session);
            // Its tools, asks, approvals, todo list and managed outputs go together.
            if let Err(err) = active.host.delete_session(&active.session) {
                tracing::warn!(%err, "cannot delete all of the session's state");
            }
        }
    }
}

impl Drop for Inner {
    // The last handle of a session is dropped when its connection ends, whatever the transport.
    fn drop(&mut self) {
        self.close();
    }
}

/// The host and the session, once the Location is known.
struct Active {
    host: Host,
    session: String,
    outputs: Outputs,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("options", &self.inner.options)
            .field("session", &self.inner.active.get().map(|a| &a.session))
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
                active: OnceCell::new(),
                _slot: slot,
            }),
        }
    }

    /// The session id, once the host is built.
    pub fn session_id(&self) -> Option<&str> {
        self.inner
            .active
            .get()
            .map(|active| active.session.as_str())
    }

    /// Ends the session: its pending asks are declined, its tools, "this session" approvals and
    /// todo list dropped.
    /// Idempotent; also done when the last handle is dropped.
    pub fn close(&self) {
        self.inner.close();
    }

    async fn active(&self, peer: &Peer<RoleServer>) -> Result<&Active, ErrorData> {
        self.inner
            .active
            .get_or_try_init(|| async {
                let location = self.location(peer).await;
                let asker: Arc<dyn Asker> = self.inner.router.clone();
                let host = (self.inner.options.build)(&location, asker)
                    .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
                // The consumed MCP servers' tools are re-exported: the first catalog has them.
                host.mcp_ready().await;
                let session = host.create_session().id().to_owned();
                self.inner.router.attach(&session, peer.clone());
                tracing::info!(location = %host.location().display(), %session, "session started");
                Ok(Active {
                    host,
                    session,
                    outputs: Outputs::default(),
                })
            })
            .await
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
        let snapshot = active.host.session(active.session.clone()).materialize();
        Ok(ListToolsResult::with_all_items(tools_list::tools(
            snapshot.definitions(),
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

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let active = self.active(&context.peer).await?;
        let session = active.host.session(active.session.clone());
        let input = Value::Object(request.arguments.unwrap_or_default());
        let call = Call::new(format!("mcp_{}", context.id), request.name, input);
        let snapshot = session.materialize();
        let structured = snapshot
            .definitions()
            .iter()
            .find(|d| d.name == call.name)
            .or_else(|| {
                snapshot
                    .definitions()
                    .iter()
                    .find(|d| d.name.eq_ignore_ascii_case(&call.name))
            })
            .is_some_and(|d| tools_list::has_structured_output(d));
        let mut ctx = session.context(&call);
        // A `notifications/cancelled` for this request, or the client going away, cancels it.
        ctx.cancel = context.ct.clone();
        match snapshot.settle(&call, &ctx).await {
            Ok(settlement) => {
                active.outputs.remember(settlement.references());
                Ok(result::call_result(settlement, structured).into())
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
