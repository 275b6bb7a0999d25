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
    INVALID_PARAMS, Implementation, McpError, PromptsCapability, ResourcesCapability,
    ServerCapabilities, ToolsCapability,
};

use serde_json::{Map, Value};

use crate::Error;

mod apps;
mod builder;
mod cache;
mod call;
mod completion;
pub mod compose;
mod context;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
mod context_http;
mod elicit;
mod extensions;
mod frame;
#[cfg(feature = "http")]
pub(crate) mod front_end;
mod handler;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
mod input;
mod layer;
mod lifespan;
#[cfg(feature = "http")]
mod listeners;
pub mod middleware;
/// What [`middleware`] re-exports of the tower adapter (feature `http`): nothing without it.
mod middleware_http {
    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    pub use super::tower_layer::{FromLayer, NextService, from_layer};
}
mod mrtr;
mod notify;
mod output;
mod pagination;
mod parse;
mod prompt;
mod registry;
mod resource;
mod roots;
pub(crate) mod schema;
mod seal;
mod serving;
mod session;
#[cfg(feature = "http")]
mod session_record;
#[cfg(feature = "http")]
mod shared_session;
mod skills;
mod stamp;
#[cfg(feature = "http")]
mod stateless;
mod tasks;
mod telemetry;
mod tool;
#[cfg(feature = "http")]
#[path = "middleware/tower_layer.rs"]
mod tower_layer;
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
    /// What the server makes on first use, dropped by any change to the server.
    pub first_use: FirstUse,
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

/// What a server makes on first use and any change to it drops (see `McpServer::inner_mut`):
/// what depends on its settings, made once rather than per connection.
#[derive(Clone, Default)]
pub(crate) struct FirstUse {
    /// `info` as JSON for the modern `serverInfo` stamp (one modern HTTP request is one
    /// connection, so per-connection would be per request).
    pub info_json: std::sync::OnceLock<Arc<stamp::ServerInfoJson>>,
    /// The HTTP sessions hearing `bus` through one task (the bus may change).
    #[cfg(feature = "http")]
    pub listeners: Arc<listeners::Listeners>,
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

/// What a list or a call reads of a registered tool, worked out once when it is registered.
pub(crate) struct Listing {
    /// The tool as `tools/list` shows it, serialized once: a list copies these bytes.
    pub json: Box<modelcontext_types::RawValue>,
    /// The arguments a modern HTTP call mirrors into `Mcp-Param-*` headers
    /// ([`front_end::header_mirrors`]); no other transport carries them.
    #[cfg(feature = "http")]
    pub mirrors: Vec<modelcontext_types::MirroredArgument>,
}

impl Listing {
    /// The listing of `tool`. Made once its schema has passed its limits, if it is ours to
    /// check: finding the mirrors walks the schema.
    fn new(tool: &modelcontext_types::Tool) -> Result<Listing, serde_json::Error> {
        let json = modelcontext_types::to_raw(tool)?;
        Ok(Listing {
            #[cfg(feature = "http")]
            mirrors: front_end::header_mirrors(tool, &json),
            json,
        })
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
        change_catalog(&self.catalog, change)
    }

    /// `serverInfo` as JSON, serialized once.
    pub(crate) fn info_json(&self) -> Arc<stamp::ServerInfoJson> {
        let json = || Arc::new(stamp::ServerInfoJson::new(&self.info));
        Arc::clone(self.first_use.info_json.get_or_init(json))
    }
}

/// Applies `change` to a copy of `catalog` and publishes the copy; on an error nothing
/// changes. Writers queue on the lock; readers only ever clone the `Arc` under it.
fn change_catalog<T>(
    catalog: &RwLock<Arc<Catalog>>,
    change: impl FnOnce(&mut Catalog) -> Result<T, Error>,
) -> Result<T, Error> {
    let mut slot = catalog.write().unwrap_or_else(|e| e.into_inner());
    let mut next = Catalog::clone(&slot);
    let out = change(&mut next)?;
    *slot = Arc::new(next);
    Ok(out)
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
