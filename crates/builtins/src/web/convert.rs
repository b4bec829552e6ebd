//! HTML to Markdown (htmd, a turndown port) and HTML to visible text, and body decoding.
//!
//! Markdown keeps headings (ATX), lists (`-`), fenced code, emphasis and links, and drops
//! script, style, noscript, iframe, object, embed, svg, template and the document head.
//! Text is the visible text only, with block elements on their own lines (so `<li>a</li>
//! <li>b</li>` reads `a` and `b`, not `ab`) and whitespace collapsed outside `<pre>`.

use std::rc::Rc;

use encoding_rs::{Encoding, UTF_8};
use htmd::element_handler::{HandlerResult, Handlers};
use htmd::options::{BulletListMarker, CodeBlockStyle, HeadingStyle, Options};
use htmd::{Element, HtmlToMarkdown, Node};
use markup5ever_rcdom::NodeData;

/// Elements whose content is never shown.
const HIDDEN: [&str; 9] = [
    "script", "style", "noscript", "iframe", "object", "embed", "svg", "template", "head",
];

/// Elements that start and end a line.
const BLOCKS: [&str; 24] = [
    "address",
    "article",
    "aside",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "section",
    "summary",
    "tr",
    "caption",
    "tbody",
    "thead",
];

/// Elements separated from their neighbours by a blank line.
const PARAGRAPHS: [&str; 12] = [
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "pre",
    "table",
    "ul",
    "ol",
];

fn converter() -> HtmlToMarkdown {
    let options = Options {
        heading_style: HeadingStyle::Atx,
        code_block_style: CodeBlockStyle::Fenced,
        bullet_list_marker: BulletListMarker::Dash,
        ..Options::default()
    };
    let mut skipped: Vec<&str> = HIDDEN.to_vec();
    skipped.extend(["meta", "link"]);
    HtmlToMarkdown::builder()
        .options(options)
        .skip_tags(skipped)
        .add_handler(vec!["hr"], |_: &dyn Handlers, _: Element<'_>| {
            Some(HandlerResult::from("\n\n---\n\n"))
        })
        .add_handler(vec!["pre"], pre_handler)
        .add_handler(
            vec!["a"],
            |handlers: &dyn Handlers, element: Element<'_>| {
                // A link with nothing visible (an icon anchor) would read `[](#x)`.
                if visible(element.node) {
                    handlers.fallback(element)
                } else {
                    Some(HandlerResult::from(""))
                }
            },
        )
        .build()
}

/// `<pre>` without a `<code>` child (syntax-highlighted READMEs) is still a code block.
fn pre_handler(handlers: &dyn Handlers, element: Element<'_>) -> Option<HandlerResult> {
    let has_code = element.node.children.borrow().iter().any(
        |child| matches!(&child.data, NodeData::Element { name, .. } if &*name.local == "code"),
    );
    if has_code {
        return handlers.fallback(element);
    }
    let mut code = String::new();
    raw_text(element.node, &mut code);
    let code = code.trim_matches('\n');
    let mut fence = "```".to_owned();
    while code.contains(fence.as_str()) {
        fence.push('`');
    }
    Some(HandlerResult::from(format!(
        "\n\n{fence}\n{code}\n{fence}\n\n"
    )))
}

/// Every text below `node`, as written.
fn raw_text(node: &Rc<Node>, out: &mut String) {
    match &node.data {
        NodeData::Text { contents } => out.push_str(&contents.borrow()),
        NodeData::Element { name, .. } if HIDDEN.contains(&&*name.local) => {}
        _ => {
            for child in node.children.borrow().iter() {
                raw_text(child, out);
            }
        }
    }
}

/// True when `node` shows text or an image.
fn visible(node: &Rc<Node>) -> bool {
    match &node.data {
        NodeData::Text { contents } => !contents.borrow().trim().is_empty(),
        NodeData::Element { name, .. } if HIDDEN.contains(&&*name.local) => false,
        NodeData::Element { name, .. } if &*name.local == "img" => true,
        _ => node.children.borrow().iter().any(visible),
    }
}

