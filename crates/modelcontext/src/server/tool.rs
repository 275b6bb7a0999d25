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
use std::sync::Arc;

use modelcontext_types::{
    CallToolRequestParams, CallToolResult, ClientRequest, ContentBlock, INVALID_PARAMS, Icon,
    McpError, Tool, ToolAnnotations, method, mirrored_arguments,
};
use schemars::JsonSchema;
use serde_json::{Map, Value};

use super::handler::{
    Arguments, ErasedHandler, Handler, Kind, KindOutput, Located, RequestParts, Route, erase,
};
use super::middleware::{Middleware, Stack};
use super::mrtr::Binding;
use super::output::{IntoToolResult, ToolFailure};
use super::schema::{SchemaLimits, Validator, input_schema};
use super::tasks::TaskSupport;
use super::{Listing, ServerInner};

/// A registered tool: its advertised definition and its handler.
#[derive(Clone)]
pub struct ToolDef {
    pub(crate) tool: Tool,
    handler: Arc<dyn ErasedHandler<ToolKind>>,
    /// OAuth scopes a caller needs for this tool, on top of the endpoint's (HTTP with `auth`).
    pub(crate) required_scopes: Vec<String>,
    pub(crate) task: Option<TaskSupport>,
    /// What runs around this tool's calls only ([`ToolDef::middleware`]).
    middleware: Stack,
    /// Another server owns the schemas (a proxied tool): it checks the arguments and the
    /// result itself, so they are passed through unchecked, and a schema this server could
    /// not compile does not keep the tool out.
    pub(crate) passthrough: bool,
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
        A: 'static,
        M: 'static,
    {
        let mut tool = Tool::new(name, input_schema(handler.args_schema().unwrap_or_default()));
        tool.output_schema = output_schema(&handler).map(Value::Object);
        ToolDef {
            tool,
            handler: erase(handler),
            required_scopes: Vec::new(),
            task: None,
            middleware: Stack::default(),
            passthrough: false,
        }
    }

    /// A tool advertised as `tool` whose calls another server answers: `handler` gets the
    /// arguments as sent and its result goes back as it came ([`ToolDef::passthrough`]).
    pub(super) fn forwarding(tool: Tool, handler: Arc<dyn ErasedHandler<ToolKind>>) -> ToolDef {
        ToolDef {
            tool,
            handler,
            required_scopes: Vec::new(),
            task: None,
            middleware: Stack::default(),
            passthrough: true,
        }
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

    /// Sets the icons clients may show beside the tool (2025-11-25+).
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.tool.icons = Some(icons);
        self
    }

    /// Replaces the derived input schema (it must still be an object schema).
    pub fn input_schema(mut self, schema: Map<String, Value>) -> Self {
        self.tool.input_schema = schema;
        self
    }

    /// Sets the `outputSchema`, for a hand-written handler that returns a `CallToolResult`
    /// with `structuredContent` (a returned `Json<T>` or `#[tool]` struct derives it). The
    /// server checks every successful result against it: a result whose structured content
    /// breaks it (or has none) reaches the model as `isError: true`, `Error executing tool
    /// <name>`, and the details are logged. The handshake era requires an object schema
    /// (`"type": "object"`) here; 2026-07-28 allows any.
    pub fn output_schema(mut self, schema: Map<String, Value>) -> Self {
        self.tool.output_schema = Some(Value::Object(schema));
        self
    }

    /// Sets the tool's `_meta`.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.tool.meta = Some(meta);
        self
    }

    /// Lets the tool run as a task (tasks extension, 2026-07-28): for a client whose request
    /// declares `io.modelcontextprotocol/tasks`, a call that does not finish in its first
    /// poll answers a task handle, and the client polls `tasks/get` for the result. With
    /// [`TaskSupport::Required`], a modern client without the extension is refused (-32021).
    /// Handshake-era calls run as plain calls either way.
    pub fn task(mut self, support: TaskSupport) -> Self {
        self.task = Some(support);
        self
    }

    /// Runs `middleware` around every call of this tool only, inside the server's
    /// middleware (see [`middleware`](super::middleware) for the order); the first added is
    /// outermost.
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware = self.middleware.with(middleware);
        self
    }

    /// The definition advertised in `tools/list`.
    pub fn definition(&self) -> &Tool {
        &self.tool
    }
}

/// A function that can serve as a tool: an async fn or closure of the form `Fn() -> Fut`,
/// `Fn(A) -> Fut` or `Fn(Context, A) -> Fut`, where `A: Deserialize + JsonSchema` describes the
/// arguments and the future's output implements [`IntoToolResult`]. `M` only tells the forms
/// apart; you never name it. Implemented for every such function, and for nothing else.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool handler",
    label = "expected an async fn or closure taking (), (Args) or (Context, Args)",
    note = "a tool handler looks like `|args: Args| async move {{ .. }}` where `Args: serde::Deserialize + schemars::JsonSchema` and the future's output implements `IntoToolResult`"
)]
pub trait ToolHandler<A, M>: Handler<A, M, Output: IntoToolResult> {}

impl<H, A, M> ToolHandler<A, M> for H where H: Handler<A, M, Output: IntoToolResult> {}

/// The `outputSchema` a handler's return type implies.
fn output_schema<H, A, M>(_: &H) -> Option<Map<String, Value>>
where
    H: Handler<A, M, Output: IntoToolResult>,
{
    H::Output::output_schema()
}

