//! `bound`: the generic bound the registry's settle applies to every successful output.
//!
//! The model reads the text parts, so the text is what is bounded (never a JSON envelope of
//! it): the text parts joined, a newline between two parts when the first does not end with
//! one. Output within the limits is returned as it came, without copying or serializing
//! anything. Media parts are never cut; the structured value is bounded on its own, except a
//! text tool's, which is its text and follows it.

use serde_json::Value;
use tackle_tool_core::{OutputContent, ToolOutput};

use crate::preview::{self, Limits, MarkerInfo};
use crate::reference::OutputRef;
use crate::spill::Written;
use crate::store::OutputStore;
use crate::text::{Text, count_lines, more_lines_than};
use crate::{MAX_INLINE_MEDIA_BYTES, StoreError, structured};

/// An output after the bound: what the model and the host receive, plus exact truncation facts.
#[derive(Debug, Clone, PartialEq)]
pub struct Bounded {
    /// The bounded output: the preview in place of the text parts, media unchanged, and the
    /// structured value or the small object that replaced it.
    pub output: ToolOutput,
    /// Something was left out (text or structured value).
    pub truncated: bool,
    /// Whole lines of text left out of the preview.
    pub omitted_lines: u64,
    /// Bytes left out: text bytes missing from the preview (including the middles of shortened
    /// lines) plus the compact JSON size of a replaced structured value.
    pub omitted_bytes: u64,
    /// The managed outputs holding what was left out: the text's, then the structured value's.
    pub references: Vec<OutputRef>,
    /// Why what was left out could not be saved (the storage error, for the host), when a
    /// spill failed: the preview is kept and its marker tells the model, and what it left out
    /// is lost.
    pub unsaved: Option<String>,
}

/// A text after the bound, from [`OutputStore::bound_bytes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundedText {
    /// The text, or its preview.
    pub text: String,
    /// Something was left out.
    pub truncated: bool,
    /// Whole lines left out.
    pub omitted_lines: u64,
    /// Bytes left out.
    pub omitted_bytes: u64,
    /// The managed output holding the exact bytes, when they were saved.
    pub reference: Option<OutputRef>,
    /// The bytes were not valid UTF-8: the text shows U+FFFD and the managed output keeps them.
    pub invalid_utf8: bool,
    /// Why the bytes could not be saved (the storage error, for the host), when the spill
    /// failed: the preview is kept and its marker tells the model.
    pub unsaved: Option<String>,
}

/// The note a preview of invalid UTF-8 carries.
const INVALID_UTF8_NOTE: &str = "The output is not valid UTF-8: invalid bytes are shown as \
                                 U+FFFD here and kept unchanged in the full output.";
/// The note when the full output could not be saved.
const INVALID_UTF8_UNSAVED_NOTE: &str =
    "The output is not valid UTF-8: invalid bytes are shown as U+FFFD here.";

struct TextBound {
    preview: String,
    omitted_lines: u64,
    omitted_bytes: u64,
    /// The managed output, or the storage error that kept it from being saved.
    reference: Result<OutputRef, String>,
}

impl OutputStore {
    /// Bounds one tool output (see the crate documentation for the rules), its secrets
    /// redacted first. Within the limits it
    /// is returned unchanged with no reference; otherwise the full text (and a structured value
    /// over the structured limit) is saved as a managed output and replaced by a preview. A
    /// storage failure (directory gone bad, disk full) keeps the preview, whose marker says the
    /// full output could not be saved and why, and is reported in [`Bounded::unsaved`]: the
    /// result is never lost, nor silently shortened.
    pub fn bound(
        &self,
        session_id: &str,
        call_id: &str,
        mut output: ToolOutput,
    ) -> Result<Bounded, StoreError> {
        self.redact(&mut output);
        if !self.needs_spill(&output)? {
            return Ok(Bounded {
                output,
                truncated: false,
                omitted_lines: 0,
                omitted_bytes: 0,
                references: Vec::new(),
                unsaved: None,
            });
        }
        self.bound_spilling(session_id, call_id, output)
    }

