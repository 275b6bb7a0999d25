//! Prompts: message templates a user picks, filled with string arguments.
//!
//! Errors are protocol errors: an unknown prompt or a missing required argument is -32602, a
//! failing handler -32603 (the Python SDK's code 0 is not a JSON-RPC code; we follow the spec).

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use modelcontext_types::{
    GetPromptResult, INTERNAL_ERROR, McpError, Prompt, PromptArgument, PromptMessage,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::context::Context;
use super::output::ToolFailure;
use super::schema::schema_for;
use crate::engine::BoxFuture;

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

/// A function that can serve a prompt: `Fn() -> Fut`, `Fn(A) -> Fut` or `Fn(Context, A) ->
/// Fut`, where `A: Deserialize + JsonSchema` has `String` fields (`Option<String>` for optional
/// arguments): prompt arguments are strings on the wire.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt handler",
    label = "expected an async fn or closure taking (), (Args) or (Context, Args)"
)]
pub trait PromptHandler<A, M>: Clone + Send + Sync + 'static {
    /// The JSON Schema of the arguments (used to list them).
    fn args_schema(&self) -> Map<String, Value>;
    /// Renders the prompt.
    fn get(
        &self,
        cx: Context,
        args: Map<String, Value>,
    ) -> BoxFuture<Result<GetPromptResult, ToolFailure>>;
}

impl<F, Fut, R> PromptHandler<(), fn() -> R> for F
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoPromptResult,
{
    fn args_schema(&self) -> Map<String, Value> {
        Map::new()
    }

    fn get(
        &self,
        _cx: Context,
        _args: Map<String, Value>,
    ) -> BoxFuture<Result<GetPromptResult, ToolFailure>> {
        let future = self();
        Box::pin(async move { future.await.into_result() })
    }
}

macro_rules! prompt_handler {
    ($marker:ty, [$($cx:ident)?]) => {
        impl<F, Fut, A, R> PromptHandler<A, $marker> for F
        where
            F: Fn($($cx,)? A) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            A: DeserializeOwned + JsonSchema + Send + 'static,
            R: IntoPromptResult,
        {
            fn args_schema(&self) -> Map<String, Value> {
                schema_for::<A>()
            }

            #[allow(unused_variables)]
            fn get(&self, cx: Context, args: Map<String, Value>) -> BoxFuture<Result<GetPromptResult, ToolFailure>> {
                let args = match A::deserialize(Value::Object(args)) {
                    Ok(args) => args,
                    Err(err) => {
                        let error = McpError::invalid_params(format!("Invalid prompt arguments: {err}"));
                        return Box::pin(async move { Err(ToolFailure::Protocol(error)) });
                    }
                };
                let future = self($(prompt_handler!(@cx $cx cx),)? args);
                Box::pin(async move { future.await.into_result() })
            }
        }
    };
    (@cx $cx:ident $value:ident) => { $value };
}

prompt_handler!(fn(A) -> R, []);
prompt_handler!(fn(Context, A) -> R, [Context]);

trait ErasedPrompt: Send + Sync {
    fn get(
        &self,
        cx: Context,
        args: Map<String, Value>,
    ) -> BoxFuture<Result<GetPromptResult, ToolFailure>>;
}

struct Erased<H, A, M>(H, std::marker::PhantomData<fn(A, M)>);

impl<H: PromptHandler<A, M>, A: 'static, M: 'static> ErasedPrompt for Erased<H, A, M> {
    fn get(
        &self,
        cx: Context,
        args: Map<String, Value>,
    ) -> BoxFuture<Result<GetPromptResult, ToolFailure>> {
        self.0.get(cx, args)
    }
}

/// A registered prompt: its advertised definition and its handler.
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) prompt: Prompt,
    handler: Arc<dyn ErasedPrompt>,
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
        let arguments = arguments_from_schema(&handler.args_schema());
        let mut prompt = Prompt::new(name);
        prompt.arguments = (!arguments.is_empty()).then_some(arguments);
        PromptDef { prompt, handler: Arc::new(Erased(handler, std::marker::PhantomData)) }
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

    /// The definition advertised in `prompts/list`.
    pub fn definition(&self) -> &Prompt {
        &self.prompt
    }

    /// Checks the arguments, then renders; failures become JSON-RPC errors.
    pub(crate) fn get(
        &self,
        cx: Context,
        args: Map<String, Value>,
        withhold_messages: bool,
    ) -> Result<BoxFuture<Result<GetPromptResult, McpError>>, McpError> {
        let missing: Vec<&str> = self
            .prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true) && !args.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(McpError::invalid_params(format!(
                "Missing required arguments for prompt '{}': {}",
                self.prompt.name,
                missing.join(", ")
            )));
        }
        let name = self.prompt.name.clone();
        let future = AssertUnwindSafe(self.handler.get(cx, args)).catch_unwind();
        Ok(Box::pin(async move {
            let failure = match future.await {
                Ok(Ok(result)) => return Ok(result),
                Ok(Err(failure)) => failure,
                Err(_) => ToolFailure::Crash("panicked".into()),
            };
            Err(prompt_error(failure, &name, withhold_messages))
        }))
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
