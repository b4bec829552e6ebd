//! Import cycles: inside each workspace crate, no two modules reach each other through `crate::`,
//! `super::` and `self::` paths, and no leaf of the crates in [`UPWARD_CRATES`] imports what the
//! crate root file itself defines.
//!
//! - Every `.rs` file under `crates/*/src` is a module: `lib.rs` and `main.rs` are the root,
//!   `a.rs` and `a/mod.rs` are `a`, `a/b.rs` is `a::b`. Test files (`tests.rs`, `*_tests.rs`)
//!   and items under `#[cfg(test)]` or `#[test]` are left out: tests may reach anything.
//! - A reference is a path that starts with `crate`, `super` or `self`, in a `use` (nested groups
//!   included) or inline in code; comments and string and char literals never count. It names
//!   the longest module prefix of its path, after following the `use` imports of the modules on
//!   the way, so `crate::Error` re-exported by `lib.rs` from `error` names `error`.
//! - A reference between two modules neither of which contains the other is an edge between
//!   their ancestors that are siblings (children of their lowest common ancestor); references to
//!   a module's own ancestors and descendants are not edges. Every cycle among siblings is a
//!   problem, shown with one reference for each of its edges.
//! - A module naming an item that the crate root file defines itself (not one it imports from a
//!   submodule) imports upward from the crate root; the services the leaves share belong in a
//!   module at the bottom of the crate instead.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Today's cycles, which `cargo xtask tidy` still tolerates: `<crate>: a -> b -> a`.
///
/// Temporary: this list must shrink to empty. A cycle not listed fails, and so does a listed one
/// that no longer occurs, so remove its line when you break it.
const KNOWN_CYCLES: &[&str] = &[];

/// Today's upward imports from the crate root, tolerated like [`KNOWN_CYCLES`] and just as
/// temporary: `<crate>: <module> imports <item> upward from the crate root`.
const KNOWN_UPWARD: &[&str] = &[];

/// The crates (directories under `crates/`) whose modules may not import from the root file.
const UPWARD_CRATES: &[&str] = &["builtins"];

/// How many cycles of one sibling graph are listed; more say the same thing.
const MAX_CYCLES: usize = 64;

/// Every cycle and upward import in the crates under `root` that the allow-lists do not name,
/// and every allow-listed one that no longer occurs.
pub(crate) fn check(root: &Path) -> Vec<String> {
    check_with(root, KNOWN_CYCLES, KNOWN_UPWARD)
}

fn check_with(root: &Path, known_cycles: &[&str], known_upward: &[&str]) -> Vec<String> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|dir| dir.join("src").is_dir())
        .collect();
    dirs.sort();
    let mut cycles = BTreeMap::new();
    let mut upward = BTreeMap::new();
    for dir in dirs {
        let name = dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let krate = Crate::read(root, &dir.join("src"));
        for (key, detail) in krate.cycles() {
            cycles.insert(format!("{name}: {key}"), detail);
        }
        if UPWARD_CRATES.contains(&name.as_str()) {
            for (key, detail) in krate.upward() {
                upward.insert(format!("{name}: {key}"), detail);
            }
        }
    }
    let mut problems = Vec::new();
    compare(&mut problems, "KNOWN_CYCLES", &cycles, known_cycles);
    compare(&mut problems, "KNOWN_UPWARD", &upward, known_upward);
    problems
}

/// The findings `found` (key -> where) that `known` does not list, and the stale entries of it.
fn compare(
    problems: &mut Vec<String>,
    list: &str,
    found: &BTreeMap<String, String>,
    known: &[&str],
) {
    for (key, detail) in found {
        if !known.contains(&key.as_str()) {
            problems.push(format!("cycles: {key} ({detail})"));
        }
    }
    for key in known {
        if !found.contains_key(*key) {
            problems.push(format!(
                "cycles: `{key}` is listed in {list} but no longer occurs; remove it"
            ));
        }
    }
}

/// A module path below the crate root; the root is empty.
type ModulePath = Vec<String>;

/// One crate's modules, each with what its file refers to.
#[derive(Debug, Default)]
struct Crate {
    modules: BTreeMap<ModulePath, Source>,
}

