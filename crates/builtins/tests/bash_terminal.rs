//! Terminal output that asks for more than it gives: cursor moves to column 65535 and the
//! like, printed by a real command and by a background job, settled through a registry with a
//! real output store. The text, and any managed output saved from it, stays within a small
//! factor of what the command printed.

use std::io::Read as _;
use std::time::Duration;

use serde_json::{Value, json};
use tackle_builtins::bash::{
    JOB_OUTPUT_BYTES, JobStore, MAX_CAPTURE_BYTES, terminal_text, terminal_text_bound,
};
use tackle_builtins::{FileMutation, Location, LocationServices, builtin_tools};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{Effect, Permission, Reply, Rule, Ruleset, SavedApprovals};
use tackle_registry::{ApplicationTools, Materialization, Registration, ToolRegistry};
use tackle_tool_core::{Call, Context, ShowAll};

/// One cursor move to column 65535 and a character: 8 bytes that asked for 64 KiB.
const ATTACK: &[u8] = b"\x1b[65535Cx";
/// About 128 KB of such lines.
const ATTACK_LINES: usize = 13_000;
/// `printf`'s form of [`ATTACK`] followed by a newline, `ATTACK_LINES` times.
const PRINT_ATTACK: &str = "yes \"$(printf '\\033[65535Cx')\" | head -n 13000";

/// A Location whose calls settle through a registry with a real output store.
struct Settled {
    store: OutputStore,
    _registration: Registration,
    snapshot: Materialization,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

impl Settled {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let permission = Permission::new(
            Ruleset::new(vec![Rule::new("*", "*", Effect::Allow)]),
            SavedApprovals::in_memory(),
            std::sync::Arc::new(tackle_permission::AnswerAll(Reply::Reject {
                message: None,
            })),
        );
        let store = OutputStore::new(StoreConfig::in_data_dir(data.path()));
        let services = LocationServices::new(
            Location::new(root.path()).unwrap(),
            permission,
            store.clone(),
            FileMutation::new(),
        )
        .with_jobs(JobStore::new());
        let app = ApplicationTools::new();
        let registry = ToolRegistry::new(&app, store.clone());
        let registration = registry.tools().register(builtin_tools(&services)).unwrap();
        Self {
            store,
            _registration: registration,
            snapshot: registry.materialize(&ShowAll),
            _dirs: (root, data),
        }
    }

    /// The model text of `tool` settled with `input`, and the bytes of every managed output it
    /// saved.
    async fn settle(&self, tool: &str, input: Value) -> (String, usize, Value) {
        let settlement = self
            .snapshot
            .settle(&Call::new("call_1", tool, input), &Context::new("ses_1"))
            .await
            .unwrap();
        assert!(!settlement.is_error(), "{:?}", settlement.result());
        let output = settlement.output().unwrap();
        let text: String = output.content.iter().filter_map(|p| p.as_text()).collect();
        let mut saved = 0;
        for reference in settlement.references() {
            let mut bytes = Vec::new();
            self.store
                .open(reference)
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            saved += bytes.len();
        }
        (text, saved, output.structured.clone())
    }
}

#[test]
fn the_attacks_are_small_through_normalisation() {
    // 8 bytes asked for 256 KiB (65535 columns of four-byte characters).
    let text = terminal_text(ATTACK.to_vec());
    assert!(
        text.len() <= terminal_text_bound(ATTACK.len()),
        "{}",
        text.len()
    );
    assert!(text.len() <= 1024, "{}", text.len());
    // 128 KB asked for 8.4 GB.
    let stream = [ATTACK, b"\n"].concat().repeat(ATTACK_LINES);
    let text = terminal_text(stream.clone());
    assert!(
        text.len() <= terminal_text_bound(stream.len()),
        "{}",
        text.len()
    );
}

#[tokio::test]
async fn a_command_printing_cursor_moves_stays_small() {
    let settled = Settled::new();
    let (text, saved, structured) = settled
        .settle("bash", json!({"command": "printf '\\033[65535Cx'"}))
        .await;
    assert_eq!(structured["exitCode"], 0, "{structured}");
    assert!(text.len() < 2048, "{} bytes", text.len());
    assert_eq!(saved, 0);

    let (text, saved, structured) = settled
        .settle("bash", json!({"command": PRINT_ATTACK}))
        .await;
    assert_eq!(structured["exitCode"], 0, "{structured}");
    let printed = (ATTACK.len() + 1) * ATTACK_LINES;
    assert!(
        text.len() <= tackle_tool_core::MAX_BYTES,
        "{} bytes of text",
        text.len()
    );
    // Before the terminal was bounded this saved a managed output of 65 MB per 8 KB.
    assert!(
        saved <= terminal_text_bound(printed) + 4096,
        "a managed output of {saved} bytes for {printed} bytes printed"
    );
    assert!(saved <= 4 * MAX_CAPTURE_BYTES);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_printing_cursor_moves_stays_small() {
    let settled = Settled::new();
    let (_, _, started) = settled
        .settle(
            "bash",
            json!({"command": format!("echo started; sleep 1; {PRINT_ATTACK}"), "background": true}),
        )
        .await;
    let id = started["jobId"]
        .as_str()
        .unwrap_or_else(|| panic!("no job: {started}"))
        .to_owned();
    let mut saved = 0;
    let mut looks = 0;
    // Until the job has ended and everything it printed was looked at.
    loop {
        let (text, spilled, _) = settled
            .settle("job_output", json!({"id": id, "wait_ms": 2_000}))
            .await;
        assert!(text.len() <= tackle_tool_core::MAX_BYTES, "{}", text.len());
        // What a look showed in full: the managed output when it was saved, else the text.
        saved += if spilled > 0 { spilled } else { text.len() };
        // An ended job's look shows the rest of its output (and the job is then forgotten).
        if text.contains("exited with code 0") {
            break;
        }
        looks += 1;
        assert!(looks < 200, "the job did not end: {text}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let printed = (ATTACK.len() + 1) * ATTACK_LINES;
    assert!(printed <= JOB_OUTPUT_BYTES);
    // Each look adds its status line and notices to what it shows.
    assert!(
        saved <= terminal_text_bound(printed) + (looks + 1) * 512,
        "{saved} bytes shown in {looks} looks for {printed} printed"
    );
}
