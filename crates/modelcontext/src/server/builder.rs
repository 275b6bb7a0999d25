//! Building a server: its identity, its limits and settings, the hooks and middleware around
//! its requests, and the stores it shares with other instances. Each is a `McpServer` method
//! taking and returning the server, so a server is written as one expression.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Arc;

use modelcontext_types::{Icon, Implementation};

use super::tasks::{DEFAULT_POLL_INTERVAL, DEFAULT_TASK_TTL, InMemoryTaskStore, TaskStore};
#[allow(deprecated)] // `McpServer::layer` still takes the deprecated `RequestLayer`.
use super::{
    CacheHint, Cacheable, DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_INPUT_ROUNDS, DEFAULT_MAX_URI_BYTES,
    InMemoryBus, KeyRing, McpServer, Middleware, RequestLayer, RootsChanged, ServerInner,
    SubscriptionBus, cache, layer, lifespan, middleware, mrtr, roots, schema, seal,
};
use crate::Error;

impl McpServer {
    /// A server named `name` with nothing registered yet.
    pub fn new(name: impl Into<String>) -> McpServer {
        let info = Implementation::new(name, "0.1.0");
        let inner = ServerInner {
            info,
            instructions: None,
            withhold_error_messages: false,
            max_line_bytes: crate::transport::DEFAULT_MAX_LINE_BYTES,
            max_json_depth: modelcontext_types::MAX_JSON_DEPTH,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            schema_limits: schema::SchemaLimits::default(),
            catalog: Arc::default(),
            completion: None,
            on_roots_changed: None,
            lifespan: lifespan::Lifespan::default(),
            cache: cache::CacheHints::default(),
            state: HashMap::new(),
            page_size: None,
            keys: seal::KeyRing::random(),
            request_state_ttl: mrtr::DEFAULT_STATE_TTL,
            max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            max_uri_bytes: DEFAULT_MAX_URI_BYTES,
            bus: Arc::new(InMemoryBus::default()),
            first_use: Default::default(),
            middleware: middleware::Stack::default(),
            layers: 0,
            #[cfg(feature = "otel")]
            instruments: Arc::default(),
            task_store: Arc::new(InMemoryTaskStore::default()),
            live_tasks: Arc::default(),
            task_ttl: Some(DEFAULT_TASK_TTL),
            task_poll_interval: DEFAULT_POLL_INTERVAL,
        };
        McpServer { inner: Arc::new(inner) }
    }

    pub(super) fn inner_mut(&mut self) -> &mut ServerInner {
        let inner = Arc::make_mut(&mut self.inner);
        inner.first_use = Default::default();
        inner
    }

