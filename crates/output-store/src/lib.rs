//! Bounding of tool output (not yet built).
//!
//! This crate will hold the generic bound that the registry's settle applies to every
//! successful result: previews within 2000 lines / 50 KiB, managed spill files with 7-day
//! retention, and opaque output references. It depends only on `tackle-tool-core`.
//! Until its issue lands it exports nothing, so nothing can rely on behaviour it lacks.
