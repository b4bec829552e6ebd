//! Path comparisons for protected resources: real paths of directories that may not exist yet,
//! lexical clean-up of a resource, and component-wise, case-folded containment.

use std::path::{Path, PathBuf};

/// Adds `path` and its real path to `paths`, once each. A relative path (a data directory given
/// as `--data-dir data`) is what the process reaches by it: under the current directory.
pub(super) fn add_with_real_path(paths: &mut Vec<PathBuf>, path: PathBuf) {
    let path = std::path::absolute(&path).unwrap_or(path);
    // A directory reached through a symlink (a linked HOME, dotfiles in a repository) shows in
    // canonical resources by its real path, also before it exists.
    let real = real_path(&path);
    for path in std::iter::once(path).chain(real) {
        if path.is_absolute() && !paths.contains(&path) {
            paths.push(path);
        }
    }
}

/// `path` with symlinks resolved: its nearest existing ancestor canonical, the rest joined.
pub(super) fn real_path(path: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return Some(rest.iter().rev().fold(real, |real, name| real.join(name)));
        }
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    }
}

/// `path` is `file` or one of its rotations, `<file>.<n>`.
pub(super) fn is_or_rotates(path: &Path, file: &Path) -> bool {
    if within(path, file) {
        return true;
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return false;
    };
    let (Some(file_dir), Some(file_name)) = (file.parent(), file.file_name()) else {
        return false;
    };
    let (name, file_name) = (name.to_string_lossy(), file_name.to_string_lossy());
    let rotation = name.len() > file_name.len()
        && name.is_char_boundary(file_name.len())
        && name[..file_name.len()].eq_ignore_ascii_case(&file_name)
        && name[file_name.len()..]
            .strip_prefix('.')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    rotation && within(dir, file_dir) && dir.components().count() == file_dir.components().count()
}

/// `path` without `.` and `..` (resources are canonical already; one that is not must not
/// step past a protected directory by name).
pub(super) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` is `dir` or lies under it, component by component, ASCII case folded (a
/// case-insensitive file system takes `.Config/Opencode` for `.config/opencode`).
pub(super) fn within(path: &Path, dir: &Path) -> bool {
    let mut path = path.components();
    dir.components().all(|want| {
        path.next().is_some_and(|have| {
            have.as_os_str()
                .to_string_lossy()
                .eq_ignore_ascii_case(&want.as_os_str().to_string_lossy())
        })
    })
}