/// `html` as Markdown.
pub fn html_to_markdown(html: &str) -> String {
    let converter = converter();
    match converter.html_to_tree(html) {
        Ok(tree) => converter.tree_to_markdown(&tree),
        // Parsing a &str cannot fail (html5ever recovers from every error); the I/O error
        // type is an artefact of the API. Fall back to the text view rather than lose it.
        Err(_) => html_to_text(html),
    }
}

/// The visible text of `html`.
pub fn html_to_text(html: &str) -> String {
    let Ok(tree) = converter().html_to_tree(html) else {
        return String::new();
    };
    let mut out = TextOut::default();
    walk(&tree, &mut out, false);
    out.text.trim().to_owned()
}

#[derive(Default)]
struct TextOut {
    text: String,
    /// Line breaks owed before the next text (the maximum requested).
    breaks: usize,
    /// A space owed before the next text.
    space: bool,
}

impl TextOut {
    fn block(&mut self, breaks: usize) {
        if breaks == 0 {
            return;
        }
        self.breaks = self.breaks.max(breaks);
        self.space = false;
    }

    fn flush(&mut self) {
        if self.breaks > 0 {
            if !self.text.is_empty() {
                let have = self.text.len() - self.text.trim_end_matches('\n').len();
                for _ in have..self.breaks {
                    self.text.push('\n');
                }
            }
            self.breaks = 0;
        } else if self.space && !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push(' ');
        }
        self.space = false;
    }

    fn inline(&mut self, raw: &str) {
        let words = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        if raw.starts_with(char::is_whitespace) {
            self.space = true;
        }
        if words.is_empty() {
            return;
        }
        self.flush();
        self.text.push_str(&words);
        self.space = raw.ends_with(char::is_whitespace);
    }

    fn preformatted(&mut self, raw: &str) {
        if raw.is_empty() {
            return;
        }
        self.flush();
        self.text.push_str(raw);
    }
}

fn walk(node: &Rc<Node>, out: &mut TextOut, pre: bool) {
    match &node.data {
        NodeData::Text { contents } => {
            let text = contents.borrow();
            if pre {
                out.preformatted(&text);
            } else {
                out.inline(&text);
            }
        }
        NodeData::Element { name, .. } => {
            let tag: &str = &name.local;
            if HIDDEN.contains(&tag) {
                return;
            }
            let breaks = if PARAGRAPHS.contains(&tag) {
                2
            } else if BLOCKS.contains(&tag) {
                1
            } else {
                0
            };
            match tag {
                "br" => out.block(1),
                "td" | "th" => out.space = true,
                _ => {}
            }
            out.block(breaks);
            let pre = pre || tag == "pre";
            for child in node.children.borrow().iter() {
                walk(child, out, pre);
            }
            out.block(breaks);
        }
        NodeData::Document => {
            for child in node.children.borrow().iter() {
                walk(child, out, pre);
            }
        }
        _ => {}
    }
}

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

    const WF7: &str = "<h1>Hello</h1><script>bad()</script><p>world <strong>wide</strong></p><style>.bad {}</style>";

    #[test]
    fn markdown_of_the_reference_example() {
        assert_eq!(html_to_markdown(WF7), "# Hello\n\nworld **wide**");
    }

    #[test]
    fn text_is_the_visible_text_by_block() {
        assert_eq!(html_to_text(WF7), "Hello\n\nworld wide");
        assert_eq!(
            html_to_text(
                "<ul><li>one</li><li>two <em>2</em></li></ul><noscript>x</noscript><iframe>y</iframe>"
            ),
            "one\ntwo 2"
        );
        assert_eq!(
            html_to_text("<pre>a\n  b</pre><p>c\n   d</p>"),
            "a\n  b\n\nc d"
        );
        assert_eq!(
            html_to_text("<table><tr><td>a</td><td>b</td></tr></table>"),
            "a b"
        );
    }

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
