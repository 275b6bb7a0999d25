//! What tools, resources and prompts share: the forms a handler takes, and how one runs.
//!
//! A handler is an async fn or closure of one of three forms, whatever it serves: `|| ..`,
//! `|args: A| ..` or `|cx: Context, args: A| ..`, where `A: Deserialize + JsonSchema` is
//! deserialized from the request's arguments. One macro implements [`Handler`] for each form
//! (the idea of axum's handler arities: the context is an optional first argument). What the
//! future yields is each kind's business: its public trait (`ToolHandler`, `ResourceHandler`,
//! `PromptHandler`) is `Handler` with the output bound by the kind's `Into…Result` trait.
//!
//! The registry holds a handler as `Arc<dyn ErasedHandler<K>>`. A request runs it as one
//! future in one box: arguments deserialized, function called and awaited, value converted
//! and failure reported the kind's way, behind the one panic barrier a handler has, all inside
//! the request's [`HandlerFrame`] (cancellation guard, MRTR round, stamp). A [`Kind`] supplies
//! what differs: how to locate the handler (and its own middleware), the MRTR binding, what is
//! refused before the run, how a failure is reported, and the result's shape.

use std::future::Future;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;

use futures_util::FutureExt;
use modelcontext_types::{ClientRequest, InputResponses, McpError, RequestMeta};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::ServerInner;
use super::context::Context;
use super::frame::HandlerFrame;
use super::middleware::Stack;
use super::mrtr::Binding;
use super::output::ToolFailure;
use super::schema::schema_for;
use super::stamp::WireResult;
use crate::engine::{BoxFuture, Outcome};

/// An async fn or closure that can serve a tool, resource or prompt: `Fn() -> Fut`,
/// `Fn(A) -> Fut` or `Fn(Context, A) -> Fut`. `A` is the arguments' type (`()` for the first
/// form); `M` only tells the forms apart. Sealed: it is implemented for those forms and
/// nothing else, and only the SDK calls it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a handler",
    label = "expected an async fn or closure taking (), (Args) or (Context, Args)"
)]
pub trait Handler<A, M>: Clone + Send + Sync + 'static {
    /// What the future yields.
    type Output;
    /// The future the function returns.
    type Future: Future<Output = Self::Output> + Send + 'static;

    /// The JSON Schema of the arguments' type; `None` for a handler that takes none.
    #[doc(hidden)]
    fn args_schema(&self) -> Option<Map<String, Value>>;

    /// Deserializes the arguments and calls the function.
    #[doc(hidden)]
    fn call(&self, cx: Context, arguments: Arguments) -> Result<Self::Future, serde_json::Error>;
}