/// What one module's file says: paths it refers to, names it imports and items it defines.
#[derive(Debug, Default)]
struct Source {
    /// The file, relative to the workspace root.
    shown: String,
    /// Absolute paths (without `crate`) of the references, with their lines.
    references: Vec<(Vec<String>, usize)>,
    /// Names its top-level `use` declarations bring in, with the absolute paths they stand for.
    imports: BTreeMap<String, Vec<String>>,
    /// Names of the items it defines at top level.
    defines: BTreeSet<String>,
}

impl Crate {
    fn read(root: &Path, src: &Path) -> Self {
        let mut files = Vec::new();
        super::rust_files(src, &mut files);
        let mut paths = BTreeMap::new();
        for file in files {
            if let Some(module) = module_path(src, &file) {
                paths.insert(module, file);
            }
        }
        let known: BTreeSet<ModulePath> = paths.keys().cloned().collect();
        let mut krate = Crate::default();
        for (module, file) in paths {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let mut source = parse(&without_tests(&tokens(&text)), &module, &known);
            source.shown = file
                .strip_prefix(root)
                .unwrap_or(&file)
                .display()
                .to_string();
            krate.modules.insert(module, source);
        }
        krate
    }

    /// The module `path` names and the item after it, if any, following `use` imports.
    fn resolve(&self, path: &[String]) -> (ModulePath, Option<String>) {
        let mut path = path.to_vec();
        let mut hops = 0;
        'restart: loop {
            let mut module = ModulePath::new();
            for (at, segment) in path.iter().enumerate() {
                let mut child = module.clone();
                child.push(segment.clone());
                if self.modules.contains_key(&child) {
                    module = child;
                    continue;
                }
                let import = self
                    .modules
                    .get(&module)
                    .and_then(|source| source.imports.get(segment));
                if let Some(target) = import
                    && hops < 8
                {
                    hops += 1;
                    path = target.iter().chain(&path[at + 1..]).cloned().collect();
                    continue 'restart;
                }
                return (module, Some(segment.clone()));
            }
            return (module, None);
        }
    }

    /// Per parent module, the edges between its children: (from, to) -> one reference's place.
    fn sibling_edges(&self) -> BTreeMap<ModulePath, BTreeMap<(String, String), String>> {
        let mut graphs: BTreeMap<ModulePath, BTreeMap<(String, String), String>> = BTreeMap::new();
        for (from, source) in &self.modules {
            for (path, line) in &source.references {
                let (to, _) = self.resolve(path);
                let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
                if common == from.len() || common == to.len() {
                    continue; // an ancestor or a descendant
                }
                graphs
                    .entry(from[..common].to_vec())
                    .or_default()
                    .entry((from[common].clone(), to[common].clone()))
                    .or_insert_with(|| format!("{}:{line}", source.shown));
            }
        }
        graphs
    }

    /// Every elementary cycle among siblings: `a -> b -> a` -> the place of each edge.
    fn cycles(&self) -> BTreeMap<String, String> {
        let mut found = BTreeMap::new();
        for (parent, edges) in self.sibling_edges() {
            let name = |child: &str| {
                let mut path = parent.clone();
                path.push(child.to_owned());
                path.join("::")
            };
            for cycle in cycles_in(&edges) {
                let mut steps = Vec::new();
                let mut places = Vec::new();
                for (at, from) in cycle.iter().enumerate() {
                    let to = &cycle[(at + 1) % cycle.len()];
                    steps.push(name(from));
                    let place = &edges[&(from.clone(), to.clone())];
                    places.push(format!("{} -> {} at {place}", name(from), name(to)));
                }
                steps.push(name(&cycle[0]));
                found.insert(steps.join(" -> "), places.join("; "));
            }
        }
        found
    }

    /// Every item of the root file that a module names: `<module> imports <item> upward ...`.
    fn upward(&self) -> BTreeMap<String, String> {
        let mut found = BTreeMap::new();
        let Some(root) = self.modules.get(&ModulePath::new()) else {
            return found;
        };
        for (from, source) in &self.modules {
            if from.is_empty() {
                continue;
            }
            for (path, line) in &source.references {
                if let (to, Some(item)) = self.resolve(path)
                    && to.is_empty()
                    && root.defines.contains(&item)
                {
                    found
                        .entry(format!(
                            "{} imports {item} upward from the crate root",
                            from.join("::")
                        ))
                        .or_insert_with(|| format!("{}:{line}", source.shown));
                }
            }
        }
        found
    }
}

