//! Bounding of tool output, and the managed outputs that keep what a bound leaves out.
//!
//! Place: the registry's settle passes every successful [`ToolOutput`] through
//! [`OutputStore::bound`]; a reader tool the host offers (the builtin `read`) serves managed
//! outputs back with [`OutputStore::read_page`], and the host names it to the store
//! ([`PagingHint`]) so markers tell the model what to call. This crate depends only on `tackle-tool-core` and touches no
//! file outside its managed directory.
//!
//! Invariants:
//! - Output whose model-visible text (the text parts, joined) is within [`MAX_LINES`] lines and
//!   [`MAX_BYTES`] bytes (configurable) passes unchanged, media included, with no reference,
//!   and without being copied or serialized.
//! - Otherwise the full text is saved as a managed output and the model text becomes a preview
//!   within both limits, marker included: a head and a (larger) tail on line and code-point
//!   boundaries, with one marker line stating exactly how many lines and bytes were omitted,
//!   which lines, and how to read them (the [`OutputRef`], and the host's [`PagingHint`]). A
//!   line too long for the budget is shortened in the middle with its own marker, so one
//!   minified line never empties the preview.
//! - A structured value over its limit ([`MAX_STRUCTURED_BYTES`] of compact JSON, or
//!   `max_bytes` when that is smaller) is saved as pretty JSON and replaced by a small object
//!   `{truncated, bytes, reference[, hint]}` (the hint names the host's paging tool); a text
//!   tool's structured value, which is its text, follows the bounded text instead.
//! - Media is never cut; an inline media item over [`MAX_INLINE_MEDIA_BYTES`] is an error.
//! - Managed outputs: a flat directory (created 0700 on the first spill, never a symbolic
//!   link), files created exclusively (0600) under unguessable names; a file is capped at
//!   `spill_cap` (head and tail kept, the gap recorded); the directory has a size quota (oldest
//!   evicted) and age retention. Models and hosts only ever see `tool-output://<id>`.
//! - Every storage failure is a typed [`StoreError`]; nothing degrades to a silent, empty or
//!   unexplained preview. A spill that fails (directory gone bad, disk full) keeps the preview:
//!   its marker says the full output could not be saved and why, without a path, and
//!   [`Bounded::unsaved`] carries the error for the host.
//! - The secret values a host configures (`StoreConfig::redact`, its credentials) are replaced
//!   by [`REDACTED`] in everything bounded — text, structured value, error text — before it is
//!   measured, shown or saved, so no managed output on disk holds one either.
//!
//! ```
//! use tackle_output_store::{OutputStore, PageLimits, StoreConfig};
//! use tackle_tool_core::{OutputContent, ToolOutput};
//!
//! let data = tempfile::tempdir()?;
//! let store = OutputStore::new(StoreConfig::in_data_dir(data.path()));
//! let text: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
//! let output = ToolOutput::new(serde_json::Value::Null, vec![OutputContent::Text { text }]);
//! let bounded = store.bound("session-1", "call-1", output)?;
//! assert!(bounded.truncated && bounded.omitted_lines == 3001);
//! let reference = &bounded.references[0]; // shown to the model as tool-output://<id>
//! let page = store.read_page(reference, 2500, PageLimits::new(2, 1024, 12))?;
//! assert_eq!(page.lines, ["line 2500", "line 2501"]);
//! assert_eq!((page.total_lines, page.next), (5000, Some(2502)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod bound;
mod cleanup;
mod config;
mod error;
mod page;
mod preview;
mod redact;
mod reference;
mod save;
mod spill;
mod store;
mod structured;
mod sweep_record;
mod text;

pub use bound::{Bounded, BoundedText};
pub use cleanup::CleanupReport;
pub use config::{
    DEFAULT_QUOTA, DEFAULT_SPILL_CAP, MANAGED_DIRECTORY, MAX_INLINE_MEDIA_BYTES, MIN_BYTES,
    MIN_SPILL_CAP, PagingHint, RETENTION, StoreConfig,
};
pub use error::StoreError;
pub use page::{Dropped, Page, PageLimits};
pub use redact::{MIN_SECRET_BYTES, REDACTED};
pub use reference::{OutputRef, SCHEME};
pub use store::{DroppedBytes, ManagedOutput, OutputStore, Redactions};
/// The default limits, defined once in tool-core because every call's `Context` carries them.
pub use tackle_tool_core::{MAX_BYTES, MAX_LINES, MAX_STRUCTURED_BYTES};

#[cfg(doc)]
use tackle_tool_core::ToolOutput;