/// Implements [`Handler`] for one form: `[Context]` when the function takes the context first,
/// and the name of the arguments' type parameter when it takes arguments.
macro_rules! impl_handler {
    (@args) => { () };
    (@args $args:ident) => { $args };
    (@schema) => { None };
    (@schema $args:ident) => { Some(schema_for::<$args>()) };
    (@pass $context:ident $cx:ident) => { $cx };
    ([$($context:ident)?] $($args:ident)?) => {
        impl<F, Fut, R, $($args)?> Handler<impl_handler!(@args $($args)?), fn($($context,)? $($args)?) -> R>
            for F
        where
            F: Fn($($context,)? $($args)?) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            $($args: DeserializeOwned + JsonSchema + Send + 'static,)?
        {
            type Output = R;
            type Future = Fut;

            fn args_schema(&self) -> Option<Map<String, Value>> {
                impl_handler!(@schema $($args)?)
            }

            // A form without the context, or without arguments, leaves them unused.
            #[allow(unused_variables)]
            fn call(&self, cx: Context, arguments: Arguments) -> Result<Fut, serde_json::Error> {
                Ok(self($(impl_handler!(@pass $context cx),)? $(arguments.deserialize::<$args>()?)?))
            }
        }
    };
}

impl_handler!([]);
impl_handler!([] A);
impl_handler!([Context] A);

/// A request's arguments: a JSON object, kept as the `Value` it arrived in from parse to
/// deserialize, so the input schema checks it in place and the handler's type takes its
/// strings and maps by move. A modern request shares them with its MRTR binding instead of
/// copying them (the copy was 2% of a modern call).
pub struct Arguments(ArgumentsValue);

/// The arguments' value: the request's own, or shared with the MRTR binding.
enum ArgumentsValue {
    Owned(Value),
    Shared(Arc<Value>),
}

impl Arguments {
    pub(crate) fn new(object: Map<String, Value>) -> Arguments {
        Arguments(ArgumentsValue::Owned(Value::Object(object)))
    }

    /// The arguments as the JSON value the validator reads.
    pub(crate) fn as_value(&self) -> &Value {
        match &self.0 {
            ArgumentsValue::Owned(value) => value,
            ArgumentsValue::Shared(value) => value,
        }
    }

    /// The arguments, shared (the MRTR binding keeps them for a `requestState` it may seal).
    pub(crate) fn share(&mut self) -> Arc<Value> {
        let shared = match std::mem::replace(&mut self.0, ArgumentsValue::Owned(Value::Null)) {
            ArgumentsValue::Owned(value) => Arc::new(value),
            ArgumentsValue::Shared(value) => value,
        };
        self.0 = ArgumentsValue::Shared(Arc::clone(&shared));
        shared
    }

    /// The arguments as the object they arrived in, for a request sent on to another server.
    pub(crate) fn into_object(self) -> Map<String, Value> {
        let value = match self.0 {
            ArgumentsValue::Owned(value) => value,
            ArgumentsValue::Shared(value) => Arc::unwrap_or_clone(value),
        };
        match value {
            Value::Object(object) => object,
            _ => Map::new(),
        }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.as_value().get(name).is_some()
    }

    /// By move when the arguments are not shared (any more), else from the shared value.
    fn deserialize<A: DeserializeOwned>(self) -> Result<A, serde_json::Error> {
        match self.0 {
            ArgumentsValue::Owned(value) => A::deserialize(value),
            ArgumentsValue::Shared(value) => match Arc::try_unwrap(value) {
                Ok(value) => A::deserialize(value),
                Err(shared) => A::deserialize(&*shared),
            },
        }
    }
}

/// What tools, resources and prompts each supply to the one path that runs their handlers
/// (`Call::serve` and the erased handler).
pub(super) trait Kind: Sized + 'static {
    /// The request's params: `CallToolRequestParams`, `ReadResourceRequestParams`, ...
    type Params;
    /// What a run needs besides the handler: the tool's entry, the resource and the URI read,
    /// the prompt.
    type Target: Send + Sync + 'static;
    /// What the kind's handlers produce, converted.
    type Value: Send + 'static;
    /// The result on the wire.
    type Wire: WireResult + 'static;

    /// The handler the request names, or the request's error (an unknown name). With
    /// `item_middleware`, a target that has middleware of its own routes the request (given
    /// back whole) through it instead.
    fn locate(
        server: &ServerInner,
        params: Self::Params,
        item_middleware: bool,
    ) -> Result<Route<Self>, McpError>;

    /// What a modern request's sealed `requestState` is bound to.
    fn binding(target: &Self::Target, arguments: &mut Arguments) -> Binding;

    /// The answer given instead of running the handler, when the arguments are refused.
    fn refuse(target: &Self::Target, arguments: &Arguments)
    -> Option<Result<Self::Wire, McpError>>;

    /// The failure of arguments that do not deserialize into the handler's type.
    fn invalid_arguments(target: &Self::Target, error: serde_json::Error) -> ToolFailure;

    /// The value the request answers with, or its error, for what the handler produced;
    /// `withhold` is the server's policy for the messages of ordinary errors.
    fn settle(
        target: &Self::Target,
        outcome: Result<Self::Value, ToolFailure>,
        withhold: bool,
    ) -> Result<Self::Value, McpError>;

    /// The value as the result sent.
    fn into_wire(value: Self::Value) -> Self::Wire;

    /// The caching hint of the result, for kinds whose results are cacheable (a read).
    fn cache_hint(
        _target: &Self::Target,
        _hints: &super::cache::CacheHints,
    ) -> Option<super::CacheHint> {
        None
    }

    /// Whether the target may run as a task (tasks extension): only tools may.
    fn task_support(_target: &Self::Target) -> Option<super::tasks::TaskSupport> {
        None
    }
}

/// A handler's return value as kind `K` takes it; implemented through each kind's public
/// `Into…Result` trait.
pub(super) trait KindOutput<K: Kind> {
    fn into_value(self, target: &K::Target) -> Result<K::Value, ToolFailure>;
}

/// A handler whose return value kind `K` takes.
pub(super) trait KindHandler<K: Kind, A, M>: Handler<A, M, Output: KindOutput<K>> {}

impl<K: Kind, H, A, M> KindHandler<K, A, M> for H where H: Handler<A, M, Output: KindOutput<K>> {}

/// Where [`Kind::locate`] sends a request.
pub(super) enum Route<K: Kind> {
    /// Straight to its handler.
    Handler(Located<K>),
    /// First through the middleware of the tool, resource or prompt it names.
    Middleware(Stack, ClientRequest),
}

/// A request whose handler [`Kind::locate`] found.
pub(super) struct Located<K: Kind> {
    pub handler: Arc<dyn ErasedHandler<K>>,
    pub target: K::Target,
    pub arguments: Arguments,
    pub parts: RequestParts,
}

/// The parts of a `tools/call`, `resources/read` or `prompts/get` request that are not the
/// kind's: the MRTR answers and state, and `_meta`.
pub(super) struct RequestParts {
    pub responses: Option<InputResponses>,
    pub state: Option<String>,
    pub meta: Option<RequestMeta>,
}

