//! Defines a typed tool, settles two calls through it and prints what a model would read.
//!
//! Run with `cargo run -p tackle-tool-core --example define_tool`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tackle_tool_core::{Call, Content, Context, Execute, Tool, ToolError, ToolFailure};

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

    let ctx = Context::new("example-session");
    for input in [
        json!({"text": "the quick brown fox", "min_len": 4}),
        json!({"text": 42}),
    ] {
        let call = Call::new("call_1", "word_count", input);
        match tool.settle(&call, &ctx.for_call(&call.id)).await {
            Ok(output) => println!(
                "result: {}",
                serde_json::to_string(&output.to_result_value())?
            ),
            Err(ToolError::Failure(failure)) => println!("error result: {}", failure.message),
            Err(other) => return Err(other.into()),
        }
    }
    Ok(())
}
