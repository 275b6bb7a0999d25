//! The server: tools, resources and prompts, served in both protocol eras.
//!
//! ```no_run
//! use modelcontext::{McpServer, tool};
//!
//! /// Look up the author of a book in the catalog.
//! #[tool]
//! fn get_author(title: String) -> Result<String, String> {
//!     match title.as_str() {
//!         "Dune" => Ok("Frank Herbert".into()),
//!         _ => Err(format!("No book titled '{title}' in the catalog.")),
//!     }
//! }
//!
//! # async fn run() -> Result<(), modelcontext::Error> {
//! McpServer::new("Bookshop").tool(get_author::tool())?.run_stdio().await
//! # }
//! ```

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use modelcontext_types::{
    INVALID_PARAMS, Icon, Implementation, McpError, PromptsCapability, ResourcesCapability,
    ServerCapabilities, ToolsCapability,
};

use serde_json::{Map, Value};

use crate::Error;
use crate::transport::{Connection, Stdio, Transport, memory_pair};

mod apps;
mod cache;
mod call;
mod completion;
mod context;
mod elicit;
mod extensions;
mod frame;
mod handler;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
mod input;
mod layer;
mod lifespan;
pub mod middleware;
mod mrtr;
mod notify;
mod output;
mod pagination;
mod parse;
mod prompt;
mod resource;
mod roots;
pub(crate) mod schema;
mod seal;
mod session;
#[cfg(feature = "http")]
mod session_record;
#[cfg(feature = "http")]
mod shared_session;
mod skills;
mod stamp;
mod tasks;
mod telemetry;
mod tool;
mod url_elicitation;

/// RFC 6570 URI templates. Moved to [`modelcontext::types::uri_template`](crate::types::uri_template),
/// since clients expand templates too; this path stays as a re-export.
#[deprecated(since = "0.1.0", note = "moved to `modelcontext::types::uri_template`")]
pub mod uri_template {
    pub use modelcontext_types::uri_template::*;
}

pub use apps::AppResource;
pub use cache::{CacheHint, Cacheable};
pub use completion::{ArgumentCompleter, CompletionHandler, CompletionRequest, IntoCompletion};
pub use context::Context;
pub use elicit::Elicitation;
pub use extensions::{Extensions, PrincipalId};
pub use input::Question;
#[allow(deprecated)]
pub use layer::{RequestInfo, RequestLayer};
pub use lifespan::Running;
pub use middleware::Middleware;
pub use notify::{BusEvent, ChangeEvent, InMemoryBus, SubscriptionBus};
pub use output::{IntoToolOutput, IntoToolResult, Json, ToolError};
pub use prompt::{IntoPromptMessages, IntoPromptResult, PromptDef, PromptHandler};
pub use resource::{
    IntoResourceContents, IntoResourceResult, ResourceDef, ResourceError, ResourceHandler,
};
pub use roots::RootsChanged;
pub use seal::KeyRing;
pub use skills::Skill;
pub use tasks::{
    DEFAULT_POLL_INTERVAL, DEFAULT_TASK_TTL, InMemoryTaskStore, StoreFuture, TaskRecord, TaskStore,
    TaskStoreError, TaskSupport,
};
pub use tool::{NoArgs, ToolDef, ToolHandler};
pub use url_elicitation::{ElicitationCompleter, UrlElicitation};

#[cfg(feature = "http")]
pub(crate) use context::ClientView;
#[cfg(feature = "http")]
pub(crate) use parse::parse_request;
#[cfg(feature = "http")]
pub(crate) use session::{modern_view, removed_in_modern};
#[cfg(feature = "http")]
pub(crate) use shared_session::SharedSession;

use resource::TemplateEntry;
use tool::ToolEntry;

/// Default of [`McpServer::max_in_flight`]: enough for heavy pipelining (benchmarks run 64
/// concurrent calls per connection), bounded so a flood cannot spawn unbounded tasks.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 256;

/// Default of [`McpServer::max_schema_depth`]: derived schemas nest a handful of levels (nested
/// types go to `$defs`), and 64 levels compile well within a 2 MiB thread stack.
pub const DEFAULT_MAX_SCHEMA_DEPTH: usize = 64;

/// Default of [`McpServer::max_schema_bytes`]: 1 MiB, far above any hand-written or derived
/// tool schema, small enough that compiling one takes milliseconds.
pub const DEFAULT_MAX_SCHEMA_BYTES: usize = 1024 * 1024;