/// Arguments of a tool that takes none, e.g. `|cx: Context, _: NoArgs| async { .. }`.
#[derive(Debug, serde::Deserialize, JsonSchema)]
#[serde(crate = "serde")]
pub struct NoArgs {}

/// A tool ready to serve: its definition, compiled validators and handler.
pub(crate) struct ToolEntry {
    pub def: ToolDef,
    /// What a list or a call reads of the tool, worked out here once.
    pub listing: Listing,
    /// `None` for a passthrough tool: another server checks its arguments.
    input: Option<Validator>,
    output: Option<Validator>,
}

impl ToolEntry {
    pub(crate) fn compile(def: ToolDef, limits: SchemaLimits) -> Result<ToolEntry, String> {
        let name = &def.tool.name;
        if def.passthrough {
            return ToolEntry::passthrough(def);
        }
        let input = Validator::compile_with(&def.tool.input_schema, limits)
            .map_err(|e| format!("tool '{name}' has an invalid input schema: {e}"))?;
        let output = match &def.tool.output_schema {
            Some(Value::Object(schema)) => Some(
                Validator::compile_with(schema, limits)
                    .map_err(|e| format!("tool '{name}' has an invalid output schema: {e}"))?,
            ),
            _ => None,
        };
        // Invalid annotations are refused with every feature set; only HTTP keeps the
        // arguments they mirror (in `listing`).
        let schema = Value::Object(def.tool.input_schema.clone());
        mirrored_arguments(&schema).map_err(|reason| {
            format!("tool '{name}' has an invalid x-mcp-header annotation: {reason}")
        })?;
        let listing = listing(&def.tool)?;
        Ok(ToolEntry { def, listing, input: Some(input), output })
    }

    /// A passthrough tool's entry: no validators (its owner checks the arguments and the
    /// result, and refuses a call that breaks its header mirroring).
    fn passthrough(def: ToolDef) -> Result<ToolEntry, String> {
        let listing = listing(&def.tool)?;
        Ok(ToolEntry { def, listing, input: None, output: None })
    }

    fn name(&self) -> &str {
        &self.def.tool.name
    }
}

/// The listing of `tool`, or why it has none.
fn listing(tool: &Tool) -> Result<Listing, String> {
    Listing::new(tool).map_err(|e| format!("tool '{}' does not serialize: {e}", tool.name))
}

/// `tools/call`.
pub(super) enum ToolKind {}

impl Kind for ToolKind {
    type Params = CallToolRequestParams;
    type Target = Arc<ToolEntry>;
    type Value = CallToolResult;
    type Wire = CallToolResult;

    fn locate(
        server: &ServerInner,
        params: CallToolRequestParams,
        item_middleware: bool,
    ) -> Result<Route<Self>, McpError> {
        let Some(entry) = server.catalog().tools.get(&params.name).cloned() else {
            // Spec (server/tools, error handling): an unknown tool is a protocol error.
            let message = format!("Unknown tool: {}", params.name);
            return Err(McpError::new(INVALID_PARAMS, message));
        };
        if let Some(stack) = entry.def.middleware.to_run(item_middleware) {
            return Ok(Route::Middleware(stack, ClientRequest::CallTool(params)));
        }
        Ok(Route::Handler(Located {
            handler: Arc::clone(&entry.def.handler),
            target: entry,
            arguments: Arguments::new(params.arguments.unwrap_or_default()),
            parts: RequestParts {
                responses: params.input_responses,
                state: params.request_state,
                meta: params.meta,
            },
        }))
    }

    fn binding(entry: &Arc<ToolEntry>, arguments: &mut Arguments) -> Binding {
        Binding::new(method::TOOLS_CALL, entry.name(), arguments.share())
    }

    /// Invalid arguments are a tool error (spec: input validation failures go back to the
    /// model), answered without running the tool.
    fn refuse(
        entry: &Arc<ToolEntry>,
        arguments: &Arguments,
    ) -> Option<Result<CallToolResult, McpError>> {
        let problems = entry.input.as_ref()?.check(arguments.as_value()).err()?;
        Some(Ok(error_result(entry.name(), Some(&format!("Invalid arguments: {problems}")))))
    }

    /// The arguments already passed the input schema, so a failure here means the schema and
    /// the type disagree (a hand-set schema, say); the model still gets a readable text.
    fn invalid_arguments(_: &Arc<ToolEntry>, error: serde_json::Error) -> ToolFailure {
        ToolFailure::Model(format!("invalid arguments: {error}"))
    }

    fn settle(
        entry: &Arc<ToolEntry>,
        outcome: Result<CallToolResult, ToolFailure>,
        withhold: bool,
    ) -> Result<CallToolResult, McpError> {
        let outcome = outcome.and_then(|result| check_output(entry.output.as_ref(), result));
        finish(entry.name(), outcome, withhold)
    }

    fn into_wire(result: CallToolResult) -> CallToolResult {
        result
    }

    fn task_support(entry: &Arc<ToolEntry>) -> Option<TaskSupport> {
        entry.def.task
    }
}

impl<R: IntoToolResult> KindOutput<ToolKind> for R {
    fn into_value(self, _: &Arc<ToolEntry>) -> Result<CallToolResult, ToolFailure> {
        self.into_tool_result()
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