    /// The bound's decision, without file work: whether `output` is over a limit, so that
    /// [`bound`](Self::bound) would save a managed output (blocking file work); otherwise the
    /// output passes the bound as it is. Invalid limits and inline media over the limit are
    /// errors here already.
    pub fn needs_spill(&self, output: &ToolOutput) -> Result<bool, StoreError> {
        let config = self.config();
        config.validate()?;
        check_media(&output.content)?;
        // The whole text counts, a tool's own header, line numbers and status lines included.
        let text_within = text_size(&output.content, config.max_lines, config.max_bytes).within;
        Ok(!(text_within && structured::fits(&output.structured, config.max_structured_bytes())?))
    }

    /// True when `text` is within both text limits, so bounding it saves nothing.
    pub fn text_fits(&self, text: &str) -> bool {
        let config = self.config();
        text.len() <= config.max_bytes && !more_lines_than(text.as_bytes(), config.max_lines)
    }

    /// The bound of an output that is over a limit.
    fn bound_spilling(
        &self,
        session_id: &str,
        call_id: &str,
        mut output: ToolOutput,
    ) -> Result<Bounded, StoreError> {
        let mut truncated = false;
        let mut omitted_lines = 0;
        let mut omitted_bytes = 0;
        let mut references = Vec::new();
        let mut unsaved = None;
        // A text tool's structured value is its text (a JSON string): bounded once, as the
        // text, never saved a second time.
        let structured_is_text = matches!(
            (&output.structured, output.content.as_slice()),
            (Value::String(structured), [OutputContent::Text { text }]) if structured == text
        );
        if let Some(text) = self.bound_content(session_id, call_id, &output.content)? {
            truncated |= text.omitted_bytes > 0;
            omitted_lines += text.omitted_lines;
            omitted_bytes += text.omitted_bytes;
            match text.reference {
                Ok(reference) => references.push(reference),
                Err(err) => unsaved = Some(err),
            }
            if structured_is_text {
                output.structured = Value::String(text.preview.clone());
            }
            let (content, replaced) =
                replace_text(std::mem::take(&mut output.content), text.preview);
            output.content = content;
            release(replaced);
        }
        let limit = self.config().max_structured_bytes();
        if !structured_is_text && !structured::fits(&output.structured, limit)? {
            let bytes = structured::compact_len(&output.structured, usize::MAX)?.unwrap_or(0);
            let pretty =
                serde_json::to_vec_pretty(&output.structured).map_err(StoreError::Encode)?;
            output.structured = match self.try_spill(session_id, call_id, &pretty)? {
                Ok(written) => {
                    let replacement = structured::replacement(
                        &written.reference,
                        bytes,
                        limit,
                        self.config().paging.as_ref(),
                    );
                    references.push(written.reference);
                    replacement
                }
                Err((reason, err)) => {
                    unsaved.get_or_insert(err);
                    structured::unsaved_replacement(bytes, &reason)
                }
            };
            truncated = true;
            omitted_bytes += bytes as u64;
        }
        Ok(Bounded {
            output,
            truncated,
            omitted_lines,
            omitted_bytes,
            references,
            unsaved,
        })
    }

    /// Bounds the text parts of `content`; `None` when they are within the limits.
    fn bound_content(
        &self,
        session_id: &str,
        call_id: &str,
        content: &[OutputContent],
    ) -> Result<Option<TextBound>, StoreError> {
        let texts = || content.iter().filter_map(OutputContent::as_text);
        let config = self.config();
        let TextSize {
            within,
            parts,
            bytes,
        } = text_size(content, config.max_lines, config.max_bytes);
        if within {
            return Ok(None);
        }
        let joined;
        let text = match texts().next() {
            Some(one) if parts == 1 => one,
            _ => {
                joined = join(&texts().collect::<Vec<_>>(), bytes);
                joined.as_str()
            }
        };
        self.preview_text(session_id, call_id, Text::str(text), None)
            .map(Some)
    }

