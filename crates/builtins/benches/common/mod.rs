//! Helpers shared by the builtins benches (each bench includes this module).

#![allow(dead_code)] // each bench uses its own subset

use std::time::Duration;

/// "met" or "MISSED", for a target line.
pub(crate) fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}

/// Milliseconds, for printing.
pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The median of `times` (sorted in place).
pub(crate) fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}
