//! Tools: a plain function becomes something a model can call.
//!
//! [`ToolDef::new`] takes a name and a handler. A handler is any `Fn` of the forms
//! `|| async { .. }`, `|args: A| async { .. }` or `|cx: Context, args: A| async { .. }`, where
//! `A: Deserialize + JsonSchema` describes the arguments. The input schema comes from `A`; the
//! output schema from the return type (see [`IntoToolOutput`](super::IntoToolOutput)).
//!
//! ```
//! use modelcontext::{McpServer, ToolDef};
//! # use modelcontext::__private::serde;
//! # use modelcontext::schemars;
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! # #[serde(crate = "modelcontext::__private::serde")]
//! # #[schemars(crate = "modelcontext::schemars")]
//! struct Args { a: i64, b: i64 }
//!
//! let add = ToolDef::new("add", |Args { a, b }: Args| async move { a + b })
//!     .description("Add two integers.");
//! let server = McpServer::new("calc").tool(add)?;
//! # Ok::<(), modelcontext::Error>(())
//! ```

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use modelcontext_types::{CallToolResult, ContentBlock, McpError, RawValue, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::context::Context;
use super::output::{IntoToolResult, ToolFailure};
use super::schema::{SchemaLimits, Validator, input_schema_for};
use crate::engine::BoxFuture;

/// A registered tool: its advertised definition and its handler.
#[derive(Clone)]
pub struct ToolDef {
    pub(crate) tool: Tool,
    pub(crate) handler: Arc<dyn ErasedTool>,
    /// OAuth scopes a caller needs for this tool, on top of the endpoint's (HTTP with `auth`).
    pub(crate) required_scopes: Vec<String>,
}

impl fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDef").field("tool", &self.tool).finish_non_exhaustive()
    }
}

impl ToolDef {
    /// A tool named `name` run by `handler`.
    pub fn new<A, M>(name: impl Into<String>, handler: impl ToolHandler<A, M>) -> ToolDef
    where
        A: DeserializeOwned + 'static,
        M: 'static,
    {
        let mut tool = Tool::new(name, handler.input_schema());
        tool.output_schema = handler.output_schema().map(Value::Object);
        let handler = Arc::new(Erased { handler, marker: std::marker::PhantomData });
        ToolDef { tool, handler, required_scopes: Vec::new() }
    }

    /// Sets the description the model reads to decide when to call the tool.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.tool.description = Some(description.into());
        self
    }

    /// Sets a human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.tool.title = Some(title.into());
        self
    }

    /// OAuth scopes a caller must hold to call this tool (with the `auth` feature over HTTP;
    /// other transports carry no credentials). A caller without them gets HTTP 403
    /// `insufficient_scope` naming every scope needed, before the tool runs.
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets behaviour hints (read-only, destructive, idempotent, open-world).
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = Some(annotations);
        self
    }

    /// Replaces the derived input schema (it must still be an object schema).
    pub fn input_schema(mut self, schema: Map<String, Value>) -> Self {
        self.tool.input_schema = schema;
        self
    }

    /// Sets the tool's `_meta`.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.tool.meta = Some(meta);
        self
    }

    /// The definition advertised in `tools/list`.
    pub fn definition(&self) -> &Tool {
        &self.tool
    }
}

/// A function that can serve as a tool. Implemented for async closures and fns of the forms
/// `Fn() -> Fut`, `Fn(A) -> Fut` and `Fn(Context, A) -> Fut`. `M` only tells the forms apart;
/// you never name it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool handler",
    label = "expected an async fn or closure taking (), (Args) or (Context, Args)",
    note = "a tool handler looks like `|args: Args| async move {{ .. }}` where `Args: serde::Deserialize + schemars::JsonSchema` and the future's output implements `IntoToolResult`"
)]
pub trait ToolHandler<A, M>: Clone + Send + Sync + 'static {
    /// The JSON Schema of the arguments.
    fn input_schema(&self) -> Map<String, Value>;
    /// The JSON Schema of the structured output, if any.
    fn output_schema(&self) -> Option<Map<String, Value>>;
    /// Runs the tool on arguments already validated against the input schema.
    fn call(&self, cx: Context, args: A) -> BoxFuture<Result<CallToolResult, ToolFailure>>;
}

