//! The permission order every path-taking leaf follows (the reference's common leaf order).
//!
//! resolve → `external_directory` on `<dir>/*` (only for a path outside the Location) → the
//! tool's own action on the canonical resource → only then read or touch the file. A denial at
//! either step returns before anything is read.
//!
//! Every leaf words a configured denial the same way, through `prefixed_denial`: its own
//! failure text first (`Unable to <verb> <path>: Permission denied: ...`), as the reference's
//! tests expect of every leaf that has such a text.

use tackle_permission::{Permission, PermissionError, Request};
use tackle_tool_core::{Context, ToolError};

use crate::location::{ExternalDirectory, Resolved};

/// The permission action for paths outside the Location.
pub const EXTERNAL_DIRECTORY: &str = "external_directory";

/// Asserts `external_directory` if `target` is outside the Location, then `action` on its
/// resource (an "always" saves `*` for `action`, as the reference's file tools do).
pub async fn authorize(
    permission: &Permission,
    ctx: &Context,
    target: &Resolved,
    action: &str,
) -> Result<(), PermissionError> {
    if let Some(external) = &target.external {
        authorize_external(permission, ctx, external).await?;
    }
    let request = Request::new(ctx, action, vec![target.resource.clone()])
        .with_save(vec!["*".to_owned()])
        .with_metadata("path", target.input.clone().into());
    permission.assert(request).await
}

/// Asserts `external_directory` on `<dir>/*`; an "always" saves that same pattern (LM7).
pub async fn authorize_external(
    permission: &Permission,
    ctx: &Context,
    external: &ExternalDirectory,
) -> Result<(), PermissionError> {
    let request = Request::new(ctx, EXTERNAL_DIRECTORY, vec![external.pattern.clone()])
        .with_save(vec![external.pattern.clone()]);
    permission.assert(request).await
}

/// A permission error as a tool error, a configured denial's message prefixed with the leaf's
/// own failure text (`Unable to edit a.txt: Permission denied: ...`); the denial's metadata
/// (the deciding rule) is kept. Declines stay halts and a user's correction stays the user's
/// words.
pub(crate) fn prefixed_denial(prefix: &str, err: PermissionError) -> ToolError {
    let blocked = matches!(err, PermissionError::Blocked { .. });
    match ToolError::from(err) {
        ToolError::Failure(mut failure) if blocked => {
            failure.message = format!("{prefix}: {}", failure.message);
            ToolError::Failure(failure)
        }
        other => other,
    }
}
