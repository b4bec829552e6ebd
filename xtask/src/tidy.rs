//! `cargo xtask tidy`: rules the compiler does not check.
//!
//! - Layering (the arrows of docs/architecture.md): tool-core depends on no workspace crate;
//!   output-store and permission only on tool-core; the registry never reaches permission,
//!   directly or transitively; formats reach builtins and permission only in their tests;
//!   nothing depends on the binary or on xtask.
//! - Every workspace crate has a crate doc (`//!`).
//! - No unfinished-code macros and no ignored tests in the tree.
//! - Every dependency is declared once, in `[workspace.dependencies]`, and inherited.
//! - Every reference code cited in comments and docs is defined in `docs/reference.md`.
//! - Only the registry runs a tool (`executor`); builtins never depend on the registry.
//! - No import cycle between the modules of a crate, and no leaf of builtins imports upward from
//!   its crate root file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use cargo_metadata::{DependencyKind, Metadata};

mod cycles;
mod executor;
mod references;

/// Runs every tidy check on the workspace at `root`; the error lists every problem found.
pub(crate) fn run(root: &Path) -> Result<(), Vec<String>> {
    let metadata = metadata(root).map_err(|err| vec![err])?;
    let mut problems = layering(&Graph::from_metadata(&metadata));
    problems.extend(crate_docs(&metadata));
    problems.extend(source_hygiene(root));
    problems.extend(inherited_dependencies(&metadata));
    problems.extend(references::check(root));
    problems.extend(executor::check(root));
    problems.extend(cycles::check(root));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

pub(crate) fn metadata(root: &Path) -> Result<Metadata, String> {
    let cargo = crate::cargo_program();
    // Resolving for the host only keeps other platforms' crates out of the download.
    let host = host_triple()?;
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--filter-platform",
            &host,
        ])
        .current_dir(root)
        .output()
        .map_err(|err| format!("cannot run cargo metadata: {err}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    serde_json::from_slice(&output.stdout).map_err(|err| format!("cargo metadata output: {err}"))
}

pub(crate) fn host_triple() -> Result<String, String> {
    let rustc = crate::rustc_program();
    let output = Command::new(rustc)
        .arg("-vV")
        .output()
        .map_err(|err| format!("cannot run rustc: {err}"))?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| "rustc -vV printed no host".to_owned())
}

/// Workspace crates and their dependency edges on other workspace crates.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    /// crate -> workspace crates it depends on for building (normal and build dependencies).
    build: BTreeMap<String, BTreeSet<String>>,
    /// crate -> workspace crates it depends on for its tests only.
    dev: BTreeMap<String, BTreeSet<String>>,
}

impl Graph {
    pub(crate) fn from_metadata(metadata: &Metadata) -> Self {
        let members: BTreeMap<_, _> = metadata
            .workspace_packages()
            .into_iter()
            .map(|p| (p.id.clone(), p.name.to_string()))
            .collect();
        let mut graph = Graph::default();
        for node in metadata.resolve.iter().flat_map(|r| &r.nodes) {
            let Some(from) = members.get(&node.id) else {
                continue;
            };
            graph.build.entry(from.clone()).or_default();
            graph.dev.entry(from.clone()).or_default();
            for dep in &node.deps {
                let Some(to) = members.get(&dep.pkg) else {
                    continue;
                };
                for kind in &dep.dep_kinds {
                    let set = match kind.kind {
                        DependencyKind::Development => graph.dev.entry(from.clone()).or_default(),
                        _ => graph.build.entry(from.clone()).or_default(),
                    };
                    set.insert(to.clone());
                }
            }
        }
        graph
    }

    fn reachable(&self, from: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(next) = stack.pop() {
            for dep in self.build.get(&next).into_iter().flatten() {
                if seen.insert(dep.clone()) {
                    stack.push(dep.clone());
                }
            }
        }
        seen
    }
}

/// One layer's rule: the workspace crates it may reach (`None`: any), those it must not, and
/// those its tests may use but its product code must not.
struct Layer {
    krate: &'static str,
    only: Option<&'static [&'static str]>,
    forbidden: &'static [&'static str],
    forbidden_build: &'static [&'static str],
}