/// Arguments of a tool that takes none, e.g. `|cx: Context, _: NoArgs| async { .. }`.
#[derive(Debug, serde::Deserialize, JsonSchema)]
#[serde(crate = "serde")]
pub struct NoArgs {}

impl<F, Fut, R> ToolHandler<NoArgs, fn() -> R> for F
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoToolResult,
{
    fn input_schema(&self) -> Map<String, Value> {
        let mut schema = Map::new();
        schema.insert("type".into(), "object".into());
        schema.insert("properties".into(), Value::Object(Map::new()));
        schema
    }

    fn output_schema(&self) -> Option<Map<String, Value>> {
        R::output_schema()
    }

    fn call(&self, _cx: Context, _args: NoArgs) -> BoxFuture<Result<CallToolResult, ToolFailure>> {
        let future = self();
        Box::pin(async move { future.await.into_tool_result() })
    }
}

impl<F, Fut, A, R> ToolHandler<A, fn(A) -> R> for F
where
    F: Fn(A) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    A: DeserializeOwned + JsonSchema + Send + 'static,
    R: IntoToolResult,
{
    fn input_schema(&self) -> Map<String, Value> {
        input_schema_for::<A>()
    }

    fn output_schema(&self) -> Option<Map<String, Value>> {
        R::output_schema()
    }

    fn call(&self, _cx: Context, args: A) -> BoxFuture<Result<CallToolResult, ToolFailure>> {
        let future = self(args);
        Box::pin(async move { future.await.into_tool_result() })
    }
}

impl<F, Fut, A, R> ToolHandler<A, fn(Context, A) -> R> for F
where
    F: Fn(Context, A) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    A: DeserializeOwned + JsonSchema + Send + 'static,
    R: IntoToolResult,
{
    fn input_schema(&self) -> Map<String, Value> {
        input_schema_for::<A>()
    }

    fn output_schema(&self) -> Option<Map<String, Value>> {
        R::output_schema()
    }

    fn call(&self, cx: Context, args: A) -> BoxFuture<Result<CallToolResult, ToolFailure>> {
        let future = self(cx, args);
        Box::pin(async move { future.await.into_tool_result() })
    }
}

/// A tool with its argument type erased, so tools of every signature share one registry.
pub(crate) trait ErasedTool: Send + Sync {
    fn call(
        &self,
        cx: Context,
        args: Map<String, Value>,
    ) -> BoxFuture<Result<CallToolResult, ToolFailure>>;
}

struct Erased<H, A, M> {
    handler: H,
    marker: std::marker::PhantomData<fn(A, M)>,
}

impl<H, A, M> ErasedTool for Erased<H, A, M>
where
    H: ToolHandler<A, M>,
    A: DeserializeOwned + 'static,
    M: 'static,
{
    fn call(
        &self,
        cx: Context,
        args: Map<String, Value>,
    ) -> BoxFuture<Result<CallToolResult, ToolFailure>> {
        // The arguments already passed the input schema, so a failure here means the schema
        // and the type disagree (a hand-set schema, say); the model still gets a readable text.
        match A::deserialize(Value::Object(args)) {
            Ok(args) => self.handler.call(cx, args),
            Err(err) => {
                Box::pin(
                    async move { Err(ToolFailure::Model(format!("invalid arguments: {err}"))) },
                )
            }
        }
    }
}

/// A tool ready to serve: its definition, compiled validators and handler.
pub(crate) struct ToolEntry {
    pub def: ToolDef,
    /// The tool as `tools/list` shows it, serialized once: a list copies these bytes.
    pub listed: Box<RawValue>,
    input: Validator,
    output: Option<Arc<Validator>>,
}

