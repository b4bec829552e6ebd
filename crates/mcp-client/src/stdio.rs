//! A local server's stdio as an rmcp transport, with the oversized-line pump between its
//! standard output and rmcp (see [`oversize`](crate::oversize)). The process is stopped (its
//! whole tree, then its process group: see [`tree`](crate::tree)) when the transport is closed
//! or dropped.

use std::sync::Arc;

use process_wrap::tokio::ChildWrapper;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::DuplexStream;
use tokio::process::{ChildStderr, ChildStdin};
use tokio::task::JoinHandle;

use crate::oversize::{self, Spills};

/// The pipe between the pump and rmcp: lines are written whole, so this only paces them.
const PIPE: usize = 256 * 1024;

pub(crate) struct ChildTransport {
    inner: AsyncRwTransport<RoleClient, DuplexStream, ChildStdin>,
    child: Option<Box<dyn ChildWrapper>>,
    pump: JoinHandle<()>,
}

impl ChildTransport {
    /// Takes the spawned `child`'s pipes; its standard error, when piped, is returned.
    pub(crate) fn new(
        mut child: Box<dyn ChildWrapper>,
        server: &str,
        spills: Arc<Spills>,
    ) -> std::io::Result<(Self, Option<ChildStderr>)> {
        let missing =
            |what: &str| std::io::Error::other(format!("the server's {what} is not piped"));
        let stdin = child
            .inner_mut()
            .stdin()
            .take()
            .ok_or_else(|| missing("stdin"))?;
        let stdout = child
            .inner_mut()
            .stdout()
            .take()
            .ok_or_else(|| missing("stdout"))?;
        let stderr = child.inner_mut().stderr().take();
        let (ours, theirs) = tokio::io::duplex(PIPE);
        let server = server.to_owned();
        let pump = tokio::spawn(async move {
            if let Err(error) = oversize::pump(stdout, ours, &spills, &server).await {
                tracing::warn!(server, %error, "reading the MCP server's output failed");
            }
        });
        Ok((
            Self {
                inner: AsyncRwTransport::new(theirs, stdin),
                child: Some(child),
                pump,
            },
            stderr,
        ))
    }

    fn stop(&mut self) {
        self.pump.abort();
        if let Some(mut child) = self.child.take() {
            // The tree and the group are killed now, even when no runtime is left to finish
            // the job; the process is reaped off this thread, as dropping cannot wait. The
            // tree goes first: once the root is dead its children are no longer found under it.
            if let Some(pid) = child.id() {
                crate::tree::kill(pid);
            }
            let _ = child.start_kill();
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = child.wait().await;
                });
            }
        }
    }
}

impl Drop for ChildTransport {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.inner.receive()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let closed = self.inner.close().await;
        self.stop();
        closed
    }
}
