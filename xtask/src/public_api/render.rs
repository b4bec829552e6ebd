//! The public surface of one crate's rustdoc JSON as sorted text.
//!
//! Every public item reachable from the crate root is an entry, named by the path users write:
//! `pub use` of a local item is resolved to the item at the re-exported path. An item reachable
//! at several paths is rendered in full at the shortest and as `pub use <path> = <shortest>` at
//! the others. Entries are sorted by path and separated by blank lines; an entry is its item's
//! line followed by its members:
//!
//! - struct fields and enum variants (with their fields) in declaration order;
//! - then, sorted: the public items of inherent impls (`pub fn Type::new(..)`; in a generic impl
//!   `pub fn Type<T>::new(..) where T: Bound`, the impl's bounds first) and every trait impl of
//!   the type (`impl Trait for Type`), stable auto traits included, blanket impls left out;
//! - for a trait: its associated items, provided methods ending in `{ .. }`, and its blanket
//!   impls and impls for foreign types.
//!
//! `#[non_exhaustive]`, `#[deprecated]` and the `#[cfg(feature = "..")]` gates of an item and of
//! the `use` that exports it are shown on the item's line. Doc comments, private items and
//! function bodies are not part of the surface.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use super::attrs::prefix;
use super::types::{Names, key, list, tag, text, where_of};
#[cfg(test)]
use super::walk::surface;
use super::walk::{Found, Surface};

/// The listing of a crate on its own: other crates' items by the paths they are defined at.
#[cfg(test)]
pub(crate) fn render(krate: &Value) -> Result<String, String> {
    Ok(surface(krate)?.render(&HashMap::new()))
}

impl Surface<'_> {
    /// Defining path -> public path of each public item defined at another path
    /// (`tackle_tool_core::tool::Tool` -> `tackle_tool_core::Tool`), for the crates that use them.
    pub(crate) fn aliases(&self) -> Vec<(String, String)> {
        let paths = &self.krate["paths"];
        let mut aliases = Vec::new();
        for (id, public) in &self.public {
            let segments = list(&paths[id.as_str()], "path");
            let defined: Vec<&str> = segments.iter().filter_map(Value::as_str).collect();
            let defined = defined.join("::");
            if !defined.is_empty() && defined != *public {
                aliases.push((defined, public.clone()));
            }
        }
        aliases
    }

    /// The listing (see the module doc); `aliases` renames other crates' items.
    pub(crate) fn render(&self, aliases: &HashMap<String, String>) -> String {
        let names = Names {
            public: &self.public,
            aliases,
            paths: &self.krate["paths"],
        };
        let render = Render {
            index: &self.krate["index"],
            names: &names,
        };
        let mut entries: Vec<(String, Vec<String>)> = self.walk.lines.clone();
        for found in &self.walk.found {
            let canonical = self.public.get(&found.id).unwrap_or(&found.path);
            if *canonical == found.path {
                entries.push((found.path.clone(), render.entry(found)));
            } else {
                let line = format!("pub use {} = {canonical}", found.path);
                entries.push((found.path.clone(), vec![line]));
            }
        }
        entries.sort();
        entries.dedup();
        let blocks: Vec<String> = entries
            .into_iter()
            .map(|(_, lines)| lines.join("\n"))
            .collect();
        blocks.join("\n\n") + "\n"
    }
}

/// Marker traits whose impls are left out: unstable auto traits, which come and go with the
/// toolchain, and the marker `derive(PartialEq)` adds.
const HIDDEN_MARKERS: &[&str] = &[
    "core::marker::Freeze",
    "core::marker::UnsafeUnpin",
    "core::marker::StructuralPartialEq",
];

/// The renderer of entries, with every public path known.
struct Render<'a> {
    index: &'a Value,
    names: &'a Names<'a>,
}

