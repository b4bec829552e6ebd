//! `tools/list`: a session's catalog in MCP form.
//!
//! The form itself is `tackle_formats::mcp`'s (name, title, description, `inputSchema`,
//! `outputSchema` for tools with structured output, hints from each tool's class), so the server
//! and `tackle tools --format mcp` cannot drift apart; this module only hands it to rmcp.

use rmcp::model::{ListToolsResult, Tool};
use tackle_formats::{Format, export};
use tackle_registry::Materialization;

/// The MCP forms of `snapshot`'s tools, in catalog order.
pub fn tools(snapshot: &Materialization) -> Vec<Tool> {
    let catalog = export(snapshot, Format::Mcp).tools;
    match serde_json::from_value::<ListToolsResult>(catalog) {
        Ok(list) => list.tools,
        // Every field of the shared form has the type MCP gives it.
        Err(err) => {
            tracing::error!(%err, "the catalog is not in MCP form");
            Vec::new()
        }
    }
}
