use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::render::render;

/// A crafted rustdoc JSON crate `demo`: `pub fn <function>(name: &str) -> String` and
/// `pub enum Color` with the given variants, the shape rustdoc's format 57 gives them.
fn fixture(function: &str, variants: &[&str]) -> Value {
    let string = json!({"resolved_path": {"path": "String", "id": 90, "args": null}});
    let mut index = serde_json::Map::new();
    let mut item = |id: u64, name: Option<&str>, visibility: &str, inner: Value| {
        let item = json!({
            "id": id, "crate_id": 0, "name": name, "span": null, "visibility": visibility,
            "docs": null, "links": {}, "attrs": [], "deprecation": null, "inner": inner,
        });
        index.insert(id.to_string(), item);
    };
    let variant_ids: Vec<u64> = (10..).take(variants.len()).collect();
    for (id, name) in variant_ids.iter().zip(variants) {
        let inner = json!({"variant": {"kind": "plain", "discriminant": null}});
        item(*id, Some(name), "default", inner);
    }
    let generics = json!({"params": [], "where_predicates": []});
    let enum_inner = json!({"enum": {
        "generics": generics, "has_stripped_variants": false,
        "variants": variant_ids, "impls": [],
    }});
    item(2, Some("Color"), "public", enum_inner);
    let sig = json!({
        "inputs": [["name", {"borrowed_ref": {
            "lifetime": null, "is_mutable": false, "type": {"primitive": "str"},
        }}]],
        "output": string, "is_c_variadic": false,
    });
    let header = json!({"is_const": false, "is_unsafe": false, "is_async": false, "abi": "Rust"});
    let function_inner = json!({"function": {
        "sig": sig, "generics": generics, "header": header, "has_body": true,
    }});
    item(1, Some(function), "public", function_inner);
    let module = json!({"module": {"is_crate": true, "items": [1, 2], "is_stripped": false}});
    item(0, Some("demo"), "public", module);
    json!({
        "root": 0, "crate_version": null, "includes_private": false, "index": index,
        "paths": {"90": {"crate_id": 1, "path": ["alloc", "string", "String"], "kind": "struct"}},
        "external_crates": {}, "format_version": 57,
    })
}

fn lines(listing: &str) -> Vec<&str> {
    listing.lines().filter(|l| !l.is_empty()).collect()
}

#[test]
fn the_fixture_renders_as_paths_and_signatures() -> Result<(), String> {
    let listing = render(&fixture("greet", &["Red"]))?;
    let expected = [
        "pub mod demo",
        "pub enum demo::Color",
        "demo::Color::Red",
        "pub fn demo::greet(name: &str) -> alloc::string::String",
    ];
    assert_eq!(lines(&listing), expected);
    Ok(())
}

#[test]
fn a_renamed_function_and_an_added_variant_change_the_fixture_listing() -> Result<(), String> {
    let before = render(&fixture("greet", &["Red"]))?;
    let renamed = render(&fixture("welcome", &["Red"]))?;
    let added = render(&fixture("greet", &["Red", "Green"]))?;
    assert_ne!(before, renamed);
    assert!(renamed.contains("pub fn demo::welcome(name: &str)"));
    assert!(!renamed.contains("greet"));
    assert_ne!(before, added);
    assert!(added.contains("demo::Color::Red\ndemo::Color::Green\n"));
    Ok(())
}

/// The listing of a real crate with source `lib_rs`, through the toolchain's rustdoc.
fn listing_of(dir: &Path, lib_rs: &str) -> Result<String, String> {
    let source = dir.join("lib.rs");
    std::fs::write(&source, lib_rs).map_err(|e| e.to_string())?;
    let rustdoc = std::env::var_os("RUSTDOC").unwrap_or_else(|| "rustdoc".into());
    let status = Command::new(rustdoc)
        .args([
            "--edition",
            "2024",
            "--crate-name",
            "demo",
            "--crate-type",
            "lib",
        ])
        .args(["-Z", "unstable-options", "--output-format", "json", "-o"])
        .arg(dir)
        .arg(&source)
        .env("RUSTC_BOOTSTRAP", "1")
        .status()
        .map_err(|e| format!("cannot run rustdoc: {e}"))?;
    if !status.success() {
        return Err(format!("rustdoc failed: {status}"));
    }
    let json = std::fs::read_to_string(dir.join("demo.json")).map_err(|e| e.to_string())?;
    let krate: Value = serde_json::from_str(&json).map_err(|e| e.to_string())?;
    assert_eq!(krate["format_version"], super::FORMAT_VERSION);
    render(&krate)
}