/// The elementary cycles of a directed graph, each starting at its least node; at most
/// [`MAX_CYCLES`].
fn cycles_in<V>(edges: &BTreeMap<(String, String), V>) -> Vec<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    let reach = |start: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start];
        while let Some(node) = stack.pop() {
            for &to in next.get(node).into_iter().flatten() {
                if seen.insert(to) {
                    stack.push(to);
                }
            }
        }
        seen
    };
    let mut found = Vec::new();
    for &start in next.keys() {
        // Only the nodes that share a strongly connected component with `start` and come after
        // it can lie on a cycle whose least node is `start`.
        let component: BTreeSet<&str> = reach(start)
            .into_iter()
            .filter(|&node| node > start && reach(node).contains(start))
            .collect();
        let mut path = vec![start];
        walk(&next, &component, &mut path, &mut found);
    }
    found
}

fn walk<'a>(
    next: &BTreeMap<&'a str, Vec<&'a str>>,
    component: &BTreeSet<&'a str>,
    path: &mut Vec<&'a str>,
    found: &mut Vec<Vec<String>>,
) {
    let last = path[path.len() - 1];
    for &to in next.get(last).into_iter().flatten() {
        if found.len() >= MAX_CYCLES {
            return;
        }
        if to == path[0] {
            found.push(path.iter().map(|&node| node.to_owned()).collect());
        } else if component.contains(to) && !path.contains(&to) {
            path.push(to);
            walk(next, component, path, found);
            path.pop();
        }
    }
}

/// The module `file` holds in the crate whose sources are in `src`; `None` for test files.
fn module_path(src: &Path, file: &Path) -> Option<ModulePath> {
    let relative = file.strip_prefix(src).ok()?.with_extension("");
    let mut path: ModulePath = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = path.last()?;
    if last == "tests" || last.ends_with("_tests") {
        return None;
    }
    if last == "mod" || (path.len() == 1 && (last == "lib" || last == "main")) {
        path.pop();
    }
    Some(path)
}

/// One token of Rust source: an identifier (or number), `::`, or a single punctuation char.
#[derive(Clone, Debug, PartialEq)]
struct Token {
    text: String,
    line: usize,
}

/// The tokens of `source`, without comments and string, char and byte literals.
fn tokens(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                match (chars[i], at(i + 1)) {
                    ('/', '*') => (depth, i) = (depth + 1, i + 2),
                    ('*', '/') => (depth, i) = (depth - 1, i + 2),
                    ('\n', _) => (line, i) = (line + 1, i + 1),
                    _ => i += 1,
                }
                if depth == 0 {
                    break;
                }
            }
        } else if c == '"' {
            i = skip_string(&chars, i + 1, None, &mut line);
        } else if c == '\'' {
            // A char literal, or the quote of a lifetime or label (left out too).
            if at(i + 1) == '\\' {
                i += 3;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let hashes = chars[i..].iter().take_while(|&&c| c == '#').count();
            if matches!(word.as_str(), "b" | "c") && at(i) == '"' {
                i = skip_string(&chars, i + 1, None, &mut line);
            } else if matches!(word.as_str(), "r" | "br" | "cr") && at(i + hashes) == '"' {
                i = skip_string(&chars, i + hashes + 1, Some(hashes), &mut line);
            } else {
                out.push(Token { text: word, line });
            }
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Token {
                text: "::".to_owned(),
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                text: c.to_string(),
                line,
            });
            i += 1;
        }
    }
    out
}

/// The index after the string literal whose body starts at `i`; `raw` is the number of `#` of a
/// raw string (escapes do not count in it).
fn skip_string(chars: &[char], mut i: usize, raw: Option<usize>, line: &mut usize) -> usize {
    let hashes = raw.unwrap_or(0);
    while i < chars.len() {
        match chars[i] {
            '\\' if raw.is_none() => {
                if chars.get(i + 1) == Some(&'\n') {
                    *line += 1;
                }
                i += 2;
            }
            '"' if chars.len() > i + hashes
                && chars[i + 1..=i + hashes].iter().all(|&c| c == '#') =>
            {
                return i + 1 + hashes;
            }
            c => {
                if c == '\n' {
                    *line += 1;
                }
                i += 1;
            }
        }
    }
    i
}

