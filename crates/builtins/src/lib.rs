//! The builtin leaf tools of tackle, and the Location services they share.
//!
//! Every builtin is built the same way from a Location's [`LocationServices`];
//! [`builtin_tools`] is the one catalog and [`builtin_tool`] builds a single one.
//!
//! This crate holds [`Location`] and path resolution ([`location`]), safe file mutation
//! ([`mutation`]) and the leaf tools built on them. Every leaf follows one order: resolve the
//! path, assert `external_directory` if it lies outside the Location, assert the tool's own
//! action, and only then read or touch anything, so a denial means the file was never read.
//!
//! Invariants:
//! - A file tool opens exactly the path it resolved and permission approved, and acts on the
//!   descriptor from then on (`beneath.rs`): a directory swapped for a symbolic link after the
//!   check makes the call fail, never leads it out of the Location.
//! - Writes are atomic, serialized per canonical path and uninterruptible ([`FileMutation`]);
//!   a killed writer leaves no temporary file.
//! - No tool loses or changes a byte it was not asked to change.

#![deny(missing_docs)]

#[cfg(feature = "apply-patch")]
pub mod apply_patch;
pub mod authorize;
#[cfg(feature = "bash")]
pub mod bash;
mod beneath;
mod blocking;
mod catalog;
pub mod diff;
pub mod edit;
pub mod error;
mod limits;
pub mod location;
pub mod mutation;
pub mod question;
pub mod read;
#[cfg(feature = "media")]
mod read_options;
#[cfg(feature = "search")]
pub mod search;
mod services;
mod shape;
pub mod skill;
#[cfg(any(feature = "search", feature = "apply-patch"))]
mod steps;
mod text;
pub mod todo;
#[cfg(feature = "web")]
pub mod web;
pub mod write;

pub use authorize::{authorize, authorize_external};
pub use catalog::{builtin_names, builtin_tool, builtin_tools};
pub use diff::{DiffStatus, FileDiff};
pub use error::{Error, PathReason};
pub use location::{EntryKind, ExternalDirectory, Kind, Location, Resolved};
pub use mutation::{ContentHash, FileMutation, Operation, TextWritten, Transaction, Written};
pub use services::LocationServices;
pub use text::MAX_LINE_CHARS;
