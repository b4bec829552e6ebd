//! A host that answers recorded provider responses: an OpenAI Chat Completion and an Anthropic
//! message (JSON fixtures in `examples/fixtures/`), each with several tool calls.
//!
//! For each response it picks the catalog the response's model is offered (a GPT model gets
//! `apply_patch`, Claude gets `edit`, so Claude's `apply_patch` call is an unknown tool), reads
//! the calls, settles them as one batch (the reads side by side, the edits in order) and prints
//! the messages that go back to the provider.
//!
//! Run with `cargo run -p tackle-formats --example recorded_host`.

use std::error::Error;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Value, json};
use tackle_builtins::{FileMutation, Location, LocationServices, builtin_tools};
use tackle_formats::{CatalogProfile, anthropic, openai};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_permission::{
    Asker, Effect, PendingRequest, Permission, Reply, Rule, Ruleset, SavedApprovals,
};
use tackle_registry::{ApplicationTools, Materialization, Settlement, ToolRegistry};
use tackle_tool_core::{Call, Context};

const OPENAI: &str = include_str!("fixtures/openai_chat_completion.json");
const ANTHROPIC: &str = include_str!("fixtures/anthropic_message.json");

/// A 1×1 PNG, for the read that attaches an image.
const LOGO: &[u8] = &[
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0,
    0, 0, 144, 119, 83, 222, 0, 0, 0, 12, 73, 68, 65, 84, 120, 156, 99, 248, 207, 192, 0, 0, 3, 1,
    1, 0, 201, 254, 146, 239, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

/// The rules allow everything in the Location, so nobody is asked.
struct NobodyAsked;

impl Asker for NobodyAsked {
    fn ask(&self, _request: PendingRequest) -> Pin<Box<dyn Future<Output = Reply> + Send>> {
        Box::pin(async { Reply::Reject { message: None } })
    }
}

/// The Location's registry with every builtin.
fn registry(location: &Path, data: &Path) -> Result<(ToolRegistry, impl Sized), Box<dyn Error>> {
    let permission = Permission::new(
        Ruleset::new(vec![Rule::new("*", "*", Effect::Allow)]),
        SavedApprovals::in_memory(),
        Arc::new(NobodyAsked),
    );
    let store = OutputStore::new(StoreConfig::in_data_dir(data));
    let services = LocationServices::new(
        Location::new(location)?,
        permission,
        store.clone(),
        FileMutation::new(),
    );
    let registry = ToolRegistry::new(&ApplicationTools::new(), store);
    let guard = registry.tools().register(builtin_tools(&services))?;
    Ok((registry, guard))
}

/// Settles `calls` as one batch; a call that could not be settled at all (the turn halted)
/// is answered with an error the model reads.
async fn settle(snapshot: &Materialization, calls: &[Call]) -> Vec<Settlement> {
    let ctx = Context::new("ses_example");
    snapshot
        .settle_batch(calls, &ctx)
        .await
        .into_iter()
        .map(|result| result.unwrap_or_else(|err| Settlement::error(err.to_string())))
        .collect()
}

/// Answers both recorded responses against the Location `location`; what goes back to each
/// provider.
pub(crate) async fn replay(location: &Path, data: &Path) -> Result<Value, Box<dyn Error>> {
    std::fs::write(
        location.join("notes.txt"),
        "Release 1.2\nTODO: write the release notes\n",
    )?;
    std::fs::write(location.join("logo.png"), LOGO)?;
    let (registry, _guard) = registry(location, data)?;
    let offered = registry.materialize(&tackle_tool_core::ShowAll);

    let completion: Value = serde_json::from_str(OPENAI)?;
    let model = completion["model"].as_str().unwrap_or_default();
    let snapshot = CatalogProfile::for_model(model).apply(&offered);
    let calls = openai::chat_calls(&completion)?;
    let settled = settle(&snapshot, &calls).await;
    let pairs: Vec<_> = calls.iter().zip(&settled).collect();
    let openai_messages = openai::chat_results(&pairs);

    let message: Value = serde_json::from_str(ANTHROPIC)?;
    let model = message["model"].as_str().unwrap_or_default();
    let snapshot = CatalogProfile::for_model(model).apply(&offered);
    let calls = anthropic::calls(&message)?;
    let settled = settle(&snapshot, &calls).await;
    let pairs: Vec<_> = calls.iter().zip(&settled).collect();
    let anthropic_message = anthropic::tool_results(&pairs);

    Ok(json!({"openai": openai_messages, "anthropic": anthropic_message}))
}

#[allow(dead_code)] // the example's test calls `replay` alone
fn main() -> Result<(), Box<dyn Error>> {
    let location = tempfile::tempdir()?;
    let data = tempfile::tempdir()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let answers = runtime.block_on(replay(location.path(), data.path()))?;
    println!("{}", serde_json::to_string_pretty(&answers)?);
    Ok(())
}
