//! Shared fixtures: echo tools, a rule-based test visibility, a registry on a temp store.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tackle_output_store::{OutputStore, StoreConfig};
use tackle_registry::{ApplicationTools, Materialization, Settlement, ToolRegistry};
use tackle_tool_core::{Call, Content, Context, Execute, ResultValue, Tool, ToolError, Visibility};
use tempfile::TempDir;

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct Echo {
    pub(crate) text: String,
}

/// Echoes its input, prefixed with `tag` so a test can tell registrations apart.
pub(crate) struct EchoTool {
    pub(crate) tag: String,
}

impl Execute for EchoTool {
    type Input = Echo;
    type Output = Echo;

    async fn execute(&self, input: Echo, _ctx: &Context) -> Result<Echo, ToolError> {
        Ok(Echo {
            text: format!("{}{}", self.tag, input.text),
        })
    }
}

pub(crate) fn echo(tag: &str) -> Tool {
    Tool::typed(
        "Echoes text",
        EchoTool {
            tag: tag.to_owned(),
        },
    )
    .model_output(|out: &Echo| vec![Content::text(out.text.clone())])
    .build()
}

pub(crate) fn named(pairs: &[(&str, Tool)]) -> Vec<(String, Tool)> {
    pairs
        .iter()
        .map(|(n, t)| ((*n).to_owned(), t.clone()))
        .collect()
}

/// A registry over `app` whose store lives in its own temp dir.
pub(crate) struct Fixture {
    pub(crate) app: ApplicationTools,
    pub(crate) registry: ToolRegistry,
    pub(crate) data: TempDir,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        Self::with_app(ApplicationTools::new())
    }

    pub(crate) fn with_app(app: ApplicationTools) -> Self {
        let data = tempfile::tempdir().unwrap();
        let store = OutputStore::new(StoreConfig::in_data_dir(data.path()));
        let registry = ToolRegistry::new(&app, store);
        Self {
            app,
            registry,
            data,
        }
    }

    pub(crate) fn names(&self, visibility: &dyn Visibility) -> Vec<String> {
        names(&self.registry.materialize(visibility))
    }
}

pub(crate) fn names(snapshot: &Materialization) -> Vec<String> {
    snapshot
        .definitions()
        .iter()
        .map(|d| d.name.clone())
        .collect()
}

pub(crate) fn ctx() -> Context {
    let mut ctx = Context::new("ses_1").for_call("call_1");
    ctx.agent = "build".into();
    ctx.assistant_message_id = "msg_1".into();
    ctx
}

pub(crate) async fn settle(snapshot: &Materialization, name: &str, input: Value) -> Settlement {
    snapshot
        .settle(&Call::new("call_1", name, input), &ctx())
        .await
        .unwrap()
}

pub(crate) async fn settle_echo(snapshot: &Materialization, name: &str) -> ResultValue {
    settle(snapshot, name, json!({"text": "echo"}))
        .await
        .into_result()
}

pub(crate) fn text(s: &str) -> ResultValue {
    ResultValue::Text(s.to_owned())
}

pub(crate) fn error(s: &str) -> ResultValue {
    ResultValue::Error(s.to_owned())
}

/// Last-match rules over exact names and `*` (the shape of reference RG7), as a test
/// `Visibility`: the permission crate's matcher is not a dependency of the registry.
pub(crate) struct Rules(pub(crate) Vec<(&'static str, &'static str, bool)>);

impl Visibility for Rules {
    fn wholly_disabled(&self, action: &str) -> bool {
        self.0
            .iter()
            .rev()
            .find(|(pattern, _, _)| *pattern == "*" || *pattern == action)
            .is_some_and(|(_, resource, deny)| *resource == "*" && *deny)
    }
}
