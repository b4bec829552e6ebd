//! Redaction of secret values (the host's credentials) from everything a result carries.
//!
//! Invariants:
//! - every occurrence of a configured value of at least [`MIN_SECRET_BYTES`] bytes is replaced
//!   by [`REDACTED`] in the model text, the structured value (strings and keys), file names,
//!   and error text, before anything is measured or saved, so a secret never reaches the
//!   model nor a managed output on disk;
//! - the values are matched in one pass (Aho-Corasick, leftmost-longest, so a value that
//!   contains another is replaced whole); with no values nothing is scanned.

use std::borrow::Cow;
use std::io::{self, Read, Write};

use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::{Map, Value};
use tackle_tool_core::{OutputContent, ToolOutput};

/// What a redacted value is replaced with.
pub const REDACTED: &str = "[REDACTED]";
/// Values shorter than this are not redacted: replacing every `1` or `true` would garble
/// ordinary output, and such values are not secrets worth the name.
pub const MIN_SECRET_BYTES: usize = 8;

/// The compiled redaction list of a store.
#[derive(Debug, Clone, Default)]
pub(crate) struct Redactor {
    matcher: Option<AhoCorasick>,
    /// The values could not be compiled (a set far beyond any environment's size): every text
    /// is replaced whole, so nothing passes unredacted.
    broken: bool,
    /// The length of the longest value: how much a streamed redaction keeps back.
    longest: usize,
    /// Some value holds a character that compact JSON escapes (`"`, `\\`, a control
    /// character): its escaped form is not the value, so JSON text cannot be searched for it.
    escaped_in_json: bool,
}