/// `tokens` without the items under `#[cfg(test)]` or `#[test]`; an inner `#![cfg(test)]`
/// leaves nothing.
fn without_tests(tokens: &[Token]) -> Vec<Token> {
    let text = |i: usize| tokens.get(i).map_or("", |t| t.text.as_str());
    let is = |i: usize, words: &[&str]| words.iter().enumerate().all(|(k, w)| text(i + k) == *w);
    let mut kept = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if is(i, &["#", "!", "[", "cfg", "(", "test", ")", "]"]) {
            return Vec::new();
        }
        let attribute = if is(i, &["#", "[", "cfg", "(", "test", ")", "]"]) {
            7
        } else if is(i, &["#", "[", "test", "]"]) {
            4
        } else {
            0
        };
        if attribute == 0 {
            kept.push(tokens[i].clone());
            i += 1;
            continue;
        }
        // Skip the item: up to a `;` outside brackets, or through its `{ ... }` body.
        i += attribute;
        let mut depth = 0usize;
        while i < tokens.len() {
            let t = text(i);
            i += 1;
            match t {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" => depth = depth.saturating_sub(1),
                "}" => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                ";" if depth == 0 => break,
                _ => {}
            }
        }
    }
    kept
}

/// A path a `use` tree (or an inline path) ends in, the name it binds and its line.
#[derive(Debug)]
struct Leaf {
    path: Vec<String>,
    binds: Option<String>,
    line: usize,
}

/// Reads the use tree (or inline path) at `i` below `prefix` into `leaves`; the index after it.
fn use_tree(tokens: &[Token], mut i: usize, prefix: &[String], leaves: &mut Vec<Leaf>) -> usize {
    let text = |i: usize| tokens.get(i).map_or("", |t| t.text.as_str());
    let line = |i: usize| tokens.get(i).map_or(0, |t| t.line);
    let mut path = prefix.to_vec();
    if text(i) == "::" {
        i += 1;
    }
    loop {
        match text(i) {
            "{" => {
                i += 1;
                loop {
                    if text(i) == "}" || text(i).is_empty() {
                        return i + 1;
                    }
                    let before = i;
                    i = use_tree(tokens, i, &path, leaves);
                    match text(i) {
                        "," => i += 1,
                        "}" => return i + 1,
                        _ if i == before => return i,
                        _ => {}
                    }
                }
            }
            "*" => {
                leaves.push(Leaf {
                    path,
                    binds: None,
                    line: line(i),
                });
                return i + 1;
            }
            word if is_ident(word) => {
                let mut binds = Some(word.to_owned());
                if word == "self" && !path.is_empty() {
                    binds = path.last().cloned();
                } else {
                    path.push(word.to_owned());
                }
                let end = line(i);
                i += 1;
                if text(i) == "::" && text(i + 1) != "<" {
                    i += 1;
                    continue;
                }
                if text(i) == "as" {
                    binds = Some(text(i + 1).to_owned()).filter(|name| name != "_");
                    i += 2;
                }
                leaves.push(Leaf {
                    path,
                    binds,
                    line: end,
                });
                return i;
            }
            _ => {
                if !path.is_empty() && path.len() > prefix.len() {
                    leaves.push(Leaf {
                        path,
                        binds: None,
                        line: line(i),
                    });
                }
                return i;
            }
        }
    }
}

fn is_ident(text: &str) -> bool {
    text.starts_with(|c: char| c.is_alphabetic() || c == '_')
}

