//! What a server is: how to reach it and how long to wait for it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// The timeout of connecting and of each call when the configuration gives none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// One configured MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// How to reach it.
    pub transport: Transport,
    /// How long connecting (the handshake and listing the tools) and each call may take.
    pub timeout: Duration,
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// A process speaking MCP on its standard input and output.
    Local {
        /// The program and its arguments.
        command: Vec<String>,
        /// The environment the process starts from; `None`: this process's.
        base_env: Option<Vec<(OsString, OsString)>>,
        /// Variables added to (or replacing) the base environment.
        environment: BTreeMap<String, String>,
        /// Its working directory (the Location, for a host).
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Remote {
        /// The endpoint URL.
        url: String,
        /// Headers sent with every request (an `Authorization` header, say).
        headers: BTreeMap<String, String>,
    },
}

impl ServerConfig {
    /// A local server run as `command`, with the default timeout.
    pub fn local(command: Vec<String>) -> Self {
        Self {
            transport: Transport::Local {
                command,
                base_env: None,
                environment: BTreeMap::new(),
                cwd: None,
            },
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// A remote server at `url`, with the default timeout.
    pub fn remote(url: impl Into<String>) -> Self {
        Self {
            transport: Transport::Remote {
                url: url.into(),
                headers: BTreeMap::new(),
            },
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The same server with `timeout`.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}