/// Default of [`McpServer::max_uri_bytes`]: 8 KiB, the request-line limit of Apache and nginx,
/// and twice Linux's `PATH_MAX`, so any file path fits in a `file://` URI.
pub const DEFAULT_MAX_URI_BYTES: usize = 8 * 1024;

/// Default of [`McpServer::max_input_rounds`]: 10, the client's own default
/// ([`client::DEFAULT_MAX_INPUT_ROUNDS`](crate::client::DEFAULT_MAX_INPUT_ROUNDS)).
pub const DEFAULT_MAX_INPUT_ROUNDS: usize = 10;

/// An MCP server: what it exposes, and how it answers. Cheap to clone; every connection
/// shares the same registry.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<ServerInner>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").field("name", &self.inner.info.name).finish_non_exhaustive()
    }
}

#[derive(Clone)]
pub(crate) struct ServerInner {
    pub info: Implementation,
    pub instructions: Option<String>,
    pub withhold_error_messages: bool,
    pub max_line_bytes: usize,
    /// How deep arrays and objects may nest in one incoming message (stdio and HTTP).
    pub max_json_depth: usize,
    /// Requests of one connection (or HTTP session) that may run at once.
    pub max_in_flight: usize,
    /// How big a tool schema may be to get compiled at registration.
    pub schema_limits: schema::SchemaLimits,
    /// What the server exposes. Shared by every clone of the server and swapped whole on a
    /// change, so a request reads one consistent snapshot and never waits for a writer.
    pub catalog: Arc<RwLock<Arc<Catalog>>>,
    pub completion: Option<Arc<dyn CompletionHandler>>,
    /// The caching hints of modern list, discover and read results ([`McpServer::cache_hint`]).
    pub cache: cache::CacheHints,
    /// Start-up and shutdown hooks and the state they built ([`McpServer::lifespan`]).
    pub lifespan: lifespan::Lifespan,
    /// Runs on `notifications/roots/list_changed` ([`McpServer::on_roots_changed`]).
    pub on_roots_changed: Option<roots::RootsHook>,
    /// Lifespan state by type, built once and shared by every request ([`McpServer::state`]).
    pub state: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    /// Items per page of the list methods; `None` is one page ([`McpServer::page_size`]).
    pub page_size: Option<usize>,
    /// Seals cursors and MRTR request state ([`McpServer::key_ring`]).
    pub keys: seal::KeyRing,
    /// How long a sealed MRTR `requestState` stays valid.
    pub request_state_ttl: std::time::Duration,
    /// MRTR rounds one request may ask for input ([`McpServer::max_input_rounds`]).
    pub max_input_rounds: usize,
    /// Longest resource URI looked up ([`McpServer::max_uri_bytes`]).
    pub max_uri_bytes: usize,
    /// Carries change notifications to every connection ([`McpServer::subscription_bus`]).
    pub bus: Arc<dyn SubscriptionBus>,
    /// The HTTP sessions hearing `bus` through one task (reset by any change to the server,
    /// whose bus may change).
    #[cfg(feature = "http")]
    pub listeners: Arc<notify::Listeners>,
    /// `info` as JSON for the modern `serverInfo` stamp, built on first use (one modern HTTP
    /// request is one connection, so per-connection would be per request) and reset by any
    /// change to the server.
    pub info_json: std::sync::OnceLock<Arc<stamp::ServerInfoJson>>,
    /// Async middleware around every request ([`McpServer::middleware`]), the first added
    /// outermost, after the deprecated layers ([`McpServer::layer`]).
    pub middleware: middleware::Stack,
    /// How many of `middleware` are layers: the outermost ones.
    pub layers: usize,
    /// The metric instruments, made from the global meter provider on first use (feature
    /// `otel`): per server, so a provider set before the first connection is the one used.
    #[cfg(feature = "otel")]
    pub instruments: Arc<std::sync::OnceLock<Arc<crate::observe::otel::Instruments>>>,
    /// Where task records live ([`McpServer::task_store`]).
    pub task_store: Arc<dyn TaskStore>,
    /// The tasks this server runs now; shared by every clone of the server.
    pub live_tasks: Arc<tasks::LiveTasks>,
    /// How long a task is kept after creation; `None` for ever ([`McpServer::task_ttl`]).
    pub task_ttl: Option<std::time::Duration>,
    /// The polling interval suggested to clients ([`McpServer::task_poll_interval`]).
    pub task_poll_interval: std::time::Duration,
}

