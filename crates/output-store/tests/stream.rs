//! `save_stream`: a stream saved without being held, into the same file a spill of the same
//! text makes (full or capped), its secrets redacted.

use proptest::prelude::*;
use tackle_output_store::{OutputStore, StoreConfig};

use crate::common::*;

/// The one managed file of `store`, as bytes.
fn only_file(store: &OutputStore) -> Vec<u8> {
    let files = managed_files(store);
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read(store.config().directory.join(&files[0])).unwrap()
}

fn small_store(dir: &std::path::Path, spill_cap: u64, secret: &str) -> OutputStore {
    let mut config = StoreConfig::in_data_dir(dir).with_redactions([secret.to_owned()]);
    config.max_lines = 10;
    config.max_bytes = 1024;
    config.spill_cap = spill_cap;
    OutputStore::new(config)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_streamed_save_is_the_file_a_spill_makes(
        lines in prop::collection::vec(
            prop_oneof![
                4 => "[a-z0-9 ]{0,60}",
                1 => "[é日😀]{0,30}",
                1 => Just("the-secret-value".to_owned()),
                1 => (1usize..9000, "[xé]").prop_map(|(n, c)| c.repeat(n)),
            ],
            1..200,
        ),
        trailing in any::<bool>(),
        spill_cap in 4096u64..40_000,
    ) {
        let mut text = lines.join("\n");
        if trailing {
            text.push('\n');
        }
        let spilled = tempfile::tempdir().unwrap();
        let streamed = tempfile::tempdir().unwrap();
        let spill_store = small_store(spilled.path(), spill_cap, "the-secret-value");
        let stream_store = small_store(streamed.path(), spill_cap, "the-secret-value");
        let bounded = spill_store.bound("ses", "c1", text_output(text.clone())).unwrap();
        prop_assume!(!bounded.references.is_empty());
        let reference = stream_store
            .save_stream("ses", "c1", &mut text.as_bytes())
            .unwrap();
        prop_assert!(reference.belongs_to("ses"));
        let file = only_file(&stream_store);
        prop_assert_eq!(&file, &only_file(&spill_store));
        prop_assert!(file.len() as u64 <= spill_cap.max(text.len() as u64));
        prop_assert!(!String::from_utf8_lossy(&file).contains("the-secret-value"));
    }
}

#[test]
fn a_stream_of_many_megabytes_is_capped_and_readable() {
    let dir = tempfile::tempdir().unwrap();
    let store = small_store(dir.path(), 1 << 20, "the-secret-value");
    let body: String = (0..400_000u32)
        .map(|i| format!("line {i} the-secret-value\n"))
        .collect();
    let reference = store
        .save_stream("ses", "c1", &mut body.as_bytes())
        .unwrap();
    let first = store
        .read_page(
            &reference,
            1,
            tackle_output_store::PageLimits::new(2, 4096, 12),
        )
        .unwrap();
    assert_eq!(first.lines, ["line 0 [REDACTED]", "line 1 [REDACTED]"]);
    assert_eq!(first.total_lines, 400_000);
    let last = store
        .read_page(
            &reference,
            400_000,
            tackle_output_store::PageLimits::new(2, 4096, 12),
        )
        .unwrap();
    assert_eq!(last.lines, ["line 399999 [REDACTED]"]);
    assert!(only_file(&store).len() <= 1 << 20);
}

/// With a large cap the cuts look for a line boundary no further than a streamed save reads
/// around them; both ways cut a line longer than that in the same place.
#[test]
fn a_large_capped_save_cuts_where_a_spill_does() {
    // The head's limit is about 160 KiB: its last newline lies 70 KiB before it, inside the
    // head's outer half but further than a streamed save looks.
    let text = format!(
        "first line\n{}\n{}\n{}\nlast",
        "a".repeat(90 * 1024),
        "x".repeat(200 * 1024),
        "y\n".repeat(300 * 1024)
    );
    let spilled = tempfile::tempdir().unwrap();
    let streamed = tempfile::tempdir().unwrap();
    let spill_store = small_store(spilled.path(), 400 * 1024, "the-secret-value");
    let stream_store = small_store(streamed.path(), 400 * 1024, "the-secret-value");
    let bounded = spill_store
        .bound("ses", "c1", text_output(text.clone()))
        .unwrap();
    assert!(!bounded.references.is_empty());
    stream_store
        .save_stream("ses", "c1", &mut text.as_bytes())
        .unwrap();
    let file = only_file(&stream_store);
    assert!(file.len() <= 400 * 1024);
    assert!(file == only_file(&spill_store), "the two files differ");
}
