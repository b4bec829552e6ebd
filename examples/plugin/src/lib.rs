//! An in-process tackle plugin, to copy: it registers two tools through the host's
//! registration views, one typed (its input a Rust type with a derived JSON Schema) and one
//! dynamic (its input schema given as JSON).
//!
//! - `example_repeat` (dynamic) is registered once per process, in the application layer:
//!   it needs nothing of a Location, so every Location sees the same tool.
//! - `example_greet` (typed) is registered once per Location, with that Location's services: it
//!   asks the Location's permission service before it acts, with its own name as the action,
//!   so the user's rules (`"example_greet": {"*": "ask", "world": "allow"}`) and saved
//!   approvals apply to it as to a builtin.
//!
//! The host bounds their output, filters them by the rules and drops the Location's tool with
//! the host; the plugin only builds tools and registers them. See `tests/all.rs` for a host
//! booting it.

#![deny(missing_docs)]

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tackle_host::{BootError, Plugin, PluginContext, Scope};
use tackle_permission::{Permission, Request};
use tackle_tool_core::{Context, Execute, Tool, ToolError, ToolFailure};

/// The example plugin.
#[derive(Debug, Default)]
pub struct ExamplePlugin;

impl Plugin for ExamplePlugin {
    fn name(&self) -> &str {
        "example"
    }

    fn boot(&self, ctx: &PluginContext<'_>) -> Result<(), BootError> {
        match ctx.scope() {
            Scope::Application => ctx.register(vec![("example_repeat".to_owned(), repeat()?)])?,
            Scope::Location => {
                let services = ctx.services().ok_or("a Location boot without services")?;
                let greet = Greet {
                    permission: services.permission.clone(),
                };
                let tool = Tool::typed("Greets someone by name.", greet).build();
                ctx.register(vec![("example_greet".to_owned(), tool)])?;
            }
        }
        Ok(())
    }
}

/// A dynamic tool: `text` on `times` lines.
fn repeat() -> Result<Tool, BootError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The line to repeat."},
            "times": {"type": "integer", "minimum": 1, "maximum": 100000,
                      "description": "How many times."}
        },
        "required": ["text", "times"],
        "additionalProperties": false
    });
    let tool = Tool::dynamic(
        "Repeats a line of text a number of times.",
        schema,
        |input: Value, _ctx: Context| async move {
            // The schema was checked before this runs.
            let text = input["text"].as_str().unwrap_or_default();
            let times = input["times"].as_u64().unwrap_or(1);
            let lines: Vec<&str> = (0..times).map(|_| text).collect();
            Ok(Value::String(lines.join("\n")))
        },
    )
    .build()?;
    Ok(tool)
}

/// The typed tool's input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GreetInput {
    /// Who to greet.
    pub name: String,
    /// Greet in capitals.
    #[serde(default)]
    pub shout: bool,
}

/// Greets someone, once the permission service allows `example_greet` on their name.
struct Greet {
    permission: Permission,
}

impl Execute for Greet {
    type Input = GreetInput;
    type Output = String;

    async fn execute(&self, input: GreetInput, ctx: &Context) -> Result<String, ToolError> {
        if input.name.trim().is_empty() {
            return Err(ToolFailure::new("name is empty: say who to greet").into());
        }
        let request = Request::new(ctx, "example_greet", vec![input.name.clone()])
            .with_save(vec![input.name.clone()]);
        self.permission.assert(request).await?;
        let greeting = format!("Hello, {}!", input.name);
        Ok(if input.shout {
            greeting.to_uppercase()
        } else {
            greeting
        })
    }
}

/// The plugin as a host takes it.
pub fn plugin() -> Arc<dyn Plugin> {
    Arc::new(ExamplePlugin)
}
