//! apply_patch's parser and applier, on real files in a scratch Location.
//!
//! Input: `=== <path>` sections with each file's bytes, then `=== patch` with the patch text
//! (or the whole input as the patch). Paths are kept inside the Location: a file section or a
//! patch header naming an absolute path, `~` or `..` makes the input uninteresting (the
//! Location's boundary has its own tests), and the permission denies every outside directory
//! besides.
//!
//! Properties:
//! - a failure changes no file (all or nothing);
//! - a success changes only files the patch names, and leaves no temporary file;
//! - applying the same patch again is again all or nothing;
//! - nothing outside the Location changes.
#![no_main]

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use tackle_fuzz::harness::{self, Place, inside_only};
use tackle_fuzz::sections;
use tackle_permission::Reply;
use tackle_tool_core::Budget;

fn place() -> &'static Place {
    static PLACE: OnceLock<Place> = OnceLock::new();
    PLACE.get_or_init(|| Place::new("tackle-fuzz-patch-", inside_only(&[]), Reply::Once))
}

const HEADERS: &[&str] = &[
    "*** Add File:",
    "*** Delete File:",
    "*** Update File:",
    "*** Move to:",
];

fuzz_target!(|data: &[u8]| {
    let Some(sections) = sections::split(data) else {
        return;
    };
    let patch = match sections::get(&sections, "patch") {
        Some(section) => section.body,
        None if sections.len() == 1 => sections[0].body,
        None => return,
    };
    let Ok(patch) = std::str::from_utf8(patch) else {
        return;
    };
    let Some(named) = named_paths(patch) else {
        return;
    };
    let files: Vec<(&str, &[u8])> = sections
        .iter()
        .filter(|s| !s.header.is_empty() && s.name() != "patch")
        .map(|s| (s.header, s.body))
        .collect();
    if files.len() > 8 || files.iter().any(|(path, _)| !safe(path)) {
        return;
    }
    let place = place();
    place.clear();
    for (path, bytes) in &files {
        // Sections that cannot all be files (`a` and `a/b`, `a/`): not an input.
        if place.root.join(path).is_dir() || place.try_put(path, bytes).is_err() {
            return;
        }
    }
    let tool = place.tool("apply_patch");
    for attempt in ["first", "again"] {
        let before = place.snapshot();
        let result = harness::call(&tool, json!({ "patchText": patch }), Budget::DEFAULT);
        harness::expect_failure_or_ok(&result, "apply_patch");
        let after = place.snapshot();
        if let Err(err) = &result {
            assert!(
                before == after,
                "{attempt}: a failed patch changed files: {:?}\nerror: {err}",
                changed(&before, &after)
            );
            return;
        }
        for path in changed(&before, &after) {
            assert!(
                path.starts_with("loc"),
                "{attempt}: a file outside the Location changed: {path:?}"
            );
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            assert!(
                !name.is_some_and(|n| n.starts_with(".tackle-") && n.ends_with(".tmp")),
                "{attempt}: a temporary file was left: {path:?}"
            );
            let inside: PathBuf = path.components().skip(1).collect();
            assert!(
                named.contains(&inside),
                "{attempt}: a file the patch does not name changed: {inside:?}"
            );
        }
    }
});

/// The normalised paths the patch's headers name, or `None` when one could leave the Location.
fn named_paths(patch: &str) -> Option<BTreeSet<PathBuf>> {
    let mut named = BTreeSet::new();
    for line in patch.split('\n') {
        let line = line.trim();
        if !line.starts_with("***") {
            continue;
        }
        // Any header-like line: the parser is lenient about spacing, so check them all.
        let Some((_, path)) = line.split_once(':') else {
            continue;
        };
        let path = path.trim();
        if !safe(path) {
            return None;
        }
        if HEADERS.iter().any(|h| line.starts_with(h)) {
            named.insert(normal(path));
        }
    }
    Some(named)
}

/// A relative path of plain components.
fn safe(path: &str) -> bool {
    !path.contains('\\')
        && !path.contains('\0')
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

fn normal(path: &str) -> PathBuf {
    Path::new(path)
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect()
}

fn changed(
    before: &std::collections::BTreeMap<PathBuf, Vec<u8>>,
    after: &std::collections::BTreeMap<PathBuf, Vec<u8>>,
) -> Vec<PathBuf> {
    let keys: BTreeSet<&PathBuf> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter(|k| before.get(*k) != after.get(*k))
        .cloned()
        .collect()
}