    /// Bounds raw bytes (for example a process's output), its secrets redacted first. Valid
    /// UTF-8 within the limits comes
    /// back as it is; anything else is saved exactly as a managed output, including valid text
    /// within the limits that is *not* valid UTF-8, which is shown lossily with a note.
    pub fn bound_bytes(
        &self,
        session_id: &str,
        call_id: &str,
        mut bytes: Vec<u8>,
    ) -> Result<BoundedText, StoreError> {
        let config = self.config();
        config.validate()?;
        self.redact_bytes(&mut bytes);
        let (text, invalid) = match String::from_utf8(bytes) {
            Ok(text) => {
                if self.text_fits(&text) {
                    return Ok(BoundedText {
                        text,
                        truncated: false,
                        omitted_lines: 0,
                        omitted_bytes: 0,
                        reference: None,
                        invalid_utf8: false,
                        unsaved: None,
                    });
                }
                let bound = self.preview_text(session_id, call_id, Text::str(&text), None)?;
                (bound, false)
            }
            Err(err) => {
                let bytes = err.into_bytes();
                let note = Some(INVALID_UTF8_NOTE);
                let bound = self.preview_text(session_id, call_id, Text::bytes(&bytes), note)?;
                (bound, true)
            }
        };
        let (reference, unsaved) = match text.reference {
            Ok(reference) => (Some(reference), None),
            Err(err) => (None, Some(err)),
        };
        Ok(BoundedText {
            text: text.preview,
            truncated: text.omitted_bytes > 0,
            omitted_lines: text.omitted_lines,
            omitted_bytes: text.omitted_bytes,
            reference,
            invalid_utf8: invalid,
            unsaved,
        })
    }

    /// Saves `body`; a storage failure is `Ok(Err((reason for the model, error for the
    /// host)))`, any other failure an error.
    fn try_spill(
        &self,
        session_id: &str,
        call_id: &str,
        body: &[u8],
    ) -> Result<Result<Written, (String, String)>, StoreError> {
        match self.spill(session_id, call_id, body) {
            Ok(written) => Ok(Ok(written)),
            Err(err) => match err.unsaved_reason() {
                Some(reason) => Ok(Err((reason, err.to_string()))),
                None => Err(err),
            },
        }
    }

    /// Saves `text` and returns its preview (a preview saying so when it cannot be saved).
    fn preview_text(
        &self,
        session_id: &str,
        call_id: &str,
        text: Text<'_>,
        note: Option<&str>,
    ) -> Result<TextBound, StoreError> {
        let config = self.config();
        let (saved, total_lines) = match self.try_spill(session_id, call_id, text.bytes)? {
            Ok(written) => (Ok(written.reference), written.total_lines),
            Err(failed) => (Err(failed), count_lines(text.bytes)),
        };
        let shown = match &saved {
            Ok(reference) => Ok(reference.to_string()),
            Err((reason, _)) => Err(reason.as_str()),
        };
        let note = match (&saved, note) {
            (Err(_), Some(_)) => Some(INVALID_UTF8_UNSAVED_NOTE),
            _ => note,
        };
        let info = MarkerInfo {
            reference: shown.as_ref().map(String::as_str).map_err(|reason| *reason),
            paging: config.paging.as_ref(),
            note,
        };
        let limits = Limits {
            lines: config.max_lines,
            bytes: config.max_bytes,
        };
        let preview = preview::preview(text, total_lines, limits, &info);
        Ok(TextBound {
            preview: preview.render(text),
            omitted_lines: preview.omitted_lines,
            omitted_bytes: preview.omitted_bytes,
            reference: saved.map_err(|(_, err)| err),
        })
    }
}

/// The size of the model text of `content` (its text parts joined).
struct TextSize {
    /// No text, or text within both limits.
    within: bool,
    parts: usize,
    /// Bytes once joined.
    bytes: usize,
}

/// Sizes the text parts of `content` without allocating: this runs for every settled output.
fn text_size(content: &[OutputContent], max_lines: usize, max_bytes: usize) -> TextSize {
    let texts = || content.iter().filter_map(OutputContent::as_text);
    let (mut parts, mut bytes, mut open_parts, mut last_open) = (0, 0, 0, false);
    for text in texts() {
        parts += 1;
        bytes += text.len();
        last_open = !text.is_empty() && !text.ends_with('\n');
        open_parts += usize::from(last_open);
    }
    if parts == 0 {
        return TextSize {
            within: true,
            parts,
            bytes,
        };
    }
    // A newline joins a part that does not end one to the next part.
    bytes += open_parts - usize::from(last_open);
    let within = bytes <= max_bytes
        && if parts == 1 {
            texts().all(|text| !more_lines_than(text.as_bytes(), max_lines))
        } else {
            // Each part ends a line once joined, so their line counts add up.
            let lines: u64 = texts().map(|text| count_lines(text.as_bytes())).sum();
            lines <= max_lines as u64
        };
    TextSize {
        within,
        parts,
        bytes,
    }
}

