//! Retention, quota, session removal: through the store, on real files.

use std::fs::File;
use std::time::{Duration, SystemTime};

use tackle_output_store::{CleanupReport, OutputStore, StoreConfig};

use crate::common::*;

const DAY: Duration = Duration::from_secs(86_400);

fn age(store: &OutputStore, name: &str, by: Duration) {
    let file = File::options()
        .write(true)
        .open(store.config().directory.join(name))
        .unwrap();
    file.set_modified(SystemTime::now() - by).unwrap();
}

#[test]
fn cleanup_removes_old_outputs_and_keeps_everything_else() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    for _ in 0..3 {
        store
            .bound("ses", "call", text_output("x\n".repeat(3000)))
            .unwrap();
    }
    let names = managed_files(&store);
    age(&store, &names[0], 8 * DAY);
    std::fs::write(store.config().directory.join("keep.txt"), "mine").unwrap();
    std::fs::write(store.config().directory.join("tool_notours"), "mine").unwrap();
    let report = store.cleanup().unwrap();
    assert_eq!(
        (report.expired, report.evicted, report.kept, report.failed),
        (1, 0, 2, 0)
    );
    let mut remaining = managed_files(&store);
    remaining.retain(|name| !names[1..].contains(name));
    assert_eq!(remaining, ["keep.txt", "tool_notours"]);
}

#[cfg(unix)]
#[test]
fn cleanup_never_follows_or_removes_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    store
        .bound("ses", "call", text_output("x\n".repeat(3000)))
        .unwrap();
    let target = dir.path().join("precious");
    std::fs::write(&target, "do not touch").unwrap();
    let link = store
        .config()
        .directory
        .join("tool_faaaaaaaaaaaaaaaaaaaaaaaaaa");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let report = store.cleanup().unwrap();
    assert_eq!(report.kept, 1);
    let config = {
        let mut value = store.config().clone();
        value.retention = Duration::ZERO;
        value.quota = 0;
        value
    };
    let report = OutputStore::new(config).cleanup().unwrap();
    assert_eq!((report.expired, report.kept), (1, 0));
    assert!(link.symlink_metadata().is_ok() && target.exists());
}

#[test]
fn the_quota_evicts_the_oldest_outputs_when_spilling() {
    let dir = tempfile::tempdir().unwrap();
    let store = OutputStore::new({
        let mut value = StoreConfig::in_data_dir(dir.path());
        value.quota = 25_000;
        value
    });
    let mut references = Vec::new();
    for i in 0..4u64 {
        // Each output is 6000 lines of "i\n": 12 000 bytes.
        let bounded = store
            .bound("ses", "call", text_output(format!("{i}\n").repeat(6000)))
            .unwrap();
        let name = format!("tool_{}", bounded.references[0].id());
        age(&store, &name, Duration::from_secs(100 - i * 10));
        references.push(bounded.references[0].clone());
    }
    // At most two 12 000-byte files fit in 25 000 bytes; the newest always stays.
    let files = managed_files(&store);
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(
        store
            .read_page(&references[3], 1, page_limits(&store, 1))
            .is_ok()
    );
    assert!(
        store
            .read_page(&references[2], 1, page_limits(&store, 1))
            .is_ok()
    );
    assert!(
        store
            .read_page(&references[0], 1, page_limits(&store, 1))
            .is_err()
    );
}

#[test]
fn removing_a_session_removes_only_its_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let mine = store
        .bound("ses_a", "c", text_output("a\n".repeat(3000)))
        .unwrap();
    let theirs = store
        .bound("ses_b", "c", text_output("b\n".repeat(3000)))
        .unwrap();
    let report = store.remove_session("ses_a").unwrap();
    assert_eq!(
        report,
        CleanupReport {
            removed: 1,
            freed_bytes: 6000,
            kept: 1,
            kept_bytes: 6000,
            ..CleanupReport::default()
        }
    );
    assert!(
        store
            .read_page(&mine.references[0], 1, page_limits(&store, 1))
            .is_err()
    );
    assert!(
        store
            .read_page(&theirs.references[0], 1, page_limits(&store, 1))
            .is_ok()
    );
}

#[test]
fn cleanup_of_a_store_that_never_spilled_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        store(dir.path()).cleanup().unwrap(),
        CleanupReport::default()
    );
}

/// Backdates the directory's sweep record by `by`, as if the last sweep ran that long ago.
fn backdate_sweep(store: &OutputStore, by: Duration) {
    let path = store.config().directory.join(".sweep");
    let text = std::fs::read_to_string(&path).unwrap();
    let (secs, bytes) = text.trim_end().split_once(' ').unwrap();
    let secs: u64 = secs.parse().unwrap();
    std::fs::write(&path, format!("{} {bytes}\n", secs - by.as_secs())).unwrap();
}

#[test]
fn a_new_process_does_not_sweep_again_within_the_hour_but_the_quota_still_holds() {
    let dir = tempfile::tempdir().unwrap();
    let big = || text_output("x\n".repeat(6000));
    let first = store(dir.path());
    first.bound("ses", "call", big()).unwrap();
    let names = managed_files(&first);
    age(&first, &names[0], 8 * DAY);
    // Another process (a new store on the same directory) spills: the recent sweep counts, so
    // the expired output is not even looked at.
    let second = store(dir.path());
    second.bound("ses", "call", big()).unwrap();
    assert!(managed_files(&second).contains(&names[0]));
    // An hour later, the next process's spill sweeps.
    backdate_sweep(&second, Duration::from_secs(3601));
    let third = store(dir.path());
    third.bound("ses", "call", big()).unwrap();
    let files = managed_files(&third);
    assert!(!files.contains(&names[0]) && files.len() == 2, "{files:?}");
    // The bytes recorded across processes still trigger the quota: each output is 12 000 bytes,
    // so a fourth one in a directory limited to 30 000 evicts the oldest.
    let limited = OutputStore::new({
        let mut value = StoreConfig::in_data_dir(dir.path());
        value.quota = 30_000;
        value
    });
    limited.bound("ses", "call", big()).unwrap();
    limited.bound("ses", "call", big()).unwrap();
    assert_eq!(managed_files(&limited).len(), 2);
}

#[test]
fn a_future_or_broken_sweep_record_means_sweep_now() {
    let dir = tempfile::tempdir().unwrap();
    let first = store(dir.path());
    first
        .bound("ses", "call", text_output("x\n".repeat(6000)))
        .unwrap();
    let name = managed_files(&first).remove(0);
    for record in ["99999999999 0\n", "garbage"] {
        let copy = format!("{name}.copy");
        std::fs::copy(
            first.config().directory.join(&name),
            first.config().directory.join(&copy),
        )
        .unwrap();
        age(&first, &name, 8 * DAY);
        std::fs::write(first.config().directory.join(".sweep"), record).unwrap();
        store(dir.path())
            .bound("ses", "call", text_output("y\n".repeat(6000)))
            .unwrap();
        assert!(!managed_files(&first).contains(&name), "{record:?}");
        std::fs::rename(
            first.config().directory.join(&copy),
            first.config().directory.join(&name),
        )
        .unwrap();
    }
}