const LAYERS: &[Layer] = &[
    Layer {
        krate: "tackle-tool-core",
        only: Some(&[]),
        forbidden: &[],
        forbidden_build: &[],
    },
    Layer {
        krate: "tackle-output-store",
        only: Some(&["tackle-tool-core"]),
        forbidden: &[],
        forbidden_build: &[],
    },
    Layer {
        krate: "tackle-permission",
        only: Some(&["tackle-tool-core"]),
        forbidden: &[],
        forbidden_build: &[],
    },
    Layer {
        krate: "tackle-registry",
        only: None,
        forbidden: &[
            "tackle-permission",
            "tackle-builtins",
            "tackle-formats",
            "tackle-host",
            "tackle",
        ],
        forbidden_build: &[],
    },
    Layer {
        krate: "tackle-builtins",
        only: None,
        forbidden: &["tackle-formats", "tackle-host", "tackle"],
        // The leaves need tool-core, permission and output-store; registering them is the
        // host's wiring. Tests settle through a registry, as a host does.
        forbidden_build: &["tackle-registry"],
    },
    Layer {
        krate: "tackle-formats",
        only: None,
        forbidden: &["tackle-host", "tackle"],
        // Provider shapes of a snapshot's definitions and settlements: tool-core and the
        // registry. Its tests and examples export the real builtins under real rules.
        forbidden_build: &["tackle-permission", "tackle-builtins"],
    },
    Layer {
        // The host library: the wiring of every library crate below the binary.
        krate: "tackle-host",
        only: Some(&[
            "tackle-tool-core",
            "tackle-output-store",
            "tackle-permission",
            "tackle-registry",
            "tackle-builtins",
            "tackle-mcp-client",
        ]),
        forbidden: &[],
        forbidden_build: &[],
    },
    // The plugin example: what a downstream plugin may use, the library crates only.
    Layer {
        krate: "tackle-example-plugin",
        only: Some(&[
            "tackle-tool-core",
            "tackle-output-store",
            "tackle-permission",
            "tackle-registry",
            "tackle-builtins",
            "tackle-mcp-client",
            "tackle-host",
        ]),
        forbidden: &[],
        forbidden_build: &[],
    },
    // The MCP client: below the host, beside the builtins; the host's permission reaches it
    // only through its gate.
    Layer {
        krate: "tackle-mcp-client",
        only: Some(&["tackle-tool-core", "tackle-output-store", "tackle-registry"]),
        forbidden: &[],
        forbidden_build: &[],
    },
    // The MCP server: a user of the host library (and of formats' one MCP form), below the
    // binary.
    Layer {
        krate: "tackle-mcp",
        only: None,
        forbidden: &["tackle"],
        forbidden_build: &[],
    },
];

/// Every forbidden dependency edge in `graph`.
pub(crate) fn layering(graph: &Graph) -> Vec<String> {
    let mut problems = Vec::new();
    for Layer {
        krate,
        only,
        forbidden,
        forbidden_build,
    } in LAYERS
    {
        if !graph.build.contains_key(*krate) {
            continue;
        }
        let reached = graph.reachable(krate);
        let direct_dev = graph.dev.get(*krate).cloned().unwrap_or_default();
        for dep in reached.iter().chain(&direct_dev) {
            let allowed = only.is_none_or(|only| only.contains(&dep.as_str()));
            if !allowed || forbidden.contains(&dep.as_str()) {
                problems.push(format!("layering: {krate} must not depend on {dep}"));
            }
        }
        for dep in reached
            .iter()
            .filter(|dep| forbidden_build.contains(&dep.as_str()))
        {
            problems.push(format!(
                "layering: {krate} must not depend on {dep} outside its tests"
            ));
        }
    }
    for (krate, deps) in graph.build.iter().chain(&graph.dev) {
        for top in ["tackle", "xtask"] {
            if deps.contains(top) {
                problems.push(format!("layering: {krate} must not depend on {top}"));
            }
        }
    }
    problems.sort();
    problems.dedup();
    problems
}

fn crate_docs(metadata: &Metadata) -> Vec<String> {
    let mut problems = Vec::new();
    for package in metadata.workspace_packages() {
        for target in &package.targets {
            let is_root = target.is_lib()
                || (target.is_bin() && package.name.as_str() != "xtask")
                || (target.is_bin() && target.name == "xtask");
            if !is_root {
                continue;
            }
            let text = std::fs::read_to_string(&target.src_path).unwrap_or_default();
            let first = text
                .lines()
                .find(|line| !line.trim().is_empty())
                .unwrap_or("");
            if !first.starts_with("//!") {
                problems.push(format!(
                    "crate doc: {} ({}) has no `//!` crate doc",
                    package.name, target.src_path
                ));
            }
        }
    }
    problems
}

/// Files below `dir` whose extension is one of `extensions`, skipping build output and hidden
/// directories.
pub(crate) fn files_with(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            files_with(&path, extensions, out);
        } else if path
            .extension()
            .is_some_and(|ext| extensions.iter().any(|wanted| ext == *wanted))
        {
            out.push(path);
        }
    }
}

/// The Rust files below `dir`.
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    files_with(dir, &["rs"], out);
}

