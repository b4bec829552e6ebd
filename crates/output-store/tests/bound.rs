//! `bound`: the reference's cases adapted to text bounding, and the fast path.

use serde_json::json;
use tackle_output_store::{MAX_BYTES, OutputRef, StoreConfig, StoreError};
use tackle_tool_core::OutputContent;

use crate::common::*;

#[test]
fn output_within_limits_passes_unchanged_without_copying_or_creating_anything() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let body = String::from("one\ntwo");
    let address = body.as_ptr();
    let input = text_output(body);
    let expected = input.clone();
    let bounded = store.bound("ses", "call", input).unwrap();
    assert_eq!(bounded.output, expected);
    assert!(!bounded.truncated && bounded.references.is_empty());
    assert_eq!((bounded.omitted_lines, bounded.omitted_bytes), (0, 0));
    // The very same allocation: nothing was copied.
    assert_eq!(model_text(&bounded.output).as_ptr(), address);
    assert!(
        !store.config().directory.exists(),
        "nothing is created before a spill"
    );
}

#[test]
fn head_and_tail_survive_and_the_file_holds_everything() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), 2000, 300);
    let body = format!("HEAD-{}-TAIL", "x".repeat(500));
    let bounded = store
        .bound("ses", "call", text_output(body.clone()))
        .unwrap();
    assert!(bounded.truncated);
    let [reference] = bounded.references.as_slice() else {
        panic!("one reference")
    };
    let preview = model_text(&bounded.output);
    assert!(preview.len() <= 300);
    assert!(preview.contains(&reference.to_string()));
    assert!(preview.starts_with("HEAD-") && preview.contains("-TAIL"));
    assert!(
        !preview.contains(dir.path().to_str().unwrap()),
        "no raw path reaches the model"
    );
    let files = managed_files(&store);
    assert_eq!(files, [format!("tool_{}", reference.id())]);
    let saved = std::fs::read_to_string(store.config().directory.join(&files[0])).unwrap();
    assert_eq!(saved, body);
    assert_eq!(bounded.output.structured, json!({"ok": true}));
}

#[test]
fn two_large_texts_are_bounded_as_the_text_the_model_reads() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let (a, b) = ("a".repeat(30_000), "b".repeat(30_000));
    let input = tackle_tool_core::ToolOutput::new(
        json!({"kind": "report"}),
        vec![text(a.clone()), text(b.clone())],
    );
    let bounded = store.bound("ses", "call", input).unwrap();
    assert_eq!(bounded.output.structured, json!({"kind": "report"}));
    assert_eq!(bounded.references.len(), 1);
    let preview = model_text(&bounded.output);
    assert!(preview.len() <= MAX_BYTES);
    // Two lines: the head of the first text and the tail of the second; nothing is JSON.
    assert!(preview.starts_with("aaaa") && preview.ends_with("bbbb"));
    assert!(!preview.contains("\"content\""));
    let mut stored = String::new();
    std::io::Read::read_to_string(
        &mut store.open(&bounded.references[0]).unwrap(),
        &mut stored,
    )
    .unwrap();
    assert_eq!(stored, format!("{a}\n{b}"));
    assert_eq!(bounded.omitted_lines, 0);
    assert_eq!(
        bounded.omitted_bytes as usize,
        60_001 - (preview.len() - marker_bytes(preview))
    );
}

/// Bytes of the preview that are not input: the marker line (with its separating newline)
/// and inline markers.
fn marker_bytes(preview: &str) -> usize {
    let main = preview
        .split('\n')
        .find(|line| line.starts_with("[... "))
        .unwrap();
    let inline: usize = preview
        .match_indices(" [... ")
        .map(|(at, _)| preview[at..].find(" ...] ").unwrap() + " ...] ".len())
        .sum();
    main.len() + 1 + inline
}

#[test]
fn a_large_structured_value_is_replaced_by_its_reference() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let items: Vec<_> = (0..2000)
        .map(|i| json!({"index": i, "name": format!("item {i}")}))
        .collect();
    let structured = json!({"items": items});
    let compact = serde_json::to_vec(&structured).unwrap().len();
    let bounded = store
        .bound("ses", "call", structured_only(structured.clone()))
        .unwrap();
    assert!(bounded.truncated);
    assert_eq!(bounded.omitted_bytes, compact as u64);
    let [reference] = bounded.references.as_slice() else {
        panic!("one reference")
    };
    assert_eq!(bounded.output.structured["truncated"], json!(true));
    assert_eq!(bounded.output.structured["bytes"], json!(compact));
    assert_eq!(
        bounded.output.structured["reference"],
        json!(reference.to_string())
    );
    assert!(
        serde_json::to_vec(&bounded.output.structured)
            .unwrap()
            .len()
            < 512
    );
    assert!(bounded.output.content.is_empty());
    // The saved value is pretty JSON, so it pages by line.
    let page = store
        .read_page(reference, 1, page_limits(&store, 5))
        .unwrap();
    assert_eq!(
        page.lines,
        [
            "{",
            "  \"items\": [",
            "    {",
            "      \"index\": 0,",
            "      \"name\": \"item 0\""
        ]
    );
    let mut stored = String::new();
    std::io::Read::read_to_string(&mut store.open(reference).unwrap(), &mut stored).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&stored).unwrap(),
        structured
    );
}

#[test]
fn text_and_structured_both_over_give_two_references() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let input = tackle_tool_core::ToolOutput::new(
        json!({"blob": "z".repeat(20_000)}),
        vec![text("y\n".repeat(3000))],
    );
    let bounded = store.bound("ses", "call", input).unwrap();
    assert_eq!(bounded.references.len(), 2);
    assert!(model_text(&bounded.output).contains(&bounded.references[0].to_string()));
    assert_eq!(
        bounded.output.structured["reference"],
        json!(bounded.references[1].to_string())
    );
    assert_eq!(managed_files(&store).len(), 2);
}

