//! HTML conversion of real-world-shaped pages (docs page, blog article, GitHub-like README).

use tackle_builtins::web::{html_to_markdown, html_to_text};

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
        let markdown = html_to_markdown(html);
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
        let text = html_to_text(html);
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
        let markdown = html_to_markdown(&page);
        let text = html_to_text(&page);
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
