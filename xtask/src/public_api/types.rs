//! Types, paths, bounds, generics and signatures of rustdoc JSON, rendered as Rust-like text.
//!
//! A path to an item names it the way a reader can look it up whatever the author imported: a
//! public item of the crate or of another workspace crate by its public path, anything else by
//! the path rustdoc records for it (where it is defined: `alloc::string::String`), and only
//! failing both by the path as written.

use std::collections::HashMap;

use serde_json::Value;

/// The names that paths render as; see the module doc.
#[derive(Debug)]
pub(super) struct Names<'a> {
    /// Item id -> the public path of a local item.
    pub(super) public: &'a HashMap<String, String>,
    /// Defining path -> public path of other workspace crates' items.
    pub(super) aliases: &'a HashMap<String, String>,
    /// The `paths` table of the rustdoc JSON.
    pub(super) paths: &'a Value,
}

/// The key of an id (rustdoc writes ids as numbers; older formats wrote strings).
pub(super) fn key(id: &Value) -> Option<String> {
    match id {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// The variant name and content of an externally tagged enum value (`"plain"` or `{"tuple": x}`).
pub(super) fn tag(value: &Value) -> (&str, &Value) {
    match value {
        Value::String(s) => (s, &Value::Null),
        Value::Object(map) if map.len() == 1 => map
            .iter()
            .next()
            .map_or(("", &Value::Null), |(k, v)| (k.as_str(), v)),
        _ => ("", &Value::Null),
    }
}

/// The array at `value[field]`, empty when absent.
pub(super) fn list<'v>(value: &'v Value, field: &str) -> &'v [Value] {
    value[field].as_array().map_or(&[], Vec::as_slice)
}

/// The string at `value[field]`, empty when absent.
pub(super) fn text<'v>(value: &'v Value, field: &str) -> &'v str {
    value[field].as_str().unwrap_or_default()
}

fn join(items: impl IntoIterator<Item = String>, separator: &str) -> String {
    items.into_iter().collect::<Vec<_>>().join(separator)
}

