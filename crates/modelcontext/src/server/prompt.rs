//! Prompts: message templates a user picks, filled with string arguments.
//!
//! Errors are protocol errors: an unknown prompt or a missing required argument is -32602, a
//! failing handler -32603 (the Python SDK's code 0 is not a JSON-RPC code; we follow the spec).

use std::fmt;
use std::sync::Arc;

use modelcontext_types::{
    ClientRequest, GetPromptRequestParams, GetPromptResult, INTERNAL_ERROR, Icon, McpError, Meta,
    Prompt, PromptArgument, PromptMessage, method,
};
use serde_json::{Map, Value};

use super::ServerInner;
use super::completion::ArgumentCompleter;
use super::handler::{
    Arguments, ErasedHandler, Handler, Kind, KindOutput, Located, RequestParts, Route, erase,
};
use super::middleware::{Middleware, Stack};
use super::mrtr::Binding;
use super::output::ToolFailure;

/// What a prompt handler can return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a prompt",
    note = "return String (one user message), Vec<PromptMessage> or GetPromptResult, or a Result of one of those"
)]
pub trait IntoPromptMessages: Send + 'static {
    /// Converts into the result.
    fn into_prompt_result(self) -> GetPromptResult;
}

impl IntoPromptMessages for String {
    fn into_prompt_result(self) -> GetPromptResult {
        GetPromptResult::new(vec![PromptMessage::user_text(self)])
    }
}

impl IntoPromptMessages for &'static str {
    fn into_prompt_result(self) -> GetPromptResult {
        self.to_owned().into_prompt_result()
    }
}

impl IntoPromptMessages for Vec<PromptMessage> {
    fn into_prompt_result(self) -> GetPromptResult {
        GetPromptResult::new(self)
    }
}

impl IntoPromptMessages for GetPromptResult {
    fn into_prompt_result(self) -> GetPromptResult {
        self
    }
}

/// What a prompt handler's future yields: messages, or a `Result` of them.
pub trait IntoPromptResult: Send + 'static {
    /// The result or the classified error.
    fn into_result(self) -> Result<GetPromptResult, ToolFailure>;
}

impl<T: IntoPromptMessages> IntoPromptResult for T {
    fn into_result(self) -> Result<GetPromptResult, ToolFailure> {
        Ok(self.into_prompt_result())
    }
}

impl<T: IntoPromptMessages, E: fmt::Display + Send + 'static> IntoPromptResult for Result<T, E> {
    fn into_result(self) -> Result<GetPromptResult, ToolFailure> {
        self.map(IntoPromptMessages::into_prompt_result).map_err(ToolFailure::classify)
    }
}

/// A function that can serve a prompt: an async fn or closure of the form `Fn() -> Fut`,
/// `Fn(A) -> Fut` or `Fn(Context, A) -> Fut`, where `A: Deserialize + JsonSchema` has `String`
/// fields (`Option<String>` for optional arguments: prompt arguments are strings on the wire)
/// and the future's output implements [`IntoPromptResult`]. Implemented for every such
/// function, and for nothing else.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt handler",
    label = "expected an async fn or closure taking (), (Args) or (Context, Args)"
)]
pub trait PromptHandler<A, M>: Handler<A, M, Output: IntoPromptResult> {}

impl<H, A, M> PromptHandler<A, M> for H where H: Handler<A, M, Output: IntoPromptResult> {}

/// A registered prompt: its advertised definition and its handler.
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) prompt: Prompt,
    /// Per-argument completers, by argument name.
    pub(crate) completers: super::completion::Completers,
    handler: Arc<dyn ErasedHandler<PromptKind>>,
    /// What runs around this prompt's requests only ([`PromptDef::middleware`]).
    middleware: Stack,
}

impl fmt::Debug for PromptDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptDef").field("prompt", &self.prompt).finish_non_exhaustive()
    }
}

impl PromptDef {
    /// A prompt named `name` rendered by `handler`.
    pub fn new<A: 'static, M: 'static>(
        name: impl Into<String>,
        handler: impl PromptHandler<A, M>,
    ) -> PromptDef {
        let arguments = arguments_from_schema(&handler.args_schema().unwrap_or_default());
        let mut prompt = Prompt::new(name);
        prompt.arguments = (!arguments.is_empty()).then_some(arguments);
        PromptDef {
            prompt,
            completers: Default::default(),
            handler: erase(handler),
            middleware: Stack::default(),
        }
    }

    /// A prompt advertised as `prompt` whose requests another server answers: `handler`
    /// gets the arguments as sent.
    pub(super) fn forwarding(prompt: Prompt, handler: Arc<dyn ErasedHandler<PromptKind>>) -> Self {
        PromptDef { prompt, completers: Default::default(), handler, middleware: Stack::default() }
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.prompt.description = Some(description.into());
        self
    }

