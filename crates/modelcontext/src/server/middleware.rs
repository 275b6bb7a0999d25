//! Async middleware: your code around the requests a server answers, in the shape of axum's
//! `middleware::from_fn` and tower's services. A middleware gets the parsed [`Request`] and
//! the [`Next`] step; `next.run(request).await` runs the rest of the chain and then the
//! handler, and what it returns is the [`Response`] the client gets (unless the middleware
//! returns another). So a middleware can await (a token check against a store, a rate limit
//! kept elsewhere), rewrite the request (a tool's arguments) and the result, answer without
//! calling `next` at all, or bound the handler with `tokio::time::timeout`.
//!
//! ```
//! use std::time::Duration;
//!
//! use modelcontext::server::middleware::{Next, Request, Response, from_fn};
//! use modelcontext::types::McpError;
//! use modelcontext::{McpServer, ToolDef};
//!
//! let slow = ToolDef::new("slow", || async {
//!     tokio::time::sleep(Duration::from_secs(60)).await;
//!     "done"
//! });
//! let server = McpServer::new("bounded")
//!     // Every request: give the handler five seconds.
//!     .middleware(from_fn(|request: Request, next: Next| async move {
//!         match tokio::time::timeout(Duration::from_secs(5), next.run(request)).await {
//!             Ok(response) => response,
//!             Err(_) => Response::error(McpError::internal("timed out")),
//!         }
//!     }))
//!     .tool(slow)?;
//! # Ok::<(), modelcontext::Error>(())
//! ```
//!
//! # Where middleware runs
//!
//! Every transport (stdio, in memory, HTTP sessions, stateless 2026-07-28 HTTP, JSON-RPC
//! batches) hands its requests to the same server core, which takes each through these steps:
//!
//! 1. **Parse** the method and params (unparsable params are answered -32602, an unknown
//!    method -32601).
//! 2. **Era and envelope checks**: the handshake (`initialize` first) or the 2026-07-28
//!    `_meta` envelope, and the methods an era removed.
//! 3. **The request's span is named** (and its metrics started); every later step runs inside
//!    it, and it records every request, refused ones included.
//! 4. **Server middleware** ([`McpServer::middleware`](super::McpServer::middleware)), the
//!    first added outermost: it sees the request first and the response last. The
//!    deprecated [`RequestLayer`](super::RequestLayer)s run here too, each as a middleware,
//!    outside all the others.
//! 5. **Per-item middleware** ([`ToolDef::middleware`](super::ToolDef::middleware),
//!    [`PromptDef::middleware`](super::PromptDef::middleware),
//!    [`ResourceDef::middleware`](super::ResourceDef::middleware)), only for requests of that
//!    tool, prompt or resource, again first added outermost.
//! 6. **The SDK's handling of the method**: for a tool, the MRTR round of a modern request,
//!    the check of the arguments against the input schema (a tool error, answered without
//!    running the tool), task augmentation, then the handler, behind its panic barrier.
//!
//! A request refused before step 4 never reaches a middleware, and neither does
//! `initialize`: the handshake itself, which pins the connection's era as it is answered. A
//! middleware that rewrites a tool's name reaches that tool's handler, but not that tool's
//! own middleware.
//!
//! A middleware that panics is answered -32603, as a handler that panics is. The results
//! the handler produces are already in their era's shape (in 2026-07-28, with `resultType`
//! and the `serverInfo` stamp): rewrite them with [`Response::map_result`] to keep that.
//! Answer a tool call yourself with [`Request::tool_result`], which gives the result the same
//! fields; a result given to [`Response::from_result`] is sent as it is.
//!
//! A tower [`Layer`](tower::Layer) whose service takes a [`Request`] and returns a
//! [`Response`] is a middleware too, through `from_layer` (feature `http`).
//!
//! A server without middleware pays nothing for the feature: its requests take the same path
//! as before it existed, and a synchronous tool is still answered without a task.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use modelcontext_types::{
    CallToolResult, ClientRequest, Era, McpError, RawValue, RequestId, method,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

