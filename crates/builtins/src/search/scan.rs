//! The grep engine: matching lines under a root (or in one file), files newest first.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use grep_regex::RegexMatcher;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};

use super::Budget;
use super::find::newest_first;
use super::hits::{self, Hits, LineHit, Mode};
use super::pattern::Glob;
use super::walk::{self, Skipped};
use crate::beneath::{self, Checked};

/// The matching lines of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileHits {
    /// Absolute path as walked (logical).
    pub(crate) path: PathBuf,
    pub(crate) modified: SystemTime,
    /// The lines kept for output: those of at most `kept` matches, with their context.
    pub(crate) lines: Vec<LineHit>,
    /// How many results this file holds toward the limit: its kept matches in content mode,
    /// one in the other modes.
    pub(crate) kept: usize,
    /// How many matches this file has (1 in files mode, where the search stops at the first).
    pub(crate) count: usize,
}

/// The result of a grep.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// Files with shown results, newest first (ties by path); `limit` results in all at most.
    pub(crate) files: Vec<FileHits>,
    /// Results shown: matches in content mode, files otherwise.
    pub(crate) shown: usize,
    /// Matches seen in all (shown or not).
    pub(crate) total_matches: usize,
    /// Files with at least one match, shown or not.
    pub(crate) total_files: usize,
    pub(crate) skipped: Skipped,
    /// The budget ran out: the counts cover only part of the tree.
    pub(crate) incomplete: bool,
}

/// What grep looks for and how much of it to keep.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Query<'a> {
    pub(crate) matcher: &'a RegexMatcher,
    /// Only files whose path relative to the root matches (directory searches only).
    pub(crate) include: Option<&'a Glob>,
    /// At most this many results (matches in content mode, files otherwise) are kept;
    /// `None` keeps all.
    pub(crate) limit: Option<usize>,
    pub(crate) budget: &'a Budget,
    pub(crate) mode: Mode,
    /// Lines of context before and after each match (content mode).
    pub(crate) before: usize,
    pub(crate) after: usize,
    /// Matches may span lines.
    pub(crate) multiline: bool,
}

impl Query<'_> {
    fn keep_per_file(&self) -> usize {
        self.limit.unwrap_or(usize::MAX)
    }
}

/// Bytes a multiline search may hold: it needs a whole file in memory.
const MULTILINE_HEAP: usize = 256 << 20;

fn searcher(query: &Query<'_>) -> Searcher {
    let mut builder = SearcherBuilder::new();
    builder
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .multi_line(query.multiline);
    if query.multiline {
        builder.heap_limit(Some(MULTILINE_HEAP));
    }
    if query.mode == Mode::Content {
        builder
            .before_context(query.before)
            .after_context(query.after);
    }
    builder.build()
}

/// Searches the single file at the canonical `path` (GR3: its siblings are never looked at).
pub(crate) fn scan_file(path: &Path, query: &Query<'_>) -> Scan {
    let mut pending = Pending::default();
    let _ = search_one(
        &mut searcher(query),
        path,
        Opened::Exact,
        query,
        &mut pending,
    );
    pending.finish(query)
}

/// How a searched file is opened.
#[derive(Debug)]
enum Opened<'c, 'b> {
    /// At exactly its canonical path (no link followed).
    Exact,
    /// As walked: relative to its directory checked to lie under the boundary, or (reached
    /// through its own link, `true`) on its own checked descriptor. A directory swapped for a
    /// link to outside during the walk is never read through.
    Walked(&'c mut Checked<'b>, bool),
}

/// Searches every file under the directory `root` (absolute), with the walk policy of
/// [`walk`] and `boundary` (canonical) as the limit for symlinks.
pub(crate) fn scan_dir(root: &Path, boundary: &Path, query: &Query<'_>) -> Scan {
    let shared = Mutex::new(Pending::default());
    let mut builder = Builder {
        root,
        boundary,
        query,
        shared: &shared,
    };
    let rejected = walk::walk(
        root,
        boundary,
        true,
        walk::SMALL_TREE_TO_SEARCH,
        query.budget,
        &mut builder,
    );
    if let Some(steps) = query.budget.steps() {
        steps.finish();
    }
    let mut pending = shared.into_inner().unwrap_or_else(PoisonError::into_inner);
    pending.skipped.outside_links.extend(rejected);
    pending.finish(query)
}

/// Results gathered so far, by one thread or by all.
#[derive(Debug, Default)]
struct Pending {
    files: Vec<FileHits>,
    /// Matches and files whose lines were dropped because newer files already fill the limit.
    pruned_matches: usize,
    pruned_files: usize,
    /// Lines held in `files`, to decide cheaply when to prune.
    kept_lines: usize,
    skipped: Skipped,
}

impl Pending {
    fn order(&mut self) {
        self.files
            .sort_unstable_by(|a, b| newest_first((&a.modified, &a.path), (&b.modified, &b.path)));
    }

