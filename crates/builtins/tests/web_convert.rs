//! HTML conversion of real-world-shaped pages (docs page, blog article, GitHub-like README).

use std::time::{Duration, Instant};

use tackle_builtins::web::{NODE_LIMIT_NOTICE, html_to_markdown, html_to_text};

/// A deadline no conversion here comes near.
fn far() -> Instant {
    Instant::now() + Duration::from_secs(600)
}

fn markdown(html: &str) -> String {
    html_to_markdown(html, far()).unwrap_or_default()
}

fn text(html: &str) -> String {
    html_to_text(html, far()).unwrap_or_default()
}

const PAGES: [(&str, &str); 3] = [
    ("docs_page", include_str!("fixtures/web/docs_page.html")),
    (
        "blog_article",
        include_str!("fixtures/web/blog_article.html"),
    ),
    (
        "github_readme",
        include_str!("fixtures/web/github_readme.html"),
    ),
];

#[test]
fn markdown_snapshots() {
    for (name, html) in PAGES {
        let markdown = markdown(html);
        for hidden in [
            "dataLayer",
            "font-family",
            "BlogPosting",
            "app.js",
            "octicon",
        ] {
            assert!(!markdown.contains(hidden), "{name}: {hidden}");
        }
        insta::assert_snapshot!(format!("{name}_markdown"), markdown);
    }
}

#[test]
fn text_snapshots() {
    for (name, html) in PAGES {
        let text = text(html);
        for hidden in ["dataLayer", "font-family", "BlogPosting", "<", "Menu"] {
            assert!(!text.contains(hidden), "{name}: {hidden}");
        }
        insta::assert_snapshot!(format!("{name}_text"), text);
    }
}

proptest::proptest! {
    /// Any markup converts without panicking, and hidden elements never show.
    #[test]
    fn conversion_is_total(body in "[a-z<>/ =\"'&;#0-9\n]{0,200}") {
        let page = format!("<p>{body}</p><script>SECRET()</script><style>.SECRET{{}}</style>");
        let markdown = markdown(&page);
        let text = text(&page);
        proptest::prop_assert!(!markdown.contains("SECRET"));
        proptest::prop_assert!(!text.contains("SECRET"));
    }

    /// Any bytes decode, whole or cut anywhere.
    #[test]
    fn decoding_is_total(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300), cut in 0usize..300) {
        let cut = cut.min(bytes.len());
        let _ = tackle_builtins::web::decode(&bytes, "text/html", true);
        let _ = tackle_builtins::web::decode(&bytes[..cut], "text/plain; charset=utf-8", false);
    }
}

/// `depth` nested `tag` elements around the word `deep`.
fn nested(tag: &str, depth: usize) -> String {
    format!(
        "{}deep{}",
        format!("<{tag}>").repeat(depth),
        format!("</{tag}>").repeat(depth)
    )
}

/// Converts `page` both ways on this (small-stacked) test thread, each within `seconds`, and
/// checks the innermost text survives.
fn converts_within(page: &str, seconds: u64) -> (String, String) {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let markdown = html_to_markdown(page, deadline).expect("markdown within the deadline");
    let text = html_to_text(page, deadline).expect("text within the deadline");
    assert!(
        markdown.contains("deep"),
        "{}",
        &markdown[..markdown.len().min(300)]
    );
    assert!(text.ends_with("deep"), "{}", &text[..text.len().min(300)]);
    (markdown, text)
}

// The nestings that overflowed the stack and aborted the process (issue 14, item 1).

#[test]
fn nested_lists_convert() {
    converts_within(&nested("ul", 2000), 30);
}

#[test]
fn nested_bold_converts() {
    converts_within(&nested("b", 3000), 30);
}

#[test]
fn nested_blockquotes_convert_and_quote_at_most_eight_deep() {
    let (markdown, _) = converts_within(&nested("blockquote", 5000), 30);
    assert_eq!(markdown, format!("{}deep", "> ".repeat(8)));
}

#[test]
fn nested_divs_convert() {
    converts_within(&nested("div", 10_000), 30);
}

#[test]
fn nested_spans_convert() {
    converts_within(&nested("span", 100_000), 30);
}

#[test]
fn deep_hidden_elements_inside_a_table_convert() {
    // Hidden elements are never dropped while parsing, and htmd's table handler looks through
    // them for header cells (all the way down when there is none).
    for hidden in ["svg", "object"] {
        let page = format!(
            "<table><tr><td>{}secret{}deep</td></tr></table>",
            format!("<{hidden}>").repeat(50_000),
            format!("</{hidden}>").repeat(50_000)
        );
        let (markdown, text) = converts_within(&page, 30);
        assert!(!markdown.contains("secret") && !text.contains("secret"));
    }
}

#[test]
fn dissolved_levels_keep_their_words_apart() {
    let inner =
        "<p>one</p><p>two<br>three</p><script>SECRET()</script><img src=\"i.png\" alt=\"pic\">";
    let page = format!("{}{inner}{}", "<div>".repeat(300), "</div>".repeat(300));
    let (markdown, text) = (
        html_to_markdown(&page, far()).unwrap(),
        html_to_text(&page, far()).unwrap(),
    );
    assert_eq!(markdown, "one two  \nthree ![pic](i.png)");
    assert_eq!(text, "one two\nthree");
}

#[test]
fn nested_lists_indent_at_most_eight_deep() {
    let page = format!("{}item{}", "<ul><li>".repeat(50), "</li></ul>".repeat(50));
    let markdown = markdown(&page);
    assert_eq!(markdown.matches('-').count(), 8, "{markdown}");
    assert!(markdown.ends_with("item"), "{markdown}");
}

#[test]
fn a_wide_cell_over_many_rows_is_not_padded_into_every_row() {
    let wide = "w".repeat(100_000);
    let rows = "<tr><td>a</td><td>b</td></tr>".repeat(20_000);
    let page = format!("<table><tr><th>h</th><th>{wide}</th></tr>{rows}</table>");
    let markdown = markdown(&page);
    // Padded, the table would be 20,000 rows of 100,000 characters (2 GB).
    assert!(markdown.len() < 4 * page.len(), "{}", markdown.len());
    assert!(markdown.contains(&wide));
    // A table of ordinary size is still drawn as one.
    assert_eq!(
        self::markdown("<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>"),
        "| k | v |\n| - | - |\n| a | 1 |"
    );
}

#[test]
fn long_runs_of_alike_inline_elements_merge_in_linear_time() {
    let page = "<i>x</i>".repeat(200_000);
    let started = Instant::now();
    let markdown = html_to_markdown(&page, started + Duration::from_secs(60)).unwrap();
    assert_eq!(markdown, format!("*{}*", "x".repeat(200_000)));
    // Merged one removal at a time, as htmd does, this takes more than twice as long.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_page_over_the_node_budget_is_converted_in_part_with_a_notice() {
    let page = format!("<p>first</p>{}<p>last</p>", "<br>".repeat(600_000));
    let converted = markdown(&page);
    assert!(converted.starts_with("first"), "{}", &converted[..100]);
    assert!(converted.ends_with(NODE_LIMIT_NOTICE));
    assert!(!converted.contains("last"));
}

#[test]
fn a_pathological_page_stops_at_the_deadline() {
    // A million nested <div>s: each start tag scans the open elements, seconds to parse.
    let page = "<div>".repeat(1_000_000);
    for convert in [html_to_markdown, html_to_text] {
        let started = Instant::now();
        let converted = convert(&page, started + Duration::from_millis(100));
        assert_eq!(converted, None);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }
}
