//! The one directory walk behind glob and grep, so that both tools see the same files.
//!
//! Policy:
//! - `.gitignore`, `.ignore`, `.git/info/exclude` and the global git excludes are respected,
//!   also outside a git repository (a `.gitignore` states intent wherever it is);
//! - hidden files and directories are included (unless the caller leaves them out: glob does
//!   when its pattern names none), except anything named `.git` and the temporary files of
//!   writers (`.tackle-*.tmp`);
//! - symlinks are followed when their real target lies inside the boundary (the Location, or
//!   the searched directory when that is outside the Location); loops are detected and
//!   skipped; a link leading outside is never followed and is reported, so the caller can say
//!   so instead of silently dropping or silently reading it;
//! - the walk is parallel and stops early when the [`Budget`] is spent.

use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use ignore::{DirEntry, WalkBuilder, WalkParallel, WalkState};

use super::Budget;
use crate::beneath;

/// A symlink that was not followed because its target lies outside the boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutsideLink {
    /// The link, as walked (a logical path under the search root).
    pub(crate) link: PathBuf,
    /// Where it really leads.
    pub(crate) target: PathBuf,
}

/// What a walk passed over without searching it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Skipped {
    /// Links out of the boundary, sorted by path.
    pub(crate) outside_links: Vec<OutsideLink>,
    /// Symlinks that lead back into a directory already being walked.
    pub(crate) loops: usize,
    /// Paths that could not be listed or read (permissions, I/O errors).
    pub(crate) unreadable: usize,
    /// Files not searched because they contain binary data (grep only).
    pub(crate) binary: usize,
}

impl Skipped {
    pub(crate) fn merge(&mut self, other: Skipped) {
        self.outside_links.extend(other.outside_links);
        self.loops += other.loops;
        self.unreadable += other.unreadable;
        self.binary += other.binary;
    }

    pub(crate) fn finish(&mut self) {
        self.outside_links.sort_by(|a, b| a.link.cmp(&b.link));
        self.outside_links.dedup();
    }
}

/// Links rejected by the entry filter; shared because the filter runs on every walker thread.
pub(crate) type RejectedLinks = Arc<Mutex<Vec<OutsideLink>>>;

/// A parallel walk of `root` under the shared policy, and the list the walk's filter fills
/// with links leading outside `boundary` (a canonical directory). `hidden`: hidden names are
/// walked too.
pub(crate) fn parallel(
    root: &Path,
    boundary: &Path,
    hidden: bool,
) -> (WalkParallel, RejectedLinks) {
    let rejected: RejectedLinks = Arc::default();
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(!hidden)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .parents(true)
        .require_git(false)
        .follow_links(true)
        // As many walkers as the walker's own default (at most 12), without asking the system
        // again on every walk.
        .threads(super::parallelism().min(12));
    let boundary = boundary.to_path_buf();
    let sink = Arc::clone(&rejected);
    builder.filter_entry(move |entry| keep(entry, &boundary, &sink));
    (builder.build_parallel(), rejected)
}

/// The entry filter: no `.git`, and no link whose real target is outside the boundary.
fn keep(entry: &DirEntry, boundary: &Path, rejected: &Mutex<Vec<OutsideLink>>) -> bool {
    // A writer's temporary file is never a result (nor is anything named like one).
    if entry.file_name() == ".git" || beneath::is_temp_name(entry.file_name()) {
        return false;
    }
    if !entry.path_is_symlink() {
        return true;
    }
    match outside_target(entry.path(), boundary) {
        Some(target) => {
            rejected
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(OutsideLink {
                    link: entry.path().to_path_buf(),
                    target,
                });
            false
        }
        None => true,
    }
}

/// The real target of `link` when it lies outside `boundary`. A link that cannot be resolved
/// is left to the walker, which reports it as an error.
pub(crate) fn outside_target(link: &Path, boundary: &Path) -> Option<PathBuf> {
    let target = std::fs::canonicalize(link).ok()?;
    (!target.starts_with(boundary)).then_some(target)
}

/// Sorts one walker error into the skip counters. Loops whose link leads outside the boundary
/// (a link to an ancestor of the Location) are outside links, not loops.
pub(crate) fn classify_error(err: &ignore::Error, boundary: &Path, skipped: &mut Skipped) {
    match root_cause(err) {
        ignore::Error::Loop { child, .. } => match outside_target(child, boundary) {
            Some(target) => skipped.outside_links.push(OutsideLink {
                link: child.clone(),
                target,
            }),
            None => skipped.loops += 1,
        },
        // Ignore-file syntax problems only weaken filtering; they lose no file.
        ignore::Error::Partial(_) | ignore::Error::Glob { .. } => {}
        other => match other.io_error() {
            // A dangling symlink, or a file removed while walking: nothing to search.
            Some(io) if io.kind() == std::io::ErrorKind::NotFound => {}
            _ => skipped.unreadable += 1,
        },
    }
}

fn root_cause(err: &ignore::Error) -> &ignore::Error {
    match err {
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => root_cause(err),
        other => other,
    }
}

/// `path` below `root` as a relative path, by bytes: walked paths always start with the walk
/// root, and a component-wise `strip_prefix` per entry is measurable on large trees.
pub(crate) fn below<'a>(root: &Path, path: &'a Path) -> Option<&'a Path> {
    let rest = path
        .as_os_str()
        .as_encoded_bytes()
        .strip_prefix(root.as_os_str().as_encoded_bytes())?;
    let rest = match rest.split_first() {
        _ if root.as_os_str().as_encoded_bytes().ends_with(b"/") && !rest.is_empty() => rest,
        Some((b'/', rest)) if !rest.is_empty() => rest,
        // The root itself, or a sibling that merely shares a name prefix.
        _ => return None,
    };
    Some(Path::new(std::ffi::OsStr::from_bytes(rest)))
}

/// What a visitor returns after each entry: quit once the budget is spent.
pub(crate) fn next_state(budget: &Budget) -> WalkState {
    if budget.spent() {
        WalkState::Quit
    } else {
        WalkState::Continue
    }
}

/// Takes the rejected links out of the shared list.
pub(crate) fn take_rejected(rejected: &RejectedLinks) -> Vec<OutsideLink> {
    std::mem::take(&mut *rejected.lock().unwrap_or_else(PoisonError::into_inner))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_strips_the_root_only_at_a_separator() {
        let root = Path::new("/a/b");
        assert_eq!(
            below(root, Path::new("/a/b/c/d.rs")),
            Some(Path::new("c/d.rs"))
        );
        assert_eq!(below(root, Path::new("/a/bc/d.rs")), None);
        assert_eq!(below(root, Path::new("/a/b")), None);
        assert_eq!(below(Path::new("/"), Path::new("/x")), Some(Path::new("x")));
        assert_eq!(below(Path::new("/"), Path::new("/")), None);
    }
}