/// One run of a handler.
pub(super) struct Invocation<K: Kind> {
    pub cx: Context,
    pub arguments: Arguments,
    pub target: K::Target,
    /// The server withholds the messages of ordinary errors.
    pub withhold: bool,
}

/// A handler of kind `K`, its arguments' type and form erased: what the registry holds.
pub(super) trait ErasedHandler<K: Kind>: Send + Sync {
    /// Runs the handler for the server itself, to its value rather than a wire answer (a
    /// task's run, a resource read on a handler's behalf).
    fn run_to_value(&self, invocation: Invocation<K>) -> BoxFuture<Result<K::Value, McpError>>;

    /// Runs the handler as the answer to a request: the run and the request's frame are one
    /// future, in one box.
    fn respond(&self, invocation: Invocation<K>, frame: HandlerFrame) -> BoxFuture<Outcome>;
}

/// `handler`, ready for the registry of kind `K`.
pub(super) fn erase<K, H, A, M>(handler: H) -> Arc<dyn ErasedHandler<K>>
where
    K: Kind,
    H: KindHandler<K, A, M>,
    A: 'static,
    M: 'static,
{
    Arc::new(Erased { handler, form: PhantomData })
}

/// A handler written against the erased shape itself: it gets the invocation whole (the
/// arguments as sent, the target, the context) and settles its own result. What answers a
/// request another server owns.
pub(super) fn erase_invocation<K, F>(run: F) -> Arc<dyn ErasedHandler<K>>
where
    K: Kind,
    F: Fn(Invocation<K>) -> BoxFuture<Result<K::Value, McpError>> + Send + Sync + 'static,
{
    Arc::new(WholeInvocation(run))
}

struct WholeInvocation<F>(F);

impl<K, F> ErasedHandler<K> for WholeInvocation<F>
where
    K: Kind,
    F: Fn(Invocation<K>) -> BoxFuture<Result<K::Value, McpError>> + Send + Sync + 'static,
{
    fn run_to_value(&self, invocation: Invocation<K>) -> BoxFuture<Result<K::Value, McpError>> {
        (self.0)(invocation)
    }

    fn respond(&self, invocation: Invocation<K>, frame: HandlerFrame) -> BoxFuture<Outcome> {
        let run = (self.0)(invocation);
        Box::pin(async move {
            let run = pin!(run);
            frame.finish(run, K::into_wire).await
        })
    }
}

/// A handler and the types that tell its form apart.
struct Erased<H, A, M> {
    handler: H,
    form: PhantomData<fn(A, M)>,
}

impl<K, H, A, M> ErasedHandler<K> for Erased<H, A, M>
where
    K: Kind,
    H: KindHandler<K, A, M>,
    A: 'static,
    M: 'static,
{
    fn run_to_value(&self, invocation: Invocation<K>) -> BoxFuture<Result<K::Value, McpError>> {
        Box::pin(run_settled(self.handler.clone(), invocation))
    }

    fn respond(&self, invocation: Invocation<K>, frame: HandlerFrame) -> BoxFuture<Outcome> {
        Box::pin(respond(self.handler.clone(), invocation, frame))
    }
}

/// The answer to a request: the handler's run inside the request's frame. The run is pinned
/// here, once, and the frame's wrappers borrow it: passed by value, it would be copied into
/// each of them, and the boxed future would hold it many times over.
async fn respond<K: Kind, H: KindHandler<K, A, M>, A, M>(
    handler: H,
    invocation: Invocation<K>,
    frame: HandlerFrame,
) -> Outcome {
    let run = pin!(run_settled(handler, invocation));
    frame.finish(run, K::into_wire).await
}

/// The handler's run, settled the kind's way. The function is called inside the panic
/// barrier, on the first poll, so a panic before its future exists is caught too.
async fn run_settled<K: Kind, H: KindHandler<K, A, M>, A, M>(
    handler: H,
    invocation: Invocation<K>,
) -> Result<K::Value, McpError> {
    let Invocation { cx, arguments, target, withhold } = invocation;
    let produced = AssertUnwindSafe(produce(handler, cx, arguments, &target)).catch_unwind();
    let outcome =
        produced.await.unwrap_or_else(|panic| Err(ToolFailure::Crash(panic_message(&*panic))));
    K::settle(&target, outcome, withhold)
}

/// The arguments deserialized, the function called and awaited, its output converted.
async fn produce<K: Kind, H: KindHandler<K, A, M>, A, M>(
    handler: H,
    cx: Context,
    arguments: Arguments,
    target: &K::Target,
) -> Result<K::Value, ToolFailure> {
    let future =
        handler.call(cx, arguments).map_err(|error| K::invalid_arguments(target, error))?;
    future.await.into_value(target)
}

/// For the log only: a panic's message is never sent.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        format!("panicked: {s}")
    } else if let Some(s) = panic.downcast_ref::<String>() {
        format!("panicked: {s}")
    } else {
        "panicked".to_owned()
    }
}
