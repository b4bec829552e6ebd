//! Shared pieces of the fuzz targets: the readable input format, a Location in a scratch
//! directory with real services, and the shell-line generator of the bash targets.
//!
//! Every target drives public entry points (a tool through `Tool::run_unbounded`, as the
//! crates' own tests do, or a public function), so what is fuzzed is what a host runs.

pub mod harness;
pub mod sandbox;
pub mod sections;
pub mod shell;
