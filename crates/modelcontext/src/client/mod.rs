//! The client: connect to any MCP server, in either era, and call what it exposes.
//!
//! [`Client::connect`] returns a client that is ready: the era is chosen and, for the
//! handshake era, `initialize` is done. There is no "call initialize first" error to meet.
//!
//! ```no_run
//! # async fn run() -> Result<(), modelcontext::Error> {
//! use modelcontext::{Client, ChildProcess};
//! let client = Client::connect(ChildProcess::new("bookshop").spawn()?).await?;
//! let result = client.call_tool("get_author", serde_json::json!({"title": "Dune"})).await?;
//! assert!(!result.is_error());
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use modelcontext_types::{
    CallToolRequestParams, CallToolResult, CompleteRequestParams, CompleteResult,
    CompletionArgument, CompletionContext, DiscoverResult, Era, GetPromptRequestParams,
    GetPromptResult, Implementation, InitializeRequestParams, InitializeResult,
    LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, MODERN_VERSIONS, McpError,
    Notification, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResult, Reference,
    RequestMeta, RequestParams, ServerCapabilities, SetLevelRequestParams, Tool,
    UNSUPPORTED_PROTOCOL_VERSION, UnsupportedProtocolVersionData, era_of, method,
};
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::task::JoinHandle;

use crate::Error;
use crate::engine::{Peer, Stop};
use crate::transport::{Settled, Transport};

mod apps;
mod builder;
mod cache;
mod calls;
mod handlers;
mod listen;
mod options;
mod skills;
mod tasks;

pub use apps::AppView;
pub use builder::ClientBuilder;
pub use cache::{MAX_CACHED_RESULTS, ResultCache};
pub use listen::Subscription;
pub use options::CallOptions;
pub use skills::{LoadedSkill, SkillError};
pub use tasks::ToolCall;

use handlers::Handlers;

/// The default time a request may take before the client gives up on it.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The default bound on MRTR rounds per call: a server still asking after this many answers
/// is taken to be looping.
pub const DEFAULT_MAX_INPUT_ROUNDS: usize = 10;

/// Which protocol era the client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EraMode {
    /// Probe with `server/discover`; fall back to `initialize` on any error (the spec's
    /// dual-era client rule: the fallback is not keyed to one error code).
    #[default]
    Auto,
    /// Always `initialize` (2025-11-25 offered, older revisions accepted).
    Handshake,
    /// Always the stateless 2026-07-28 wire, without a probe.
    Modern,
}

/// A connected client. Every call is a real request over the transport.
#[derive(Debug)]
pub struct Client {
    peer: Peer,
    engine: Option<JoinHandle<()>>,
    stop: Option<Stop>,
    options: ClientBuilder,
    handlers: Arc<Handlers>,
    listeners: listen::Listeners,
    era: Era,
    protocol_version: String,
    server_info: Option<Implementation>,
    server_capabilities: ServerCapabilities,
    instructions: Option<String>,
    /// `network.transport` of the client's spans.
    network_transport: &'static str,
    /// The transport's session id (handshake-era HTTP), for the client's spans.
    session_id: Option<crate::transport::SessionIdWatch>,
    /// The metric instruments (feature `otel`), made from the global meter provider when the
    /// client connects.
    #[cfg(feature = "otel")]
    instruments: Arc<crate::observe::otel::Instruments>,
    /// Modern list and read results kept as their hints allow; `None` with caching off.
    cache: Option<ResultCache>,
    /// This client as a principal of the cache: its `private` results are its own.
    cache_owner: u64,
    /// Whether the engine takes the server's batches: the negotiated revision has them.
    batches: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stop")
    }
}

impl Client {
    /// Connects with default options (era [`EraMode::Auto`], 60 s timeout).
    pub async fn connect(transport: impl Transport) -> Result<Client, Error> {
        ClientBuilder::default().connect(transport).await
    }

    /// A builder for a client with options.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// The era in use.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The protocol revision in use.
    pub fn protocol_version(&self) -> &str {
        &self.protocol_version
    }

    /// The server's self-description, when it gave one.
    pub fn server_info(&self) -> Option<&Implementation> {
        self.server_info.as_ref()
    }

