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
//! - a small tree is walked on the calling thread, a larger one in parallel; either stops
//!   early when the [`Budget`] is spent.

use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use ignore::{DirEntry, ParallelVisitorBuilder, WalkBuilder, WalkState};

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
type RejectedLinks = Arc<Mutex<Vec<OutsideLink>>>;

/// How many entries a walk reads on the calling thread before it hands the tree to the
/// parallel walker: starting the walker's threads, and the millisecond an idle one sleeps
/// between looks for work, cost a small tree more than walking it. Listing an entry is cheap
/// (glob); searching one means reading the file (grep), which several threads share sooner.
pub(crate) const SMALL_TREE_TO_LIST: usize = 512;
/// See [`SMALL_TREE_TO_LIST`].
pub(crate) const SMALL_TREE_TO_SEARCH: usize = 64;

/// Walks `root` under the shared policy, giving every entry to a visitor from `visitors`, and
/// returns the links the walk did not follow because they lead outside `boundary` (a
/// canonical directory). `hidden`: hidden names are walked too.
///
/// A tree of at most `small` entries is walked on this thread; a larger one is walked again
/// from its root on several threads (the entries read so far are only read, never visited, so
/// nothing is visited twice).
pub(crate) fn walk<'s>(
    root: &Path,
    boundary: &Path,
    hidden: bool,
    small: usize,
    budget: &Budget,
    visitors: &mut dyn ParallelVisitorBuilder<'s>,
) -> Vec<OutsideLink> {
    let rejected: RejectedLinks = Arc::default();
    let builder = builder(root, boundary, hidden, &rejected);
    let mut entries = Vec::new();
    for entry in builder.build() {
        if entries.len() == small {
            // A large tree: the links rejected so far are rejected again by the real walk.
            drop(entries);
            take_rejected(&rejected);
            builder.build_parallel().visit(visitors);
            return take_rejected(&rejected);
        }
        entries.push(entry);
        if budget.spent() {
            break;
        }
    }
    let mut visitor = visitors.build();
    for entry in entries {
        if matches!(visitor.visit(entry), WalkState::Quit) {
            break;
        }
    }
    // A visitor hands its findings over when it is dropped.
    drop(visitor);
    take_rejected(&rejected)
}

/// The walk of `root` under the shared policy, its filter filling `rejected`.
fn builder(root: &Path, boundary: &Path, hidden: bool, rejected: &RejectedLinks) -> WalkBuilder {
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
    let sink = Arc::clone(rejected);
    builder.filter_entry(move |entry| keep(entry, &boundary, &sink));
    builder
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
fn take_rejected(rejected: &RejectedLinks) -> Vec<OutsideLink> {
    std::mem::take(&mut *rejected.lock().unwrap_or_else(PoisonError::into_inner))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ignore::ParallelVisitor;

    use super::*;

    /// Collects every walked path, as glob's and grep's visitors hand over their findings.
    struct Collect<'a>(&'a Mutex<Vec<PathBuf>>);

    struct Collector<'a> {
        local: Vec<PathBuf>,
        shared: &'a Mutex<Vec<PathBuf>>,
    }

    impl<'s> ParallelVisitorBuilder<'s> for Collect<'s> {
        fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
            Box::new(Collector {
                local: Vec::new(),
                shared: self.0,
            })
        }
    }

    impl ParallelVisitor for Collector<'_> {
        fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
            if let Ok(entry) = entry {
                self.local.push(entry.into_path());
            }
            WalkState::Continue
        }
    }

    impl Drop for Collector<'_> {
        fn drop(&mut self) {
            self.shared.lock().unwrap().append(&mut self.local);
        }
    }

    fn walked(root: &Path, hidden: bool, small: usize) -> (Vec<PathBuf>, Vec<OutsideLink>) {
        let budget = Budget::new(Duration::from_secs(60), None);
        let paths = Mutex::new(Vec::new());
        let links = walk(root, root, hidden, small, &budget, &mut Collect(&paths));
        let mut paths = paths.into_inner().unwrap();
        paths.sort();
        (paths, links)
    }

    #[test]
    fn a_tree_walked_on_this_thread_and_in_parallel_yields_the_same_entries() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for d in 0..40 {
            let sub = root.join(format!("d{d}"));
            std::fs::create_dir(&sub).unwrap();
            for f in 0..15 {
                std::fs::write(sub.join(format!("f{f}.txt")), "x").unwrap();
            }
        }
        std::fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
        std::fs::create_dir(root.join("ignored")).unwrap();
        std::fs::write(root.join("ignored/x.txt"), "x").unwrap();
        std::fs::create_dir(root.join(".hidden")).unwrap();
        std::fs::write(root.join(".hidden/h.txt"), "x").unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "x").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        for hidden in [true, false] {
            let here = walked(&root, hidden, usize::MAX);
            assert_eq!(here, walked(&root, hidden, 0), "hidden: {hidden}");
            let (paths, links) = here;
            assert_eq!(
                paths.len(),
                1 + 40 * 16 + usize::from(hidden) * 3,
                "{paths:?}"
            );
            assert!(!paths.iter().any(|p| p.starts_with(root.join("ignored"))));
            assert!(!paths.iter().any(|p| p.starts_with(root.join(".git"))));
            assert_eq!(links.len(), 1, "{links:?}");
        }
    }

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