/// The tools, resources, templates and prompts of a server at one moment.
#[derive(Clone, Default)]
pub(crate) struct Catalog {
    pub tools: Registry<Arc<ToolEntry>>,
    pub resources: Registry<Arc<ResourceDef>>,
    pub templates: Registry<Arc<TemplateEntry>>,
    pub prompts: Registry<Arc<PromptDef>>,
    /// Published skills (skills extension), by the URI of their `SKILL.md`.
    pub skills: Registry<Arc<skills::SkillDef>>,
}

impl Catalog {
    /// Whether a prompt argument or template variable has a completer of its own.
    pub(crate) fn has_completers(&self) -> bool {
        self.prompts.iter().any(|p| !p.completers.is_empty())
            || self.templates.iter().any(|t| !t.def.completers.is_empty())
    }

    /// The extensions what is registered uses: tasks (a task-capable tool), MCP Apps (an
    /// app's view), skills (a published skill). `None` when none.
    fn extensions(&self) -> Option<Map<String, Value>> {
        let mut extensions = Map::new();
        if self.tools.iter().any(|tool| tool.def.task.is_some()) {
            extensions
                .insert(modelcontext_types::TASKS_EXTENSION.into(), Value::Object(Map::new()));
        }
        let is_app = |r: &Arc<ResourceDef>| {
            r.mime_type.as_deref() == Some(modelcontext_types::APP_MIME_TYPE)
        };
        if self.resources.iter().any(is_app) {
            extensions.insert(modelcontext_types::UI_EXTENSION.into(), Value::Object(Map::new()));
        }
        if !self.skills.is_empty() {
            let settings = serde_json::json!({"directoryRead": true});
            extensions.insert(modelcontext_types::SKILLS_EXTENSION.into(), settings);
        }
        (!extensions.is_empty()).then_some(extensions)
    }
}

impl ServerInner {
    /// The current catalog: an `Arc` clone under a read lock held for that clone only.
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(&self.catalog.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Applies `change` to a copy of the catalog and publishes the copy.
    fn change_catalog<T>(
        &self,
        change: impl FnOnce(&mut Catalog) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut slot = self.catalog.write().unwrap_or_else(|e| e.into_inner());
        let mut next = Catalog::clone(&slot);
        let out = change(&mut next)?;
        *slot = Arc::new(next);
        Ok(out)
    }

    /// `serverInfo` as JSON, serialized once.
    pub(crate) fn info_json(&self) -> Arc<stamp::ServerInfoJson> {
        let json = || Arc::new(stamp::ServerInfoJson::new(&self.info));
        Arc::clone(self.info_json.get_or_init(json))
    }
}

/// Named entries in registration order (the order `*/list` answers with), found by name.
#[derive(Clone)]
pub(crate) struct Registry<T> {
    entries: Vec<T>,
    index: HashMap<String, usize>,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Registry { entries: Vec::new(), index: HashMap::new() }
    }
}

impl<T> Registry<T> {
    fn insert(&mut self, kind: &str, name: &str, entry: T) -> Result<(), Error> {
        if self.index.contains_key(name) {
            return Err(Error::registration(format!(
                "duplicate {kind} '{name}': each {kind} needs a unique name"
            )));
        }
        self.index.insert(name.to_owned(), self.entries.len());
        self.entries.push(entry);
        Ok(())
    }

    /// Removes `name`, keeping the others' order; `false` if absent.
    fn remove(&mut self, name: &str) -> bool {
        let Some(at) = self.index.remove(name) else { return false };
        self.entries.remove(at);
        for slot in self.index.values_mut() {
            if *slot > at {
                *slot -= 1;
            }
        }
        true
    }

    pub(crate) fn get(&self, name: &str) -> Option<&T> {
        self.index.get(name).map(|&i| &self.entries[i])
    }

    pub(crate) fn iter(&self) -> std::slice::Iter<'_, T> {
        self.entries.iter()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

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
            #[cfg(feature = "http")]
            listeners: Arc::default(),
            info_json: std::sync::OnceLock::new(),
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