    /// The capabilities the server declared.
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        &self.server_capabilities
    }

    /// The server's instructions for the model, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// Settles the era; `settled` is the transport's word that what it opens after the
    /// handshake is open (see [`crate::transport::Transport::settled`]).
    async fn negotiate(&mut self, settled: Option<Settled>) -> Result<(), Error> {
        match self.options.mode {
            EraMode::Handshake => self.initialize(settled).await,
            EraMode::Modern => self.discover().await,
            EraMode::Auto => match self.discover().await {
                Ok(()) => Ok(()),
                // Only a connection that is really gone stops the fallback: a server may answer
                // the probe with any code, -32000 included (the TypeScript SDK 1.x does), and
                // the spec forbids keying the fallback to one code.
                Err(err) if self.peer.is_closed() => Err(err),
                Err(err) => {
                    tracing::debug!(err = %format_args!("{err:#}"), "server/discover failed; falling back to initialize");
                    self.initialize(settled).await
                }
            },
        }
    }

    async fn discover(&mut self) -> Result<(), Error> {
        self.era = Era::Modern;
        self.protocol_version = LATEST_MODERN_VERSION.to_owned();
        let result = match self.discover_once().await {
            // The server named the revisions it speaks (-32022): retry once with the newest
            // one we speak too. Once is enough: a server that rejects a revision it just
            // named is not negotiating.
            Err(err) => match retry_version(&err) {
                Some(version) => {
                    tracing::debug!(version, "server rejected our protocol version; retrying");
                    self.protocol_version = version.to_owned();
                    self.discover_once().await?
                }
                None => return Err(err),
            },
            Ok(result) => result,
        };
        if !result.supported_versions.contains(&self.protocol_version) {
            return Err(Error::negotiation(format!(
                "server supports {:?}, not {}",
                result.supported_versions, self.protocol_version
            )));
        }
        self.server_info = server_info_from_meta(result.meta.as_ref());
        self.server_capabilities = result.capabilities;
        self.instructions = result.instructions;
        Ok(())
    }

    async fn discover_once(&self) -> Result<DiscoverResult, Error> {
        let mut params = RequestParams::default();
        params.meta = self.meta();
        self.request(method::SERVER_DISCOVER, params).await
    }

    async fn initialize(&mut self, settled: Option<Settled>) -> Result<(), Error> {
        self.era = Era::Handshake;
        let params = InitializeRequestParams::new(
            LATEST_HANDSHAKE_VERSION,
            self.options.capabilities.clone(),
            self.options.info.clone(),
        );
        let result: InitializeResult = self.request(method::INITIALIZE, params).await?;
        if era_of(&result.protocol_version) != Some(Era::Handshake) {
            return Err(Error::negotiation(format!(
                "server answered initialize with unsupported version {}",
                result.protocol_version
            )));
        }
        self.protocol_version = result.protocol_version;
        let batches = modelcontext_types::has_batches(&self.protocol_version);
        self.batches.store(batches, std::sync::atomic::Ordering::Relaxed);
        self.server_info = Some(result.server_info);
        self.server_capabilities = result.capabilities;
        self.instructions = result.instructions;
        let initialized = Notification { method: method::INITIALIZED.into(), params: None };
        self.peer.notify(initialized).await?;
        // Connected means a change the server announces from now on reaches us: over HTTP
        // that needs the GET stream open, which the transport does after `initialized`. It
        // bounds its own wait for the stream; this bound is for a transport that stopped.
        if let Some(settled) = settled {
            let _ = tokio::time::timeout(DEFAULT_REQUEST_TIMEOUT, settled.wait()).await;
        }
        match self.options.log_level {
            Some(level) if self.server_capabilities.logging.is_some() => {
                let params = SetLevelRequestParams::new(level);
                let _: Map<String, Value> = self.request(method::LOGGING_SET_LEVEL, params).await?;
            }
            _ => {}
        }
        Ok(())
    }

    /// The `_meta` of every request: the modern envelope, or nothing in the handshake era.
    fn meta(&self) -> Option<RequestMeta> {
        (self.era == Era::Modern).then(|| {
            let mut meta = RequestMeta::modern(
                self.protocol_version.clone(),
                self.options.capabilities.clone(),
                Some(self.options.info.clone()),
            );
            meta.log_level = self.options.log_level;
            meta
        })
    }

    /// The params of a list request: one page, from `cursor`.
    fn page(&self, cursor: Option<String>) -> PaginatedRequestParams {
        let mut params = PaginatedRequestParams::default();
        (params.meta, params.cursor) = (self.meta(), cursor);
        params
    }

    /// One page of a list, from the cache when a fresh copy is there (modern era).
    async fn list_page<R: serde::de::DeserializeOwned>(
        &self,
        method: &'static str,
        cursor: Option<String>,
    ) -> Result<R, Error> {
        let target = cursor.clone().unwrap_or_default();
        let fetch =
            async { Ok((self.request::<_, Value>(method, self.page(cursor)).await?, true)) };
        self.cached(method, &target, fetch).await
    }

    /// One page of the server's tools.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult, Error> {
        self.list_page(method::TOOLS_LIST, cursor).await
    }

    /// Every tool, following `nextCursor` to the last page.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, Error> {
        let mut tools = Vec::new();
        let mut cursor = None;
        loop {
            let page = self.list_tools(cursor).await?;
            tools.extend(page.tools);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(tools),
            }
        }
    }

    /// Calls a tool. A tool that fails is still `Ok`: check [`CallToolResult::is_error`]. An
    /// `Err` means the request itself failed (a JSON-RPC error, a timeout, a closed connection).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, Error> {
        self.call_tool_with(name, arguments, &CallOptions::default()).await
    }

    /// [`Client::call_tool`] with per-call options (timeout, progress, `_meta`).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        self.call_tool_object(name, tool_arguments(arguments)?, options).await
    }

    /// [`Client::call_tool_with`] with the arguments already a JSON object, as a server that
    /// forwards a call has them: no copy through the serializer.
    pub(crate) async fn call_tool_object(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        let mut params = CallToolRequestParams::new(name, None);
        params.meta = self.meta();
        // The arguments join the params as they are: through the serializer they would be
        // copied whole. The params stay ours for a retry as a task.
        let mut params = calls::object(params)?;
        if let Some(arguments) = arguments {
            params.insert("arguments".into(), Value::Object(arguments));
        }
        // The task paths are boxed: they are rare, and inline they would make every call's
        // future several times larger, and so every move of it dearer.
        match self.call_answer_object(&mut params, options).await {
            Ok(tasks::CallAnswer::Result(result)) => Ok(result),
            // Only a client that declared the extension gets one; wait for it all the same.
            Ok(tasks::CallAnswer::Task(created)) => {
                Box::pin(self.wait_cancelling_on_drop(&created.task)).await
            }
            // The tool only runs as a task (only a 2026-07-28 server can say so): run it as
            // one and wait, unseen by the caller.
            Err(error) if self.speaks_tasks() && tasks::insists_on_task(&error) => {
                let arguments = match params.remove("arguments") {
                    Some(Value::Object(arguments)) => Some(arguments),
                    _ => None,
                };
                Box::pin(self.call_tool_through_task(name, arguments, options)).await
            }
            Err(error) => Err(error),
        }
    }

    /// One page of the server's resources.
    pub async fn list_resources(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourcesResult, Error> {
        self.list_page(method::RESOURCES_LIST, cursor).await
    }

    /// One page of the server's resource templates.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, Error> {
        self.list_page(method::RESOURCES_TEMPLATES_LIST, cursor).await
    }

    /// Reads a resource, from the cache when a fresh copy is there (modern era; a read that
    /// needed `input_required` rounds is never kept).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let fetch = async {
            let mut params = ReadResourceRequestParams::new(uri);
            params.meta = self.meta();
            let options = CallOptions::default();
            let (value, rounds) = self
                .request_mrtr_rounds::<_, Value>(method::RESOURCES_READ, params, &options)
                .await?;
            Ok((value, rounds == 0))
        };
        self.cached(method::RESOURCES_READ, uri, fetch).await
    }

    /// [`Client::read_resource`] with per-call options; always asks the server.
    pub async fn read_resource_with(
        &self,
        uri: &str,
        options: &CallOptions,
    ) -> Result<ReadResourceResult, Error> {
        let mut params = ReadResourceRequestParams::new(uri);
        params.meta = self.meta();
        self.request_mrtr(method::RESOURCES_READ, params, options).await
    }

    /// One page of the server's prompts.
    pub async fn list_prompts(&self, cursor: Option<String>) -> Result<ListPromptsResult, Error> {
        self.list_page(method::PROMPTS_LIST, cursor).await
    }

    /// Renders a prompt with string arguments.
    pub async fn get_prompt<K: Into<String>, V: Into<String>>(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> Result<GetPromptResult, Error> {
        self.get_prompt_with(name, arguments, &CallOptions::default()).await
    }

    /// [`Client::get_prompt`] with per-call options.
    pub async fn get_prompt_with<K: Into<String>, V: Into<String>>(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
        options: &CallOptions,
    ) -> Result<GetPromptResult, Error> {
        let arguments: BTreeMap<String, String> =
            arguments.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        let mut params = GetPromptRequestParams::new(name).with_arguments(arguments);
        params.meta = self.meta();
        self.request_mrtr(method::PROMPTS_GET, params, options).await
    }

    /// Asks for completions of `argument` (name, partial value) of a prompt or template.
    pub async fn complete(
        &self,
        reference: Reference,
        argument: (&str, &str),
    ) -> Result<CompleteResult, Error> {
        self.complete_in_context(reference, argument, BTreeMap::new()).await
    }

    /// [`Client::complete`] with the values of the other arguments already filled in
    /// (`context.arguments`, 2025-06-18+), which a server may use to narrow its suggestions.
    pub async fn complete_in_context(
        &self,
        reference: Reference,
        argument: (&str, &str),
        arguments: BTreeMap<String, String>,
    ) -> Result<CompleteResult, Error> {
        let argument = CompletionArgument::new(argument.0, argument.1);
        let mut params = CompleteRequestParams::new(reference, argument);
        if !arguments.is_empty() {
            params.context = Some(CompletionContext::default().with_arguments(arguments));
        }
        params.meta = self.meta();
        self.request(method::COMPLETION_COMPLETE, params).await
    }

    /// `ping` (handshake era only: 2026-07-28 removed it). On a modern connection it fails
    /// here with the -32601 a modern server would answer, without a round trip (over HTTP the
    /// server would take an envelope-less request for a handshake-era one).
    pub async fn ping(&self) -> Result<(), Error> {
        if self.era == Era::Modern {
            return Err(McpError::method_not_found(method::PING).into());
        }
        let _: Map<String, Value> = self.request(method::PING, RequestParams::default()).await?;
        Ok(())
    }

    /// Tells the server the roots changed (`notifications/roots/list_changed`, handshake era;
    /// a modern server asks again when it needs them).
    pub async fn notify_roots_changed(&self) -> Result<(), Error> {
        if self.era == Era::Handshake {
            let changed = Notification { method: method::ROOTS_LIST_CHANGED.into(), params: None };
            self.peer.notify(changed).await?;
        }
        Ok(())
    }

    /// Closes the connection: the server sees end of input; a child process is reaped as
    /// the spec says (wait, SIGTERM, SIGKILL).
    pub async fn close(mut self) {
        self.stop.take();
        let engine = self.engine.take();
        drop(self);
        if let Some(engine) = engine {
            let _ = engine.await;
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // Dropping `stop` ends the engine loop; the transport's own tasks then finish.
        self.stop.take();
    }
}

/// The modern revision to retry with after `err`: when it is -32022
/// `UnsupportedProtocolVersion` and its `data.supported` names a modern revision we speak, the
/// newest such one.
fn retry_version(err: &Error) -> Option<&'static str> {
    let mcp = err.as_mcp_error().filter(|e| e.code == UNSUPPORTED_PROTOCOL_VERSION)?;
    let data: UnsupportedProtocolVersionData = serde_json::from_value(mcp.data.clone()?).ok()?;
    MODERN_VERSIONS.iter().rev().find(|ours| data.supported.iter().any(|v| v == *ours)).copied()
}

fn server_info_from_meta(meta: Option<&modelcontext_types::Meta>) -> Option<Implementation> {
    let info = meta?.get(modelcontext_types::SERVER_INFO_META_KEY)?;
    serde_json::from_value(info.clone()).ok()
}

/// Tool arguments as the object `tools/call` carries (`None` for `null`).
fn tool_arguments(arguments: impl Serialize) -> Result<Option<Map<String, Value>>, Error> {
    match serde_json::to_value(arguments)? {
        Value::Object(map) => Ok(Some(map)),
        Value::Null => Ok(None),
        other => Err(McpError::invalid_params(format!(
            "tool arguments must be a JSON object, not {other}"
        ))
        .into()),
    }
}
