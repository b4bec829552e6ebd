//! Directory listings: entries that resolve inside the allowed scope, directories first.

use std::cmp::Ordering;
use std::fs;
use std::io;
use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;

use crate::beneath::Directory;
use crate::location::contains;

/// One listed entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Entry {
    /// The entry's name; a directory's ends with `/`.
    pub name: String,
    /// True for a directory.
    pub directory: bool,
}

/// A page of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listing {
    pub(crate) entries: Vec<Entry>,
    pub(crate) offset: u64,
    pub(crate) total: u64,
    pub(crate) next: Option<u64>,
}

/// Lists `directory` from the 1-based entry `offset`, at most `limit` entries of `max_bytes`
/// (each name with its newline; the first entry is always listed). Entries whose
/// real target lies outside `scope` (a symlink leading out) or that are neither a file nor a
/// directory (or a dangling link) are left out (reference RD4).
pub(crate) fn list(
    directory: &Path,
    scope: &Path,
    offset: u64,
    limit: usize,
    max_bytes: usize,
) -> io::Result<Listing> {
    let mut entries = Vec::new();
    // The names come from the directory opened at exactly the resolved path, so a directory
    // swapped for a link meanwhile cannot list another directory's names.
    let opened = Directory::open(directory)?;
    for file_name in opened.names()? {
        let Ok(real) = fs::canonicalize(directory.join(&file_name)) else {
            continue;
        };
        if !contains(scope, &real) {
            continue;
        }
        let Ok(meta) = fs::metadata(&real) else {
            continue;
        };
        if !meta.is_dir() && !meta.is_file() {
            continue;
        }
        let mut name = file_name.to_string_lossy().into_owned();
        if meta.is_dir() {
            name.push('/');
        }
        entries.push(Entry {
            name,
            directory: meta.is_dir(),
        });
    }
    entries.sort_by(order);
    let total = entries.len() as u64;
    let offset = offset.max(1);
    let skip = usize::try_from(offset - 1).unwrap_or(usize::MAX);
    let mut page: Vec<Entry> = Vec::new();
    let mut used = 0usize;
    for entry in entries.into_iter().skip(skip).take(limit) {
        used += entry.name.len() + 1;
        if used > max_bytes && !page.is_empty() {
            break;
        }
        page.push(entry);
    }
    let end = offset - 1 + page.len() as u64;
    let next = (end < total).then_some(end + 1);
    Ok(Listing {
        entries: page,
        offset,
        total,
        next,
    })
}

/// Directories first, then by name ignoring case, then exactly.
fn order(a: &Entry, b: &Entry) -> Ordering {
    b.directory
        .cmp(&a.directory)
        .then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
        .then_with(|| a.name.cmp(&b.name))
}
