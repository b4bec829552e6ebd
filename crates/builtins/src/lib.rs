//! The builtin leaf tools (not yet built).
//!
//! This crate will hold `Location`, path resolution, safe file mutation and the twelve leaf
//! tools. Leaves resolve paths, assert permission and only then touch anything. Until the
//! builtin issues land it registers no tool, and [`builtin_tools`] is empty.

use tackle_tool_core::Tool;

/// The builtin tools, by name, in catalog order. Empty until the leaf tools land.
pub fn builtin_tools() -> Vec<(String, Tool)> {
    Vec::new()
}