    /// Sets a human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.prompt.title = Some(title.into());
        self
    }

    /// Completes the argument `name` with `completer` (`completion/complete` with a
    /// `ref/prompt` naming this prompt); declares the `completions` capability.
    pub fn complete(mut self, name: impl Into<String>, completer: impl ArgumentCompleter) -> Self {
        self.completers.insert(name.into(), Arc::new(completer));
        self
    }

    /// Sets the icons clients may show beside the prompt (2025-11-25+).
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.prompt.icons = Some(icons);
        self
    }

    /// Sets the prompt's `_meta`.
    pub fn meta(mut self, meta: Meta) -> Self {
        self.prompt.meta = Some(meta);
        self
    }

    /// Runs `middleware` around every `prompts/get` of this prompt only, inside the server's
    /// middleware (see [`middleware`](super::middleware) for the order); the first added is
    /// outermost.
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware = self.middleware.with(middleware);
        self
    }

    /// The definition advertised in `prompts/list`.
    pub fn definition(&self) -> &Prompt {
        &self.prompt
    }

    fn name(&self) -> &str {
        &self.prompt.name
    }
}

/// `prompts/get`.
pub(super) enum PromptKind {}

impl Kind for PromptKind {
    type Params = GetPromptRequestParams;
    type Target = Arc<PromptDef>;
    type Value = GetPromptResult;
    type Wire = GetPromptResult;

    /// Prompt arguments are strings on the wire; the handler's type reads them as JSON strings.
    fn locate(
        server: &ServerInner,
        params: GetPromptRequestParams,
        item_middleware: bool,
    ) -> Result<Route<Self>, McpError> {
        let Some(def) = server.catalog().prompts.get(&params.name).cloned() else {
            let message = format!("Unknown prompt: {}", params.name);
            return Err(McpError::invalid_params(message));
        };
        if let Some(stack) = def.middleware.to_run(item_middleware) {
            return Ok(Route::Middleware(stack, ClientRequest::GetPrompt(params)));
        }
        let arguments = params.arguments.unwrap_or_default();
        let arguments = arguments.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
        Ok(Route::Handler(Located {
            handler: Arc::clone(&def.handler),
            target: def,
            arguments: Arguments::new(arguments),
            parts: RequestParts {
                responses: params.input_responses,
                state: params.request_state,
                meta: params.meta,
            },
        }))
    }

    fn binding(def: &Arc<PromptDef>, arguments: &mut Arguments) -> Binding {
        Binding::new(method::PROMPTS_GET, def.name(), arguments.share())
    }

    /// A missing required argument is -32602, before the handler runs.
    fn refuse(
        def: &Arc<PromptDef>,
        arguments: &Arguments,
    ) -> Option<Result<GetPromptResult, McpError>> {
        let declared = def.prompt.arguments.iter().flatten();
        let missing: Vec<&str> = declared
            .filter(|a| a.required == Some(true) && !arguments.contains(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if missing.is_empty() {
            return None;
        }
        let missing = missing.join(", ");
        let message = format!("Missing required arguments for prompt '{}': {missing}", def.name());
        Some(Err(McpError::invalid_params(message)))
    }

    fn invalid_arguments(_: &Arc<PromptDef>, error: serde_json::Error) -> ToolFailure {
        ToolFailure::Protocol(McpError::invalid_params(format!(
            "Invalid prompt arguments: {error}"
        )))
    }

    fn settle(
        def: &Arc<PromptDef>,
        outcome: Result<GetPromptResult, ToolFailure>,
        withhold: bool,
    ) -> Result<GetPromptResult, McpError> {
        outcome.map_err(|failure| prompt_error(failure, def.name(), withhold))
    }

    fn into_wire(result: GetPromptResult) -> GetPromptResult {
        result
    }
}

impl<R: IntoPromptResult> KindOutput<PromptKind> for R {
    fn into_value(self, _: &Arc<PromptDef>) -> Result<GetPromptResult, ToolFailure> {
        self.into_result()
    }
}

fn prompt_error(failure: ToolFailure, name: &str, withhold_messages: bool) -> McpError {
    match failure {
        ToolFailure::Protocol(error) => error,
        ToolFailure::Model(message) => McpError::new(INTERNAL_ERROR, message),
        ToolFailure::Ordinary(message) if !withhold_messages => {
            McpError::new(INTERNAL_ERROR, message)
        }
        ToolFailure::Ordinary(message) | ToolFailure::Crash(message) => {
            tracing::error!(prompt = name, error = %message, "prompt failed");
            McpError::new(INTERNAL_ERROR, format!("Error rendering prompt {name}"))
        }
    }
}

/// One `PromptArgument` per property of the arguments' schema, in declaration order.
fn arguments_from_schema(schema: &Map<String, Value>) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(Value::Object(properties)) = schema.get("properties") else { return Vec::new() };
    properties
        .iter()
        .map(|(name, property)| {
            let mut argument =
                PromptArgument::new(name.clone()).with_required(required.contains(&name.as_str()));
            argument.description =
                property.get("description").and_then(Value::as_str).map(str::to_owned);
            argument
        })
        .collect()
}
