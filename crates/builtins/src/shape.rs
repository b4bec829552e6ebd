//! Shaping a leaf's structured output to the call's budget.
//!
//! Settle bounds a leaf's model text and saves what it leaves out, once. A copy of that text in
//! the structured output would be saved a second time whenever the structured value is over
//! its own limit, so a leaf keeps such a copy only while the whole value fits.

use serde::Serialize;

/// Puts `text` in the field of `output` that `slot` selects, and takes it out again unless
/// `output` then fits `max_bytes` as compact JSON (a text that alone is too long is not copied).
pub(crate) fn keep_if_fits<O: Serialize>(
    output: &mut O,
    slot: fn(&mut O) -> &mut Option<String>,
    text: &str,
    max_bytes: usize,
) {
    if text.len() >= max_bytes {
        return;
    }
    *slot(output) = Some(text.to_owned());
    let fits = serde_json::to_vec(&*output).is_ok_and(|json| json.len() <= max_bytes);
    if !fits {
        *slot(output) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Out {
        name: &'static str,
        text: Option<String>,
    }

    fn text(out: &mut Out) -> &mut Option<String> {
        &mut out.text
    }

    #[test]
    fn the_copy_stays_only_while_the_value_fits() {
        let mut out = Out {
            name: "n",
            text: None,
        };
        keep_if_fits(&mut out, text, "short", 64);
        assert_eq!(out.text.as_deref(), Some("short"));
        // 30 bytes of text fit alone, but not with the rest of the value.
        let mut out = Out {
            name: "n",
            text: None,
        };
        keep_if_fits(&mut out, text, &"x".repeat(30), 40);
        assert_eq!(out.text, None);
        keep_if_fits(&mut out, text, &"x".repeat(50), 40);
        assert_eq!(out.text, None);
    }
}
