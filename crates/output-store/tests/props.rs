//! Properties of `bound` for any text and limits.

use proptest::prelude::*;
use tackle_output_store::OutputStore;

use crate::common::*;

fn text_strategy() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        5 => "[a-z0-9 .:]{0,40}",
        2 => "[é日本😀a]{0,25}",
        1 => (1usize..6000, "[xé😀]").prop_map(|(n, c)| c.repeat(n)),
    ];
    (prop::collection::vec(line, 0..300), any::<bool>()).prop_map(|(lines, trailing)| {
        let mut text = lines.join("\n");
        if trailing {
            text.push('\n');
        }
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn previews_are_bounded_prefix_and_suffix_and_the_file_is_the_input(
        text in text_strategy(),
        max_lines in 1usize..80,
        max_bytes in 128usize..6000,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with(dir.path(), max_lines, max_bytes);
        let bounded = store.bound("ses", "call", text_output(text.clone())).unwrap();
        let preview = model_text(&bounded.output);
        prop_assert!(preview.len() <= max_bytes, "{} bytes", preview.len());
        prop_assert!(lines(preview) <= max_lines, "{} lines", lines(preview));
        let Some(reference) = bounded.references.first() else {
            prop_assert_eq!(preview, text.as_str());
            prop_assert!(text.len() <= max_bytes && lines(&text) <= max_lines);
            return Ok(());
        };
        prop_assert!(text.len() > max_bytes || lines(&text) > max_lines);

        // Marker aside, the preview starts with a prefix of the text and ends with a suffix.
        let name = reference.to_string();
        let at = preview.find(&name).unwrap();
        let start = preview[..at].rfind('\n').map_or(0, |i| i + 1);
        let end = preview[at..].find('\n').map_or(preview.len(), |i| at + i + 1);
        let before = preview[..start].split(" [... ").next().unwrap();
        let before = before.strip_suffix('\n').unwrap_or(before);
        let after = preview[end..].rsplit(" ...] ").next().unwrap();
        prop_assert!(text.starts_with(before));
        prop_assert!(text.ends_with(after));
        prop_assert!(bounded.omitted_bytes > 0);

        // The managed file is exactly the input, and pages give it back line by line.
        let files = managed_files(&store);
        prop_assert_eq!(files.len(), 1);
        let saved = std::fs::read(store.config().directory.join(&files[0])).unwrap();
        prop_assert_eq!(saved, text.as_bytes());
        let reader = OutputStore::new({
            let mut value = store.config().clone();
            value.max_bytes = 64 << 20;
            value
        });
        let mut lines_read = Vec::new();
        let mut offset = 1;
        loop {
            let page = reader.read_page(reference, offset, page_limits(&reader, 1000)).unwrap();
            lines_read.extend(page.lines);
            match page.next {
                Some(next) => offset = next,
                None => break,
            }
        }
        let expected: Vec<&str> = text.lines().collect();
        prop_assert_eq!(lines_read, expected);
    }
}