/// What the file of `module` refers to, imports and defines; `known` are the crate's modules.
fn parse(tokens: &[Token], module: &[String], known: &BTreeSet<ModulePath>) -> Source {
    let text = |i: usize| tokens.get(i).map_or("", |t| t.text.as_str());
    let mut source = Source::default();
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let word = text(i);
        let starts_path = matches!(word, "crate" | "super" | "self")
            && text(i + 1) == "::"
            && (i == 0 || text(i - 1) != "::");
        if word == "use" || starts_path {
            let mut leaves = Vec::new();
            let from = if word == "use" { i + 1 } else { i };
            i = use_tree(tokens, from, &[], &mut leaves).max(i + 1);
            for leaf in leaves {
                let Some(absolute) = absolute(&leaf.path, module, known) else {
                    continue;
                };
                if word == "use"
                    && depth == 0
                    && let Some(name) = leaf.binds
                {
                    source.imports.insert(name, absolute.clone());
                }
                if matches!(leaf.path[0].as_str(), "crate" | "super" | "self") {
                    source.references.push((absolute, leaf.line));
                }
            }
            continue;
        }
        match word {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            "struct" | "enum" | "union" | "trait" | "type" | "fn" | "const" | "static"
                if depth == 0 && is_ident(text(i + 1)) =>
            {
                source.defines.insert(text(i + 1).to_owned());
            }
            "macro_rules" if text(i + 1) == "!" => {
                source.defines.insert(text(i + 2).to_owned());
            }
            _ => {}
        }
        i += 1;
    }
    source
}

