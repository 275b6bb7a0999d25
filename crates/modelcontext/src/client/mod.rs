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

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use modelcontext_types::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, CompleteRequestParams,
    CompleteResult, CompletionArgument, CreateMessageRequestParams, CreateMessageResult,
    DiscoverResult, ElicitRequestParams, ElicitResult, Era, GetPromptRequestParams,
    GetPromptResult, Implementation, InitializeRequestParams, InitializeResult, InputRequests,
    InputResponses, LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel,
    LoggingMessageNotificationParams, McpError, MrtrResult, Notification, PaginatedRequestParams,
    ProgressNotificationParams, ProgressToken, RawValue, ReadResourceRequestParams,
    ReadResourceResult, Reference, RequestId, RequestMeta, RequestParams, ResultType, Root,
    ServerCapabilities, ServerNotification, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, SubscriptionsListenRequestParams, Tool, UnsubscribeRequestParams, era_of,
    method, to_raw,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio::task::JoinHandle;

use crate::Error;
use crate::engine::{Peer, RequestOptions, Stop};
use crate::transport::Transport;

mod handlers;
mod listen;
mod options;

pub use listen::Subscription;
pub use options::CallOptions;

use handlers::{ClientDispatch, Handlers, callback};

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

/// Builds a [`Client`] with options and callbacks. Setting a callback declares the matching
/// client capability.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    info: Implementation,
    mode: EraMode,
    timeout: Option<Duration>,
    capabilities: ClientCapabilities,
    log_level: Option<LoggingLevel>,
    max_input_rounds: usize,
    handlers: Handlers,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            info: Implementation {
                name: "modelcontext".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                ..Default::default()
            },
            mode: EraMode::Auto,
            timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            capabilities: ClientCapabilities::default(),
            log_level: None,
            max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            handlers: Handlers::default(),
        }
    }
}