    /// Sets the version reported in `serverInfo`.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.inner_mut().info.version = version.into();
        self
    }

    /// Sets a human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.inner_mut().info.title = Some(title.into());
        self
    }

    /// Sets a description of the server.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.inner_mut().info.description = Some(description.into());
        self
    }

    /// Sets instructions: how and when to use this server, for the model.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.inner_mut().instructions = Some(instructions.into());
        self
    }

    /// Sets the server's website.
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.inner_mut().info.website_url = Some(url.into());
        self
    }

    /// Sets the server's icons.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.inner_mut().info.icons = Some(icons);
        self
    }

    /// Withholds the messages of ordinary tool, resource and prompt errors from clients
    /// (they are logged instead). Only [`ToolError`](super::ToolError)s, [`ResourceError`](super::ResourceError)s and `McpError`s,
    /// which the author marks as meant for the peer, keep their message. Off by default.
    pub fn withhold_error_messages(mut self, withhold: bool) -> Self {
        self.inner_mut().withhold_error_messages = withhold;
        self
    }

    /// Sets the longest stdio line accepted, in bytes (default 4 MiB).
    pub fn max_line_bytes(mut self, limit: usize) -> Self {
        self.inner_mut().max_line_bytes = limit;
        self
    }

    /// Sets how deep arrays and objects may nest in one incoming message, on stdio
    /// ([`run_stdio`](Self::run_stdio)) and HTTP. Deeper is a parse error (-32700, HTTP 400).
    /// The default and the maximum is 128 ([`MAX_JSON_DEPTH`](crate::types::MAX_JSON_DEPTH),
    /// serde_json's recursion limit); a lower limit costs one scan of each message's bytes.
    pub fn max_json_depth(mut self, depth: usize) -> Self {
        self.inner_mut().max_json_depth = depth.min(modelcontext_types::MAX_JSON_DEPTH);
        self
    }

    /// Sets the caching hint of one kind of modern result (default `ttlMs: 0`, `private`: do
    /// not reuse). A client may serve a fresh cached result without asking again, so hint a
    /// list only as long as its staleness is acceptable (a `list_changed` notification still
    /// invalidates it for a client that listens). `Public` lets clients share a result across
    /// principals: only for lists that do not depend on who asks. The handshake era has no
    /// hints.
    pub fn cache_hint(mut self, what: Cacheable, hint: CacheHint) -> Self {
        self.inner_mut().cache.set(what, hint);
        self
    }

    /// Runs `hook` each time a handshake-era client sends `notifications/roots/list_changed`,
    /// in a task of its own, one run at a time per connection (notifications during a run
    /// cause one more run after it); [`RootsChanged::list_roots`] asks the client for the new
    /// roots.
    /// (2026-07-28 has no such notification: a modern handler asks with
    /// [`Context::list_roots`](super::Context::list_roots) when it needs them.)
    pub fn on_roots_changed<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(RootsChanged) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        self.inner_mut().on_roots_changed = Some(roots::hook(hook));
        self
    }

    /// Adds an async start-up and shutdown pair around serving, as Python's `lifespan`: `start`
    /// builds a `T` (open a pool) before the first request; handlers read it with
    /// [`Context::lifespan::<T>()`](super::Context::lifespan); `stop` gets it back after the last
    /// (close the pool). [`McpServer::run_stdio`] runs both around serving (stop at end of
    /// input); `serve_http` runs start first, and stop only if serving fails, since it serves
    /// until the process ends. To stop gracefully (on a signal, say) or to serve connections
    /// yourself, call [`McpServer::start`] first and [`Running::shutdown`](super::Running::shutdown) after. Pairs start in the order added and stop in reverse; a
    /// start that fails stops the ones before it, and serving does not begin.
    pub fn lifespan<T, E, Start, StartFut, Stop, StopFut>(
        mut self,
        start: Start,
        stop: Stop,
    ) -> Self
    where
        T: Send + Sync + 'static,
        E: Into<Box<dyn std::error::Error + Send + Sync>> + 'static,
        Start: Fn() -> StartFut + Send + Sync + 'static,
        StartFut: std::future::Future<Output = Result<T, E>> + Send + 'static,
        Stop: Fn(Arc<T>) -> StopFut + Send + Sync + 'static,
        StopFut: std::future::Future<Output = ()> + Send + 'static,
    {
        self.inner_mut().lifespan.add(lifespan::hook(start, stop));
        self
    }

    /// Adds lifespan state: a value built once at startup and shared by every connection and
    /// request. Handlers read it with [`Context::state::<T>()`](super::Context::state); one value per
    /// type (a second call with the same type replaces the first).
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.inner_mut().state.insert(TypeId::of::<T>(), Arc::new(value));
        self
    }

    /// Runs `middleware` around every request this server answers, on every transport and in
    /// both eras: inside the middleware added before it (the first added is outermost, so it
    /// sees the request first and the response last), outside every tool's, resource's and
    /// prompt's own. See [`middleware`] for what it can do and the order of the steps around
    /// it, and `docs::observability` for examples.
    ///
    /// ```
    /// use modelcontext::McpServer;
    /// use modelcontext::server::middleware::{Next, Request, from_fn};
    ///
    /// let server = McpServer::new("logged").middleware(from_fn(|request: Request, next: Next| {
    ///     async move {
    ///         let method = request.method().to_owned();
    ///         let response = next.run(request).await;
    ///         tracing::info!(method, failed = response.is_error(), "answered");
    ///         response
    ///     }
    /// }));
    /// ```
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        let inner = self.inner_mut();
        inner.middleware = inner.middleware.with(middleware);
        self
    }

    /// Runs `layer` around every request this server answers, on every transport and in
    /// both eras: after the layers added before it, before the handler. Its
    /// [`before`](RequestLayer::before) can answer a request with a JSON-RPC error of its
    /// choosing instead of the handler; its [`after`](RequestLayer::after) sees every
    /// outcome. See [`RequestLayer`] for the order. Each layer runs as a middleware, outside
    /// every [`middleware`](McpServer::middleware), and sees the requests a middleware sees.
    #[deprecated(
        since = "0.1.0",
        note = "use `McpServer::middleware`: async, around the handler, per tool too"
    )]
    #[allow(deprecated)]
    pub fn layer(mut self, layer: impl RequestLayer) -> Self {
        let inner = self.inner_mut();
        let layer = layer::LayerMiddleware(Arc::new(layer));
        inner.middleware = inner.middleware.inserted(inner.layers, layer);
        inner.layers += 1;
        self
    }

    /// At most `limit` handlers of one connection (or HTTP session) run at once (default
    /// [`DEFAULT_MAX_IN_FLIGHT`]); a request that would start one more is answered at once
    /// with -32603 `Server busy`, before its tool, resource or prompt is looked up or its
    /// arguments parsed. Only `tools/call`, `resources/read`, `prompts/get` and
    /// `completion/complete` count: requests answered without work (lists, ping), responses
    /// and cancellations keep flowing. A peer cannot make the server start unbounded work.
    pub fn max_in_flight(mut self, limit: usize) -> Self {
        self.inner_mut().max_in_flight = limit.max(1);
        self
    }

    /// Tool input and output schemas may nest objects and arrays at most `limit` levels deep,
    /// the schema object itself being level 1 (default [`DEFAULT_MAX_SCHEMA_DEPTH`](super::DEFAULT_MAX_SCHEMA_DEPTH), 64). A
    /// deeper schema fails registration ([`tool`](Self::tool), [`add_tool`](Self::add_tool))
    /// with an error naming this option, before it reaches the schema compiler, whose recursion
    /// follows the nesting. So does one that applies more than `limit` subschemas in a row to
    /// one value (a chain of `$ref`s, which the validator's recursion would follow). Applies to
    /// tools registered after this call.
    pub fn max_schema_depth(mut self, limit: usize) -> Self {
        self.inner_mut().schema_limits.max_depth = limit;
        self
    }

    /// Tool input and output schemas may be at most `limit` bytes long as compact JSON
    /// (default [`DEFAULT_MAX_SCHEMA_BYTES`](super::DEFAULT_MAX_SCHEMA_BYTES), 1 MiB), which also bounds huge `enum`s and
    /// `pattern`s. A longer schema fails registration with an error naming this option.
    /// Applies to tools registered after this call.
    pub fn max_schema_bytes(mut self, limit: usize) -> Self {
        self.inner_mut().schema_limits.max_bytes = limit;
        self
    }

    /// Splits `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list`
    /// into pages of `size` items (at least 1), with opaque tamper-proof cursors. By default
    /// every list is one page: many clients never follow `nextCursor`.
    pub fn page_size(mut self, size: usize) -> Self {
        self.inner_mut().page_size = Some(size.max(1));
        self
    }

    /// Sets the keys that seal pagination cursors and MRTR `requestState` (HMAC-SHA256). The
    /// first key seals, every key verifies: rotate by putting the new key first. Give the same
    /// keys to every instance behind a load balancer. Without this call each server object has
    /// a random key, so its tokens only work on itself. Each key needs at least 32 bytes.
    /// Shorthand for [`key_ring`](Self::key_ring) with [`KeyRing::new`] and no audience.
    pub fn signing_keys(mut self, keys: Vec<Vec<u8>>) -> Result<Self, Error> {
        self.inner_mut().keys = seal::KeyRing::new(keys)?;
        Ok(self)
    }

    /// Seals pagination cursors and MRTR `requestState` with `ring`: the first key seals,
    /// every key opens. Every instance of one deployment gets the same ring (the same keys
    /// and the same [`audience`](KeyRing::audience)), so a retry or a next page may reach
    /// any of them; a token from another ring is refused with -32602.
    pub fn key_ring(mut self, ring: KeyRing) -> Self {
        self.inner_mut().keys = ring;
        self
    }

    /// How long the client may take to answer one MRTR round (default 10 minutes): a
    /// `requestState` older than this is refused with -32602.
    pub fn request_state_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.inner_mut().request_state_ttl = ttl;
        self
    }

    /// At most `rounds` MRTR rounds of input per request (default
    /// [`DEFAULT_MAX_INPUT_ROUNDS`]): a handler that asks again after that many answered
    /// rounds fails the request with -32603, so its sealed `requestState`, which carries every
    /// earlier answer, stays bounded.
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.inner_mut().max_input_rounds = rounds;
        self
    }

    /// Resource URIs longer than `limit` bytes (default [`DEFAULT_MAX_URI_BYTES`]) are not
    /// looked up or matched against templates: `resources/read` and `resources/subscribe`
    /// answer them as unknown resources (-32602).
    pub fn max_uri_bytes(mut self, limit: usize) -> Self {
        self.inner_mut().max_uri_bytes = limit;
        self
    }

    /// Replaces the in-memory [`SubscriptionBus`], e.g. with one shared by every instance
    /// behind a load balancer, so a change seen by one reaches clients of all.
    pub fn subscription_bus(mut self, bus: impl SubscriptionBus) -> Self {
        self.inner_mut().bus = Arc::new(bus);
        self
    }

    /// Where task records live (tasks extension): by default a bounded
    /// [`InMemoryTaskStore`]. Instances that share a store answer `tasks/get` for each
    /// other's tasks (`modelcontext_redis::Deployment::task_store` gives one on Redis).
    pub fn task_store(mut self, store: impl TaskStore) -> Self {
        self.inner_mut().task_store = Arc::new(store);
        self
    }

    /// How long a task and its result are kept after its creation (its `ttlMs`; default
    /// [`DEFAULT_TASK_TTL`]); `None` keeps them until the store evicts them.
    pub fn task_ttl(mut self, ttl: Option<std::time::Duration>) -> Self {
        self.inner_mut().task_ttl = ttl;
        self
    }

    /// The polling interval suggested to clients (`pollIntervalMs`; default
    /// [`DEFAULT_POLL_INTERVAL`]).
    pub fn task_poll_interval(mut self, interval: std::time::Duration) -> Self {
        self.inner_mut().task_poll_interval = interval;
        self
    }
}