// The tower adapter (feature `http`) is declared with the core's other HTTP-only items; this
// glob brings it here, and brings nothing (hence unused) without the feature.
#[allow(unused_imports)]
pub use super::middleware_http::*;

use super::extensions::{Extensions, PrincipalId};
use super::stamp::{ServerInfoJson, Stamp};
use crate::engine::{BoxFuture, Outcome};
use crate::observe::Target;

/// What a [`Middleware`] returns: the future of its [`Response`].
pub type ResponseFuture = Pin<Box<dyn Future<Output = Response> + Send + 'static>>;

/// Code around the requests a server answers: add it for the whole server with
/// [`McpServer::middleware`](super::McpServer::middleware), or for one tool with
/// [`ToolDef::middleware`](super::ToolDef::middleware). Most are written with [`from_fn`];
/// implement the trait for a middleware that keeps state of its own. See the
/// [module docs](self) for the order of the steps around it.
pub trait Middleware: Send + Sync + 'static {
    /// Answers `request`: usually by `next.run(request).await`, with work of its own before
    /// and after.
    fn handle(&self, request: Request, next: Next) -> ResponseFuture;
}

/// A middleware made of an async function or closure `|request, next| async move { .. }`.
pub fn from_fn<F, Fut>(function: F) -> FromFn<F>
where
    F: Fn(Request, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'static,
{
    FromFn(function)
}

/// The middleware [`from_fn`] makes.
#[derive(Clone)]
pub struct FromFn<F>(F);

impl<F> std::fmt::Debug for FromFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FromFn")
    }
}

impl<F, Fut> Middleware for FromFn<F>
where
    F: Fn(Request, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'static,
{
    fn handle(&self, request: Request, next: Next) -> ResponseFuture {
        Box::pin((self.0)(request, next))
    }
}

/// One request as a middleware sees it: the parsed request, which it may rewrite, and what
/// is known about where it comes from. A clone is the same request, for a middleware that runs
/// the rest of the chain more than once (see [`Next`]).
#[derive(Clone)]
pub struct Request {
    request: ClientRequest,
    id: RequestId,
    era: Era,
    protocol_version: &'static str,
    session_id: Option<Arc<str>>,
    transport: &'static str,
    extensions: Arc<Extensions>,
    /// For the era's stamp on a result the middleware makes.
    server_info: Arc<ServerInfoJson>,
}

/// Where a request comes from: what [`Request`] carries beside the request itself.
pub(crate) struct Origin {
    pub id: RequestId,
    pub era: Era,
    pub protocol_version: &'static str,
    pub session_id: Option<Arc<str>>,
    pub transport: &'static str,
    pub extensions: Arc<Extensions>,
    pub server_info: Arc<ServerInfoJson>,
}

impl Request {
    pub(crate) fn new(request: ClientRequest, origin: Origin) -> Request {
        let Origin { id, era, protocol_version, session_id, transport, extensions, server_info } =
            origin;
        Request {
            request,
            id,
            era,
            protocol_version,
            session_id,
            transport,
            extensions,
            server_info,
        }
    }

    /// A response to this `tools/call` with `result` instead of the tool's, in the shape the
    /// request's era gives every result (in 2026-07-28: `resultType` and the `serverInfo`
    /// stamp), as the tool's own would be.
    pub fn tool_result(&self, result: CallToolResult) -> Response {
        Response(Stamp::new(&self.server_info, self.era).apply(result))
    }

    /// The parsed request.
    pub fn request(&self) -> &ClientRequest {
        &self.request
    }

    /// The parsed request, to rewrite: what the later steps and the handler get.
    pub fn request_mut(&mut self) -> &mut ClientRequest {
        &mut self.request
    }

    /// The request, taken apart from what the middleware knows of its origin.
    pub fn into_request(self) -> ClientRequest {
        self.request
    }

    /// The method, e.g. `tools/call`.
    pub fn method(&self) -> &str {
        self.request.method()
    }

    /// The JSON-RPC id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The tool or prompt name, or the resource URI, for the methods that have one.
    pub fn target(&self) -> Option<&str> {
        Target::of(&self.request).map(|target| target.value())
    }

    /// The tool a `tools/call` calls.
    pub fn tool_name(&self) -> Option<&str> {
        match &self.request {
            ClientRequest::CallTool(params) => Some(&params.name),
            _ => None,
        }
    }

    /// The arguments of a `tools/call`, if it has any.
    pub fn arguments(&self) -> Option<&Map<String, Value>> {
        match &self.request {
            ClientRequest::CallTool(params) => params.arguments.as_ref(),
            _ => None,
        }
    }

    /// The arguments of a `tools/call` (`None` for other methods), to rewrite; a call
    /// without arguments gets an empty object here.
    pub fn arguments_mut(&mut self) -> Option<&mut Map<String, Value>> {
        match &mut self.request {
            ClientRequest::CallTool(params) => Some(params.arguments.get_or_insert_default()),
            _ => None,
        }
    }

    /// The era of the request.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The protocol revision the request speaks.
    pub fn protocol_version(&self) -> &'static str {
        self.protocol_version
    }

    /// The HTTP session (`Mcp-Session-Id`) of a handshake-era HTTP request.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// `pipe` (stdio, in memory) or `tcp` (HTTP), as OpenTelemetry's `network.transport`.
    pub fn transport(&self) -> &'static str {
        self.transport
    }

    /// What the transport attached: HTTP headers, the authenticated principal...
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The authenticated principal, if the transport has one.
    pub fn principal(&self) -> Option<&PrincipalId> {
        self.extensions.get::<PrincipalId>()
    }

    /// The extensions, shared (a layer's `RequestInfo` holds them).
    pub(super) fn shared_extensions(&self) -> Arc<Extensions> {
        Arc::clone(&self.extensions)
    }

    fn is_listen(&self) -> bool {
        self.request.method() == method::SUBSCRIPTIONS_LISTEN
    }
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method())
            .field("id", &self.id)
            .field("target", &self.target())
            .field("era", &self.era)
            .finish_non_exhaustive()
    }
}

