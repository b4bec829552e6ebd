//! Defines a typed tool, registers it in a Location registry, settles two calls through a
//! snapshot and prints what a model would read.
//!
//! Run with `cargo run -p tackle-registry --example define_tool`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_registry::{ApplicationTools, ToolRegistry};
use tackle_tool_core::{Call, Content, Context, Execute, ShowAll, Tool, ToolError, ToolFailure};

/// Counts the words of a text.
#[derive(Debug, Deserialize, JsonSchema)]
struct WordCountInput {
    /// The text to count.
    text: String,
    /// Count only words at least this long.
    min_len: Option<usize>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct WordCountOutput {
    words: usize,
}

struct WordCount;

impl Execute for WordCount {
    type Input = WordCountInput;
    type Output = WordCountOutput;

    async fn execute(
        &self,
        input: WordCountInput,
        _ctx: &Context,
    ) -> Result<WordCountOutput, ToolError> {
        if input.text.trim().is_empty() {
            return Err(ToolFailure::new("text is empty: give me something to count").into());
        }
        let min = input.min_len.unwrap_or(0);
        Ok(WordCountOutput {
            words: input
                .text
                .split_whitespace()
                .filter(|w| w.len() >= min)
                .count(),
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tool = Tool::typed("Counts the words of a text.", WordCount)
        .model_output(|out| vec![Content::text(format!("{} words", out.words))])
        .build();

    let definition = tool.definition("word_count")?;
    println!(
        "definition:\n{}",
        serde_json::to_string_pretty(&*definition)?
    );

    // A Location registry with its output store; the guard keeps the tool registered.
    let data = tempfile::tempdir()?;
    let registry = ToolRegistry::new(
        &ApplicationTools::new(),
        OutputStore::new(StoreConfig::in_data_dir(data.path())),
    );
    let _guard = registry
        .tools()
        .register([("word_count".to_owned(), tool)])?;
    let snapshot = registry.materialize(&ShowAll);

    let ctx = Context::new("example-session");
    for input in [
        json!({"text": "the quick brown fox", "min_len": 4}),
        json!({"text": 42}),
    ] {
        let call = Call::new("call_1", "word_count", input);
        // An invalid input is an error result the model reads, not an `Err`.
        let settlement = snapshot.settle(&call, &ctx).await?;
        println!("result: {}", serde_json::to_string(&settlement.result())?);
    }
    Ok(())
}
