//! Integration tests of tackle-mcp-client: real MCP servers (the official reference servers,
//! the Python SDK's `MCPServer`, raw JSON-RPC processes) consumed through a real registry.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on broken setup

mod servers;