/// What a request is answered with: its result, or the JSON-RPC error.
#[derive(Debug)]
pub struct Response(Outcome);

impl Response {
    /// A response with this outcome.
    pub fn new(outcome: Result<Box<RawValue>, McpError>) -> Response {
        Response(outcome)
    }

    /// A JSON-RPC error response.
    pub fn error(error: McpError) -> Response {
        Response(Err(error))
    }

    /// A response with `result`, serialized as it is (see the [module docs](self) on the
    /// fields an era's results carry).
    pub fn from_result<T: Serialize>(result: &T) -> Response {
        Response(modelcontext_types::to_raw(result).map_err(unserializable))
    }

    /// The result, or the JSON-RPC error.
    pub fn outcome(&self) -> Result<&RawValue, &McpError> {
        self.0.as_deref()
    }

    /// The result, or the JSON-RPC error, owned.
    pub fn into_outcome(self) -> Result<Box<RawValue>, McpError> {
        self.0
    }

    /// Whether the response is a JSON-RPC error (a tool's `isError` result is not).
    pub fn is_error(&self) -> bool {
        self.0.is_err()
    }

    /// The result read as a `T` (a [`CallToolResult`],
    /// say); `None` for a JSON-RPC error.
    pub fn result<T: DeserializeOwned>(&self) -> Option<Result<T, serde_json::Error>> {
        let raw = self.0.as_deref().ok()?;
        Some(serde_json::from_str(raw.get()))
    }

    /// Rewrites the result as a `T`: read, changed by `change`, written back. A JSON-RPC
    /// error is left as it is; a result that does not read as a `T` becomes -32603.
    pub fn map_result<T, F>(self, change: F) -> Response
    where
        T: DeserializeOwned + Serialize,
        F: FnOnce(T) -> T,
    {
        match self.result::<T>() {
            None => self,
            Some(Ok(result)) => Response::from_result(&change(result)),
            Some(Err(error)) => Response::error(McpError::internal(format!(
                "a middleware could not read the result it rewrites: {error}"
            ))),
        }
    }
}

impl From<Outcome> for Response {
    fn from(outcome: Outcome) -> Response {
        Response(outcome)
    }
}

