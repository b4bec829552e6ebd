//! The opaque [`Tool`] value and its typed construction.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::Poll;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::input::{InputSchema, Problem, input_failure, prepare};
use crate::schema::{decode_schema_for, output_schema_for};
use crate::{
    Call, Content, Context, Halt, OutputContent, RegistrationError, Rendered, ToolClass, ToolError,
    ToolFailure, ToolOutput, validate_name,
};

/// What a model is shown about a tool registered under a name.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Definition {
    /// The registered name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON Schema of the input.
    pub input_schema: Value,
    /// The JSON Schema of the structured output.
    pub output_schema: Value,
}

pub(crate) type SettleFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;

/// The private, type-erased behaviour behind a [`Tool`]. Sealed: only this crate implements it.
pub(crate) trait Runtime: Send + Sync {
    /// Decode, execute, encode and project one call's input, which the decoding layer has
    /// already prepared and checked against the input schema.
    fn run<'a>(&'a self, input: &'a Value, ctx: &'a Context) -> SettleFuture<'a>;

    /// Decode a prepared input as [`run`](Self::run) would, without executing anything.
    fn check(&self, input: &Value) -> Result<(), ToolError>;
}

struct Shared {
    description: String,
    input_schema: InputSchema,
    output_schema: Schema,
    runtime: Box<dyn Runtime>,
    definitions: Mutex<HashMap<String, Arc<Definition>>>,
}

/// A schema, derived on first use: running a call needs only the input schema (which the
/// decoding layer follows), so a process that settles one call derives no output schema.
pub(crate) struct Schema {
    value: OnceLock<Value>,
    derive: fn() -> Value,
}

impl Schema {
    /// A schema known already (a dynamic tool's).
    #[cfg(feature = "dynamic")]
    pub(crate) fn ready(value: Value) -> Self {
        Self {
            value: OnceLock::from(value),
            derive: || Value::Null,
        }
    }

    /// A schema derived by `derive` when first asked for.
    pub(crate) fn derived(derive: fn() -> Value) -> Self {
        Self {
            value: OnceLock::new(),
            derive,
        }
    }

    fn get(&self) -> &Value {
        self.value.get_or_init(self.derive)
    }
}

/// The one executable tool type: a cheap, cloneable, opaque handle.
///
/// Its runtime cannot be reached from outside this crate:
///
/// ```compile_fail
/// fn peek(tool: &tackle_tool_core::Tool) {
///     let _ = &tool.shared; // private: a tool is opaque
/// }
/// ```
///
/// nor can another crate make a tool any other way than through [`Tool::typed`] or
/// [`Tool::dynamic`]:
///
/// ```compile_fail
/// fn forge(tool: &tackle_tool_core::Tool) -> tackle_tool_core::Tool {
///     tackle_tool_core::Tool { shared: tool.shared.clone(), action: None } // private fields
/// }
/// ```
#[derive(Clone)]
pub struct Tool {
    shared: Arc<Shared>,
    action: Option<Arc<str>>,
    class: ToolClass,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("description", &self.shared.description)
            .field("action", &self.action)
            .field("class", &self.class)
            .finish_non_exhaustive()
    }
}

impl Tool {
    pub(crate) fn from_runtime(
        description: String,
        input_schema: InputSchema,
        output_schema: Schema,
        runtime: Box<dyn Runtime>,
    ) -> Self {
        let shared = Shared {
            description,
            input_schema,
            output_schema,
            runtime,
            definitions: Mutex::new(HashMap::new()),
        };
        Self {
            shared: Arc::new(shared),
            action: None,
            class: ToolClass::default(),
        }
    }

    /// Starts a typed tool: `execute` decides the input and output types, whose schemas are
    /// derived once, when a definition is first asked for.
    pub fn typed<E: Execute>(description: impl Into<String>, execute: E) -> TypedTool<E> {
        TypedTool {
            description: description.into(),
            execute,
            structured: None,
            model_output: None,
        }
    }

