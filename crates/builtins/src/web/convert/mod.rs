//! HTML to Markdown (htmd, a turndown port) and HTML to visible text, and body decoding.
//!
//! Markdown keeps headings (ATX), lists (`-`), fenced code, emphasis and links, and drops
//! script, style, noscript, iframe, object, embed, svg, template and the document head.
//! Text is the visible text only, with block elements on their own lines (so
//! `<li>a</li><li>b</li>` reads `a` and `b`, not `ab`) and whitespace collapsed outside
//! `<pre>`.
//!
//! A page is hostile input, so conversion is bounded: the parse stops at a deadline or at
//! [`MAX_NODES`](parse::MAX_NODES) nodes (`parse`), the tree is then shaped so no walk is deeper
//! than [`MAX_DEPTH`](shape::MAX_DEPTH) elements and no line is indented or quoted more than
//! [`MAX_INDENTS`](shape::MAX_INDENTS) times (`shape`), every walk of ours is iterative and
//! checks the deadline, and tables are drawn as tables only while padding keeps them small
//! (`markdown`). Real pages convert as before.

mod decode;
mod markdown;
mod parse;
mod shape;
mod text;

use std::time::Instant;

pub use decode::decode;

/// What a page converted only in part ends with: it has more than 500,000 nodes (elements,
/// text runs, comments), a bound on the memory a conversion takes, and the rest is not shown.
pub const NODE_LIMIT_NOTICE: &str =
    "\n\n[Preview: the page has more than 500000 HTML nodes; only the part before them is shown]";

/// Elements whose content is never shown.
pub(crate) const HIDDEN: [&str; 9] = [
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

/// True when an element's edges separate words (a space stands for them where the element is
/// flattened away).
fn separates_words(tag: &str) -> bool {
    BLOCKS.contains(&tag) || PARAGRAPHS.contains(&tag) || matches!(tag, "td" | "th")
}

/// `html` as Markdown; `None` when `deadline` passed first.
pub fn html_to_markdown(html: &str, deadline: Instant) -> Option<String> {
    markdown_within(html, deadline, parse::MAX_NODES)
}

/// The visible text of `html`; `None` when `deadline` passed first.
pub fn html_to_text(html: &str, deadline: Instant) -> Option<String> {
    text_within(html, deadline, parse::MAX_NODES)
}

fn markdown_within(html: &str, deadline: Instant, max_nodes: usize) -> Option<String> {
    let (document, ending) = parse::parse(html, deadline, max_nodes)?;
    shape::shape(&document, deadline)?;
    // The converter's own walk is recursive but bounded by the shaped tree's depth, and its
    // work by the node budget times that depth; the deadline is checked again after it.
    let mut markdown = markdown::converter().tree_to_markdown(&document);
    if Instant::now() > deadline {
        return None;
    }
    if ending == parse::Ending::Cut {
        markdown.push_str(NODE_LIMIT_NOTICE);
    }
    Some(markdown)
}

fn text_within(html: &str, deadline: Instant, max_nodes: usize) -> Option<String> {
    let (document, ending) = parse::parse(html, deadline, max_nodes)?;
    shape::shape(&document, deadline)?;
    let mut text = text::visible_text(&document, deadline)?;
    if ending == parse::Ending::Cut {
        text.push_str(NODE_LIMIT_NOTICE);
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn markdown(html: &str) -> String {
        html_to_markdown(html, Instant::now() + Duration::from_secs(600)).unwrap_or_default()
    }

    fn text(html: &str) -> String {
        html_to_text(html, Instant::now() + Duration::from_secs(600)).unwrap_or_default()
    }

    const WF7: &str = "<h1>Hello</h1><script>bad()</script><p>world <strong>wide</strong></p><style>.bad {}</style>";

    #[test]
    fn markdown_of_the_reference_example() {
        assert_eq!(markdown(WF7), "# Hello\n\nworld **wide**");
    }

    #[test]
    fn text_is_the_visible_text_by_block() {
        assert_eq!(text(WF7), "Hello\n\nworld wide");
        assert_eq!(
            text(
                "<ul><li>one</li><li>two <em>2</em></li></ul><noscript>x</noscript><iframe>y</iframe>"
            ),
            "one\ntwo 2"
        );
        assert_eq!(text("<pre>a\n  b</pre><p>c\n   d</p>"), "a\n  b\n\nc d");
        assert_eq!(text("<table><tr><td>a</td><td>b</td></tr></table>"), "a b");
    }

    #[test]
    fn the_notice_names_the_budget() {
        assert!(NODE_LIMIT_NOTICE.contains(&parse::MAX_NODES.to_string()));
    }

    #[test]
    fn a_page_over_the_budget_ends_with_the_notice() {
        let far = Instant::now() + Duration::from_secs(600);
        let page = format!("<p>first</p>{}<p>last</p>", "<br>".repeat(100));
        for converted in [
            markdown_within(&page, far, 50).unwrap_or_default(),
            text_within(&page, far, 50).unwrap_or_default(),
        ] {
            assert!(converted.starts_with("first"), "{converted}");
            assert!(converted.ends_with(NODE_LIMIT_NOTICE), "{converted}");
            assert!(!converted.contains("last"), "{converted}");
        }
        assert_eq!(
            markdown_within(&page, far, 500)
                .unwrap_or_default()
                .matches("Preview")
                .count(),
            0
        );
    }
}