    fn inner_mut(&mut self) -> &mut ServerInner {
        let inner = Arc::make_mut(&mut self.inner);
        inner.info_json = std::sync::OnceLock::new();
        #[cfg(feature = "http")]
        {
            inner.listeners = Arc::default();
        }
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
    /// (they are logged instead). Only [`ToolError`]s, [`ResourceError`]s and `McpError`s,
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

    /// The JSON nesting limit the HTTP server applies (see [`McpServer::max_json_depth`]).
    #[cfg(feature = "http")]
    pub(crate) fn json_depth_limit(&self) -> usize {
        self.inner.max_json_depth
    }

    /// Registers a tool. Fails on a duplicate or invalid name, or a schema that does not compile:
    /// one over [`max_schema_depth`](Self::max_schema_depth) or
    /// [`max_schema_bytes`](Self::max_schema_bytes), one that refers to an external document
    /// (`$ref` to `http:`, `https:` or `file:`; nothing is ever fetched), or one whose `pattern`
    /// needs backtracking (backreferences, look-around: patterns run in linear time).
    pub fn tool(self, def: ToolDef) -> Result<Self, Error> {
        self.add_tool(def)?;
        Ok(self)
    }

    /// Registers several tools.
    pub fn tools(self, defs: impl IntoIterator<Item = ToolDef>) -> Result<Self, Error> {
        for def in defs {
            self.add_tool(def)?;
        }
        Ok(self)
    }

    /// Registers a tool, also while serving: clones of this server share what they expose,
    /// and connected clients are told (`notifications/tools/list_changed`, or their listen
    /// stream).
    pub fn add_tool(&self, def: ToolDef) -> Result<(), Error> {
        let name = def.tool.name.clone();
        check_tool_name(&name)?;
        // Compiling first checks the schema limits before anything else walks the schema.
        let limits = self.inner.schema_limits;
        // Compiling also finds the `x-mcp-header` arguments, refusing invalid annotations.
        let entry = Arc::new(ToolEntry::compile(def, limits).map_err(Error::registration)?);
        self.inner.change_catalog(|c| c.tools.insert("tool", &name, entry))?;
        self.notify_tools_changed();
        Ok(())
    }

    /// Removes a tool; `false` if there was none by that name. Connected clients are told.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self.inner.change_catalog(|c| Ok(c.tools.remove(name))).unwrap_or(false);
        if removed {
            self.notify_tools_changed();
        }
        removed
    }

    /// Registers a resource, or a resource template when its URI holds `{variables}`.
    pub fn resource(self, def: ResourceDef) -> Result<Self, Error> {
        self.add_resource(def)?;
        Ok(self)
    }

    /// Registers an app's view (MCP Apps): its HTML as a `ui://` resource (see
    /// [`AppResource`]).
    pub fn app(self, app: AppResource) -> Result<Self, Error> {
        self.resource(app.into_resource()?)
    }

    /// Registers a resource or template, also while serving (clients are told).
    pub fn add_resource(&self, def: ResourceDef) -> Result<(), Error> {
        let uri = def.uri.clone();
        if uri.contains('{') {
            let entry = Arc::new(TemplateEntry::compile(def).map_err(Error::registration)?);
            self.inner.change_catalog(|c| c.templates.insert("resource template", &uri, entry))?;
        } else {
            let def = Arc::new(def);
            self.inner.change_catalog(|c| c.resources.insert("resource", &uri, def))?;
        }
        self.notify_resources_changed();
        Ok(())
    }

