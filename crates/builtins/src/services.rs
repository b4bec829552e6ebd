//! The services a Location's leaves are built from.
//!
//! Every builtin leaf is built the same way, `tool(&LocationServices) -> Tool`, capturing what
//! it needs from here. This module sits at the bottom of the crate (it uses only the Location,
//! file mutation and the interactive services), so no leaf imports upward from the crate root.

use tackle_output_store::OutputStore;
use tackle_permission::Permission;

use crate::interactive::InteractiveServices;
use crate::location::Location;
use crate::mutation::FileMutation;

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

impl LocationServices {
    /// The services of the Location `location`, with a headless host's interactive services
    /// (no question service, an empty todo store, no user skill directories, the default web
    /// policy); see [`with_interactive`](Self::with_interactive).
    pub fn new(
        location: Location,
        permission: Permission,
        store: OutputStore,
        files: FileMutation,
    ) -> Self {
        Self {
            location,
            permission,
            store,
            files,
            interactive: InteractiveServices::headless(),
        }
    }

    /// The same services with the host's interactive services.
    #[must_use]
    pub fn with_interactive(mut self, interactive: InteractiveServices) -> Self {
        self.interactive = interactive;
        self
    }
}
