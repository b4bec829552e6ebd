//! Permission rules (not yet built).
//!
//! This crate will hold rules, wildcard matching, evaluation, asking and saved approvals, and
//! implement `tackle_tool_core::Visibility` for rulesets. It depends only on
//! `tackle-tool-core`. Until its issue lands it exports nothing, so nothing can rely on
//! behaviour it lacks.