/// `path` as written in `module`, from the crate root (without `crate`); `None` when it leaves
/// the crate (another crate, or a name that is not a module of this one).
fn absolute(
    path: &[String],
    module: &[String],
    known: &BTreeSet<ModulePath>,
) -> Option<Vec<String>> {
    let first = path.first()?;
    match first.as_str() {
        "crate" => Some(path[1..].to_vec()),
        "self" => Some(module.iter().chain(&path[1..]).cloned().collect()),
        "super" => {
            let mut base = module.to_vec();
            let supers = path.iter().take_while(|s| *s == "super").count();
            for _ in 0..supers {
                base.pop()?;
            }
            Some(
                base.into_iter()
                    .chain(path[supers..].iter().cloned())
                    .collect(),
            )
        }
        _ => {
            let mut child = module.to_vec();
            child.push(first.clone());
            known
                .contains(&child)
                .then(|| module.iter().chain(path).cloned().collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workspace with one crate `name` whose `src` holds `files` (path, text).
    fn workspace(name: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let file = dir.path().join("crates").join(name).join("src").join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        dir
    }

    fn problems(name: &str, files: &[(&str, &str)]) -> Vec<String> {
        check_with(workspace(name, files).path(), &[], &[])
    }

    #[test]
    fn a_cycle_between_siblings_fails() {
        let found = problems(
            "x",
            &[
                ("lib.rs", "mod a;\nmod b;\n"),
                ("a.rs", "use crate::b::B;\npub struct A;\n"),
                (
                    "b.rs",
                    "pub struct B;\n\nfn f() -> crate::a::A {\n    A\n}\n",
                ),
            ],
        );
        assert_eq!(
            found,
            vec![
                "cycles: x: a -> b -> a (a -> b at crates/x/src/a.rs:1; \
                 b -> a at crates/x/src/b.rs:3)"
            ]
        );
    }

    #[test]
    fn deep_references_become_edges_between_siblings() {
        let found = problems(
            "x",
            &[
                ("lib.rs", "mod a;\nmod b;\n"),
                ("a/mod.rs", "mod inner;\n"),
                ("a/inner.rs", "use crate::{b::{self, deep::D}, c};\n"),
                ("b/mod.rs", "pub mod deep;\n"),
                (
                    "b/deep.rs",
                    "pub struct D;\nfn f() { super::super::a::inner::g(); }\n",
                ),
            ],
        );
        assert_eq!(
            found,
            vec![
                "cycles: x: a -> b -> a (a -> b at crates/x/src/a/inner.rs:1; \
                 b -> a at crates/x/src/b/deep.rs:2)"
            ]
        );
    }

    #[test]
    fn cycles_below_the_root_name_their_parent() {
        let found = problems(
            "x",
            &[
                ("lib.rs", "mod p;\n"),
                ("p/mod.rs", "mod a;\nmod b;\n"),
                ("p/a.rs", "use super::b::B;\n"),
                ("p/b.rs", "use crate::p::a::A;\n"),
            ],
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("cycles: x: p::a -> p::b -> p::a ("),
            "{found:?}"
        );
    }

    #[test]
    fn a_dag_passes() {
        let found = problems(
            "x",
            &[
                ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
                ("a.rs", "use crate::{b::B, c::C};\n"),
                ("b.rs", "use crate::c::C;\npub struct B;\n"),
                ("c.rs", "pub struct C;\n"),
            ],
        );
        assert_eq!(found, Vec::<String>::new());
    }

    #[test]
    fn parents_and_children_may_refer_to_each_other() {
        let found = problems(
            "x",
            &[
                (
                    "lib.rs",
                    "mod a;\npub use a::A;\nfn f() { a::inner::g(); }\n",
                ),
                (
                    "a/mod.rs",
                    "mod inner;\npub struct A;\nuse self::inner::g;\nfn f() { crate::a::inner::g() }\n",
                ),
                (
                    "a/inner.rs",
                    "use super::A;\nuse crate::A as B;\npub fn g() {}\n",
                ),
            ],
        );
        assert_eq!(found, Vec::<String>::new());
    }

    #[test]
    fn comments_strings_and_tests_do_not_count() {
        let b = [
            "// crate::a::A",
            "/* crate::a::A /* nested */ crate::a::A */",
            "const S: &str = \"crate::a::A \\\" crate::a::A\";",
            "const R: &str = r#\"crate::a::A \" crate::a::A\"#;",
            "const Q: char = '\"'; fn f<'a>(x: &'a str) -> &'a str { x }",
            "const E: char = '\\''; const U: &[u8] = b\"crate::a\";",
            "#[cfg(test)]",
            "mod tests {",
            "    use crate::a::A;",
            "}",
            "#[cfg(test)]",
            "fn helper() -> crate::a::A { crate::a::A }",
            "pub struct B;",
        ]
        .join("\n");
        let found = problems(
            "x",
            &[
                ("lib.rs", "mod a;\nmod b;\n"),
                ("a.rs", "use crate::b::B;\npub struct A;\n"),
                ("b.rs", &b),
                ("b/tests.rs", "use crate::a::A;\n"),
                ("b_tests.rs", "use crate::a::A;\n"),
            ],
        );
        assert_eq!(found, Vec::<String>::new());
    }

    #[test]
    fn re_exports_lead_to_the_module_that_defines_the_item() {
        let found = problems(
            "x",
            &[
                ("lib.rs", "mod a;\nmod b;\npub use b::B;\n"),
                ("a.rs", "pub struct A;\nfn f() -> crate::B { B }\n"),
                ("b.rs", "pub struct B;\nuse crate::a::A;\n"),
            ],
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("cycles: x: a -> b -> a ("),
            "{found:?}"
        );
    }

    #[test]
    fn leaves_of_listed_crates_may_not_import_from_the_root_file() {
        let files = [
            (
                "lib.rs",
                "pub mod error;\nmod leaf;\npub use error::Error;\npub struct Services;\n",
            ),
            ("error.rs", "pub struct Error;\n"),
            (
                "leaf.rs",
                "use crate::{Error, Services};\nuse super::Services as S;\n",
            ),
        ];
        let upward = "cycles: builtins: leaf imports Services upward from the crate root \
                      (crates/builtins/src/leaf.rs:1)";
        assert_eq!(problems("builtins", &files), vec![upward]);
        assert_eq!(problems("other", &files), Vec::<String>::new());
    }

    #[test]
    fn the_allow_lists_tolerate_listed_findings_and_must_not_go_stale() {
        let dir = workspace(
            "builtins",
            &[
                ("lib.rs", "mod a;\nmod b;\npub struct Services;\n"),
                ("a.rs", "use crate::b::B;\npub struct A;\n"),
                ("b.rs", "use crate::{a::A, Services};\n"),
            ],
        );
        let cycle = "builtins: a -> b -> a";
        let upward = "builtins: b imports Services upward from the crate root";
        assert_eq!(
            check_with(dir.path(), &[cycle], &[upward]),
            Vec::<String>::new()
        );
        let stale = check_with(dir.path(), &[cycle, "builtins: a -> c -> a"], &[upward]);
        assert_eq!(
            stale,
            vec![
                "cycles: `builtins: a -> c -> a` is listed in KNOWN_CYCLES but no longer occurs; \
                 remove it"
            ]
        );
    }

    #[test]
    fn every_elementary_cycle_is_listed() {
        let mut edges = BTreeMap::new();
        for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("b", "a"), ("c", "d")] {
            edges.insert((from.to_owned(), to.to_owned()), ());
        }
        assert_eq!(cycles_in(&edges), vec![vec!["a", "b"], vec!["a", "b", "c"]]);
    }
}
