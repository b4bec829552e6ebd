//! The bash tool end to end: a denied command never runs.
//!
//! Each input is a generated line (`tackle_fuzz::shell`, with or without denied leaves) run by
//! the real bash tool, whose permission denies `rm` and `curl` (and any directory outside the
//! Location) and allows everything else; an ask is refused. A line the policy lets through runs
//! in the sandbox (`tackle_fuzz::sandbox`): the only programs are harmless ones and marker
//! scripts standing in for the denied ones. Property: after the call no marker exists.
#![no_main]

use std::sync::{Arc, OnceLock};

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use tackle_builtins::bash::BashOptions;
use tackle_builtins::{FileMutation, Location, LocationServices, builtin_tool};
use tackle_fuzz::harness::{self, inside_only, scratch_dir};
use tackle_fuzz::sandbox::Sandbox;
use tackle_fuzz::shell;
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{AnswerAll, Effect, Permission, Reply, Rule, SavedApprovals};
use tackle_tool_core::{Budget, Tool};

struct Setup {
    sandbox: Sandbox,
    tool: Tool,
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let scratch = scratch_dir("tackle-fuzz-bash-");
        let sandbox = Sandbox::new(&scratch);
        let root = scratch.join("loc");
        let home = scratch.join("home");
        std::fs::create_dir_all(&root).expect("the Location directory");
        std::fs::create_dir_all(&home).expect("the home directory");
        let denied: Vec<Rule> = shell::DENIED
            .iter()
            .map(|name| Rule::new("bash", format!("{name} *"), Effect::Deny))
            .collect();
        let permission = Permission::new(
            inside_only(&denied),
            SavedApprovals::in_memory(),
            Arc::new(AnswerAll(Reply::Reject {
                message: Some("refused by the fuzz target".to_owned()),
            })),
        );
        let mut options = BashOptions::default();
        options.shell = Some(sandbox.shell.clone());
        options.env = Some(sandbox.env(&home));
        let services = LocationServices::new(
            Location::new(&root).expect("a Location"),
            permission,
            OutputStore::new(StoreConfig::in_data_dir(scratch.join("data"))),
            FileMutation::new(),
        )
        .with_bash(options);
        let tool = builtin_tool(&services, "bash").expect("the bash tool");
        Setup { sandbox, tool }
    })
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let need = u.arbitrary().unwrap_or(false);
    let Ok(line) = shell::line(&mut u, need) else {
        return;
    };
    let setup = setup();
    let result = harness::call(
        &setup.tool,
        json!({"command": line.text, "timeout": 10_000}),
        Budget::DEFAULT,
    );
    let ran = setup.sandbox.ran();
    for name in &ran {
        let _ = std::fs::remove_file(setup.sandbox.markers.join(name));
    }
    assert!(
        ran.is_empty(),
        "denied {ran:?} ran for the line\n{}\nresult: {result:?}",
        line.text
    );
    harness::expect_failure_or_ok(&result, "bash");
    if let Ok(output) = &result
        && output.structured["exitCode"] == 97
        && setup.sandbox.isolated
    {
        panic!("the sandbox could not be set up: {}", harness::text(output));
    }
});
