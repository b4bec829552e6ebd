//! The registry's error type.

use tackle_output_store::StoreError;
use tackle_tool_core::{Defect, Halt};

/// Why a call produced no result at all. Model-visible failures are not errors here: they are
/// [`Settlement`](crate::Settlement)s whose result is an error value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettleError {
    /// The host's turn stops (declined, dismissed, cancelled).
    #[error(transparent)]
    Halt(#[from] Halt),
    /// A bug or broken environment, unchanged from the tool.
    #[error(transparent)]
    Defect(#[from] Defect),
    /// The output store could not bound the result (limits it cannot work with, inline media
    /// over its limit); a failure to save a managed output keeps the preview instead.
    #[error("cannot bound the tool output: {0}")]
    Store(#[from] StoreError),
    /// A call of a batch that did not run because an earlier call of the batch halted the
    /// turn (`Materialization::settle_batch`).
    #[error("not run: an earlier call of the batch stopped the turn")]
    NotRun,
}
