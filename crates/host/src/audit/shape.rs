//! The parts of a record the settling thread may compute itself: the time, and the shape of
//! an input too large (or too private) to travel as it is. Below both [`facts`](super::facts)
//! and [`record`](super::record).

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// A string input longer than this is recorded by its shape alone.
pub(crate) const MAX_INPUT_STRING: usize = 1024;

/// Input fields that name a file: kept as they are, also for the tools that write files.
const PATH_FIELDS: &[&str] = &["path", "filePath", "file_path"];

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `input` as the log keeps it: numbers, booleans and short strings as they are; a long
/// string, and for the tools that write files every string but a path, as its size. A patch
/// also keeps the paths it names.
pub(crate) fn shape(input: &Value, edits: bool, key: Option<&str>) -> Value {
    match input {
        Value::String(text) => {
            let is_path = key.is_some_and(|key| PATH_FIELDS.contains(&key));
            if (edits && !is_path) || text.len() > MAX_INPUT_STRING {
                let mut size = json!({
                    "bytes": text.len(),
                    "lines": text.lines().count(),
                });
                let paths = patch_paths(text);
                if edits && !paths.is_empty() {
                    size["paths"] = json!(paths);
                }
                size
            } else {
                input.clone()
            }
        }
        Value::Array(items) => items.iter().map(|item| shape(item, edits, key)).collect(),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), shape(v, edits, Some(k))))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The files a patch names (`*** Add File: p`, `*** Update File: p`, `*** Delete File: p`,
/// `*** Move to: p`).
fn patch_paths(text: &str) -> Vec<&str> {
    const MARKERS: &[&str] = &[
        "*** Add File:",
        "*** Update File:",
        "*** Delete File:",
        "*** Move to:",
    ];
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            MARKERS
                .iter()
                .find_map(|marker| line.strip_prefix(marker))
                .map(str::trim)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_contents_are_recorded_by_their_shape() {
        let write = json!({"path": "a.txt", "content": "secret plans\nline two\n"});
        assert_eq!(
            shape(&write, true, None),
            json!({"path": "a.txt", "content": {"bytes": 22, "lines": 2}})
        );
        let patch = json!({"patchText": "*** Begin Patch\n*** Add File: x.rs\n+fn main() {}\n*** Update File: y.rs\n@@\n-a\n+b\n*** End Patch"});
        assert_eq!(
            shape(&patch, true, None)["patchText"]["paths"],
            json!(["x.rs", "y.rs"])
        );
        let bash = json!({"command": "ls -la", "timeout": 5});
        assert_eq!(shape(&bash, false, None), bash);
        let long = "x".repeat(2000);
        assert_eq!(
            shape(&json!({"command": long}), false, None),
            json!({"command": {"bytes": 2000, "lines": 1}})
        );
    }
}