    /// The definition of this tool under `name`; derived once per name, then shared.
    pub fn definition(&self, name: &str) -> Result<Arc<Definition>, RegistrationError> {
        validate_name(name)?;
        let mut cache = self
            .shared
            .definitions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let definition = cache.entry(name.to_owned()).or_insert_with(|| {
            Arc::new(Definition {
                name: name.to_owned(),
                description: self.shared.description.clone(),
                input_schema: self.shared.input_schema.advertised().clone(),
                output_schema: self.shared.output_schema.get().clone(),
            })
        });
        Ok(Arc::clone(definition))
    }

    /// The permission action of this tool when registered as `name`: the action a builtin
    /// declared, else the name itself.
    pub fn permission<'a>(&'a self, name: &'a str) -> &'a str {
        self.action.as_deref().unwrap_or(name)
    }

    /// Runs one call without bounding its output: decode → execute → encode → structured
    /// projection → model content.
    ///
    /// This is not how a host executes a tool: the registry's `Materialization::settle` is,
    /// and it is the only caller of this method (`cargo xtask tidy` fails on any other), because
    /// what it returns has not been bounded for a model yet. Cancelling `ctx.cancel` stops the
    /// execution with [`Halt::Cancelled`].
    pub async fn run_unbounded(&self, call: &Call, ctx: &Context) -> Result<ToolOutput, ToolError> {
        if ctx.cancel.is_cancelled() {
            return Err(Halt::Cancelled.into());
        }
        let input = prepare(&call.input, &self.shared.input_schema)?;
        let mut run = self.shared.runtime.run(&input, ctx);
        // The execution is polled once before the cancellation exists, so that a call that
        // completes without waiting neither builds the wait nor registers with the token
        // (which takes a lock).
        if let Poll::Ready(result) =
            std::future::poll_fn(|cx| Poll::Ready(run.as_mut().poll(cx))).await
        {
            return result;
        }
        let mut cancelled = std::pin::pin!(ctx.cancel.cancelled());
        // The execution was just polled; it is polled again once it wakes this task.
        let mut polled = true;
        std::future::poll_fn(|cx| {
            if !std::mem::take(&mut polled)
                && let Poll::Ready(result) = run.as_mut().poll(cx)
            {
                return Poll::Ready(result);
            }
            match cancelled.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(Halt::Cancelled.into())),
                Poll::Pending => Poll::Pending,
            }
        })
        .await
    }

    /// Decodes `input` as a call would, without executing anything: the input the tool would
    /// run with (aliases renamed, harmless value mistakes corrected), or the failure the model
    /// would read (`Invalid tool input: ...`).
    pub fn check_input(&self, input: &Value) -> Result<Value, ToolFailure> {
        let checked = prepare(input, &self.shared.input_schema)
            .and_then(|prepared| self.shared.runtime.check(&prepared).map(|()| prepared));
        match checked {
            Ok(prepared) => Ok(prepared.into_owned()),
            Err(ToolError::Failure(failure)) => Err(failure),
            // Preparing and decoding fail only with input failures.
            Err(other) => Err(ToolFailure::new(other.to_string())),
        }
    }

    /// True when both handles share one runtime (the same tool, perhaps with another action).
    pub fn same_runtime(&self, other: &Tool) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// A new tool value sharing this runtime whose permission action is the shared `action`
    /// instead of its registered name; this value is unchanged (`edit`, `write` and
    /// `apply_patch` all declare [`SharedAction::Edit`]).
    #[must_use]
    pub fn with_action(&self, action: SharedAction) -> Tool {
        Tool {
            shared: Arc::clone(&self.shared),
            action: Some(Arc::from(action.as_str())),
            class: self.class,
        }
    }

    /// What running this tool may change ([`ToolClass::Mutating`] unless declared).
    pub fn class(&self) -> ToolClass {
        self.class
    }

    /// A new tool value sharing this runtime that declares `class`; this value is unchanged.
    #[must_use]
    pub fn with_class(&self, class: ToolClass) -> Tool {
        Tool {
            shared: Arc::clone(&self.shared),
            action: self.action.clone(),
            class,
        }
    }
}