/// The text parts joined as the model reads them.
fn join(texts: &[&str], bytes: usize) -> String {
    let mut joined = String::with_capacity(bytes);
    for (i, text) in texts.iter().enumerate() {
        joined.push_str(text);
        if i + 1 < texts.len() && !text.is_empty() && !text.ends_with('\n') {
            joined.push('\n');
        }
    }
    joined
}

/// `content` with its text parts replaced by one `preview` part at the first one's place, and
/// the replaced texts.
fn replace_text(content: Vec<OutputContent>, preview: String) -> (Vec<OutputContent>, Vec<String>) {
    let mut preview = Some(preview);
    let mut replaced = Vec::new();
    let content = content
        .into_iter()
        .filter_map(|part| match part {
            OutputContent::Text { text } => {
                replaced.push(text);
                preview.take().map(|text| OutputContent::Text { text })
            }
            file @ OutputContent::File { .. } => Some(file),
        })
        .collect();
    (content, replaced)
}

/// Replaced texts at least this large are freed on a short-lived thread.
const DEFERRED_FREE_BYTES: usize = 16 << 20;

/// Frees replaced texts. Returning 100 MB to the system takes about 10 ms of unmapping, which
/// the caller's settle need not wait for; smaller texts are freed here.
fn release(texts: Vec<String>) {
    let bytes: usize = texts.iter().map(String::capacity).sum();
    if bytes >= DEFERRED_FREE_BYTES {
        // If no thread can be started the closure, and the texts with it, are dropped here.
        let _ = std::thread::Builder::new()
            .name("tackle-output-free".to_owned())
            .spawn(move || drop(texts));
    }
}

fn check_media(content: &[OutputContent]) -> Result<(), StoreError> {
    for part in content {
        if let OutputContent::File { uri, mime, .. } = part
            && let Some(bytes) = inline_bytes(uri)
            && bytes > MAX_INLINE_MEDIA_BYTES
        {
            return Err(StoreError::MediaTooLarge {
                mime: mime.clone(),
                bytes,
                limit: MAX_INLINE_MEDIA_BYTES,
            });
        }
    }
    Ok(())
}

/// Decoded bytes of a `data:` URI; `None` for other URIs (not inline).
fn inline_bytes(uri: &str) -> Option<usize> {
    let (meta, payload) = uri.strip_prefix("data:")?.split_once(',')?;
    if !meta.ends_with(";base64") {
        return Some(payload.len());
    }
    let padding = payload
        .bytes()
        .rev()
        .take_while(|b| *b == b'=')
        .count()
        .min(2);
    Some((payload.len() - padding) * 3 / 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_sizes() {
        assert_eq!(inline_bytes("data:image/png;base64,aGVsbG8="), Some(5));
        assert_eq!(inline_bytes("data:image/png;base64,iVBORw=="), Some(4));
        assert_eq!(inline_bytes("data:image/png;base64,aGVsbG8h"), Some(6));
        assert_eq!(inline_bytes("data:text/plain,hello"), Some(5));
        assert_eq!(inline_bytes("https://example.com/a.png"), None);
    }

    #[test]
    fn joining_makes_each_part_end_a_line() {
        assert_eq!(join(&["a", "b"], 3), "a\nb");
        assert_eq!(join(&["a\n", "b"], 3), "a\nb");
        assert_eq!(join(&["", "b", ""], 1), "b\n");
        for parts in [
            &["a", "b"][..],
            &["a\n", "", "c"],
            &["", "b", ""],
            &["x\ny", "z\n"],
        ] {
            let lines: u64 = parts.iter().map(|p| count_lines(p.as_bytes())).sum();
            assert_eq!(count_lines(join(parts, 0).as_bytes()), lines, "{parts:?}");
        }
    }

    #[test]
    fn text_parts_collapse_into_the_preview_in_place() {
        let file = OutputContent::File {
            uri: "data:image/png;base64,aGVsbG8=".into(),
            mime: "image/png".into(),
            name: None,
        };
        let content = vec![
            file.clone(),
            OutputContent::Text { text: "a".into() },
            file.clone(),
            OutputContent::Text { text: "b".into() },
        ];
        let (replaced, texts) = replace_text(content, "P".into());
        let expected = vec![file.clone(), OutputContent::Text { text: "P".into() }, file];
        assert_eq!(replaced, expected);
        assert_eq!(texts, ["a", "b"]);
    }
}