fn unserializable(error: serde_json::Error) -> McpError {
    McpError::internal(format!("result did not serialize: {error}"))
}

/// The rest of the chain, then the handler: what a middleware calls to let a request through.
///
/// Cheap to clone, and each clone runs the rest of the chain anew: a middleware that retries
/// calls `next.clone().run(request.clone())` first, then `next.run(request)` again.
#[derive(Clone)]
pub struct Next {
    stack: Stack,
    position: usize,
    endpoint: Endpoint,
}

/// What answers a request once every middleware let it through: callable once per run of the
/// chain, as often as a middleware runs it.
pub(crate) type Endpoint = Arc<dyn Fn(ClientRequest) -> BoxFuture<Outcome> + Send + Sync>;

impl Next {
    /// Runs the middleware after this one, and then the handler, with `request`. Run a clone
    /// to run the rest of the chain more than once.
    pub async fn run(self, request: Request) -> Response {
        let Next { stack, position, endpoint } = self;
        match stack.next_for(position, request.method()) {
            Some((at, middleware)) => {
                let next = Next { stack, position: at + 1, endpoint };
                middleware.handle(request, next).await
            }
            None => Response(endpoint(request.into_request()).await),
        }
    }
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next").field("remaining", &(self.stack.0.len() - self.position)).finish()
    }
}

/// Middleware in the order it was added (the first outermost). Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Stack(Arc<[Layer]>);

/// One middleware of a stack, and the methods it is for.
#[derive(Clone)]
struct Layer {
    middleware: Arc<dyn Middleware>,
    /// `None`: every method. The SDK's own middleware that only looks at a few methods says
    /// which, so that a request of any other method is not made to pass through it.
    methods: Option<&'static [&'static str]>,
}

impl Layer {
    fn is_for(&self, method: &str) -> bool {
        self.methods.is_none_or(|methods| methods.contains(&method))
    }
}

impl Stack {
    /// The stack with `middleware` added innermost.
    pub(crate) fn with(&self, middleware: impl Middleware) -> Stack {
        self.inserted(self.0.len(), middleware)
    }

    /// The stack with `middleware` added innermost, for requests of `methods` only.
    pub(crate) fn with_for(
        &self,
        methods: &'static [&'static str],
        middleware: impl Middleware,
    ) -> Stack {
        self.with_layer(
            self.0.len(),
            Layer { middleware: Arc::new(middleware), methods: Some(methods) },
        )
    }

    /// The stack with `middleware` added at `position` (0 is outermost).
    pub(crate) fn inserted(&self, position: usize, middleware: impl Middleware) -> Stack {
        self.with_layer(position, Layer { middleware: Arc::new(middleware), methods: None })
    }

    fn with_layer(&self, position: usize, layer: Layer) -> Stack {
        let mut all = self.0.to_vec();
        all.insert(position, layer);
        Stack(all.into())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether any middleware of the stack is for `method`.
    pub(crate) fn runs_for(&self, method: &str) -> bool {
        self.0.iter().any(|layer| layer.is_for(method))
    }

    /// The first middleware from `position` on that is for `method`, and where it is.
    fn next_for(&self, position: usize, method: &str) -> Option<(usize, Arc<dyn Middleware>)> {
        let rest = self.0.get(position..)?;
        let found = rest.iter().position(|layer| layer.is_for(method))?;
        Some((position + found, Arc::clone(&rest[found].middleware)))
    }

    /// The stack, when there is one and it is to run.
    pub(crate) fn to_run(&self, run: bool) -> Option<Stack> {
        (run && !self.is_empty()).then(|| self.clone())
    }

    /// Answers `request` through the whole stack, then `endpoint`. Every middleware runs
    /// when the future is polled, so a panic in one is caught where a handler's would be.
    /// A `subscriptions/listen` stays a stream: a middleware around it ends with it.
    pub(crate) fn run_through(
        &self,
        request: Request,
        endpoint: Endpoint,
    ) -> (bool, BoxFuture<Outcome>) {
        let listen = request.is_listen();
        let next = Next { stack: self.clone(), position: 0, endpoint };
        (listen, Box::pin(async move { next.run(request).await.0 }))
    }
}