    /// Removes the resource or template registered under `uri`; `false` if there was none.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self
            .inner
            .change_catalog(|c| Ok(c.resources.remove(uri) || c.templates.remove(uri)))
            .unwrap_or(false);
        if removed {
            self.notify_resources_changed();
        }
        removed
    }

    /// Registers a prompt.
    pub fn prompt(self, def: PromptDef) -> Result<Self, Error> {
        self.add_prompt(def)?;
        Ok(self)
    }

    /// Registers a prompt, also while serving (clients are told).
    pub fn add_prompt(&self, def: PromptDef) -> Result<(), Error> {
        let name = def.prompt.name.clone();
        let def = Arc::new(def);
        self.inner.change_catalog(|c| c.prompts.insert("prompt", &name, def))?;
        self.notify_prompts_changed();
        Ok(())
    }

    /// Removes a prompt; `false` if there was none by that name.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self.inner.change_catalog(|c| Ok(c.prompts.remove(name))).unwrap_or(false);
        if removed {
            self.notify_prompts_changed();
        }
        removed
    }

    /// Sets the handler of `completion/complete` (and declares the `completions` capability).
    pub fn completion(mut self, handler: impl CompletionHandler) -> Self {
        self.inner_mut().completion = Some(Arc::new(handler));
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
    /// [`Context::list_roots`] when it needs them.)
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
    /// [`Context::lifespan::<T>()`](Context::lifespan); `stop` gets it back after the last
    /// (close the pool). [`McpServer::run_stdio`] runs both around serving (stop at end of
    /// input); `serve_http` runs start first, and stop only if serving fails, since it serves
    /// until the process ends. To stop gracefully (on a signal, say) or to serve connections
    /// yourself, call [`McpServer::start`] first and [`Running::shutdown`] after. Pairs start in the order added and stop in reverse; a
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

    /// Runs the [`lifespan`](McpServer::lifespan) start hooks and publishes their state; the
    /// returned [`Running`] runs the stop hooks. Fails with the first start hook's error.
    pub async fn start(&self) -> Result<Running, Error> {
        self.inner.lifespan.start().await
    }

    /// Adds lifespan state: a value built once at startup and shared by every connection and
    /// request. Handlers read it with [`Context::state::<T>()`](Context::state); one value per
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
    /// the schema object itself being level 1 (default [`DEFAULT_MAX_SCHEMA_DEPTH`], 64). A
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
    /// (default [`DEFAULT_MAX_SCHEMA_BYTES`], 1 MiB), which also bounds huge `enum`s and
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

    /// Tells every client the tool list changed (`notifications/tools/list_changed`).
    pub fn notify_tools_changed(&self) {
        self.inner.bus.publish(ChangeEvent::ToolsListChanged);
    }

    /// Tells every client the prompt list changed.
    pub fn notify_prompts_changed(&self) {
        self.inner.bus.publish(ChangeEvent::PromptsListChanged);
    }

    /// Tells every client the resource list changed.
    pub fn notify_resources_changed(&self) {
        self.inner.bus.publish(ChangeEvent::ResourcesListChanged);
    }

    /// Tells the clients watching `uri` (handshake era: `resources/subscribe`; modern era: a
    /// listen stream naming it) that its contents changed.
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        self.inner.bus.publish(ChangeEvent::ResourceUpdated(uri.into()));
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

    /// The capabilities this server declares, derived from what is registered.
    pub fn capabilities(&self) -> ServerCapabilities {
        self.inner.capabilities()
    }

    /// Serves one connection until the peer goes away.
    pub async fn serve(&self, transport: impl Transport) {
        self.serve_with(transport, Extensions::new()).await;
    }

    /// [`McpServer::serve`] for a transport that knows more than the protocol carries (an
    /// authenticated [`PrincipalId`], headers...): every handler of the connection sees
    /// `extensions` through [`Context::extension`].
    pub async fn serve_with(&self, transport: impl Transport, extensions: Extensions) {
        let session = session::ServerSession::new(self.inner.clone()).with_extensions(extensions);
        let (peer, run, _stop) = crate::engine::start(transport.open(), session);
        // Only the engine sends on a server connection; letting go of this handle lets the
        // transport close its output once the engine is done.
        drop(peer);
        // On the heap for the reason `run_stdio` gives: the engine's loop is the larger part
        // of a serving future.
        Box::pin(run).await;
    }

    /// The metric instruments of this server (feature `otel`).
    #[cfg(all(feature = "otel", feature = "http"))]
    pub(crate) fn instruments(&self) -> Arc<crate::observe::otel::Instruments> {
        self.inner.instruments()
    }

    /// The definition of a registered tool (the HTTP layer checks `x-mcp-header` mirrors).
    #[cfg(feature = "http")]
    pub(crate) fn tool_entry(&self, name: &str) -> Option<Arc<ToolEntry>> {
        self.inner.catalog().tools.get(name).cloned()
    }

    /// The OAuth scopes a registered tool requires beyond the endpoint's (empty if unknown).
    #[cfg(feature = "auth-server")]
    pub(crate) fn tool_scopes(&self, name: &str) -> Vec<String> {
        self.tool_entry(name).map_or_else(Vec::new, |entry| entry.def.required_scopes.clone())
    }

    /// Answers one admitted 2026-07-28 request without a session or an engine (see
    /// [`session::answer_stateless`]).
    #[cfg(feature = "http")]
    pub(crate) fn answer_stateless(
        &self,
        request: modelcontext_types::ClientRequest,
        request_id: modelcontext_types::RequestId,
        client: ClientView,
        peer: &crate::engine::Peer,
        extensions: Arc<Extensions>,
    ) -> crate::engine::Reply {
        session::answer_stateless(&self.inner, request, request_id, client, peer, extensions)
    }

    /// The state of a new HTTP session, whose handlers see `extensions` (what the transport
    /// knows about the connection, see [`McpServer::serve_with`]). Each POST dispatches its
    /// own request with it; the session starts an engine for it ([`attach`](crate::engine::outside_loop::attach))
    /// only when a handler outlives its POST.
    #[cfg(feature = "http")]
    pub(crate) fn http_session(&self, extensions: Extensions, session_id: &str) -> SharedSession {
        let link =
            telemetry::Link::new(&self.inner, crate::transport::TCP, Some(session_id.into()));
        let session = session::ServerSession::new(self.inner.clone())
            .with_extensions(extensions)
            .with_link(link)
            .with_shared_forwarder();
        SharedSession::new(session)
    }

    /// Serves the process's stdin and stdout until stdin closes. Logs must go to stderr.
    pub async fn run_stdio(&self) -> Result<(), Error> {
        // The serving state (kilobytes of nested state machines) lives on the heap, so the
        // future a caller hands to `block_on` is a pointer: the runtime moves that future
        // through several frames, and each copy of a large one is stack the process touches
        // once and holds (BENCHMARKS.md, cold start).
        Box::pin(self.serve_stdio()).await
    }

    async fn serve_stdio(&self) -> Result<(), Error> {
        let stdio = Stdio::stdin_stdout()
            .max_line_bytes(self.inner.max_line_bytes)
            .max_json_depth(self.inner.max_json_depth);
        let running = self.start().await?;
        self.serve(stdio).await;
        running.shutdown().await;
        Ok(())
    }

    /// Starts serving an in-memory connection and returns the client's end: pass it to
    /// [`Client::connect`](crate::Client::connect). Every message is serialized and parsed
    /// as on a real wire.
    pub fn in_memory(&self) -> Connection {
        let (client_end, server_end) = memory_pair();
        let server = self.clone();
        // The caller's span (one around a test, say) is the parent of the requests' spans.
        let serving = async move { server.serve(server_end).await };
        tokio::spawn(tracing::Instrument::in_current_span(serving));
        client_end
    }
}