impl ToolEntry {
    pub(crate) fn compile(def: ToolDef, limits: SchemaLimits) -> Result<ToolEntry, String> {
        let name = &def.tool.name;
        let input = Validator::compile_with(&def.tool.input_schema, limits)
            .map_err(|e| format!("tool '{name}' has an invalid input schema: {e}"))?;
        let output = match &def.tool.output_schema {
            Some(Value::Object(schema)) => Some(Arc::new(
                Validator::compile_with(schema, limits)
                    .map_err(|e| format!("tool '{name}' has an invalid output schema: {e}"))?,
            )),
            _ => None,
        };
        let listed = modelcontext_types::to_raw(&def.tool)
            .map_err(|e| format!("tool '{name}' does not serialize: {e}"))?;
        Ok(ToolEntry { def, listed, input, output })
    }

    /// Validates the arguments, then returns the call as a future that catches panics and
    /// checks the tool's structured output against its own schema. Invalid arguments are a
    /// tool error (spec: input validation failures go back to the model), so no future.
    pub(crate) fn call(
        &self,
        cx: Context,
        args: Map<String, Value>,
        withhold_messages: bool,
    ) -> Result<BoxFuture<Result<CallToolResult, McpError>>, Box<CallToolResult>> {
        let name = self.def.tool.name.clone();
        let args = Value::Object(args);
        if let Err(problems) = self.input.check(&args) {
            return Err(Box::new(error_result(
                &name,
                Some(&format!("Invalid arguments: {problems}")),
            )));
        }
        let Value::Object(args) = args else { return Err(Box::new(error_result(&name, None))) };
        let future = AssertUnwindSafe(self.def.handler.call(cx, args)).catch_unwind();
        let output = self.output.clone();
        Ok(Box::pin(async move {
            let outcome = match future.await {
                Ok(outcome) => outcome.and_then(|result| check_output(output.as_deref(), result)),
                Err(panic) => Err(ToolFailure::Crash(panic_message(&panic))),
            };
            finish(&name, outcome, withhold_messages)
        }))
    }
}

/// A tool that breaks its own output schema is a server bug: the model gets the
/// withheld-message text and the log gets the details.
fn check_output(
    validator: Option<&Validator>,
    result: CallToolResult,
) -> Result<CallToolResult, ToolFailure> {
    let (Some(validator), false) = (validator, result.is_error == Some(true)) else {
        return Ok(result);
    };
    let checked = match &result.structured_content {
        Some(value) => validator.check(value),
        None => Err("the tool declares an output schema but returned no structured content".into()),
    };
    match checked {
        Ok(()) => Ok(result),
        Err(problem) => {
            Err(ToolFailure::Crash(format!("output breaks the output schema: {problem}")))
        }
    }
}

fn finish(
    name: &str,
    outcome: Result<CallToolResult, ToolFailure>,
    withhold_messages: bool,
) -> Result<CallToolResult, McpError> {
    match outcome {
        Ok(result) => Ok(result),
        Err(ToolFailure::Protocol(error)) => Err(error),
        Err(ToolFailure::Model(message)) => Ok(error_result(name, Some(&message))),
        Err(ToolFailure::Ordinary(message)) if !withhold_messages => {
            Ok(error_result(name, Some(&message)))
        }
        Err(ToolFailure::Ordinary(message)) => {
            tracing::info!(tool = name, error = %message, "tool failed; message withheld");
            Ok(error_result(name, None))
        }
        Err(ToolFailure::Crash(message)) => {
            tracing::error!(tool = name, error = %message, "tool crashed");
            Ok(error_result(name, None))
        }
    }
}

/// `isError: true` with `Error executing tool <name>[: <message>]`, never structured content.
pub(crate) fn error_result(name: &str, message: Option<&str>) -> CallToolResult {
    let text = match message {
        Some(message) => format!("Error executing tool {name}: {message}"),
        None => format!("Error executing tool {name}"),
    };
    CallToolResult::error(vec![ContentBlock::text(text)])
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        format!("panicked: {s}")
    } else if let Some(s) = panic.downcast_ref::<String>() {
        format!("panicked: {s}")
    } else {
        "panicked".to_owned()
    }
}