impl Redactor {
    /// A redactor for `secrets`, leaving out values under [`MIN_SECRET_BYTES`].
    pub(crate) fn new(secrets: &[String]) -> Self {
        let patterns: Vec<&str> = secrets
            .iter()
            .map(String::as_str)
            .filter(|secret| secret.len() >= MIN_SECRET_BYTES)
            .collect();
        if patterns.is_empty() {
            return Self::default();
        }
        let longest = patterns.iter().map(|p| p.len()).max().unwrap_or(0);
        let escaped_in_json = patterns
            .iter()
            .any(|p| p.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20));
        match AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
        {
            Ok(matcher) => Self {
                matcher: Some(matcher),
                broken: false,
                longest,
                escaped_in_json,
            },
            Err(_) => Self {
                matcher: None,
                broken: true,
                longest,
                escaped_in_json,
            },
        }
    }

    /// `text` redacted: borrowed when no value occurs in it.
    pub(crate) fn redacted<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.broken {
            return Cow::Owned(REDACTED.to_owned());
        }
        match &self.matcher {
            Some(matcher) if matcher.is_match(text) => {
                let mut out = String::with_capacity(text.len());
                matcher.replace_all_with(text, &mut out, |_, _, dst| {
                    dst.push_str(REDACTED);
                    true
                });
                Cow::Owned(out)
            }
            _ => Cow::Borrowed(text),
        }
    }

    /// Whether a value may occur in a string of `json`, compact JSON as `serde_json` writes
    /// it. `false` means no string of it needs redacting: a value without characters that
    /// JSON escapes is written as itself, so a string holding it puts it in the text.
    pub(crate) fn may_occur_in_json(&self, json: &[u8]) -> bool {
        match &self.matcher {
            _ if self.broken => true,
            None => false,
            Some(matcher) => self.escaped_in_json || matcher.is_match(json),
        }
    }

    /// Redacts `text` in place.
    pub(crate) fn text(&self, text: &mut String) {
        if let Cow::Owned(out) = self.redacted(text) {
            *text = out;
        }
    }

    /// Redacts raw bytes (which need not be UTF-8) in place.
    pub(crate) fn bytes(&self, bytes: &mut Vec<u8>) {
        if self.broken {
            *bytes = REDACTED.as_bytes().to_vec();
            return;
        }
        let Some(matcher) = &self.matcher else { return };
        if !matcher.is_match(bytes.as_slice()) {
            return;
        }
        let mut out = Vec::with_capacity(bytes.len());
        matcher.replace_all_with_bytes(bytes, &mut out, |_, _, dst| {
            dst.extend_from_slice(REDACTED.as_bytes());
            true
        });
        *bytes = out;
    }

    /// Copies `source` to `sink` redacted, a chunk at a time: only the last `longest - 1`
    /// bytes are held back between chunks (a value that spans two chunks is still found whole,
    /// and a match that starts before them is complete within the window).
    pub(crate) fn stream(&self, source: &mut impl Read, sink: &mut impl Write) -> io::Result<()> {
        const CHUNK: usize = 1 << 20;
        if self.broken {
            io::copy(source, &mut io::sink())?;
            return sink.write_all(REDACTED.as_bytes());
        }
        let Some(matcher) = &self.matcher else {
            io::copy(source, sink)?;
            return Ok(());
        };
        let keep = self.longest.saturating_sub(1);
        let mut window: Vec<u8> = Vec::with_capacity(CHUNK + keep);
        loop {
            let start = window.len();
            window.resize(start + CHUNK, 0);
            let read = loop {
                match source.read(&mut window[start..]) {
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    other => break other,
                }
            };
            let read = match read {
                Ok(read) => read,
                Err(err) => {
                    window.truncate(start);
                    return Err(err);
                }
            };
            window.truncate(start + read);
            let end = read == 0;
            let cutoff = if end {
                window.len()
            } else {
                window.len().saturating_sub(keep)
            };
            let mut at = 0;
            for found in matcher.find_iter(window.as_slice()) {
                if found.start() >= cutoff {
                    break;
                }
                sink.write_all(&window[at..found.start()])?;
                sink.write_all(REDACTED.as_bytes())?;
                at = found.end();
            }
            let emitted = cutoff.max(at);
            sink.write_all(&window[at..emitted])?;
            window.drain(..emitted);
            if end {
                return Ok(());
            }
        }
    }

    /// Redacts every string and key of `value`, iteratively (a value may be deep).
    pub(crate) fn value(&self, value: &mut Value) {
        if self.is_empty() {
            return;
        }
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Value::String(text) => self.text(text),
                Value::Array(items) => stack.extend(items.iter_mut()),
                Value::Object(map) => {
                    if map.keys().any(|key| self.matches(key)) {
                        let old = std::mem::take(map);
                        *map = old
                            .into_iter()
                            .map(|(mut key, value)| {
                                self.text(&mut key);
                                (key, value)
                            })
                            .collect::<Map<_, _>>();
                    }
                    stack.extend(map.values_mut());
                }
                Value::Null | Value::Bool(_) | Value::Number(_) => {}
            }
        }
    }

    /// Redacts the text parts, file names and structured value of `output`. Inline media
    /// data is left as it is (it is encoded; a secret inside an image is not text).
    pub(crate) fn output(&self, output: &mut ToolOutput) {
        if self.is_empty() {
            return;
        }
        for part in &mut output.content {
            match part {
                OutputContent::Text { text } => self.text(text),
                OutputContent::File { name, .. } => {
                    if let Some(name) = name {
                        self.text(name);
                    }
                }
            }
        }
        self.value(&mut output.structured);
    }

    /// Nothing to redact.
    pub(crate) fn is_empty(&self) -> bool {
        self.matcher.is_none() && !self.broken
    }

    fn matches(&self, text: &str) -> bool {
        self.broken
            || self
                .matcher
                .as_ref()
                .is_some_and(|matcher| matcher.is_match(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn redactor(secrets: &[&str]) -> Redactor {
        Redactor::new(&secrets.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn values_are_replaced_everywhere_and_short_ones_are_ignored() {
        let r = redactor(&["hunter2hunter2", "short", "hunter2hunter2-longer"]);
        let mut text = "a hunter2hunter2-longer b hunter2hunter2 short".to_owned();
        r.text(&mut text);
        assert_eq!(text, "a [REDACTED] b [REDACTED] short");
        let mut bytes = b"\xff hunter2hunter2 \xfe".to_vec();
        r.bytes(&mut bytes);
        assert_eq!(bytes, b"\xff [REDACTED] \xfe");
        let mut value =
            json!({"hunter2hunter2": ["x hunter2hunter2", {"k": "hunter2hunter2"}], "n": 1});
        r.value(&mut value);
        assert_eq!(
            value,
            json!({"[REDACTED]": ["x [REDACTED]", {"k": "[REDACTED]"}], "n": 1})
        );
    }

    #[test]
    fn json_text_is_searched_only_for_values_it_writes_as_themselves() {
        let plain = redactor(&["hunter2hunter2"]);
        let text = serde_json::to_vec(&json!({"command": "echo hunter2hunter2"})).unwrap();
        assert!(plain.may_occur_in_json(&text));
        assert!(!plain.may_occur_in_json(br#"{"command":"ls"}"#));
        assert_eq!(plain.redacted("a hunter2hunter2"), "a [REDACTED]");
        assert!(matches!(plain.redacted("nothing here"), Cow::Borrowed(_)));
        // A value JSON escapes may hide behind its escapes: every text may hold it.
        let quoted = redactor(&["pass\"word1"]);
        let text = serde_json::to_vec(&json!({"command": "echo pass\"word1"})).unwrap();
        assert!(!text.windows(10).any(|w| w == b"pass\"word1"));
        assert!(quoted.may_occur_in_json(&text));
        assert!(quoted.may_occur_in_json(br#"{"command":"ls"}"#));
        assert!(!redactor(&[]).may_occur_in_json(&text));
    }

    #[test]
    fn an_empty_list_changes_nothing() {
        let r = redactor(&["", "1234567"]);
        assert!(r.matcher.is_none());
        let mut text = "1234567".to_owned();
        r.text(&mut text);
        assert_eq!(text, "1234567");
    }

    #[test]
    fn a_stream_is_redacted_across_chunk_boundaries() {
        let secret = "s3cret-value-of-some-length";
        let redactor = Redactor::new(&[secret.to_owned()]);
        // Secrets at every offset around the 1 MiB chunk boundary, and at both ends.
        let mut input = Vec::new();
        input.extend_from_slice(secret.as_bytes());
        input.resize((1 << 20) - 10, b'x');
        input.extend_from_slice(secret.as_bytes());
        input.resize((2 << 20) - 3, b'y');
        input.extend_from_slice(secret.as_bytes());
        input.extend_from_slice(b"tail");
        input.extend_from_slice(secret.as_bytes());
        let mut streamed = Vec::new();
        redactor
            .stream(&mut input.as_slice(), &mut streamed)
            .unwrap();
        let mut whole = input.clone();
        redactor.bytes(&mut whole);
        assert_eq!(streamed, whole);
        assert_eq!(
            streamed
                .windows(REDACTED.len())
                .filter(|w| *w == REDACTED.as_bytes())
                .count(),
            4
        );
    }
}
