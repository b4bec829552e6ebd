//! The walk from a crate root through its public modules and `pub use`: every public item at
//! every path users can write, and the shortest of those paths for each item.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::Value;

use super::attrs::{cfgs, prefix};
use super::types::{key, list, tag, text};

/// One item at one public path.
#[derive(Debug)]
pub(super) struct Found {
    pub(super) path: String,
    pub(super) id: String,
    /// Attributes shown on the line, such as the cfg gates of the exporting `use`.
    pub(super) attrs: Vec<String>,
}

/// A crate's public items, found by walking its rustdoc JSON from the root.
#[derive(Debug)]
pub(crate) struct Surface<'a> {
    pub(super) krate: &'a Value,
    pub(super) walk: Walk<'a>,
    /// Item id -> its public path, the shortest of the paths it is reachable at.
    pub(super) public: HashMap<String, String>,
}

/// Walks the public surface of a crate from its rustdoc JSON.
pub(crate) fn surface(krate: &Value) -> Result<Surface<'_>, String> {
    let index = &krate["index"];
    let root = key(&krate["root"]).ok_or("rustdoc JSON without a root")?;
    let crate_name = text(&index[root.as_str()], "name");
    if crate_name.is_empty() {
        return Err("rustdoc JSON: the root item is missing".to_owned());
    }
    let mut walk = Walk {
        index,
        found: Vec::new(),
        lines: Vec::new(),
        seen_modules: HashSet::new(),
        modules: Vec::new(),
        queue: VecDeque::new(),
    };
    walk.item(&root, crate_name, Vec::new());
    while let Some((module, path, attrs)) = walk.queue.pop_front() {
        walk.module(&module, &path, &attrs);
    }
    let mut public: HashMap<String, String> = walk.modules.iter().cloned().collect();
    for found in &walk.found {
        let shorter = public.get(&found.id).is_none_or(|known| {
            (found.path.matches("::").count(), &found.path) < (known.matches("::").count(), known)
        });
        if shorter {
            public.insert(found.id.clone(), found.path.clone());
        }
    }
    Ok(Surface {
        krate,
        walk,
        public,
    })
}

/// The traversal from the crate root through public modules and `pub use`.
#[derive(Debug)]
pub(super) struct Walk<'a> {
    index: &'a Value,
    pub(super) found: Vec<Found>,
    /// Entries that need no item: modules and re-exports of other crates' items.
    pub(super) lines: Vec<(String, Vec<String>)>,
    seen_modules: HashSet<String>,
    /// Module id -> the path it was first reached at (the shortest: the walk is breadth first).
    modules: Vec<(String, String)>,
    queue: VecDeque<(String, String, Vec<String>)>,
}

impl Walk<'_> {
    fn module(&mut self, id: &str, path: &str, attrs: &[String]) {
        let item = &self.index[id];
        let line = format!("{}pub mod {path}", prefix(item, attrs));
        self.lines.push((path.to_owned(), vec![line]));
        let mut inherited = attrs.to_vec();
        for cfg in cfgs(item) {
            if !inherited.contains(&cfg) {
                inherited.push(cfg);
            }
        }
        for child in list(&item["inner"]["module"], "items") {
            self.child(child, path, &inherited);
        }
    }

    fn child(&mut self, child: &Value, path: &str, attrs: &[String]) {
        let Some(child_key) = key(child) else { return };
        let item = &self.index[child_key.as_str()];
        if item["visibility"] != "public" {
            return;
        }
        let (kind, inner) = tag(&item["inner"]);
        match kind {
            "use" => self.reexport(item, inner, path, attrs),
            _ => {
                let name = text(item, "name");
                self.item(&child_key, &format!("{path}::{name}"), attrs.to_vec());
            }
        }
    }

    fn reexport(&mut self, item: &Value, reexport: &Value, path: &str, attrs: &[String]) {
        let mut attrs = attrs.to_vec();
        attrs.extend(cfgs(item));
        let name = text(reexport, "name");
        let target = key(&reexport["id"]).filter(|k| !self.index[k.as_str()].is_null());
        let glob = reexport["is_glob"] == true;
        match target {
            Some(target) if glob => {
                let (kind, inner) = tag(&self.index[target.as_str()]["inner"]);
                let members = match kind {
                    "module" => list(inner, "items"),
                    "enum" => list(inner, "variants"),
                    _ => &[],
                };
                if self.seen_modules.insert(format!("glob {target} {path}")) {
                    for member in members {
                        self.child(member, path, &attrs);
                    }
                }
            }
            Some(target) => self.item(&target, &format!("{path}::{name}"), attrs),
            None => {
                let source = text(reexport, "source");
                let (at, source) = if glob {
                    (format!("{path}::*"), format!("{source}::*"))
                } else {
                    (format!("{path}::{name}"), source.to_owned())
                };
                let line = format!("{}pub use {at} = {source}", prefix(item, &attrs));
                self.lines.push((at, vec![line]));
            }
        }
    }

    fn item(&mut self, id: &str, path: &str, attrs: Vec<String>) {
        let is_module = tag(&self.index[id]["inner"]).0 == "module";
        if is_module && self.seen_modules.insert(id.to_owned()) {
            self.modules.push((id.to_owned(), path.to_owned()));
            self.queue
                .push_back((id.to_owned(), path.to_owned(), attrs));
            return;
        }
        self.found.push(Found {
            path: path.to_owned(),
            id: id.to_owned(),
            attrs,
        });
    }
}
