//! Decoding a fetched body to text: BOM, declared charset, `<meta>` charset, then detection.

use encoding_rs::{Encoding, UTF_8};

/// Decodes a body: a BOM wins, then the `charset` of `content_type`, then (for HTML) a
/// `<meta>` charset in the first 1024 bytes, then UTF-8 when the bytes are valid UTF-8, else
/// the detector's guess. `complete` is false for a body cut at the size cap, whose last
/// character may be incomplete and is then dropped instead of replaced.
pub fn decode(bytes: &[u8], content_type: &str, complete: bool) -> String {
    let (encoding, skip) = match Encoding::for_bom(bytes) {
        Some((encoding, bom)) => (encoding, bom),
        None => (pick_encoding(bytes, content_type, complete), 0),
    };
    let body = &bytes[skip..];
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let capacity = decoder
        .max_utf8_buffer_length(body.len())
        .unwrap_or(body.len());
    let mut text = String::with_capacity(capacity);
    let _ = decoder.decode_to_string(body, &mut text, complete);
    text
}

fn pick_encoding(bytes: &[u8], content_type: &str, complete: bool) -> &'static Encoding {
    if let Some(encoding) =
        charset_param(content_type).and_then(|label| Encoding::for_label(label.as_bytes()))
    {
        return encoding;
    }
    if content_type.to_ascii_lowercase().contains("html")
        && let Some(encoding) = meta_charset(&bytes[..bytes.len().min(1024)])
    {
        // A page cannot declare itself UTF-16 in ASCII-compatible bytes (HTML spec).
        return if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
            UTF_8
        } else {
            encoding
        };
    }
    let valid = match std::str::from_utf8(bytes) {
        Ok(_) => true,
        // A cut body may end inside a character; everything before it must be valid.
        Err(err) => !complete && err.error_len().is_none(),
    };
    if valid {
        return UTF_8;
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(bytes, complete);
    detector.guess(None, chardetng::Utf8Detection::Allow)
}

/// The `charset` parameter of a Content-Type value.
fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (key, value) = param.split_once('=')?;
        key.trim().eq_ignore_ascii_case("charset").then(|| {
            value
                .trim()
                .trim_matches(|c| c == '"' || c == '\'')
                .to_owned()
        })
    })
}

/// A charset named by a `<meta charset=...>` or `<meta http-equiv=... content="...;
/// charset=...">` in `head`.
fn meta_charset(head: &[u8]) -> Option<&'static Encoding> {
    let lower = String::from_utf8_lossy(head).to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(start) = rest.find("<meta") {
        let tag = &rest[start..];
        let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
        if let Some(at) = tag.find("charset") {
            let value = tag[at + "charset".len()..].trim_start();
            if let Some(value) = value.strip_prefix('=') {
                let label: String = value
                    .trim_start()
                    .trim_start_matches(['"', '\''])
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
                    .collect();
                if let Some(encoding) = Encoding::for_label(label.as_bytes()) {
                    return Some(encoding);
                }
            }
        }
        rest = &rest[start + 5..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charset_sources_in_order() {
        let latin1 = b"caf\xe9";
        assert_eq!(
            decode(latin1, "text/plain; charset=ISO-8859-1", true),
            "café"
        );
        assert_eq!(decode("café".as_bytes(), "text/plain", true), "café");
        let meta = b"<html><head><meta charset=\"windows-1252\"></head><body>caf\xe9</body></html>";
        assert!(decode(meta, "text/html", true).contains("café"));
        let equiv =
            b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\">\xe9";
        assert!(decode(equiv, "text/html", true).ends_with('é'));
        assert_eq!(
            decode(b"\xef\xbb\xbfhi", "text/plain; charset=latin1", true),
            "hi"
        );
        // A body cut inside a character keeps what is complete.
        assert_eq!(decode(&"aé".as_bytes()[..2], "text/plain", false), "a");
    }
}
