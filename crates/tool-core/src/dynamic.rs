//! Tools described at run time by a JSON Schema (MCP servers, configured tools).

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use jsonschema::Validator;
use serde_json::Value;

use crate::input::{InputSchema, Problem, input_failure};
use crate::tool::{Runtime, Schema, SettleFuture, default_content, invalid_output};
use crate::{Content, Context, InvalidSchema, Rendered, Tool, ToolError, ToolOutput};

type DynFuture = Pin<Box<dyn Future<Output = Result<Rendered<Value>, ToolError>> + Send>>;
type DynExecute = Box<dyn Fn(Value, Context) -> DynFuture + Send + Sync>;
type DynModel = Box<dyn Fn(&Value) -> Vec<Content> + Send + Sync>;

/// A tool described by JSON Schemas, being built; [`DynamicTool::build`] gives a [`Tool`].
///
/// The input is validated against the input schema at settlement (failure: `Invalid tool
/// input: ...`, the closure never runs); an output schema, when given, validates the returned
/// value the same way.
pub struct DynamicTool {
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    execute: DynExecute,
    model_output: Option<DynModel>,
    /// The closure renders the model's content itself ([`Tool::dynamic_rendered`]).
    rendered: bool,
}

impl fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicTool")
            .field("description", &self.description)
            .field("input_schema", &self.input_schema)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// Starts a tool whose input is described by `input_schema` and executed by `execute`.
    pub fn dynamic<F, Fut>(
        description: impl Into<String>,
        input_schema: Value,
        execute: F,
    ) -> DynamicTool
    where
        F: Fn(Value, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        DynamicTool {
            description: description.into(),
            input_schema,
            output_schema: None,
            execute: Box::new(move |input, ctx| {
                let run = execute(input, ctx);
                Box::pin(async move { run.await.map(|value| Rendered::new(value, Vec::new())) })
            }),
            model_output: None,
            rendered: false,
        }
    }

    /// Like [`Tool::dynamic`], for a closure that renders what the model reads beside the
    /// value it returns (a proxied tool whose result carries text and images): the output
    /// schema checks the value, and the model reads the rendered content, moved, not copied.
    pub fn dynamic_rendered<F, Fut>(
        description: impl Into<String>,
        input_schema: Value,
        execute: F,
    ) -> DynamicTool
    where
        F: Fn(Value, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Rendered<Value>, ToolError>> + Send + 'static,
    {
        DynamicTool {
            description: description.into(),
            input_schema,
            output_schema: None,
            execute: Box::new(move |input, ctx| Box::pin(execute(input, ctx))),
            model_output: None,
            rendered: true,
        }
    }
}

impl DynamicTool {
    /// Declares (and enforces) the schema of the returned value.
    #[must_use]
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Projects the returned value to what the model reads.
    #[must_use]
    pub fn model_output<F>(mut self, project: F) -> Self
    where
        F: Fn(&Value) -> Vec<Content> + Send + Sync + 'static,
    {
        self.model_output = Some(Box::new(project));
        self
    }

    /// Compiles the schemas and gives the finished tool.
    pub fn build(self) -> Result<Tool, InvalidSchema> {
        let input = compile("input", &self.input_schema)?;
        let output = self
            .output_schema
            .as_ref()
            .map(|s| compile("output", s))
            .transpose()?;
        let output_schema = self
            .output_schema
            .unwrap_or_else(|| Value::Object(Default::default()));
        let runtime = DynamicRuntime {
            input,
            output,
            execute: self.execute,
            model_output: self.model_output,
            rendered: self.rendered,
        };
        Ok(Tool::from_runtime(
            self.description,
            InputSchema::ready(self.input_schema),
            Schema::ready(output_schema),
            Box::new(runtime),
        ))
    }
}

fn compile(which: &'static str, schema: &Value) -> Result<Validator, InvalidSchema> {
    jsonschema::validator_for(schema).map_err(|err| InvalidSchema {
        which,
        message: err.to_string(),
    })
}

/// All of a value's schema violations, each with its JSON pointer.
fn violations(validator: &Validator, value: &Value) -> Vec<Problem> {
    validator
        .iter_errors(value)
        .map(|err| Problem::new(&err.instance_path().to_string(), err.to_string()))
        .collect()
}

struct DynamicRuntime {
    input: Validator,
    output: Option<Validator>,
    execute: DynExecute,
    model_output: Option<DynModel>,
    rendered: bool,
}

impl Runtime for DynamicRuntime {
    /// The full schema's verdict, after the decoding layer's own check: it covers what that
    /// check leaves out (`pattern`, `format`, `$ref`, ...).
    fn check(&self, input: &Value) -> Result<(), ToolError> {
        let problems = violations(&self.input, input);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(input_failure(&problems))
        }
    }

    fn run<'a>(&'a self, input: &'a Value, ctx: &'a Context) -> SettleFuture<'a> {
        Box::pin(async move {
            self.check(input)?;
            let Rendered {
                output,
                content: rendered,
            } = (self.execute)(input.clone(), ctx.clone()).await?;
            if let Some(validator) = &self.output {
                let problems = violations(validator, &output);
                if !problems.is_empty() {
                    let listed: Vec<String> = problems
                        .iter()
                        .map(|p| match p.path.as_str() {
                            "" => p.message.clone(),
                            path => format!("{path}: {}", p.message),
                        })
                        .collect();
                    return Err(invalid_output(listed.join("; ")));
                }
            }
            let content = match &self.model_output {
                _ if self.rendered => rendered.into_iter().map(Content::into_output).collect(),
                Some(project) => project(&output)
                    .into_iter()
                    .map(Content::into_output)
                    .collect(),
                None => default_content(&output),
            };
            Ok(ToolOutput::new(output, content))
        })
    }
}
