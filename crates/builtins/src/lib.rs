//! The builtin leaf tools of tackle, and the Location services they share.
//!
//! This crate holds [`Location`] and path resolution ([`location`]), safe file mutation
//! ([`mutation`]) and the leaf tools built on them. Every leaf follows one order: resolve the
//! path, assert `external_directory` if it lies outside the Location, assert the tool's own
//! action, and only then read or touch anything, so a denial means the file was never read.
//!
//! Invariants:
//! - Writes are atomic, serialized per canonical path and uninterruptible ([`FileMutation`]).
//! - No tool loses or changes a byte it was not asked to change.

pub mod apply_patch;
pub mod authorize;
pub mod bash;
mod blocking;
pub mod diff;
pub mod edit;
pub mod error;
mod interactive;
pub mod location;
pub mod mutation;
pub mod question;
pub mod read;
pub mod search;
pub mod skill;
mod text;
pub mod todo;
#[cfg(feature = "web")]
pub mod web;
pub mod write;

pub use authorize::{authorize, authorize_external};
pub use diff::{DiffStatus, FileDiff};
pub use error::{Error, PathReason};
pub use interactive::{InteractiveServices, interactive_tools};
pub use location::{EntryKind, ExternalDirectory, Kind, Location, Resolved};
pub use mutation::{ContentHash, FileMutation, Operation, TextWritten, Transaction, Written};

use tackle_output_store::OutputStore;
use tackle_permission::Permission;
use tackle_registry::{Registration, Tools};
use tackle_tool_core::{RegistrationError, Tool};

/// What the leaves of one Location capture when they are built (reference A7): the Location,
/// its permission service, the output store (for managed-output references) and the file
/// mutation service (share one per process, so every Location serializes writes together).
#[derive(Clone, Debug)]
pub struct LocationServices {
    /// The working directory paths resolve against.
    pub location: Location,
    /// Asked before anything is read or changed.
    pub permission: Permission,
    /// Serves `tool-output://` references to `read`; its limits size `read`'s pages.
    pub store: OutputStore,
    /// Every file change goes through it.
    pub files: FileMutation,
    /// The question service (none: headless, `question` is not offered), the todo store,
    /// the user's skill directories and the web configuration.
    pub interactive: InteractiveServices,
}

/// Every builtin leaf for the Location of `services`, by name, in catalog order.
pub fn builtin_tools(services: &LocationServices) -> Vec<(String, Tool)> {
    let mut tools = vec![
        ("bash".to_owned(), bash::tool(services)),
        ("read".to_owned(), read::tool(services)),
        ("edit".to_owned(), edit::tool(services)),
        ("write".to_owned(), write::tool(services)),
        (
            "apply_patch".to_owned(),
            apply_patch::ApplyPatch::new(
                services.location.clone(),
                services.permission.clone(),
                services.files.clone(),
            )
            .tool(),
        ),
        ("glob".to_owned(), search::glob_for(services)),
        ("grep".to_owned(), search::grep_for(services)),
    ];
    // question, skill, todowrite, webfetch, websearch: those the services make usable.
    tools.extend(interactive_tools(
        &services.permission,
        services.location.root(),
        &services.interactive,
    ));
    tools
}

/// Registers [`builtin_tools`] in `tools` (a Location's register-only view); dropping the
/// returned guard removes them again.
pub fn register_builtins(
    tools: &Tools,
    services: &LocationServices,
) -> Result<Registration, RegistrationError> {
    tools.register(builtin_tools(services))
}