/// Unfinished-code macros and ignored tests anywhere in `crates/` or `xtask/`.
pub(crate) fn source_hygiene(root: &Path) -> Vec<String> {
    // Built from pieces so that this file does not trip its own check.
    let banned = [
        format!("{}!(", "todo"),
        format!("{}!(", "unimplemented"),
        format!("#[{}", "ignore"),
    ];
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    rust_files(&root.join("xtask"), &mut files);
    let mut problems = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (number, line) in text.lines().enumerate() {
            if let Some(pattern) = banned
                .iter()
                .find(|pattern| line.contains(pattern.as_str()))
            {
                problems.push(format!(
                    "hygiene: {}:{}: `{pattern}`",
                    file.display(),
                    number + 1
                ));
            }
        }
    }
    problems
}

/// Dependencies declared in a member manifest instead of inherited from the workspace.
fn inherited_dependencies(metadata: &Metadata) -> Vec<String> {
    let mut problems = Vec::new();
    for package in metadata.workspace_packages() {
        let text = std::fs::read_to_string(&package.manifest_path).unwrap_or_default();
        problems.extend(
            manifest_problems(&text)
                .into_iter()
                .map(|p| format!("dependencies: {}: {p}", package.manifest_path)),
        );
    }
    problems
}

/// The dependency entries of one manifest that do not say `workspace = true`.
pub(crate) fn manifest_problems(manifest: &str) -> Vec<String> {
    let table: toml::Table = match manifest.parse() {
        Ok(table) => table,
        Err(err) => return vec![format!("unreadable manifest: {err}")],
    };
    let mut sections: Vec<(String, &toml::Table)> = Vec::new();
    let kinds = ["dependencies", "dev-dependencies", "build-dependencies"];
    for kind in kinds {
        if let Some(deps) = table.get(kind).and_then(toml::Value::as_table) {
            sections.push((kind.to_owned(), deps));
        }
    }
    for (target, body) in table
        .get("target")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flatten()
    {
        for kind in kinds {
            if let Some(deps) = body.get(kind).and_then(toml::Value::as_table) {
                sections.push((format!("target.{target}.{kind}"), deps));
            }
        }
    }
    let mut problems = Vec::new();
    for (section, deps) in sections {
        for (name, spec) in deps {
            let inherited = spec
                .as_table()
                .and_then(|t| t.get("workspace"))
                .and_then(toml::Value::as_bool)
                .unwrap_or(false);
            if !inherited {
                problems.push(format!("[{section}] {name} is not `workspace = true`"));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        crate::workspace_root()
    }

    #[test]
    fn the_workspace_is_tidy() {
        if let Err(problems) = run(&root()) {
            panic!("tidy found problems:\n{}", problems.join("\n"));
        }
    }

    /// A real workspace on disk whose registry reaches permission through a middle crate.
    fn write_workspace(dir: &Path, edges: &[(&str, &str)]) {
        let crates = [
            "tackle-tool-core",
            "tackle-output-store",
            "tackle-registry",
            "tackle-permission",
            "tackle-builtins",
            "tackle-formats",
            "tackle-host",
            "middle",
        ];
        let members: Vec<String> = crates.iter().map(|c| format!("\"{c}\"")).collect();
        std::fs::write(
            dir.join("Cargo.toml"),
            format!(
                "[workspace]\nresolver = \"3\"\nmembers = [{}]\n",
                members.join(", ")
            ),
        )
        .unwrap();
        for krate in crates {
            let deps: String = edges
                .iter()
                .filter(|(from, _)| *from == krate)
                .map(|(_, to)| format!("{to} = {{ path = \"../{to}\" }}\n"))
                .collect();
            std::fs::create_dir_all(dir.join(krate).join("src")).unwrap();
            std::fs::write(
                dir.join(krate).join("Cargo.toml"),
                format!("[package]\nname = \"{krate}\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n[dependencies]\n{deps}"),
            )
            .unwrap();
            std::fs::write(dir.join(krate).join("src/lib.rs"), "//! test crate\n").unwrap();
        }
    }

    #[test]
    fn a_transitive_registry_to_permission_edge_fails() {
        let dir = tempfile::tempdir().unwrap();
        write_workspace(
            dir.path(),
            &[
                ("tackle-output-store", "tackle-tool-core"),
                ("tackle-registry", "middle"),
                ("middle", "tackle-permission"),
                ("tackle-permission", "tackle-tool-core"),
            ],
        );
        let graph = Graph::from_metadata(&metadata(dir.path()).unwrap());
        assert_eq!(
            layering(&graph),
            vec!["layering: tackle-registry must not depend on tackle-permission"]
        );
    }

    #[test]
    fn lower_layers_may_not_reach_upward() {
        let dir = tempfile::tempdir().unwrap();
        write_workspace(
            dir.path(),
            &[
                ("tackle-tool-core", "middle"),
                ("tackle-output-store", "tackle-registry"),
                ("tackle-permission", "tackle-tool-core"),
            ],
        );
        let graph = Graph::from_metadata(&metadata(dir.path()).unwrap());
        assert_eq!(
            layering(&graph),
            vec![
                "layering: tackle-output-store must not depend on tackle-registry",
                // reached through tool-core
                "layering: tackle-permission must not depend on middle",
                "layering: tackle-tool-core must not depend on middle",
            ]
        );
    }

    #[test]
    fn builtins_may_use_the_registry_only_in_tests() {
        let dir = tempfile::tempdir().unwrap();
        write_workspace(dir.path(), &[("tackle-builtins", "tackle-registry")]);
        let graph = Graph::from_metadata(&metadata(dir.path()).unwrap());
        assert_eq!(
            layering(&graph),
            vec!["layering: tackle-builtins must not depend on tackle-registry outside its tests"]
        );
        // The same edge as a dev-dependency is how its tests settle through the boundary.
        let dir = tempfile::tempdir().unwrap();
        write_workspace(dir.path(), &[]);
        let manifest = dir.path().join("tackle-builtins/Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(
            &manifest,
            text.replace(
                "[dependencies]\n",
                "[dependencies]\n\n[dev-dependencies]\ntackle-registry = { path = \"../tackle-registry\" }\n",
            ),
        )
        .unwrap();
        let graph = Graph::from_metadata(&metadata(dir.path()).unwrap());
        assert!(layering(&graph).is_empty(), "{:?}", layering(&graph));
    }

    #[test]
    fn formats_reach_builtins_and_permission_only_in_tests() {
        let dir = tempfile::tempdir().unwrap();
        write_workspace(
            dir.path(),
            &[
                ("tackle-formats", "tackle-registry"),
                ("tackle-formats", "tackle-builtins"),
                ("tackle-builtins", "tackle-permission"),
            ],
        );
        let graph = Graph::from_metadata(&metadata(dir.path()).unwrap());
        assert_eq!(
            layering(&graph),
            vec![
                "layering: tackle-formats must not depend on tackle-builtins outside its tests",
                "layering: tackle-formats must not depend on tackle-permission outside its tests",
            ]
        );
    }

    #[test]
    fn the_host_sits_above_the_libraries_and_below_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        write_workspace(
            dir.path(),
            &[
                ("tackle-host", "tackle-builtins"),
                ("tackle-host", "tackle-registry"),
                ("tackle-host", "middle"),
                ("tackle-output-store", "tackle-host"),
            ],
        );
        let graph = Graph::from_metadata(&metadata(dir.path()).unwrap());
        assert_eq!(
            layering(&graph),
            vec![
                "layering: tackle-host must not depend on middle",
                "layering: tackle-output-store must not depend on middle",
                "layering: tackle-output-store must not depend on tackle-builtins",
                "layering: tackle-output-store must not depend on tackle-host",
                "layering: tackle-output-store must not depend on tackle-registry",
            ]
        );
    }

    #[test]
    fn a_clean_graph_passes() {
        let dir = tempfile::tempdir().unwrap();
        write_workspace(
            dir.path(),
            &[
                ("tackle-registry", "tackle-output-store"),
                ("tackle-output-store", "tackle-tool-core"),
                ("middle", "tackle-permission"),
            ],
        );
        let graph = Graph::from_metadata(&metadata(dir.path()).unwrap());
        assert!(layering(&graph).is_empty());
    }

    #[test]
    fn manifests_must_inherit_dependencies() {
        let manifest = "[package]\nname = \"x\"\n[dependencies]\na.workspace = true\nb = \"1\"\n\
                        [dev-dependencies]\nc = { version = \"1\" }\n[target.'cfg(unix)'.dependencies]\nd = \"1\"\n";
        assert_eq!(
            manifest_problems(manifest),
            vec![
                "[dependencies] b is not `workspace = true`",
                "[dev-dependencies] c is not `workspace = true`",
                "[target.cfg(unix).dependencies] d is not `workspace = true`",
            ]
        );
    }

    #[test]
    fn hygiene_finds_banned_macros() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("crates/x/src")).unwrap();
        let bad = format!("fn f() {{ {}!() }}\n#[{}]\nfn t() {{}}\n", "todo", "ignore");
        std::fs::write(dir.path().join("crates/x/src/lib.rs"), bad).unwrap();
        let problems = source_hygiene(dir.path());
        assert_eq!(problems.len(), 2, "{problems:?}");
    }
}