impl ClientBuilder {
    /// Sets the `clientInfo` name and version.
    pub fn info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info.name = name.into();
        self.info.version = version.into();
        self
    }

    /// Chooses the era (default [`EraMode::Auto`]).
    pub fn era(mut self, mode: EraMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the per-request timeout (default 60 s); `None` waits forever.
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Asks for log messages at `level` and above: `logging/setLevel` after `initialize` in the
    /// handshake era (when the server declares `logging`), `_meta` `logLevel` on every request
    /// in the modern era. Without it a modern server sends no log messages at all.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Calls `handler` with every `notifications/message` the server sends.
    pub fn on_log(
        mut self,
        handler: impl Fn(LoggingMessageNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.handlers.log = Some(Arc::new(handler));
        self
    }

    /// Calls `handler` with every server notification except progress (which goes to the call
    /// that asked for it): logging, `list_changed`, `resources/updated`, and any other method.
    /// Parse a known one with `ServerNotification::parse(&n.method, n.params.as_deref())`.
    /// Runs on the connection's loop, in arrival order: keep it quick (send to a channel).
    pub fn on_notification(
        mut self,
        handler: impl Fn(Notification) + Send + Sync + 'static,
    ) -> Self {
        self.handlers.notification = Some(Arc::new(handler));
        self
    }

    /// Answers `elicitation/create` (handshake era) and elicitation input requests (modern
    /// era) with `handler`; declares the `elicitation` capability, form and URL modes.
    pub fn on_elicit<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, McpError>> + Send + 'static,
    {
        self.handlers.elicit = Some(callback(handler));
        self
    }

    /// Answers `sampling/createMessage` with `handler`; declares the `sampling` capability.
    /// Add [`ClientBuilder::sampling_tools`] if the handler supports `tools` and `toolChoice`.
    pub fn on_sample<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, McpError>> + Send + 'static,
    {
        self.handlers.sample = Some(callback(handler));
        self
    }

    /// Declares `sampling.tools`: the sampling handler understands `tools` and `toolChoice`.
    pub fn sampling_tools(mut self, supported: bool) -> Self {
        self.handlers.sampling_tools = supported;
        self
    }

    /// Answers `roots/list` with `handler`; declares the `roots` capability (with
    /// `listChanged`: call [`Client::notify_roots_changed`] when they change).
    pub fn on_roots<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, McpError>> + Send + 'static,
    {
        self.handlers.roots = Some(callback(move |()| handler()));
        self
    }

    /// Bounds the MRTR rounds of one `call_tool`/`get_prompt`/`read_resource` (default 10):
    /// after that many retries with answers, the call fails instead of asking again.
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// Connects over `transport` and negotiates.
    pub async fn connect(mut self, transport: impl Transport) -> Result<Client, Error> {
        self.handlers.declare(&mut self.capabilities);
        let handlers = Arc::new(self.handlers.clone());
        let listeners = listen::Listeners::default();
        let dispatch =
            ClientDispatch { handlers: Arc::clone(&handlers), listeners: Arc::clone(&listeners) };
        let (peer, run, stop) = crate::engine::start(transport.open(), dispatch);
        let engine = tokio::spawn(run);
        let mut client = Client {
            peer,
            engine: Some(engine),
            stop: Some(stop),
            options: self,
            handlers,
            listeners,
            era: Era::Handshake,
            protocol_version: LATEST_HANDSHAKE_VERSION.to_owned(),
            server_info: None,
            server_capabilities: ServerCapabilities::default(),
            instructions: None,
        };
        client.negotiate().await?;
        Ok(client)
    }
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

    async fn negotiate(&mut self) -> Result<(), Error> {
        match self.options.mode {
            EraMode::Handshake => self.initialize().await,
            EraMode::Modern => self.discover().await,
            EraMode::Auto => match self.discover().await {
                Ok(()) => Ok(()),
                Err(err) if err.kind() == crate::ErrorKind::Closed => Err(err),
                Err(err) => {
                    tracing::debug!(%err, "server/discover failed; falling back to initialize");
                    self.initialize().await
                }
            },
        }
    }

    async fn discover(&mut self) -> Result<(), Error> {
        self.era = Era::Modern;
        self.protocol_version = LATEST_MODERN_VERSION.to_owned();
        let result: DiscoverResult =
            self.request("server/discover", RequestParams { meta: self.meta() }).await?;
        if !result.supported_versions.iter().any(|v| v == LATEST_MODERN_VERSION) {
            return Err(Error::negotiation(format!(
                "server supports {:?}, not {LATEST_MODERN_VERSION}",
                result.supported_versions
            )));
        }
        self.server_info = server_info_from_meta(result.meta.as_ref());
        self.server_capabilities = result.capabilities;
        self.instructions = result.instructions;
        Ok(())
    }

    async fn initialize(&mut self) -> Result<(), Error> {
        self.era = Era::Handshake;
        let params = InitializeRequestParams {
            meta: None,
            protocol_version: LATEST_HANDSHAKE_VERSION.to_owned(),
            capabilities: self.options.capabilities.clone(),
            client_info: self.options.info.clone(),
        };
        let result: InitializeResult = self.request("initialize", params).await?;
        if era_of(&result.protocol_version) != Some(Era::Handshake) {
            return Err(Error::negotiation(format!(
                "server answered initialize with unsupported version {}",
                result.protocol_version
            )));
        }
        self.protocol_version = result.protocol_version;
        self.server_info = Some(result.server_info);
        self.server_capabilities = result.capabilities;
        self.instructions = result.instructions;
        let initialized = Notification { method: "notifications/initialized".into(), params: None };
        self.peer.notify(initialized).await?;
        match self.options.log_level {
            Some(level) if self.server_capabilities.logging.is_some() => {
                let params = SetLevelRequestParams { meta: None, level };
                let _: Map<String, Value> = self.request(method::LOGGING_SET_LEVEL, params).await?;
            }
            _ => {}
        }
        Ok(())
    }

    /// The `_meta` of every request: the modern envelope, or nothing in the handshake era.
    fn meta(&self) -> Option<RequestMeta> {
        (self.era == Era::Modern).then(|| RequestMeta {
            protocol_version: Some(self.protocol_version.clone()),
            client_capabilities: Some(self.options.capabilities.clone()),
            client_info: Some(self.options.info.clone()),
            log_level: self.options.log_level,
            ..Default::default()
        })
    }

    /// Sends any request and parses its result. `params` must already carry the envelope
    /// (the typed methods do that for you).
    pub async fn request<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
    ) -> Result<R, Error> {
        self.request_with(method, params, &CallOptions::default()).await
    }

    /// [`Client::request`] with per-call options: the option's `_meta` keys and progress
    /// token are added to the params' `_meta`.
    pub async fn request_with<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
        options: &CallOptions,
    ) -> Result<R, Error> {
        let raw = self.exchange(method, object(params)?, options).await?;
        check_result_type(method, raw.get())?;
        Ok(serde_json::from_str(raw.get())?)
    }

    /// A request that may answer `input_required` (2026-07-28 MRTR): answers the server's
    /// questions with the callbacks and retries (a fresh id each time, `requestState` echoed
    /// as received), at most `max_input_rounds` times. The answers and state of this call
    /// stay in this call's params.
    async fn request_mrtr<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
        options: &CallOptions,
    ) -> Result<R, Error> {
        let mut params = object(params)?;
        let mut rounds = 0;
        loop {
            let raw = self.exchange(method, params.clone(), options).await?;
            let input = match serde_json::from_str::<MrtrResult<R>>(raw.get())? {
                MrtrResult::Complete(result) => return Ok(result),
                MrtrResult::InputRequired(input) => input,
            };
            // Give up before asking the user questions whose answers would never be sent.
            if rounds == self.options.max_input_rounds {
                let message = format!("'{method}' still needed input after {rounds} rounds");
                return Err(McpError::internal(message).into());
            }
            rounds += 1;
            let responses = self.answer_all(input.input_requests.unwrap_or_default()).await?;
            params.insert("inputResponses".into(), serde_json::to_value(responses)?);
            match input.request_state {
                Some(state) => params.insert("requestState".into(), Value::String(state)),
                None => params.remove("requestState"),
            };
        }
    }

    /// Answers every question of one round, concurrently (they were asked together).
    async fn answer_all(&self, requests: InputRequests) -> Result<InputResponses, Error> {
        let answers = requests.into_iter().map(|(key, request)| async move {
            Ok::<_, McpError>((key, self.handlers.answer(request).await?))
        });
        Ok(futures_util::future::try_join_all(answers).await?.into_iter().collect())
    }

    /// One request on the wire, with a fresh id: merges the options into `_meta`, applies
    /// the timeouts, routes progress. Dropping the future cancels the request.
    async fn exchange(
        &self,
        method: &str,
        mut params: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Box<RawValue>, Error> {
        let id = self.peer.next_id();
        let token = options.on_progress.as_ref().map(|_| progress_token(&id));
        merge_meta(&mut params, &options.meta, token.as_ref());
        let request_options = RequestOptions {
            timeout: options.timeout.unwrap_or(self.options.timeout),
            reset_on_progress: options.reset_on_progress.is_some(),
            max_total: options.reset_on_progress,
            progress: token.zip(options.on_progress.clone()).map(|(token, handler)| {
                let token = serde_json::to_value(token).unwrap_or_default();
                let forward = move |raw: Value| {
                    if let Ok(params) = serde_json::from_value::<ProgressNotificationParams>(raw) {
                        handler(params);
                    }
                };
                (token, Arc::new(forward) as crate::engine::ProgressCallback)
            }),
        };
        let raw = to_raw(&params)?;
        Ok(self.peer.request(id, method, Some(raw), request_options).await?)
    }

    /// One page of the server's tools.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult, Error> {
        self.request("tools/list", PaginatedRequestParams { meta: self.meta(), cursor }).await
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
        let arguments = match serde_json::to_value(arguments)? {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Err(McpError::invalid_params(format!(
                    "tool arguments must be a JSON object, not {other}"
                ))
                .into());
            }
        };
        let params = CallToolRequestParams {
            meta: self.meta(),
            name: name.to_owned(),
            arguments,
            ..Default::default()
        };
        self.request_mrtr(method::TOOLS_CALL, params, options).await
    }

    /// One page of the server's resources.
    pub async fn list_resources(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourcesResult, Error> {
        self.request("resources/list", PaginatedRequestParams { meta: self.meta(), cursor }).await
    }

    /// One page of the server's resource templates.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, Error> {
        self.request(
            "resources/templates/list",
            PaginatedRequestParams { meta: self.meta(), cursor },
        )
        .await
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        self.read_resource_with(uri, &CallOptions::default()).await
    }

    /// [`Client::read_resource`] with per-call options.
    pub async fn read_resource_with(
        &self,
        uri: &str,
        options: &CallOptions,
    ) -> Result<ReadResourceResult, Error> {
        let params = ReadResourceRequestParams {
            meta: self.meta(),
            uri: uri.to_owned(),
            ..Default::default()
        };
        self.request_mrtr(method::RESOURCES_READ, params, options).await
    }

    /// One page of the server's prompts.
    pub async fn list_prompts(&self, cursor: Option<String>) -> Result<ListPromptsResult, Error> {
        self.request("prompts/list", PaginatedRequestParams { meta: self.meta(), cursor }).await
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
        let arguments = arguments.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        let params = GetPromptRequestParams {
            meta: self.meta(),
            name: name.to_owned(),
            arguments: Some(arguments),
            ..Default::default()
        };
        self.request_mrtr(method::PROMPTS_GET, params, options).await
    }

    /// Asks for completions of `argument` (name, partial value) of a prompt or template.
    pub async fn complete(
        &self,
        reference: Reference,
        argument: (&str, &str),
    ) -> Result<CompleteResult, Error> {
        let params = CompleteRequestParams {
            meta: self.meta(),
            reference,
            argument: CompletionArgument {
                name: argument.0.to_owned(),
                value: argument.1.to_owned(),
            },
            context: None,
        };
        self.request("completion/complete", params).await
    }

    /// `ping` (handshake era only: 2026-07-28 removed it).
    pub async fn ping(&self) -> Result<(), Error> {
        let _: Map<String, Value> = self.request("ping", RequestParams { meta: None }).await?;
        Ok(())
    }

    /// Opens a stream of change notifications: tool, prompt and resource list changes and
    /// updates of the resources `filter` names. Modern era: a `subscriptions/listen` request,
    /// returned once the server acknowledged it ([`Subscription::agreed`] is what it agreed
    /// to). Handshake era: `resources/subscribe` for each URI, then the connection's change
    /// notifications, filtered. Dropping the subscription ends it.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, Error> {
        match self.era {
            Era::Modern => self.listen_modern(filter).await,
            _ => self.listen_handshake(filter).await,
        }
    }

    async fn listen_modern(&self, filter: SubscriptionFilter) -> Result<Subscription, Error> {
        let id = self.peer.next_id();
        let key = serde_json::to_value(&id)?.to_string();
        let mut receiver = listen::register(&self.listeners, key.clone());
        let params = SubscriptionsListenRequestParams { meta: self.meta(), notifications: filter };
        let raw = to_raw(&params)?;
        let (peer, listeners) = (self.peer.clone(), Arc::clone(&self.listeners));
        let (done_tx, mut done_rx) = tokio::sync::oneshot::channel();
        let request = tokio::spawn(async move {
            let outcome =
                peer.request(id, method::SUBSCRIPTIONS_LISTEN, Some(raw), Default::default()).await;
            listen::unregister(&listeners, &key);
            let _ = done_tx.send(outcome);
        });
        // The acknowledgement comes first (spec), or the request fails.
        let agreed = tokio::select! {
            first = receiver.recv() => match first {
                Some(ServerNotification::SubscriptionsAcknowledged(ack)) => ack.notifications,
                _ => return Err(McpError::internal("the listen stream did not start with its acknowledgement").into()),
            },
            outcome = &mut done_rx => return Err(match outcome {
                Ok(Err(error)) => error.into(),
                _ => McpError::internal("the listen stream ended before its acknowledgement").into(),
            }),
        };
        Ok(Subscription {
            agreed,
            receiver,
            filter_locally: false,
            request: Some(request),
            on_drop: None,
        })
    }

    async fn listen_handshake(&self, filter: SubscriptionFilter) -> Result<Subscription, Error> {
        let receiver = listen::register(&self.listeners, listen::UNTAGGED.to_owned());
        let uris = filter.resource_subscriptions.clone().unwrap_or_default();
        for uri in &uris {
            let params = SubscribeRequestParams { meta: None, uri: uri.clone() };
            let _: Map<String, Value> = self.request(method::RESOURCES_SUBSCRIBE, params).await?;
        }
        let peer = self.peer.clone();
        let unsubscribe = move || {
            tokio::spawn(async move {
                for uri in uris {
                    let Ok(raw) = to_raw(&UnsubscribeRequestParams { meta: None, uri }) else {
                        continue;
                    };
                    let options = RequestOptions {
                        timeout: Some(DEFAULT_REQUEST_TIMEOUT),
                        ..Default::default()
                    };
                    let _ = peer
                        .request(peer.next_id(), method::RESOURCES_UNSUBSCRIBE, Some(raw), options)
                        .await;
                }
            });
        };
        Ok(Subscription {
            agreed: filter,
            receiver,
            filter_locally: true,
            request: None,
            on_drop: Some(Box::new(unsubscribe)),
        })
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

fn server_info_from_meta(meta: Option<&modelcontext_types::Meta>) -> Option<Implementation> {
    let info = meta?.get(modelcontext_types::SERVER_INFO_META_KEY)?;
    serde_json::from_value(info.clone()).ok()
}

/// A modern result other than `complete` needs handling this client does not do yet; an
/// absent `resultType` (a handshake-era server) means complete.
fn check_result_type(method: &str, raw: &str) -> Result<(), Error> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Probe {
        result_type: Option<ResultType>,
    }
    match serde_json::from_str::<Probe>(raw).map(|p| p.result_type) {
        Ok(None | Some(ResultType::Complete)) | Err(_) => Ok(()),
        Ok(Some(other)) => Err(McpError::internal(format!(
            "'{method}' answered with resultType '{other}', which this client does not handle"
        ))
        .into()),
    }
}

/// Serializes request params into the object `_meta` can be merged into.
fn object(params: impl Serialize) -> Result<Map<String, Value>, Error> {
    match serde_json::to_value(params)? {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => {
            Err(McpError::invalid_params(format!("params must be an object, not {other}")).into())
        }
    }
}

/// The progress token of a request: its own id, which is unique among our active requests.
fn progress_token(id: &RequestId) -> ProgressToken {
    match id {
        RequestId::Number(n) => ProgressToken::Number(*n),
        other => ProgressToken::String(other.to_string()),
    }
}

/// Adds the caller's `_meta` keys (without overriding the SDK's) and the progress token.
fn merge_meta(
    params: &mut Map<String, Value>,
    extra: &Map<String, Value>,
    token: Option<&ProgressToken>,
) {
    if extra.is_empty() && token.is_none() {
        return;
    }
    let meta = params.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(meta) = meta else { return };
    for (key, value) in extra {
        meta.entry(key.clone()).or_insert_with(|| value.clone());
    }
    if let Some(token) = token {
        meta.insert("progressToken".into(), serde_json::to_value(token).unwrap_or_default());
    }
}