/// A permission action several tools share, which a tool may declare instead of its name.
///
/// The set is closed: a tool can join a family whose rules the user already writes (denying
/// `edit` hides and refuses every tool that changes files), but no crate can give a tool an
/// action of its own choosing, so no tool can borrow the rules of an unrelated one. A cargo
/// feature could not guarantee that, since Cargo turns a feature on for every crate of a build
/// once any of them asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SharedAction {
    /// Changing files: `edit`, `write` and `apply_patch`.
    Edit,
}

impl SharedAction {
    /// The action's name in permission rules.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Edit => "edit",
        }
    }
}

/// The execution of a typed tool.
///
/// Implement it on a struct that holds the services the tool needs (captured when the tool is
/// built), or wrap a closure with [`from_fn`].
pub trait Execute: Send + Sync + 'static {
    /// The decoded input; its schema is the one the model sees.
    type Input: DeserializeOwned + JsonSchema + Send;
    /// The complete domain output.
    type Output: Serialize + JsonSchema + Send;

    /// Runs one call. Return [`ToolError::Failure`] only for expected failures.
    fn execute(
        &self,
        input: Self::Input,
        ctx: &Context,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;
}

/// An [`Execute`] made from a closure over the input and an owned [`Context`].
pub struct FnExecute<F, I> {
    f: F,
    input: PhantomData<fn(I)>,
}

impl<F, I> fmt::Debug for FnExecute<F, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnExecute").finish_non_exhaustive()
    }
}

