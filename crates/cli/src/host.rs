//! The host side of the binary: the Location and the tools built for it.

use std::path::{Path, PathBuf};

use tackle_tool_core::Tool;

use crate::error::CliError;

/// The Location directory: `dir`, or the current directory; it must be an existing directory.
pub(crate) fn location(dir: Option<&Path>) -> Result<PathBuf, CliError> {
    let dir = dir.unwrap_or_else(|| Path::new("."));
    let canonical = std::fs::canonicalize(dir).map_err(|source| CliError::Location {
        path: dir.to_owned(),
        source,
    })?;
    if canonical.is_dir() {
        Ok(canonical)
    } else {
        Err(CliError::NotADirectory(dir.to_owned()))
    }
}

/// The tools offered in `location`, by name, in catalog order.
pub(crate) fn tools(_location: &Path) -> Vec<(String, Tool)> {
    tackle_builtins::builtin_tools()
}