impl ServerInner {
    /// The metric instruments, made on first use.
    #[cfg(feature = "otel")]
    pub(crate) fn instruments(&self) -> Arc<crate::observe::otel::Instruments> {
        let made = self.instruments.get_or_init(crate::observe::otel::Instruments::from_global);
        Arc::clone(made)
    }

    /// The resource `uri` names, and the template variables it binds: fixed resources first,
    /// then templates in registration order.
    pub(crate) fn resolve_resource(
        &self,
        uri: &str,
    ) -> Option<(Arc<ResourceDef>, Map<String, Value>)> {
        if uri.len() > self.max_uri_bytes {
            return None;
        }
        let catalog = self.catalog();
        if let Some(def) = catalog.resources.get(uri) {
            return Some((Arc::clone(def), Map::new()));
        }
        catalog.templates.iter().find_map(|t| Some((Arc::clone(&t.def), t.match_uri(uri)?)))
    }

    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        let catalog = self.catalog();
        let has_resources = !catalog.resources.is_empty() || !catalog.templates.is_empty();
        // `logging/setLevel` is always accepted (handshake era), so logging is declared.
        let mut capabilities = ServerCapabilities::default().with_logging(Map::new());
        // Changes reach clients through the subscription bus, in both eras.
        capabilities.tools =
            (!catalog.tools.is_empty()).then(|| ToolsCapability::default().with_list_changed(true));
        capabilities.resources = has_resources
            .then(|| ResourcesCapability::default().with_subscribe(true).with_list_changed(true));
        capabilities.prompts = (!catalog.prompts.is_empty())
            .then(|| PromptsCapability::default().with_list_changed(true));
        let completes = self.completion.is_some() || catalog.has_completers();
        capabilities.completions = completes.then(Map::new);
        capabilities.extensions = catalog.extensions();
        capabilities
    }
}

/// -32602 with the URI in `data`: how a read of an unknown resource fails.
pub(crate) fn unknown_resource(uri: &str) -> McpError {
    McpError::new(INVALID_PARAMS, format!("Unknown resource: {uri}"))
        .with_data(serde_json::json!({ "uri": uri }))
}

/// Tool names (spec 2025-11-25 `server/tools`): 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
fn check_tool_name(name: &str) -> Result<(), Error> {
    let valid_chars =
        name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if name.is_empty() || name.len() > 128 || !valid_chars {
        return Err(Error::registration(format!(
            "invalid tool name '{name}': use 1 to 128 characters from A-Z, a-z, 0-9, '_', '-' and '.'"
        )));
    }
    Ok(())
}