/// Wraps `f` as an [`Execute`].
///
/// ```
/// use tackle_tool_core::{from_fn, Context, Tool, ToolError};
/// let tool = Tool::typed(
///     "Adds one",
///     from_fn(|n: u32, _ctx: Context| async move { Ok::<_, ToolError>(n + 1) }),
/// )
/// .build();
/// assert_eq!(tool.definition("inc").unwrap().description, "Adds one");
/// ```
pub fn from_fn<F, I, O, Fut>(f: F) -> FnExecute<F, I>
where
    F: Fn(I, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + JsonSchema + Send,
{
    FnExecute {
        f,
        input: PhantomData,
    }
}

impl<F, I, O, Fut> Execute for FnExecute<F, I>
where
    F: Fn(I, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + JsonSchema + Send,
{
    type Input = I;
    type Output = O;

    fn execute(
        &self,
        input: I,
        ctx: &Context,
    ) -> impl Future<Output = Result<O, ToolError>> + Send {
        (self.f)(input, ctx.clone())
    }
}

/// Derives a schema when first asked for (see [`Schema`]).
type SchemaFn = fn() -> Value;
type StructuredFn<O> = Box<dyn Fn(&O) -> Result<Value, serde_json::Error> + Send + Sync>;

/// Takes `&mut` so a rendered output's content is moved out, not copied.
type ModelFn<O> = Box<dyn Fn(&mut O) -> Vec<Content> + Send + Sync>;

/// A typed tool being described; [`TypedTool::build`] turns it into a [`Tool`].
pub struct TypedTool<E: Execute> {
    description: String,
    execute: E,
    structured: Option<(SchemaFn, StructuredFn<E::Output>)>,
    model_output: Option<ModelFn<E::Output>>,
}

impl<E: Execute> fmt::Debug for TypedTool<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedTool")
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

impl<E: Execute> TypedTool<E> {
    /// Projects the output to another structured type, whose schema becomes the output schema.
    #[must_use]
    pub fn structured<S, F>(mut self, project: F) -> Self
    where
        S: Serialize + JsonSchema,
        F: Fn(&E::Output) -> S + Send + Sync + 'static,
    {
        let project: StructuredFn<E::Output> =
            Box::new(move |out| serde_json::to_value(project(out)));
        self.structured = Some((output_schema_for::<S>, project));
        self
    }

    /// Projects the output to what the model reads. Without it, an output that encodes to a
    /// JSON string is shown as that text and anything else as no content (the result is then
    /// the structured value).
    #[must_use]
    pub fn model_output<F>(mut self, project: F) -> Self
    where
        F: Fn(&E::Output) -> Vec<Content> + Send + Sync + 'static,
    {
        self.model_output = Some(Box::new(move |output: &mut E::Output| project(output)));
        self
    }

    /// The finished, opaque tool.
    pub fn build(self) -> Tool {
        self.finish()
    }
}

impl<E, O> TypedTool<E>
where
    E: Execute<Output = Rendered<O>>,
    O: Serialize + JsonSchema + Send,
{
    /// The model reads the content the leaf rendered with its output ([`Rendered`]).
    #[must_use]
    pub fn rendered(mut self) -> Self {
        self.model_output = Some(Box::new(|output: &mut Rendered<O>| {
            std::mem::take(&mut output.content)
        }));
        self
    }
}

impl<E: Execute> TypedTool<E> {
    fn finish(self) -> Tool {
        let (output_schema, structured) = match self.structured {
            Some((schema, project)) => (schema, Some(project)),
            None => (output_schema_for::<E::Output> as SchemaFn, None),
        };
        let runtime = TypedRuntime {
            execute: self.execute,
            structured,
            model_output: self.model_output,
        };
        Tool::from_runtime(
            self.description,
            InputSchema::derived(decode_schema_for::<E::Input>),
            Schema::derived(output_schema),
            Box::new(runtime),
        )
    }
}

struct TypedRuntime<E: Execute> {
    execute: E,
    structured: Option<StructuredFn<E::Output>>,
    model_output: Option<ModelFn<E::Output>>,
}

pub(crate) fn invalid_output(message: impl fmt::Display) -> ToolError {
    ToolFailure::new(format!(
        "Tool returned an invalid value for its output schema: {message}"
    ))
    .into()
}

/// The default model content: an output that encodes to a string is its text.
pub(crate) fn default_content(encoded: &Value) -> Vec<OutputContent> {
    match encoded {
        Value::String(text) => vec![OutputContent::Text { text: text.clone() }],
        _ => Vec::new(),
    }
}

/// Decodes a typed input the decoding layer has prepared and checked. The schema and the
/// decoder agree (a test holds every builtin to it), so a failure here is a constraint the
/// schema does not state; it is decoded again with path tracking to name the field.
fn decode<I: DeserializeOwned>(input: &Value) -> Result<I, ToolError> {
    if let Ok(decoded) = I::deserialize(input) {
        return Ok(decoded);
    }
    match serde_path_to_error::deserialize::<_, I>(input) {
        Ok(decoded) => Ok(decoded),
        Err(err) => {
            let path = err.path().to_string();
            let path = if path == "." { String::new() } else { path };
            Err(input_failure(&[Problem::new(
                &path,
                err.inner().to_string(),
            )]))
        }
    }
}

impl<E: Execute> Runtime for TypedRuntime<E> {
    fn check(&self, input: &Value) -> Result<(), ToolError> {
        decode::<E::Input>(input).map(drop)
    }

    fn run<'a>(&'a self, input: &'a Value, ctx: &'a Context) -> SettleFuture<'a> {
        Box::pin(async move {
            let input: E::Input = decode(input)?;
            let mut output = self.execute.execute(input, ctx).await?;
            let encoded = serde_json::to_value(&output).map_err(invalid_output)?;
            let projected = match &self.structured {
                Some(project) => Some(project(&output).map_err(invalid_output)?),
                None => None,
            };
            let content = match &self.model_output {
                Some(project) => project(&mut output)
                    .into_iter()
                    .map(Content::into_output)
                    .collect(),
                None => default_content(&encoded),
            };
            Ok(ToolOutput {
                structured: projected.unwrap_or(encoded),
                content,
            })
        })
    }
}
