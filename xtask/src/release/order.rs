//! The publishable crates and the order they must be published in, from `cargo metadata`.

use std::collections::{BTreeMap, BTreeSet};

use cargo_metadata::{DependencyKind, Metadata};

/// The workspace members that may be published (`publish = false` is an empty registry list).
pub(crate) fn publishable(metadata: &Metadata) -> BTreeSet<String> {
    metadata
        .workspace_packages()
        .into_iter()
        .filter(|p| {
            p.publish
                .as_ref()
                .is_none_or(|registries| !registries.is_empty())
        })
        .map(|p| p.name.to_string())
        .collect()
}

/// The publishable crates, each after every workspace crate it depends on (dev-dependencies
/// included: crates.io refuses a dev-dependency it does not know); ties go alphabetically, so
/// the order is stable.
pub(crate) fn publish_order(metadata: &Metadata) -> Result<Vec<String>, String> {
    let publishable = publishable(metadata);
    let members: BTreeSet<String> = metadata
        .workspace_packages()
        .into_iter()
        .map(|p| p.name.to_string())
        .collect();
    let mut needs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for package in metadata.workspace_packages() {
        let name = package.name.to_string();
        if !publishable.contains(&name) {
            continue;
        }
        let entry = needs.entry(name.clone()).or_default();
        for dep in &package.dependencies {
            if !members.contains(&dep.name) || dep.name == name {
                continue;
            }
            if !publishable.contains(&dep.name) {
                // A dev-dependency without a version is dropped from the package; any other
                // requirement on an unpublished crate cannot be met on crates.io.
                if dep.kind == DependencyKind::Development && dep.req.comparators.is_empty() {
                    continue;
                }
                return Err(format!(
                    "{name} depends on {}, which is not published (publish = false)",
                    dep.name
                ));
            }
            entry.insert(dep.name.clone());
        }
    }
    order(needs)
}

/// Kahn's algorithm over `crate -> crates it needs first`.
pub(crate) fn order(mut needs: BTreeMap<String, BTreeSet<String>>) -> Result<Vec<String>, String> {
    let mut done = Vec::new();
    while !needs.is_empty() {
        let ready = needs
            .iter()
            .find(|(_, first)| first.is_empty())
            .map(|(name, _)| name.clone());
        let Some(next) = ready else {
            let stuck: Vec<&str> = needs.keys().map(String::as_str).collect();
            return Err(format!(
                "the workspace crates {} depend on each other in a cycle",
                stuck.join(", ")
            ));
        };
        needs.remove(&next);
        for first in needs.values_mut() {
            first.remove(&next);
        }
        done.push(next);
    }
    Ok(done)
}
