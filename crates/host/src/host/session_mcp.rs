//! A session's own MCP servers: registered in its layer, stopped with it.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError};

use tackle_mcp_client::{ServerStatus, Servers};

use super::Session;
use crate::config::McpServerConfig;
use crate::error::HostError;

impl Session<'_> {
    /// Connects `servers` (the `mcp` key's shape, `{env:NAME}` from the host's environment)
    /// for this session only: each registers its tools as one batch in the session's layer,
    /// seen only in this session's catalog, gated by the host's rules, and stopped when the
    /// session is deleted (or the host dropped). What their configuration hands them is
    /// redacted from every result from now on. Call it on the Tokio runtime the host runs on;
    /// [`mcp_ready`](Self::mcp_ready) waits for their first attempts.
    pub fn add_mcp_servers(
        &self,
        servers: &BTreeMap<String, McpServerConfig>,
    ) -> Result<(), HostError> {
        let resolved = self.host.session_servers.resolve(&self.id, servers)?;
        self.host.store.add_redactions(resolved.secrets);
        let started = Servers::start(
            resolved.servers,
            &self.host.registry.session_tools(&self.id),
            self.host.session_servers.options.clone(),
        );
        self.host
            .session_mcp
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(self.id.clone())
            .or_default()
            .push(Arc::new(started));
        Ok(())
    }

    /// The status of each of this session's own servers, in the order they were added.
    pub fn mcp_status(&self) -> Vec<ServerStatus> {
        self.own_servers().iter().flat_map(|s| s.status()).collect()
    }

    /// Waits until each of this session's own servers was tried once.
    pub async fn mcp_ready(&self) {
        for servers in self.own_servers() {
            servers.ready().await;
        }
    }

    fn own_servers(&self) -> Vec<Arc<Servers>> {
        self.host
            .session_mcp
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&self.id)
            .cloned()
            .unwrap_or_default()
    }
}
