//! The symlink-swap race: while a thread keeps exchanging a directory inside the Location with
//! a symlink to a directory outside it (`renameat2(RENAME_EXCHANGE)`), no tool call ever
//! returns outside content or names, and none writes outside.
//!
//! Before the tools opened exactly what they had resolved, the swap between resolution and
//! opening leaked through read, grep and write in a good share of the calls.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;

use std::time::Duration;

use rustix::fs::{CWD, RenameFlags, renameat_with};
use serde_json::{Value, json};
use tackle_permission::{Effect, Reply, Rule};
use tackle_tool_core::{OutputContent, ToolError, ToolOutput};

use super::support::Fixture;

/// Calls per tool: enough that the unprotected tools leaked many times over (read, write,
/// edit, apply_patch: in about half the calls; grep and glob: several times).
const CALLS: usize = 150;
/// Swaps that must happen while one tool's calls run.
const MIN_SWAPS: usize = 64;
const SECRET: &str = "SECRET-OUTSIDE";
const SECRET_NAME: &str = "outside-only.txt";
const INSIDE: &str = "alpha inside\n";

/// A Location with `inside/f.txt`, an outside directory with its own `f.txt` (holding the
/// secret) and `outside-only.txt`, and `swap`, a link to the outside directory that the
/// swapper exchanges with `inside` over and over.
struct Race {
    fx: Fixture,
    outside: PathBuf,
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicUsize>,
    swapper: Option<JoinHandle<()>>,
}

impl Race {
    fn start() -> Self {
        // Asks take a moment to answer, as a person's do: the window the race needs.
        let rules = vec![Rule::new("*", "*", Effect::Ask)];
        let fx = Fixture::answering_after(Reply::Once, rules, Duration::from_micros(300));
        fx.put("inside/f.txt", INSIDE);
        let outside = fx.real_outside();
        std::fs::write(outside.join("f.txt"), format!("alpha {SECRET}\n")).unwrap();
        std::fs::write(outside.join(SECRET_NAME), format!("{SECRET}\n")).unwrap();
        let link = fx.path("swap");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let (stop, swaps) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicUsize::new(0)),
        );
        let inside = fx.path("inside");
        let swapper = {
            let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    renameat_with(CWD, &inside, CWD, &link, RenameFlags::EXCHANGE).unwrap();
                    let n = swaps.fetch_add(1, Ordering::Relaxed) as u64 + 1;
                    // States of varied length, so that a whole read-and-write can fit in one,
                    // and now and then a long inside state.
                    let pause = if n.is_multiple_of(32) {
                        3000
                    } else {
                        40 * (n % 11)
                    };
                    std::thread::sleep(Duration::from_micros(pause));
                }
                // Leave the real directory at `inside`.
                if std::fs::symlink_metadata(&inside).unwrap().is_symlink() {
                    renameat_with(CWD, &inside, CWD, &link, RenameFlags::EXCHANGE).unwrap();
                }
            })
        };
        Self {
            fx,
            outside,
            stop,
            swaps,
            swapper: Some(swapper),
        }
    }

    /// Runs `name` with `input(i)` [`CALLS`] times, and on until the swapper has swapped
    /// [`MIN_SWAPS`] times meanwhile; returns the text of every result (success or failure).
    async fn calls(&self, name: &str, input: impl Fn(usize) -> Value) -> Vec<String> {
        let start = self.swaps.load(Ordering::Relaxed);
        let mut texts = Vec::with_capacity(CALLS);
        let mut i = 0;
        while i < CALLS || self.swaps.load(Ordering::Relaxed) - start < MIN_SWAPS {
            texts.push(text(self.fx.call(name, input(i)).await));
            i += 1;
        }
        texts
    }

    /// Stops the swapper and checks the outside directory is exactly as it was.
    fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.swapper.take().unwrap().join().unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["f.txt", SECRET_NAME],
            "something was created outside"
        );
        assert_eq!(
            std::fs::read_to_string(self.outside.join("f.txt")).unwrap(),
            format!("alpha {SECRET}\n"),
            "the outside file was written"
        );
    }
}

impl Drop for Race {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(swapper) = self.swapper.take() {
            let _ = swapper.join();
        }
    }
}

/// Everything a model would read of a result: its text parts, structured value or failure.
fn text(result: Result<ToolOutput, ToolError>) -> String {
    match result {
        Ok(output) => {
            let mut text = output.structured.to_string();
            for part in &output.content {
                if let OutputContent::Text { text: t } = part {
                    text.push_str(t);
                }
            }
            text
        }
        Err(ToolError::Failure(failure)) => failure.message,
        Err(other) => panic!("unexpected {other:?}"),
    }
}

fn assert_no_leak(texts: &[String]) {
    for text in texts {
        assert!(!text.contains(SECRET), "outside content leaked: {text}");
        assert!(
            !text.contains(SECRET_NAME),
            "an outside name leaked: {text}"
        );
    }
}

#[tokio::test]
async fn read_never_returns_outside_content() {
    let race = Race::start();
    let files = race
        .calls("read", |_| json!({"path": "inside/f.txt"}))
        .await;
    let listings = race.calls("read", |_| json!({"path": "inside"})).await;
    assert_no_leak(&files);
    assert_no_leak(&listings);
    race.finish();
}

#[tokio::test]
async fn write_never_writes_outside() {
    let race = Race::start();
    let texts = race
        .calls(
            "write",
            |i| json!({"path": "inside/f.txt", "content": format!("v{i}\n")}),
        )
        .await;
    assert_no_leak(&texts);
    race.finish();
}

#[tokio::test]
async fn edit_never_edits_outside() {
    let race = Race::start();
    let texts = race
        .calls("edit", |i| {
            let (old, new) = if i % 2 == 0 {
                ("alpha", "beta")
            } else {
                ("beta", "alpha")
            };
            json!({"path": "inside/f.txt", "oldString": old, "newString": new})
        })
        .await;
    assert_no_leak(&texts);
    race.finish();
}

#[cfg(feature = "apply-patch")]
#[tokio::test]
async fn apply_patch_never_patches_outside() {
    let race = Race::start();
    let texts = race
        .calls("apply_patch", |i| {
            let (old, new) = if i % 2 == 0 { ("alpha", "beta") } else { ("beta", "alpha") };
            let patch = format!(
                "*** Begin Patch\n*** Update File: inside/f.txt\n@@\n-{old} inside\n+{new} inside\n*** End Patch"
            );
            json!({"patchText": patch})
        })
        .await;
    assert_no_leak(&texts);
    race.finish();
}

#[cfg(feature = "search")]
#[tokio::test]
async fn grep_never_returns_outside_content() {
    let race = Race::start();
    let texts = race
        .calls("grep", |_| json!({"pattern": "alpha|SECRET"}))
        .await;
    let in_dir = race
        .calls(
            "grep",
            |_| json!({"pattern": "alpha|SECRET", "path": "inside"}),
        )
        .await;
    assert_no_leak(&texts);
    assert_no_leak(&in_dir);
    race.finish();
}

#[cfg(feature = "search")]
#[tokio::test]
async fn glob_never_lists_outside_names() {
    let race = Race::start();
    let texts = race.calls("glob", |_| json!({"pattern": "**/*.txt"})).await;
    let in_dir = race
        .calls("glob", |_| json!({"pattern": "*.txt", "path": "inside"}))
        .await;
    assert_no_leak(&texts);
    assert_no_leak(&in_dir);
    race.finish();
}
