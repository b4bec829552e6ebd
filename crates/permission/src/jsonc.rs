//! JSON with comments and trailing commas (JSONC), as opencode/Kilo config files allow.
//!
//! Comments and trailing commas are blanked to spaces (newlines kept), so the text handed to
//! `serde_json` has the same lines and columns as the file and its errors point at the file.

use serde_json::Value;

/// Parses JSONC `text`; the error is a message with a line and column.
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    let plain = to_json(text)?;
    serde_json::from_str(&plain).map_err(|err| {
        // serde_json's Display ends in "at line L column C"; say it our way.
        format!(
            "invalid JSON at line {} column {}: {}",
            err.line(),
            err.column(),
            describe(&err)
        )
    })
}

/// JSONC `text` as plain JSON with the same lines and columns (comments and trailing commas
/// blanked, a byte order mark dropped), for a host that deserializes it with its own types and
/// wants `serde_json`'s positions to point at the file. The error is a message with a line and
/// column (an unterminated comment).
pub fn to_json(text: &str) -> Result<String, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    strip(text)
}

fn describe(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// `text` with comments and trailing commas replaced by spaces.
fn strip(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match (b, bytes.get(i + 1)) {
            (b'"', _) => {
                in_string = true;
                i += 1;
            }
            (b'/', Some(b'/')) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                let start = i;
                i += 2;
                loop {
                    if i + 1 >= bytes.len() {
                        let (line, column) = position(text, start);
                        return Err(format!(
                            "unterminated /* comment starting at line {line} column {column}"
                        ));
                    }
                    if bytes[i] == b'*' && bytes[i + 1] == b'/' {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
                for byte in &mut out[start..i] {
                    if *byte != b'\n' && *byte != b'\r' {
                        *byte = b' ';
                    }
                }
            }
            _ => i += 1,
        }
    }
    blank_trailing_commas(&mut out);
    // Only ASCII bytes and whole comments (every byte of a character) were replaced.
    String::from_utf8(out).map_err(|err| format!("invalid UTF-8: {err}"))
}

/// Blanks each `,` outside strings that is followed (after whitespace) by `}` or `]`.
/// Runs after comments are blanked, so a comment between the comma and the bracket counts as
/// whitespace.
fn blank_trailing_commas(out: &mut [u8]) {
    let mut in_string = false;
    let mut i = 0;
    while i < out.len() {
        let b = out[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b',' {
            let next = out[i + 1..]
                .iter()
                .find(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
            if matches!(next, Some(b'}' | b']')) {
                out[i] = b' ';
            }
        }
        i += 1;
    }
}

/// The 1-based line and column (in characters) of byte offset `at`.
fn position(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn comments_and_trailing_commas() {
        let text = "// top\n{\n  \"a\": \"x // not a comment\", /* b */\n  \"b\": [1, 2,],\n  \"c\": {\"d\": \"/* kept */\",},\n}\n";
        assert_eq!(
            parse(text).unwrap(),
            json!({"a": "x // not a comment", "b": [1, 2], "c": {"d": "/* kept */"}})
        );
    }

    #[test]
    fn escaped_quotes_do_not_end_strings() {
        assert_eq!(
            parse(r#"{"a": "say \"hi\" // there",}"#).unwrap(),
            json!({"a": "say \"hi\" // there"})
        );
    }

    #[test]
    fn errors_point_at_the_file() {
        let err = parse("{\n  /* c */ \"a\": 1 2\n}").unwrap_err();
        assert_eq!(err, "invalid JSON at line 2 column 18: expected `,` or `}`");
        assert_eq!(
            parse("{\n /* open").unwrap_err(),
            "unterminated /* comment starting at line 2 column 2"
        );
    }

    #[test]
    fn non_ascii_in_comments_and_bom() {
        assert_eq!(
            parse("\u{feff}{/* é€ */\"a\": 1 // ü\n}").unwrap(),
            json!({"a": 1})
        );
    }
}