    /// Drops the files that cannot be shown: those after the first `limit` kept lines.
    fn prune(&mut self, limit: usize) {
        self.order();
        let mut kept = 0usize;
        let mut cut = self.files.len();
        for (index, file) in self.files.iter().enumerate() {
            if kept >= limit {
                cut = index;
                break;
            }
            kept += file.kept;
        }
        for file in self.files.drain(cut..) {
            self.pruned_matches += file.count;
            self.pruned_files += 1;
        }
        self.kept_lines = kept;
    }

    fn merge(&mut self, other: Pending) {
        self.files.extend(other.files);
        self.pruned_matches += other.pruned_matches;
        self.pruned_files += other.pruned_files;
        self.kept_lines += other.kept_lines;
        self.skipped.merge(other.skipped);
    }

    fn finish(mut self, query: &Query<'_>) -> Scan {
        self.order();
        let total_matches = self.pruned_matches + self.files.iter().map(|f| f.count).sum::<usize>();
        let total_files = self.pruned_files + self.files.len();
        let mut room = query.keep_per_file();
        let mut files = Vec::new();
        for mut file in self.files {
            if room == 0 {
                break;
            }
            if query.mode == Mode::Content {
                file.kept = hits::truncate_matches(&mut file.lines, room);
            }
            room -= file.kept;
            files.push(file);
        }
        self.skipped.finish();
        Scan {
            shown: files.iter().map(|f| f.kept).sum(),
            files,
            total_matches,
            total_files,
            skipped: self.skipped,
            incomplete: query.budget.was_spent(),
        }
    }
}

/// Searches one file into `pending`; returns its number of matches.
fn search_one(
    searcher: &mut Searcher,
    path: &Path,
    opened: Opened<'_, '_>,
    query: &Query<'_>,
    pending: &mut Pending,
) -> usize {
    let opened = match opened {
        Opened::Exact => Some(beneath::open_file(path)),
        Opened::Walked(checked, link) => checked.open(path, link),
    };
    let file = match opened {
        Some(Ok(file)) => file,
        Some(Err(err)) if err.kind() == io::ErrorKind::NotFound => return 0,
        // Unreadable, or no longer under the boundary.
        Some(Err(_)) | None => {
            pending.skipped.unreadable += 1;
            return 0;
        }
    };
    let metadata = file.metadata().ok();
    if !metadata.as_ref().is_some_and(std::fs::Metadata::is_file) {
        pending.skipped.unreadable += 1;
        return 0;
    }
    let mut sink = Hits::new(
        query.matcher,
        query.mode,
        query.keep_per_file(),
        query.budget,
    );
    if searcher
        .search_file(query.matcher, &file, &mut sink)
        .is_err()
    {
        pending.skipped.unreadable += 1;
        return 0;
    }
    if sink.binary {
        pending.skipped.binary += 1;
        return 0;
    }
    if sink.count == 0 {
        return 0;
    }
    let modified = metadata
        .and_then(|m| m.modified().ok())
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let kept = sink.kept();
    let count = sink.count;
    pending.kept_lines += kept;
    pending.files.push(FileHits {
        path: path.to_path_buf(),
        modified,
        lines: sink.lines,
        kept,
        count: sink.count,
    });
    // Keep memory proportional to the limit: only this thread's newest `limit` lines can be
    // among the overall first `limit`.
    if let Some(limit) = query.limit
        && pending.kept_lines >= limit.saturating_mul(4).max(4096)
    {
        pending.prune(limit);
    }
    count
}

struct Builder<'a> {
    root: &'a Path,
    boundary: &'a Path,
    query: &'a Query<'a>,
    shared: &'a Mutex<Pending>,
}

impl<'s> ParallelVisitorBuilder<'s> for Builder<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            root: self.root,
            boundary: self.boundary,
            query: self.query,
            shared: self.shared,
            searcher: searcher(self.query),
            checked: Checked::new(self.boundary),
            local: Pending::default(),
        })
    }
}

struct Visitor<'a> {
    root: &'a Path,
    boundary: &'a Path,
    query: &'a Query<'a>,
    shared: &'a Mutex<Pending>,
    searcher: Searcher,
    checked: Checked<'a>,
    local: Pending,
}

impl Visitor<'_> {
    fn consider(&mut self, entry: &DirEntry) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return;
        }
        if let Some(include) = self.query.include {
            let Some(relative) = walk::below(self.root, entry.path()) else {
                return;
            };
            if !include.is_match(relative) {
                return;
            }
        }
        let matches = search_one(
            &mut self.searcher,
            entry.path(),
            Opened::Walked(&mut self.checked, entry.path_is_symlink()),
            self.query,
            &mut self.local,
        );
        if let Some(steps) = self.query.budget.steps() {
            steps.advance(1, matches as u64);
        }
    }
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        match entry {
            Ok(entry) => self.consider(&entry),
            Err(err) => walk::classify_error(&err, self.boundary, &mut self.local.skipped),
        }
        walk::next_state(self.query.budget)
    }
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        let local = std::mem::take(&mut self.local);
        self.shared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .merge(local);
    }
}
