//! The glob engine: the files under a root whose relative path matches a glob, newest first.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};

use super::Budget;
use super::pattern::Listing;
use super::shown;
use super::walk::{self, Skipped};

/// One matching file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FoundFile {
    /// Its absolute path as walked (logical: through followed symlinks, not their targets).
    pub(crate) path: PathBuf,
    /// Its modification time (the epoch when it could not be read).
    pub(crate) modified: SystemTime,
    /// The walk reached it through a symbolic link of its own.
    pub(crate) link: bool,
}

impl shown::Walked for FoundFile {
    fn walked(&self) -> (&Path, bool) {
        (&self.path, self.link)
    }
}

/// The result of [`find`].
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// The matching files, newest first (ties by path), at most `limit` of them.
    pub(crate) files: Vec<FoundFile>,
    /// How many files matched in all.
    pub(crate) total: usize,
    /// What the walk passed over.
    pub(crate) skipped: Skipped,
    /// The budget ran out: `files` and `total` cover only part of the tree.
    pub(crate) incomplete: bool,
}

/// Newest first, then by path, so equal mtimes still give a stable order.
/// Paths compare by bytes: a component-wise `Path` comparison costs more than the sort.
pub(crate) fn newest_first(a: (&SystemTime, &Path), b: (&SystemTime, &Path)) -> Ordering {
    b.0.cmp(a.0).then_with(|| {
        a.1.as_os_str()
            .as_encoded_bytes()
            .cmp(b.1.as_os_str().as_encoded_bytes())
    })
}

fn order(files: &mut [FoundFile]) {
    files.sort_unstable_by(|a, b| newest_first((&a.modified, &a.path), (&b.modified, &b.path)));
}

/// Lists the files (or, for a pattern ending in `/`, the directories) under the directory
/// `root` (absolute) that `glob` lists, following the walk policy of [`walk`] with `boundary`
/// (canonical) as the limit for symlinks.
pub(crate) fn find(
    root: &Path,
    boundary: &Path,
    glob: &Listing,
    limit: Option<usize>,
    budget: &Budget,
) -> Found {
    let shared = Mutex::new(Found::default());
    let mut walk = Walk {
        root,
        boundary,
        glob,
        limit,
        budget,
        shared: &shared,
    };
    let rejected = walk::walk(
        root,
        boundary,
        glob.names_hidden(),
        walk::SMALL_TREE_TO_LIST,
        budget,
        &mut walk,
    );
    if let Some(steps) = budget.steps() {
        steps.finish();
    }
    let mut found = shared.into_inner().unwrap_or_else(PoisonError::into_inner);
    found.skipped.outside_links.extend(rejected);
    found.skipped.finish();
    order(&mut found.files);
    let (kept, dropped) = shown::verified(std::mem::take(&mut found.files), boundary, limit);
    found.files = kept;
    found.total -= dropped;
    found.incomplete = budget.was_spent();
    found
}

/// What every walker thread shares; it builds their visitors.
#[derive(Clone, Copy)]
struct Walk<'a> {
    root: &'a Path,
    boundary: &'a Path,
    glob: &'a Listing,
    limit: Option<usize>,
    budget: &'a Budget,
    shared: &'a Mutex<Found>,
}

impl<'s> ParallelVisitorBuilder<'s> for Walk<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            walk: *self,
            local: Found::default(),
        })
    }
}

/// One walker thread's share; merged into the shared result when the thread finishes.
struct Visitor<'a> {
    walk: Walk<'a>,
    local: Found,
}

impl Visitor<'_> {
    /// Keeps `entry` when the glob lists it; true when it did.
    fn consider(&mut self, entry: DirEntry) -> bool {
        let wanted = if self.walk.glob.directories {
            // The search root itself is never a result (`below` refuses it).
            entry.file_type().is_some_and(|t| t.is_dir())
        } else {
            entry.file_type().is_some_and(|t| t.is_file())
        };
        if !wanted {
            return false;
        }
        let Some(relative) = walk::below(self.walk.root, entry.path()) else {
            return false;
        };
        if !self.walk.glob.is_match(relative) {
            return false;
        }
        let modified = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        self.local.total += 1;
        let link = entry.path_is_symlink();
        self.local.files.push(FoundFile {
            path: entry.into_path(),
            modified,
            link,
        });
        // Keep memory proportional to the limit: only this thread's newest `limit` files can
        // be among the overall newest `limit`.
        if let Some(limit) = self.walk.limit
            && self.local.files.len() >= limit.saturating_mul(4).max(1024)
        {
            order(&mut self.local.files);
            self.local.files.truncate(limit);
        }
        true
    }
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        match entry {
            Ok(entry) => {
                let kept = self.consider(entry);
                if let Some(steps) = self.walk.budget.steps() {
                    steps.advance(1, u64::from(kept));
                }
            }
            Err(err) => walk::classify_error(&err, self.walk.boundary, &mut self.local.skipped),
        }
        walk::next_state(self.walk.budget)
    }
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        let local = std::mem::take(&mut self.local);
        let mut shared = self
            .walk
            .shared
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        shared.files.extend(local.files);
        shared.total += local.total;
        shared.skipped.merge(local.skipped);
    }
}
