//! What glob and grep share in their outputs: paths as the model and the host see them, what
//! was skipped, and the notes that end a model text.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;

use super::walk::{self, Skipped};

/// Where results are shown from: paths relative to the Location for the host, absolute for
/// the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Base {
    /// The canonical Location root.
    pub(crate) location: PathBuf,
    /// The directory symlinks may not leave (the Location root, or the searched directory when
    /// it lies outside the Location).
    pub(crate) boundary: PathBuf,
}

impl Base {
    /// `path` relative to the Location root with `/` separators, or absolute outside it.
    pub(crate) fn relative(&self, path: &Path) -> String {
        if path == self.location {
            return ".".to_owned();
        }
        walk::below(&self.location, path)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    /// A path from [`Base::relative`] made absolute again, for the model.
    pub(crate) fn absolute(&self, relative: &str) -> String {
        let mut out = String::new();
        self.push_absolute(&mut out, relative);
        out
    }

    /// Appends [`Base::absolute`] of `relative` to `out` without an intermediate allocation.
    pub(crate) fn push_absolute(&self, out: &mut String, relative: &str) {
        if relative.starts_with('/') {
            out.push_str(relative);
            return;
        }
        let location = self.location.to_string_lossy();
        out.push_str(&location);
        if relative != "." {
            if !location.ends_with('/') {
                out.push('/');
            }
            out.push_str(relative);
        }
    }
}

/// A symlink that was not followed because it leads outside the boundary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SkippedLink {
    /// The link, relative to the working directory (absolute outside it).
    pub link: String,
    /// Its real target (absolute).
    pub target: String,
}

/// What the walk passed over instead of searching.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkippedPaths {
    /// Symlinks not followed because their target lies outside the working directory (or
    /// outside the searched directory, when that is outside the working directory). Search a
    /// target by passing it as `path`.
    pub outside_links: Vec<SkippedLink>,
    /// Symlinks that lead back into a directory already searched (skipped, nothing lost).
    pub loops: usize,
    /// Paths that could not be listed or read.
    pub unreadable: usize,
}

impl SkippedPaths {
    pub(crate) fn new(skipped: &Skipped, base: &Base) -> Self {
        Self {
            outside_links: skipped
                .outside_links
                .iter()
                .map(|l| SkippedLink {
                    link: base.relative(&l.link),
                    target: l.target.to_string_lossy().into_owned(),
                })
                .collect(),
            loops: skipped.loops,
            unreadable: skipped.unreadable,
        }
    }
}

/// How many outside links a model text names before summarizing the rest.
const LINKS_NAMED: usize = 5;

/// The closing notes of a model text: links not followed, unreadable paths, a spent budget.
pub(crate) fn notes(
    out: &mut String,
    skipped: &SkippedPaths,
    base: &Base,
    incomplete: bool,
    budget: Duration,
) {
    let links = &skipped.outside_links;
    if !links.is_empty() {
        let boundary = base.boundary.to_string_lossy();
        let named: Vec<String> = links
            .iter()
            .take(LINKS_NAMED)
            .map(|l| format!("{} -> {}", base.absolute(&l.link), l.target))
            .collect();
        let more = links.len().saturating_sub(LINKS_NAMED);
        let _ = write!(
            out,
            "\n\n(Not followed: {} leading outside {boundary}: {}",
            plural(links.len(), "symlink", "symlinks"),
            named.join(", ")
        );
        if more > 0 {
            let _ = write!(out, ", and {more} more");
        }
        out.push_str(". To search a target, pass it as `path`.)");
    }
    if skipped.unreadable > 0 {
        let _ = write!(
            out,
            "\n\n({} could not be read and {} skipped.)",
            plural(skipped.unreadable, "path", "paths"),
            if skipped.unreadable == 1 {
                "was"
            } else {
                "were"
            }
        );
    }
    if incomplete {
        let _ = write!(
            out,
            "\n\n(Search incomplete: the {} time budget ran out before the whole tree was \
             searched, so these results are partial. Use a more specific path or pattern.)",
            seconds(budget)
        );
    }
}

/// `1 file`, `3 files`.
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

fn seconds(budget: Duration) -> String {
    let ms = budget.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", budget.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Base {
        Base {
            location: PathBuf::from("/loc"),
            boundary: PathBuf::from("/loc"),
        }
    }

    #[test]
    fn relative_and_back() {
        let b = base();
        assert_eq!(b.relative(Path::new("/loc/src/a.rs")), "src/a.rs");
        assert_eq!(b.relative(Path::new("/loc")), ".");
        assert_eq!(b.relative(Path::new("/other/a.rs")), "/other/a.rs");
        assert_eq!(b.absolute("src/a.rs"), "/loc/src/a.rs");
        assert_eq!(b.absolute("."), "/loc");
        assert_eq!(b.absolute("/other/a.rs"), "/other/a.rs");
    }

    #[test]
    fn notes_name_links_and_budget() {
        let skipped = SkippedPaths {
            outside_links: (0..7)
                .map(|i| SkippedLink {
                    link: format!("l{i}"),
                    target: format!("/t{i}"),
                })
                .collect(),
            loops: 1,
            unreadable: 2,
        };
        let mut out = String::from("No files found");
        notes(
            &mut out,
            &skipped,
            &base(),
            true,
            Duration::from_millis(1500),
        );
        insta::assert_snapshot!(out, @r"
        No files found

        (Not followed: 7 symlinks leading outside /loc: /loc/l0 -> /t0, /loc/l1 -> /t1, /loc/l2 -> /t2, /loc/l3 -> /t3, /loc/l4 -> /t4, and 2 more. To search a target, pass it as `path`.)

        (2 paths could not be read and were skipped.)

        (Search incomplete: the 1.5 s time budget ran out before the whole tree was searched, so these results are partial. Use a more specific path or pattern.)
        ");
    }
}