#[test]
fn media_is_never_cut() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let image = OutputContent::File {
        uri: format!("data:image/png;base64,{}", "A".repeat(68_268)),
        mime: "image/png".into(),
        name: Some("shot.png".into()),
    };
    let input = output(vec![text("caption"), image.clone()]);
    let bounded = store.bound("ses", "call", input.clone()).unwrap();
    assert_eq!(bounded.output, input);
    assert!(bounded.references.is_empty());

    // Over the text limit: the text becomes a preview in place, the media stays after it.
    let input = output(vec![text("t\n".repeat(5000)), image.clone(), text("more")]);
    let bounded = store.bound("ses", "call", input).unwrap();
    assert_eq!(bounded.output.content.len(), 2);
    assert!(model_text(&bounded.output).ends_with("t\nmore"));
    assert_eq!(bounded.output.content[1], image);
}

#[test]
fn inline_media_over_five_mebibytes_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let image = OutputContent::File {
        uri: format!("data:image/png;base64,{}", "A".repeat(7 * 1024 * 1024)),
        mime: "image/png".into(),
        name: None,
    };
    let err = store.bound("ses", "call", output(vec![image])).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::MediaTooLarge {
                bytes: 5_505_024,
                ..
            }
        ),
        "{err}"
    );
    assert!(!store.config().directory.exists());
}

#[test]
fn configured_limits_apply() {
    let dir = tempfile::tempdir().unwrap();
    let config = {
        let mut value = StoreConfig::in_data_dir(dir.path());
        value.max_lines = 2;
        value.max_bytes = 1000;
        value
    };
    let store = tackle_output_store::OutputStore::new(config.clone());
    assert_eq!(store.config(), &config);
    let bounded = store.bound("ses", "call", text_output("a\nb\nc")).unwrap();
    assert!(bounded.truncated);
    let preview = model_text(&bounded.output);
    assert_eq!(lines(preview), 2);
    assert!(preview.ends_with("...]\nc"), "{preview}");
    assert_eq!((bounded.omitted_lines, bounded.omitted_bytes), (2, 4));
    // Two lines exactly is within the limit.
    assert!(
        store
            .bound("ses", "call", text_output("a\nb\n"))
            .unwrap()
            .references
            .is_empty()
    );
}

#[test]
fn line_and_byte_limits_are_inclusive() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let at_limit = "x\n".repeat(2000);
    assert!(
        store
            .bound("s", "c", text_output(at_limit.clone()))
            .unwrap()
            .references
            .is_empty()
    );
    let over = format!("{at_limit}x");
    assert_eq!(
        store
            .bound("s", "c", text_output(over))
            .unwrap()
            .omitted_lines,
        2
    );
    // Two parts are joined by a newline, which counts.
    let two = |extra: usize| {
        output(vec![
            text("a".repeat(25_600)),
            text("b".repeat(25_599 + extra)),
        ])
    };
    assert!(store.bound("s", "c", two(0)).unwrap().references.is_empty());
    assert_eq!(store.bound("s", "c", two(1)).unwrap().references.len(), 1);
    let bytes = "y".repeat(MAX_BYTES);
    assert!(
        store
            .bound("s", "c", text_output(bytes.clone()))
            .unwrap()
            .references
            .is_empty()
    );
    let bounded = store.bound("s", "c", text_output(bytes + "y")).unwrap();
    assert!(bounded.truncated && bounded.references.len() == 1);
}

#[test]
fn invalid_utf8_is_saved_exactly_and_shown_lossily() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let raw = b"ok\nbad \xff\xfe end\n".to_vec();
    let bounded = store.bound_bytes("ses", "call", raw.clone()).unwrap();
    assert!(bounded.invalid_utf8 && !bounded.truncated);
    assert!(
        bounded
            .text
            .starts_with("ok\nbad \u{fffd}\u{fffd} end\n[... nothing omitted (2 lines, 14 bytes).")
    );
    assert!(bounded.text.contains("not valid UTF-8"));
    let reference = bounded.reference.unwrap();
    let mut stored = Vec::new();
    std::io::Read::read_to_end(&mut store.open(&reference).unwrap(), &mut stored).unwrap();
    assert_eq!(stored, raw);

    let valid = store
        .bound_bytes("ses", "call", b"fine\n".to_vec())
        .unwrap();
    assert_eq!((valid.text.as_str(), valid.reference), ("fine\n", None));
    let large = store
        .bound_bytes("ses", "call", "z\n".repeat(3000).into_bytes())
        .unwrap();
    assert!(large.truncated && large.reference.is_some() && !large.invalid_utf8);
}

#[test]
fn concurrent_bounds_get_distinct_references() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let references: Vec<OutputRef> = std::thread::scope(|scope| {
        // Spawn all threads first so the bounds run at the same time.
        let mut handles = Vec::new();
        for i in 0..8 {
            let store = store.clone();
            handles.push(scope.spawn(move || {
                let body = format!("{i}\n").repeat(3000);
                store
                    .bound("ses", &format!("call-{i}"), text_output(body))
                    .unwrap()
                    .references
            }));
        }
        let mut references = Vec::new();
        for handle in handles {
            references.extend(handle.join().unwrap());
        }
        references
    });
    let unique: std::collections::HashSet<_> = references.iter().collect();
    assert_eq!(unique.len(), 8);
    assert_eq!(managed_files(&store).len(), 8);
    for reference in &references {
        assert!(reference.belongs_to("ses"));
    }
}
