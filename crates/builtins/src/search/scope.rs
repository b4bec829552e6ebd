//! The leaf order shared by glob and grep: resolve the path through the Location, assert
//! `external_directory` when it lies outside, assert the tool's own action, and only then
//! look at what is there.

use std::path::PathBuf;
use std::time::Duration;

use tackle_permission::{Permission, Request};
use tackle_tool_core::{Context, ToolError, ToolFailure};

use super::budget::DEFAULT_BUDGET;
use super::report::Base;
use crate::authorize::{authorize_external, prefixed_denial};
use crate::location::{EntryKind, Kind, Location};

/// Host settings of the search tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchSettings {
    /// The wall-clock budget of one call; when it runs out the call returns what it found,
    /// marked incomplete.
    pub budget: Duration,
}

impl Default for SearchSettings {
    fn default() -> Self {
        Self {
            budget: DEFAULT_BUDGET,
        }
    }
}

/// What a search tool captured when it was built.
#[derive(Debug, Clone)]
pub(crate) struct Services {
    pub(crate) location: Location,
    pub(crate) permission: Permission,
    pub(crate) settings: SearchSettings,
}

/// A permitted search root.
#[derive(Debug)]
pub(crate) struct Scope {
    /// The canonical path to search.
    pub(crate) root: PathBuf,
    /// What is there; `None` when nothing is.
    pub(crate) kind: Option<EntryKind>,
    pub(crate) base: Base,
}

/// The `path` argument as shown in messages and permission metadata: `.` when absent.
pub(crate) fn path_argument(path: Option<&str>) -> &str {
    path.map(str::trim).filter(|p| !p.is_empty()).unwrap_or(".")
}

impl Services {
    /// Resolves `path` and asserts `external_directory` (if outside) then `action`. Failures
    /// are prefixed with `failure` (`Unable to grep for <pattern>`).
    pub(crate) async fn open(
        &self,
        ctx: &Context,
        path: &str,
        action: Request,
        failure: &str,
    ) -> Result<Scope, ToolError> {
        let resolved = self
            .location
            .resolve(path, Kind::Directory)
            .map_err(|err| ToolFailure::new(format!("{failure}: {err}")))?;
        if let Some(external) = &resolved.external {
            authorize_external(&self.permission, ctx, external)
                .await
                .map_err(|err| prefixed_denial(failure, err))?;
        }
        self.permission
            .assert(action)
            .await
            .map_err(|err| prefixed_denial(failure, err))?;
        let boundary = if resolved.is_external() {
            resolved.canonical.clone()
        } else {
            self.location.root().to_path_buf()
        };
        Ok(Scope {
            root: resolved.canonical,
            kind: resolved.kind,
            base: Base {
                location: self.location.root().to_path_buf(),
                boundary,
            },
        })
    }
}

/// Refuses an argument that no permission request could carry (empty, or with a NUL).
pub(crate) fn check_argument(what: &str, value: &str) -> Result<(), ToolError> {
    if value.is_empty() {
        return Err(ToolFailure::new(format!("The {what} is empty")).into());
    }
    if value.contains('\0') {
        return Err(ToolFailure::new(format!("The {what} contains a NUL character")).into());
    }
    Ok(())
}

/// GR2: the message for a search path that does not exist, naming the path as given.
pub(crate) fn not_found(path: &str) -> ToolError {
    ToolFailure::new(format!("Search path not found: {path}")).into()
}
