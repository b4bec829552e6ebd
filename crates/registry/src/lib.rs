//! Tool registration and the settle boundary (not yet built).
//!
//! This crate will hold `ApplicationTools` (process-wide), `ToolRegistry` (one per Location),
//! snapshots (`Materialization`) and `settle`, the only place that executes a tool and bounds
//! its output. It must never depend on `tackle-permission`, directly or transitively.
//! Until its issue lands it exports nothing, so nothing can rely on behaviour it lacks.