const DEMO: &str = r"
mod inner {
    /// A shape.
    #[derive(Clone, Debug)]
    pub struct Shape<T: Copy> {
        pub sides: u32,
        pub label: Option<T>,
        hidden: bool,
    }
    impl<T: Copy> Shape<T> {
        pub fn new(sides: u32) -> Self { Self { sides, label: None, hidden: false } }
        pub fn area(&self, scale: f64) -> f64 { f64::from(self.sides) * scale }
        fn private(&self) {}
    }
    pub enum Color { Red, Rgb(u8, u8, u8), Named { name: String } }
}
pub mod tools {
    pub trait Paint: Send {
        type Output;
        fn paint(&mut self, color: &crate::Color) -> Self::Output;
        fn twice(&mut self) {}
    }
    pub fn greet(name: &str) -> String { name.to_owned() }
}
pub use inner::{Color, Shape};
pub use std::collections::HashMap;
pub const LIMIT: usize = 4 * 1024;
";

#[test]
fn a_real_crate_renders_its_public_surface() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let listing = listing_of(dir.path(), DEMO)?;
    for expected in [
        "pub mod demo\n",
        "pub const demo::LIMIT: usize = 4_096usize\n",
        "pub enum demo::Color\ndemo::Color::Red\ndemo::Color::Rgb(pub u8, pub u8, pub u8)\n\
         demo::Color::Named\npub demo::Color::Named::name: alloc::string::String\n",
        "pub struct demo::Shape<T: core::marker::Copy> { .. }\npub demo::Shape::sides: u32\n\
         pub demo::Shape::label: core::option::Option<T>\n",
        "pub fn demo::Shape<T>::area(&self, scale: f64) -> f64 where T: core::marker::Copy\n",
        "pub fn demo::Shape<T>::new(sides: u32) -> Self where T: core::marker::Copy\n",
        "impl<T: core::clone::Clone + core::marker::Copy> core::clone::Clone for demo::Shape<T>\n",
        "impl<T> core::marker::Send for demo::Shape<T> where T: core::marker::Send\n",
        "pub trait demo::tools::Paint: core::marker::Send\n",
        "pub fn demo::tools::Paint::paint(&mut self, color: &demo::Color) -> Self::Output\n",
        "pub fn demo::tools::Paint::twice(&mut self) { .. }\n",
        "pub type demo::tools::Paint::Output\n",
        "pub fn demo::tools::greet(name: &str) -> alloc::string::String\n",
        "pub use demo::HashMap = std::collections::HashMap\n",
    ] {
        assert!(
            listing.contains(expected),
            "missing {expected:?} in:\n{listing}"
        );
    }
    assert!(!listing.contains("private") && !listing.contains("hidden"));
    assert!(
        !listing.contains("inner"),
        "the private module shows:\n{listing}"
    );
    Ok(())
}

/// A change of the demo source, and the lines it removes from and adds to the listing.
type Change = (
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

const CHANGES: &[Change] = &[
    (
        "pub fn greet(",
        "pub fn welcome(",
        &["-pub fn demo::tools::greet(name: &str) -> alloc::string::String"],
        &["+pub fn demo::tools::welcome(name: &str) -> alloc::string::String"],
    ),
    (
        "Named { name: String } }",
        "Named { name: String }, Blue }",
        &[],
        &["+demo::Color::Blue"],
    ),
    (
        "pub enum Color",
        "#[non_exhaustive] pub enum Color",
        &["-pub enum demo::Color"],
        &["+#[non_exhaustive] pub enum demo::Color"],
    ),
    (
        "sides: u32) -> Self",
        "sides: u16) -> Self",
        &["-pub fn demo::Shape<T>::new(sides: u32) -> Self where T: core::marker::Copy"],
        &["+pub fn demo::Shape<T>::new(sides: u16) -> Self where T: core::marker::Copy"],
    ),
    (
        "pub label: Option<T>,",
        "pub label: Option<T>, pub weight: u8,",
        &[],
        &["+pub demo::Shape::weight: u8"],
    ),
];

#[test]
fn api_changes_of_a_real_crate_change_its_listing() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let before = listing_of(dir.path(), DEMO)?;
    for (from, to, removed, added) in CHANGES {
        let changed = listing_of(dir.path(), &DEMO.replacen(from, to, 1))?;
        let diff = super::diff("demo.txt", &before, &changed);
        assert_eq!(
            diff_lines(&diff),
            (removed.to_vec(), added.to_vec()),
            "{diff}"
        );
    }
    Ok(())
}

/// The removed and added lines of a unified diff.
fn diff_lines(diff: &str) -> (Vec<&str>, Vec<&str>) {
    let body = diff
        .lines()
        .filter(|l| !l.starts_with("---") && !l.starts_with("+++"));
    let (removed, added): (Vec<&str>, Vec<&str>) = body
        .filter(|l| l.starts_with('-') || l.starts_with('+'))
        .partition(|l| l.starts_with('-'));
    (removed, added)
}
