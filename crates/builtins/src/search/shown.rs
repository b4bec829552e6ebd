//! glob's last step: each path it is about to show is checked to still be a name in a directory
//! under the boundary. The walk lists directories by name, so a directory swapped for a link
//! to outside during the walk could have listed outside names.

use std::path::Path;

use crate::beneath::Checked;

/// Files above this many are checked on several threads.
const PARALLEL_FILES: usize = 4096;
/// A directory with at least this many files to check has its names read once instead.
const READ_NAMES: usize = 4;

/// A file found by a walk: its walked path, and whether the walk reached it through a link
/// of its own.
pub(crate) trait Walked {
    fn walked(&self) -> (&Path, bool);
}

/// The first `limit` of `files` (in order) that pass the check, and how many were dropped.
/// Only the files shown are checked.
pub(crate) fn verified<F: Walked + Send + Sync>(
    files: Vec<F>,
    boundary: &Path,
    limit: Option<usize>,
) -> (Vec<F>, usize) {
    let limit = limit.unwrap_or(usize::MAX);
    if files.len() > limit {
        let mut checked = Checked::new(boundary);
        let (mut dropped, mut kept) = (0, Vec::with_capacity(limit));
        for file in files {
            if kept.len() == limit {
                break;
            }
            let (path, link) = file.walked();
            if checked.holds(path, link) {
                kept.push(file);
            } else {
                dropped += 1;
            }
        }
        return (kept, dropped);
    }
    // Every file is shown: check them a directory at a time, so each directory is opened and
    // checked once, on several threads when there are many.
    let mut order: Vec<usize> = (0..files.len()).collect();
    // By bytes: a component-wise `Path` comparison costs more than the checks.
    let parent = |index: usize| {
        let path = files[index].walked().0.as_os_str().as_encoded_bytes();
        &path[..path.iter().rposition(|b| *b == b'/').unwrap_or(0)]
    };
    order.sort_unstable_by(|&a, &b| parent(a).cmp(parent(b)));
    let groups: Vec<&[usize]> = order.chunk_by(|&a, &b| parent(a) == parent(b)).collect();
    let threads = if files.len() < PARALLEL_FILES {
        1
    } else {
        super::parallelism().min(4)
    };
    let share = groups.len().div_ceil(threads).max(1);
    let mut shown = vec![false; files.len()];
    let passed: Vec<Vec<usize>> = if threads == 1 {
        // No thread for one share: starting one costs more than checking a few files.
        vec![check(&files, &groups, boundary)]
    } else {
        checked_in_parallel(&files, &groups, share, boundary)
    };
    for index in passed.into_iter().flatten() {
        shown[index] = true;
    }
    let before = files.len();
    let kept: Vec<F> = files
        .into_iter()
        .zip(shown)
        .filter_map(|(file, shown)| shown.then_some(file))
        .collect();
    let dropped = before - kept.len();
    (kept, dropped)
}

/// [`check`] on one thread per `share` of `groups`.
fn checked_in_parallel<F: Walked + Sync>(
    files: &[F],
    groups: &[&[usize]],
    share: usize,
    boundary: &Path,
) -> Vec<Vec<usize>> {
    std::thread::scope(|scope| {
        // Collected first: every worker starts before the first is joined.
        let workers: Vec<_> = groups
            .chunks(share)
            .map(|part| scope.spawn(|| check(files, part, boundary)))
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().unwrap_or_default())
            .collect()
    })
}

/// The indices in `groups` (each the files of one directory) whose files pass the check.
fn check<F: Walked>(files: &[F], groups: &[&[usize]], boundary: &Path) -> Vec<usize> {
    let mut checked = Checked::new(boundary);
    let mut passed = Vec::new();
    for group in groups {
        let names = match group.first() {
            Some(first) if group.len() >= READ_NAMES => files[*first]
                .walked()
                .0
                .parent()
                .map(|dir| checked.names(dir)),
            _ => None,
        };
        for &index in *group {
            let (path, link) = files[index].walked();
            let pass = match (&names, path.file_name()) {
                (Some(names), Some(name)) if !link => {
                    names.as_ref().is_some_and(|names| names.contains(name))
                }
                _ => checked.holds(path, link),
            };
            if pass {
                passed.push(index);
            }
        }
    }
    passed
}