impl Render<'_> {
    fn get(&self, id: &Value) -> &Value {
        key(id).map_or(&Value::Null, |k| &self.index[k.as_str()])
    }

    fn entry(&self, found: &Found) -> Vec<String> {
        let item = &self.index[found.id.as_str()];
        let path = found.path.as_str();
        let names = self.names;
        let attrs = prefix(item, &found.attrs);
        let (kind, inner) = tag(&item["inner"]);
        let generics = names.generics(&inner["generics"]);
        let where_clause = names.where_clause(&inner["generics"]);
        let mut lines = Vec::new();
        let mut members = BTreeSet::new();
        match kind {
            "struct" | "union" => {
                // A union keeps its fields where a struct keeps its kind.
                let shape = if kind == "union" {
                    inner
                } else {
                    &inner["kind"]
                };
                let (shape, fields) = match tag(shape) {
                    ("unit", _) => (";".to_owned(), &[][..]),
                    ("tuple", fields) => (format!("({});", self.tuple(fields)), &[][..]),
                    ("plain", plain) => (
                        stripped(plain, "has_stripped_fields"),
                        list(plain, "fields"),
                    ),
                    _ => (
                        stripped(shape, "has_stripped_fields"),
                        list(shape, "fields"),
                    ),
                };
                lines.push(format!(
                    "{attrs}pub {kind} {path}{generics}{where_clause}{shape}"
                ));
                lines.extend(fields.iter().map(|f| self.field(path, f)));
                self.impls(path, inner, &mut members);
            }
            "enum" => {
                let shape = stripped(inner, "has_stripped_variants");
                lines.push(format!(
                    "{attrs}pub enum {path}{generics}{where_clause}{shape}"
                ));
                for variant in list(inner, "variants") {
                    lines.extend(self.variant(path, self.get(variant)));
                }
                self.impls(path, inner, &mut members);
            }
            "trait" => {
                let mut head = format!("{attrs}pub ");
                for (flag, word) in [("is_unsafe", "unsafe "), ("is_auto", "auto ")] {
                    if inner[flag] == true {
                        head.push_str(word);
                    }
                }
                let bounds = names.bounds(&inner["bounds"]);
                let bounds = if bounds.is_empty() {
                    bounds
                } else {
                    format!(": {bounds}")
                };
                lines.push(format!(
                    "{head}trait {path}{generics}{bounds}{where_clause}"
                ));
                for member in list(inner, "items") {
                    members.extend(self.assoc(path, self.get(member), true, &[]));
                }
                for imp in list(inner, "implementations") {
                    let imp = &self.get(imp)["inner"]["impl"];
                    let local_type = names
                        .public
                        .contains_key(&key(&imp["for"]["resolved_path"]["id"]).unwrap_or_default());
                    if !imp["blanket_impl"].is_null() || !local_type {
                        members.insert(self.trait_impl(imp));
                    }
                }
            }
            "function" => lines.push(format!("{attrs}pub {}", names.function(path, inner, &[]))),
            "type_alias" => {
                let ty = names.ty(&inner["type"]);
                lines.push(format!(
                    "{attrs}pub type {path}{generics} = {ty}{where_clause}"
                ));
            }
            "constant" => {
                let value = inner["const"]["value"]
                    .as_str()
                    .unwrap_or(text(&inner["const"], "expr"));
                let ty = names.ty(&inner["type"]);
                lines.push(format!("{attrs}pub const {path}: {ty} = {value}"));
            }
            "static" => {
                let mutability = if inner["is_mutable"] == true {
                    "mut "
                } else {
                    ""
                };
                let ty = names.ty(&inner["type"]);
                lines.push(format!("{attrs}pub static {mutability}{path}: {ty}"));
            }
            "macro" => lines.push(format!("{attrs}pub macro {path}!")),
            "proc_macro" => lines.push(format!(
                "{attrs}pub proc_macro {path} ({})",
                text(inner, "kind")
            )),
            other => lines.push(format!("{attrs}pub {other} {path}")),
        }
        lines.extend(members);
        lines
    }

    /// `pub A, _` for the fields of a tuple struct or variant; `_` is a private field.
    fn tuple(&self, fields: &Value) -> String {
        let fields = fields.as_array().map_or(&[][..], Vec::as_slice);
        let fields = fields.iter().map(|f| {
            let field = self.get(f);
            if field.is_null() {
                "_".to_owned()
            } else {
                format!("pub {}", self.names.ty(&field["inner"]["struct_field"]))
            }
        });
        fields.collect::<Vec<_>>().join(", ")
    }

    fn field(&self, owner: &str, id: &Value) -> String {
        let field = self.get(id);
        let ty = self.names.ty(&field["inner"]["struct_field"]);
        format!(
            "{}pub {owner}::{}: {ty}",
            prefix(field, &[]),
            text(field, "name")
        )
    }

    fn variant(&self, owner: &str, variant: &Value) -> Vec<String> {
        let inner = &variant["inner"]["variant"];
        let path = format!("{owner}::{}", text(variant, "name"));
        let (shape, fields) = match tag(&inner["kind"]) {
            ("tuple", fields) => (format!("({})", self.tuple(fields)), &[][..]),
            ("struct", s) => (stripped(s, "has_stripped_fields"), list(s, "fields")),
            _ => (String::new(), &[][..]),
        };
        let discriminant = inner["discriminant"]["expr"]
            .as_str()
            .map(|d| format!(" = {d}"));
        let discriminant = discriminant.unwrap_or_default();
        let mut lines = vec![format!(
            "{}{path}{shape}{discriminant}",
            prefix(variant, &[])
        )];
        lines.extend(fields.iter().map(|f| self.field(&path, f)));
        lines
    }

    /// The public items of inherent impls and every trait impl of a type, blanket impls aside.
    fn impls(&self, path: &str, inner: &Value, members: &mut BTreeSet<String>) {
        for imp in list(inner, "impls") {
            let imp = &self.get(imp)["inner"]["impl"];
            if !imp["blanket_impl"].is_null() {
                continue;
            }
            if imp["trait"].is_null() {
                // A generic impl's bounds belong to its items' signatures: `Type<T>::f(..) where
                // T: Bound`.
                let outer = self.names.impl_predicates(&imp["generics"]);
                let generic = !list(&imp["generics"], "params").is_empty() || !outer.is_empty();
                let owner = if generic {
                    self.names.ty(&imp["for"])
                } else {
                    path.to_owned()
                };
                for item in list(imp, "items") {
                    let item = self.get(item);
                    if item["visibility"] == "public" {
                        members.extend(self.assoc(&owner, item, false, &outer));
                    }
                }
            } else if !HIDDEN_MARKERS.contains(&self.names.path(&imp["trait"]).as_str()) {
                members.insert(self.trait_impl(imp));
            }
        }
    }

    /// `impl<G> Trait for Type where ..`, with the associated types it sets.
    fn trait_impl(&self, imp: &Value) -> String {
        let names = self.names;
        let generics = &imp["generics"];
        let unsafety = if imp["is_unsafe"] == true {
            "unsafe "
        } else {
            ""
        };
        let negative = if imp["is_negative"] == true { "!" } else { "" };
        let mut line = format!(
            "{unsafety}impl{} {negative}{} for {}{}",
            names.generics(generics),
            names.path(&imp["trait"]),
            names.ty(&imp["for"]),
            names.where_clause(generics),
        );
        let types: Vec<String> = list(imp, "items")
            .iter()
            .map(|item| self.get(item))
            .filter(|item| tag(&item["inner"]).0 == "assoc_type")
            .map(|item| {
                let ty = names.ty(&item["inner"]["assoc_type"]["type"]);
                format!("type {} = {ty}", text(item, "name"))
            })
            .collect();
        if !types.is_empty() {
            line.push_str(&format!(" {{ {}; }}", types.join("; ")));
        }
        line
    }

    /// An associated item of a trait (`in_trait`) or an inherent impl, at `owner::name`, with
    /// the `outer` predicates of its impl.
    fn assoc(&self, owner: &str, item: &Value, in_trait: bool, outer: &[String]) -> Option<String> {
        let names = self.names;
        let path = format!("{owner}::{}", text(item, "name"));
        let attrs = prefix(item, &[]);
        let line = match tag(&item["inner"]) {
            ("function", f) => {
                let provided = if in_trait && f["has_body"] == true {
                    " { .. }"
                } else {
                    ""
                };
                format!("{attrs}pub {}{provided}", names.function(&path, f, outer))
            }
            ("assoc_const", c) => {
                let value = c["value"]
                    .as_str()
                    .map(|v| format!(" = {v}"))
                    .unwrap_or_default();
                let where_clause = where_of(outer);
                let ty = names.ty(&c["type"]);
                format!("{attrs}pub const {path}: {ty}{value}{where_clause}")
            }
            ("assoc_type", t) => {
                let generics = names.generics(&t["generics"]);
                let bounds = names.bounds(&t["bounds"]);
                let bounds = if bounds.is_empty() {
                    bounds
                } else {
                    format!(": {bounds}")
                };
                let default = if t["type"].is_null() {
                    String::new()
                } else {
                    format!(" = {}", names.ty(&t["type"]))
                };
                format!("{attrs}pub type {path}{generics}{bounds}{default}")
            }
            _ => return None,
        };
        Some(line)
    }
}

/// ` { .. }` when rustdoc stripped private fields or hidden variants, else nothing.
fn stripped(value: &Value, field: &str) -> String {
    if value[field] == true {
        " { .. }".to_owned()
    } else {
        String::new()
    }
}
