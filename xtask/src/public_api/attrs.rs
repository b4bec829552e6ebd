//! The attributes a listing shows on an item's line.

use serde_json::Value;

use super::types::{list, text};

/// The attributes shown before an item: `extra` (inherited gates), its own cfg gates,
/// `#[deprecated]` and `#[non_exhaustive]`, each followed by a space.
pub(super) fn prefix(item: &Value, extra: &[String]) -> String {
    let mut attrs: Vec<String> = extra.to_vec();
    for cfg in cfgs(item) {
        if !attrs.contains(&cfg) {
            attrs.push(cfg);
        }
    }
    if !item["deprecation"].is_null() {
        attrs.push("#[deprecated]".to_owned());
    }
    if list(item, "attrs").iter().any(|a| a == "non_exhaustive") {
        attrs.push("#[non_exhaustive]".to_owned());
    }
    attrs.iter().map(|a| format!("{a} ")).collect()
}

/// `#[cfg(feature = "x")]` for each feature gate rustdoc records on the item.
///
/// rustdoc writes a `#[cfg]` as the debug text of the compiler's attribute (`#[attr =
/// CfgTrace([NameValue { name: "feature", value: Some("x"), .. }])]`); a gate that is not a
/// plain list of features is shown as that text, so it still shows up in a diff.
pub(super) fn cfgs(item: &Value) -> Vec<String> {
    const FEATURE: &str = "NameValue { name: \"feature\", value: Some(\"";
    let mut out = Vec::new();
    for attr in list(item, "attrs") {
        let other = text(attr, "other");
        let Some(trace) = other.strip_prefix("#[attr = CfgTrace(") else {
            continue;
        };
        let features: Vec<&str> = trace
            .split(FEATURE)
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .collect();
        let simple = !features.is_empty()
            && ["Any", "All", "Not", "Word"]
                .iter()
                .all(|op| !trace.contains(&format!("{op}(")));
        if simple {
            out.extend(
                features
                    .iter()
                    .map(|f| format!("#[cfg(feature = \"{f}\")]")),
            );
        } else {
            out.push(format!("#[cfg({})]", without_spans(trace)));
        }
    }
    out
}

/// The debug text of a cfg without its source spans (`, span: file:1:2: 1:9 (#0)`).
fn without_spans(trace: &str) -> String {
    let mut out = String::new();
    let mut rest = trace.trim_end_matches(")]");
    while let Some(start) = rest.find(", span: ") {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        rest = rest.find(')').map_or("", |end| &rest[end + 1..]);
    }
    out.push_str(rest);
    out
}
