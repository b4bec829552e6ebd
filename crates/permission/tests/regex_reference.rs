//! The reference's wildcard semantics as a regex (P6–P8): `\` -> `/`, escape, `*` -> `.*`,
//! `?` -> `.`, a trailing ` .*` optional, anchored, `.` matching newlines. Shared by the
//! property test (which checks the matcher against it) and the bench (its peer).

use regex::Regex;

/// The anchored regex for `pattern`.
pub(crate) fn translate(pattern: &str) -> Regex {
    let pattern = pattern.replace('\\', "/");
    let mut escaped = String::new();
    for c in pattern.chars() {
        match c {
            '*' => escaped.push_str(".*"),
            '?' => escaped.push('.'),
            other => escaped.push_str(&regex::escape(&other.to_string())),
        }
    }
    if let Some(head) = escaped.strip_suffix(" .*") {
        escaped = format!("{head}( .*)?");
    }
    Regex::new(&format!("(?s)^{escaped}$")).expect("an escaped pattern is a valid regex")
}