impl Names<'_> {
    /// The name a path to the item `id` renders as, if the id is known.
    pub(super) fn name_of(&self, id: &Value) -> Option<String> {
        let key = key(id)?;
        if let Some(public) = self.public.get(&key) {
            return Some(public.clone());
        }
        let segments = list(&self.paths[key.as_str()], "path");
        let defined = join(segments.iter().map(|s| text_of(s).to_owned()), "::");
        match self.aliases.get(&defined) {
            Some(public) => Some(public.clone()),
            None => (!defined.is_empty()).then_some(defined),
        }
    }

    /// A rustdoc `Path`: `{path, id, args}`.
    pub(super) fn path(&self, path: &Value) -> String {
        let name = self
            .name_of(&path["id"])
            .unwrap_or_else(|| text(path, "path").to_owned());
        format!("{name}{}", self.args(&path["args"]))
    }

    fn args(&self, args: &Value) -> String {
        match tag(args) {
            ("angle_bracketed", a) => {
                let mut parts: Vec<String> = list(a, "args").iter().map(|g| self.arg(g)).collect();
                parts.extend(list(a, "constraints").iter().map(|c| self.constraint(c)));
                if parts.is_empty() {
                    String::new()
                } else {
                    format!("<{}>", parts.join(", "))
                }
            }
            ("parenthesized", p) => {
                let inputs = join(list(p, "inputs").iter().map(|t| self.ty(t)), ", ");
                format!("({inputs}){}", self.output(&p["output"]))
            }
            ("return_type_notation", _) => "(..)".to_owned(),
            _ => String::new(),
        }
    }

    fn arg(&self, arg: &Value) -> String {
        match tag(arg) {
            ("lifetime", l) => text_of(l).to_owned(),
            ("type", t) => self.ty(t),
            ("const", c) => text(c, "expr").to_owned(),
            _ => "_".to_owned(),
        }
    }

    fn constraint(&self, constraint: &Value) -> String {
        let name = format!(
            "{}{}",
            text(constraint, "name"),
            self.args(&constraint["args"])
        );
        match tag(&constraint["binding"]) {
            ("equality", term) => format!("{name} = {}", self.term(term)),
            ("constraint", bounds) => format!("{name}: {}", self.bounds(bounds)),
            _ => name,
        }
    }

    fn term(&self, term: &Value) -> String {
        match tag(term) {
            ("type", t) => self.ty(t),
            ("constant", c) => text(c, "expr").to_owned(),
            _ => "_".to_owned(),
        }
    }

    fn output(&self, output: &Value) -> String {
        if output.is_null() {
            String::new()
        } else {
            format!(" -> {}", self.ty(output))
        }
    }

    /// A type.
    pub(super) fn ty(&self, ty: &Value) -> String {
        match tag(ty) {
            ("resolved_path", p) => self.path(p),
            ("generic" | "primitive", name) => text_of(name).to_owned(),
            ("dyn_trait", d) => {
                let mut parts: Vec<String> = list(d, "traits")
                    .iter()
                    .map(|t| {
                        format!(
                            "{}{}",
                            self.hrtb(&t["generic_params"]),
                            self.path(&t["trait"])
                        )
                    })
                    .collect();
                parts.extend(d["lifetime"].as_str().map(str::to_owned));
                format!("dyn {}", parts.join(" + "))
            }
            ("function_pointer", f) => {
                let inputs = list(&f["sig"], "inputs").iter().map(|i| self.ty(&i[1]));
                format!(
                    "{}{}fn({}){}",
                    self.hrtb(&f["generic_params"]),
                    header(&f["header"]),
                    join(inputs, ", "),
                    self.output(&f["sig"]["output"])
                )
            }
            ("tuple", items) => {
                let items = items.as_array().map_or(&[][..], Vec::as_slice);
                let comma = if items.len() == 1 { "," } else { "" };
                format!("({}{comma})", join(items.iter().map(|t| self.ty(t)), ", "))
            }
            ("slice", t) => format!("[{}]", self.ty(t)),
            ("array", a) => format!("[{}; {}]", self.ty(&a["type"]), text(a, "len")),
            ("pat", p) => self.ty(&p["type"]),
            ("impl_trait", bounds) => format!("impl {}", self.bounds(bounds)),
            ("raw_pointer", p) => {
                let mutability = if p["is_mutable"] == true {
                    "mut"
                } else {
                    "const"
                };
                format!("*{mutability} {}", self.ty(&p["type"]))
            }
            ("borrowed_ref", r) => {
                let lifetime = r["lifetime"].as_str().map(|l| format!("{l} "));
                let mutability = if r["is_mutable"] == true { "mut " } else { "" };
                let lifetime = lifetime.unwrap_or_default();
                format!("&{lifetime}{mutability}{}", self.ty(&r["type"]))
            }
            ("qualified_path", q) => {
                let name = format!("{}{}", text(q, "name"), self.args(&q["args"]));
                let self_type = self.ty(&q["self_type"]);
                // `Self::Input` is written without its trait; rustdoc leaves the path empty then.
                if q["trait"].is_null() || text(&q["trait"], "path").is_empty() {
                    format!("{self_type}::{name}")
                } else {
                    format!("<{self_type} as {}>::{name}", self.path(&q["trait"]))
                }
            }
            (other, _) => format!("_{other}"),
        }
    }

    /// Bounds joined with ` + `.
    pub(super) fn bounds(&self, bounds: &Value) -> String {
        let bounds = bounds.as_array().map_or(&[][..], Vec::as_slice);
        join(bounds.iter().map(|b| self.bound(b)), " + ")
    }

    fn bound(&self, bound: &Value) -> String {
        match tag(bound) {
            ("trait_bound", t) => {
                let modifier = match text(t, "modifier") {
                    "maybe" => "?",
                    "maybe_const" => "[const] ",
                    _ => "",
                };
                let hrtb = self.hrtb(&t["generic_params"]);
                format!("{hrtb}{modifier}{}", self.path(&t["trait"]))
            }
            ("outlives", l) => text_of(l).to_owned(),
            ("use", args) => {
                let args = args.as_array().map_or(&[][..], Vec::as_slice);
                let args = args.iter().map(|a| match a {
                    Value::String(s) => s.clone(),
                    other => text_of(tag(other).1).to_owned(),
                });
                format!("use<{}>", join(args, ", "))
            }
            _ => String::new(),
        }
    }

    /// `for<'a> ` for higher-ranked parameters, else nothing.
    fn hrtb(&self, params: &Value) -> String {
        let params = self.params(params);
        if params.is_empty() {
            String::new()
        } else {
            format!("for<{params}> ")
        }
    }

    /// Generic parameters, comma separated; the synthetic ones of `impl Trait` arguments left out.
    fn params(&self, params: &Value) -> String {
        let params = params.as_array().map_or(&[][..], Vec::as_slice);
        let rendered = params.iter().filter_map(|p| {
            let name = text(p, "name");
            match tag(&p["kind"]) {
                ("lifetime", l) => Some(with_bounds(name, &join_text(list(l, "outlives")))),
                ("type", t) if t["is_synthetic"] == true => None,
                ("type", t) => {
                    let param = with_bounds(name, &self.bounds(&t["bounds"]));
                    Some(with_default(param, t["default"].is_null(), || {
                        self.ty(&t["default"])
                    }))
                }
                ("const", c) => {
                    let param = format!("const {name}: {}", self.ty(&c["type"]));
                    Some(with_default(param, c["default"].is_null(), || {
                        text(c, "default").to_owned()
                    }))
                }
                _ => Some(name.to_owned()),
            }
        });
        join(rendered, ", ")
    }

    /// `<T: Bound>` for the parameters of `Generics`, or nothing.
    pub(super) fn generics(&self, generics: &Value) -> String {
        let params = self.params(&generics["params"]);
        if params.is_empty() {
            String::new()
        } else {
            format!("<{params}>")
        }
    }

    /// ` where T: Bound` for the predicates of `Generics`, or nothing.
    pub(super) fn where_clause(&self, generics: &Value) -> String {
        where_of(&self.predicates(generics))
    }

    /// The where predicates of `Generics`.
    fn predicates(&self, generics: &Value) -> Vec<String> {
        let predicates = list(generics, "where_predicates")
            .iter()
            .map(|p| match tag(p) {
                ("bound_predicate", b) => with_bounds(
                    &format!("{}{}", self.hrtb(&b["generic_params"]), self.ty(&b["type"])),
                    &self.bounds(&b["bounds"]),
                ),
                ("lifetime_predicate", l) => {
                    with_bounds(text(l, "lifetime"), &join_text(list(l, "outlives")))
                }
                ("eq_predicate", e) => format!("{} = {}", self.ty(&e["lhs"]), self.term(&e["rhs"])),
                _ => String::new(),
            });
        predicates.filter(|p| !p.is_empty()).collect()
    }

    /// The bounds of an impl's parameters and its where predicates, all as predicates
    /// (`T: Bound`), to go on the lines of its items.
    pub(super) fn impl_predicates(&self, generics: &Value) -> Vec<String> {
        let params = list(generics, "params").iter().filter_map(|p| {
            let name = text(p, "name");
            let bounds = match tag(&p["kind"]) {
                ("lifetime", l) => join_text(list(l, "outlives")),
                ("type", t) => self.bounds(&t["bounds"]),
                _ => String::new(),
            };
            (!bounds.is_empty()).then(|| format!("{name}: {bounds}"))
        });
        let mut predicates: Vec<String> = params.collect();
        predicates.extend(self.predicates(generics));
        predicates
    }

    /// `const async unsafe fn name<G>(self, a: A) -> R where ...` for a `function` item;
    /// `outer` are predicates of its impl, put first in its where clause.
    pub(super) fn function(&self, name: &str, function: &Value, outer: &[String]) -> String {
        let sig = &function["sig"];
        let inputs = list(sig, "inputs").iter().map(|input| {
            let (name, ty) = (text_of(&input[0]), &input[1]);
            match (name, tag(ty)) {
                ("self", ("generic", s)) if s == "Self" => "self".to_owned(),
                ("self", ("borrowed_ref", r)) if r["type"]["generic"] == "Self" => {
                    let rendered = self.ty(ty);
                    format!("{}self", rendered.trim_end_matches("Self"))
                }
                _ => format!("{name}: {}", self.ty(ty)),
            }
        });
        let mut predicates = outer.to_vec();
        predicates.extend(self.predicates(&function["generics"]));
        format!(
            "{}fn {name}{}({}){}{}",
            header(&function["header"]),
            self.generics(&function["generics"]),
            join(inputs, ", "),
            self.output(&sig["output"]),
            where_of(&predicates)
        )
    }
}

/// ` where a, b` for predicates, or nothing.
pub(super) fn where_of(predicates: &[String]) -> String {
    if predicates.is_empty() {
        String::new()
    } else {
        format!(" where {}", predicates.join(", "))
    }
}

fn text_of(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

fn join_text(values: &[Value]) -> String {
    join(values.iter().map(|v| text_of(v).to_owned()), " + ")
}

fn with_bounds(name: &str, bounds: &str) -> String {
    if bounds.is_empty() {
        name.to_owned()
    } else {
        format!("{name}: {bounds}")
    }
}

fn with_default(param: String, none: bool, default: impl FnOnce() -> String) -> String {
    if none {
        param
    } else {
        format!("{param} = {}", default())
    }
}

/// `const async unsafe extern "C" ` for a `FunctionHeader`.
fn header(header: &Value) -> String {
    let mut out = String::new();
    for (flag, word) in [
        ("is_const", "const "),
        ("is_async", "async "),
        ("is_unsafe", "unsafe "),
    ] {
        if header[flag] == true {
            out.push_str(word);
        }
    }
    let abi = match tag(&header["abi"]) {
        ("Rust", _) | ("", _) => String::new(),
        (abi, _) => format!("extern \"{abi}\" "),
    };
    out + &abi
}
