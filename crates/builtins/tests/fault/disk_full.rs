//! A disk that fills up in the middle of a write (see `small_fs` for how, chosen at run time):
//! write, edit and apply_patch leave every file with exactly its old bytes (a new file does not
//! appear), leave no temporary file, and say what failed; a large bash output whose full text
//! cannot be saved still comes back as a bounded preview that says so.

use serde_json::json;

use super::small_fs::{self, SIZE, SmallFs};
use super::{Host, no_hook, temp_files};

/// `kib` KiB of numbered lines.
fn lines(kib: u64, tag: &str) -> String {
    let mut text = String::new();
    let mut n = 0;
    while (text.len() as u64) < kib * 1024 {
        text.push_str(&format!("{tag} {n:08}\n"));
        n += 1;
    }
    text
}

fn host(fs: &SmallFs) -> Host {
    Host::new(&fs.dir.join("loc"), &fs.dir.join("data"), no_hook())
}

/// The failure names the system's error (whichever mechanism made it).
fn assert_out_of_space(fs: &SmallFs, message: &str) {
    assert!(
        message.contains(fs.mechanism.error_text()),
        "not the {:?} error: {message}",
        fs.mechanism
    );
}

#[test]
fn write_on_a_full_disk_keeps_the_old_file() {
    small_fs::run(
        "fault::disk_full::write_on_a_full_disk_keeps_the_old_file",
        |fs| async move {
            let host = host(&fs);
            let old = lines(100, "old");
            std::fs::write(host.root.join("old.txt"), &old).unwrap();
            let big = lines(300, "new");
            assert!(big.len() as u64 > SIZE);

            let replaced = host
                .error("write", json!({"path": "old.txt", "content": big}))
                .await;
            assert_out_of_space(&fs, &replaced);
            let created = host
                .error("write", json!({"path": "sub/new.txt", "content": big}))
                .await;
            assert_out_of_space(&fs, &created);
            assert_eq!(host.asked(), ["edit", "edit"]);

            assert!(std::fs::read(host.root.join("old.txt")).unwrap() == old.as_bytes());
            assert!(!host.root.join("sub/new.txt").exists());
            assert_eq!(temp_files(&fs.dir), Vec::<String>::new());
            insta::assert_snapshot!(
                "write",
                fs.redact(&host.redact(&format!("{replaced}\n{created}")))
            );
            // Nothing of the failed writes holds space: a write that fits succeeds.
            let fits = lines(100, "fits");
            let text = host
                .text("write", json!({"path": "old.txt", "content": fits}))
                .await;
            assert_eq!(text, "Wrote file successfully: old.txt");
            assert!(std::fs::read(host.root.join("old.txt")).unwrap() == fits.as_bytes());
        },
    );
}

#[test]
fn edit_on_a_full_disk_keeps_the_old_file() {
    small_fs::run(
        "fault::disk_full::edit_on_a_full_disk_keeps_the_old_file",
        |fs| async move {
            let host = host(&fs);
            let old = lines(150, "line");
            std::fs::write(host.root.join("e.txt"), &old).unwrap();
            let message = host
                .error(
                    "edit",
                    json!({
                        "path": "e.txt",
                        "oldString": "line 00000005\n",
                        "newString": lines(120, "added"),
                    }),
                )
                .await;
            assert_out_of_space(&fs, &message);
            assert!(std::fs::read(host.root.join("e.txt")).unwrap() == old.as_bytes());
            assert_eq!(temp_files(&fs.dir), Vec::<String>::new());
            insta::assert_snapshot!("edit", fs.redact(&host.redact(&message)));
        },
    );
}

#[cfg(feature = "apply-patch")]
#[test]
fn apply_patch_on_a_full_disk_changes_nothing() {
    small_fs::run(
        "fault::disk_full::apply_patch_on_a_full_disk_changes_nothing",
        |fs| async move {
            let host = host(&fs);
            std::fs::write(host.root.join("a.txt"), "alpha\n").unwrap();
            std::fs::write(host.root.join("c.txt"), "gamma\n").unwrap();
            let added: String = lines(300, "added")
                .lines()
                .map(|line| format!("+{line}\n"))
                .collect();
            let patch = format!(
                "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n\
                 *** Add File: b.txt\n{added}*** Delete File: c.txt\n*** End Patch\n"
            );
            let message = host.error("apply_patch", json!({"patchText": patch})).await;
            assert_out_of_space(&fs, &message);
            assert_eq!(
                std::fs::read_to_string(host.root.join("a.txt")).unwrap(),
                "alpha\n"
            );
            assert_eq!(
                std::fs::read_to_string(host.root.join("c.txt")).unwrap(),
                "gamma\n"
            );
            assert!(!host.root.join("b.txt").exists());
            assert_eq!(temp_files(&fs.dir), Vec::<String>::new());
            insta::assert_snapshot!("apply_patch", fs.redact(&host.redact(&message)));
        },
    );
}

#[cfg(feature = "bash")]
#[test]
fn a_large_output_that_cannot_be_saved_keeps_its_preview() {
    small_fs::run(
        "fault::disk_full::a_large_output_that_cannot_be_saved_keeps_its_preview",
        |fs| async move {
            let host = host(&fs);
            // 588,895 bytes: more than the disk (or a file) can hold.
            let settled = host
                .settle("bash", json!({"command": "seq 1 100000"}))
                .await;
            let tackle_tool_core::ResultValue::Text(text) = settled.result() else {
                panic!("{settled:?}")
            };
            assert!(text.len() <= tackle_tool_core::MAX_BYTES, "{}", text.len());
            assert!(text.starts_with("1\n2\n3\n"), "{text}");
            assert!(text.contains("\n99999\n100000"), "{text}");
            assert!(settled.truncated() && settled.references().is_empty());
            assert_out_of_space(&fs, settled.unsaved().unwrap());
            let marker = text.lines().find(|line| line.starts_with("[... ")).unwrap();
            insta::assert_snapshot!("bash_spill", fs.redact(marker));
            // The partial file was removed.
            let managed = fs.dir.join("data/tool-output");
            let left: Vec<_> = std::fs::read_dir(&managed).unwrap().collect();
            assert!(left.is_empty(), "{left:?}");
        },
    );
}
