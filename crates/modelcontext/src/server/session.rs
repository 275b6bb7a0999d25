//! One connection's protocol state: which era it speaks, and how each request is answered.
//!
//! Era rules (spec 2026-07-28 `basic/lifecycle`, backward compatibility): on stdio and in
//! memory the first request that commits to an era pins it for the connection. `initialize`
//! pins the handshake era; a request carrying the modern `_meta` envelope (or a modern-only
//! method) pins the modern era. A request that commits to neither (a bare `tools/list` before
//! `initialize`) is refused without pinning, so the client can still choose. `ping` is
//! answered before initialization, as the handshake-era lifecycle allows.

use std::sync::Arc;

use futures_util::StreamExt;
use modelcontext_types::{
    CacheScope, CallToolRequestParams, CallToolResult, ClientNotification, ClientRequest,
    CompleteResult, DiscoverResult, EmptyResult, Era, GetPromptRequestParams, GetPromptResult,
    INVALID_PARAMS, InitializeRequestParams, InitializeResult, InputRequiredResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    MODERN_VERSIONS, McpError, Meta, MrtrResult, Notification, PaginatedRequestParams, ParamsError,
    ReadResourceRequestParams, ReadResourceResult, Request, RequestMeta, ResultType,
    SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY, SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams, SubscriptionsListenResult, UNSUPPORTED_PROTOCOL_VERSION,
    method, negotiate_handshake, to_raw,
};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::context::{CancelGuard, ClientView, Context, ContextParts, SessionLogLevel};
use super::mrtr::{self, Binding, InputRound};
use super::notify::{self, Subscribed};
use super::{ServerInner, pagination};
use crate::engine::{Dispatch, Outcome, Peer, Reply};

/// Per-connection server state, owned by the engine loop.
pub(crate) struct ServerSession {
    server: Arc<ServerInner>,
    /// `serverInfo` as JSON, built once per connection for the modern result stamp.
    server_info: Arc<Value>,
    era: EraState,
    log_level: SessionLogLevel,
    /// Handshake era: the URIs of `resources/subscribe`, read by the forwarder.
    subscribed: Subscribed,
    /// Handshake era: the task forwarding change notifications; stopped with the session.
    forwarder: Option<AbortOnDrop>,
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

enum EraState {
    Unpinned,
    Handshake(Box<ClientView>),
    Modern,
}

impl ServerSession {
    pub(crate) fn new(server: Arc<ServerInner>) -> ServerSession {
        let server_info = Arc::new(serde_json::to_value(&server.info).unwrap_or_default());
        ServerSession {
            server,
            server_info,
            era: EraState::Unpinned,
            log_level: SessionLogLevel::default(),
            subscribed: Subscribed::default(),
            forwarder: None,
        }
    }

    /// Starts forwarding change notifications to a handshake-era client (once).
    fn forward_changes(&mut self, peer: &Peer) {
        if self.forwarder.is_some() {
            return;
        }
        let events = self.server.bus.subscribe();
        let task =
            notify::forward_to_session(events, peer.downgrade(), Arc::clone(&self.subscribed));
        self.forwarder = Some(AbortOnDrop(tokio::spawn(task).abort_handle()));
    }

    /// `resources/subscribe` and `resources/unsubscribe` (handshake era): the URI must name a
    /// resource or match a template.
    fn subscribe(&self, uri: &str, on: bool) -> Result<EmptyResult, McpError> {
        if self.server.resolve_resource(uri).is_none() {
            return Err(super::unknown_resource(uri));
        }
        let mut subscribed = self.subscribed.lock().unwrap_or_else(|e| e.into_inner());
        if on {
            subscribed.insert(uri.to_owned());
        } else {
            subscribed.remove(uri);
        }
        Ok(EmptyResult::default())
    }
}

impl Dispatch for ServerSession {
    fn request(&mut self, request: Request, peer: &Peer) -> Reply {
        let parsed = match ClientRequest::parse(&request.method, request.params.as_deref()) {
            Ok(parsed) => parsed,
            Err(ParamsError::UnknownMethod) => {
                return Reply::Now(Err(McpError::method_not_found(&request.method)));
            }
            Err(ParamsError::Invalid(reason)) => {
                let message = format!("Invalid params for '{}': {reason}", request.method);
                return Reply::Now(Err(McpError::invalid_params(message)));
            }
            Err(other) => return Reply::Now(Err(McpError::invalid_params(other.to_string()))),
        };
        if let ClientRequest::Initialize(params) = &parsed {
            let outcome = self.initialize(params);
            if outcome.is_ok() {
                self.forward_changes(peer);
            }
            return Reply::Now(outcome);
        }
        if matches!(self.era, EraState::Modern) && is_removed_in_modern(&parsed) {
            return Reply::Now(Err(McpError::method_not_found(parsed.method())));
        }
        let client = match self.client_view(&parsed) {
            Ok(client) => client,
            Err(error) => return Reply::Now(Err(error)),
        };
        if client.era == Era::Modern && is_removed_in_modern(&parsed) {
            return Reply::Now(Err(McpError::method_not_found(parsed.method())));
        }
        let call = Call {
            server: &self.server,
            server_info: &self.server_info,
            client: &client,
            peer,
            request_id: request.id,
            log_level: &self.log_level,
        };
        match parsed {
            ClientRequest::SetLevel(params) => {
                self.log_level.set(params.level);
                Reply::Now(call.finish(EmptyResult::default()))
            }
            ClientRequest::Subscribe(params) => {
                let outcome = self.subscribe(&params.uri, true);
                Reply::Now(outcome.and_then(|result| call.finish(result)))
            }
            ClientRequest::Unsubscribe(params) => {
                let outcome = self.subscribe(&params.uri, false);
                Reply::Now(outcome.and_then(|result| call.finish(result)))
            }
            other => call.dispatch(other),
        }
    }

    fn notification(&mut self, notification: Notification, _peer: &Peer) {
        match ClientNotification::parse(&notification.method, notification.params.as_deref()) {
            Ok(ClientNotification::Initialized(_)) => tracing::debug!("client initialized"),
            Ok(_) => {}
            Err(err) => {
                tracing::debug!(method = %notification.method, ?err, "ignored notification")
            }
        }
    }
}

impl ServerSession {
    fn initialize(&mut self, params: &InitializeRequestParams) -> Outcome {
        if let EraState::Modern = self.era {
            let message = format!(
                "this connection speaks {}; the initialize handshake is not accepted",
                MODERN_VERSIONS.join(", ")
            );
            let data =
                json!({ "supported": MODERN_VERSIONS, "requested": params.protocol_version });
            return Err(McpError::new(UNSUPPORTED_PROTOCOL_VERSION, message).with_data(data));
        }
        let version = negotiate_handshake(&params.protocol_version);
        self.era = EraState::Handshake(Box::new(ClientView {
            era: Era::Handshake,
            protocol_version: version,
            info: Some(params.client_info.clone()),
            capabilities: params.capabilities.clone(),
        }));
        let result = InitializeResult {
            protocol_version: version.to_owned(),
            capabilities: self.server.capabilities(),
            server_info: self.server.info.clone(),
            instructions: self.server.instructions.clone(),
            ..Default::default()
        };
        to_raw(&result).map_err(internal)
    }

    /// Who is asking, in which era: pins the era on the first committed request.
    fn client_view(&mut self, request: &ClientRequest) -> Result<ClientView, McpError> {
        let meta = request.meta();
        let wants_modern = has_envelope(meta) || is_modern_only(request);
        match &self.era {
            EraState::Modern => modern_view(meta),
            EraState::Handshake(_) if has_envelope(meta) => Err(McpError::invalid_request(
                "this connection negotiated the handshake era with initialize; \
                 requests must not carry the 2026-07-28 _meta envelope",
            )),
            EraState::Handshake(_) if is_modern_only(request) => {
                Err(McpError::method_not_found(request.method()))
            }
            EraState::Handshake(view) => Ok((**view).clone()),
            EraState::Unpinned if wants_modern => {
                let view = modern_view(meta)?;
                self.era = EraState::Modern;
                Ok(view)
            }
            EraState::Unpinned if matches!(request, ClientRequest::Ping(_)) => Ok(ClientView {
                era: Era::Handshake,
                protocol_version: modelcontext_types::LATEST_HANDSHAKE_VERSION,
                info: None,
                capabilities: Default::default(),
            }),
            EraState::Unpinned => Err(McpError::invalid_request(format!(
                "'{}' before initialization: send 'initialize' first, or carry the 2026-07-28 \
                 '_meta' envelope (io.modelcontextprotocol/protocolVersion and clientCapabilities)",
                request.method()
            ))),
        }
    }
}

fn has_envelope(meta: Option<&RequestMeta>) -> bool {
    meta.is_some_and(|m| m.protocol_version.is_some() || m.client_capabilities.is_some())
}

/// Methods 2026-07-28 removed: answered -32601 on a modern connection.
fn is_removed_in_modern(request: &ClientRequest) -> bool {
    matches!(
        request,
        ClientRequest::Ping(_)
            | ClientRequest::SetLevel(_)
            | ClientRequest::Subscribe(_)
            | ClientRequest::Unsubscribe(_)
    )
}

fn is_modern_only(request: &ClientRequest) -> bool {
    matches!(request, ClientRequest::Discover(_) | ClientRequest::SubscriptionsListen(_))
}

/// The modern envelope check on its own, for transports that must answer its errors with
/// their own status codes (HTTP 400).
pub(crate) fn check_modern_envelope(meta: Option<&RequestMeta>) -> Result<(), McpError> {
    modern_view(meta).map(|_| ())
}

/// Checks the per-request envelope of 2026-07-28 (`basic/index`, request metadata): version
/// first, then its support, then the capabilities.
fn modern_view(meta: Option<&RequestMeta>) -> Result<ClientView, McpError> {
    let missing =
        |key: &str| McpError::invalid_params(format!("Missing required _meta field '{key}'"));
    let meta = meta.ok_or_else(|| missing(modelcontext_types::PROTOCOL_VERSION_META_KEY))?;
    let requested = meta
        .protocol_version
        .as_deref()
        .ok_or_else(|| missing(modelcontext_types::PROTOCOL_VERSION_META_KEY))?;
    let Some(version) = MODERN_VERSIONS.iter().find(|v| **v == requested) else {
        let data = json!({ "supported": MODERN_VERSIONS, "requested": requested });
        return Err(McpError::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
            .with_data(data));
    };
    let capabilities = meta
        .client_capabilities
        .clone()
        .ok_or_else(|| missing(modelcontext_types::CLIENT_CAPABILITIES_META_KEY))?;
    Ok(ClientView {
        era: Era::Modern,
        protocol_version: version,
        info: meta.client_info.clone(),
        capabilities,
    })
}

/// One request being answered: everything a method handler needs, borrowed from the loop.
struct Call<'a> {
    server: &'a Arc<ServerInner>,
    server_info: &'a Arc<Value>,
    client: &'a ClientView,
    peer: &'a Peer,
    request_id: modelcontext_types::RequestId,
    log_level: &'a SessionLogLevel,
}

impl Call<'_> {
    fn dispatch(self, request: ClientRequest) -> Reply {
        let server = self.server;
        match request {
            ClientRequest::Ping(_) => Reply::Now(self.finish(EmptyResult::default())),
            ClientRequest::Discover(_) => Reply::Now(self.finish(DiscoverResult {
                supported_versions: MODERN_VERSIONS.iter().map(|v| v.to_string()).collect(),
                capabilities: server.capabilities(),
                instructions: server.instructions.clone(),
                ..Default::default()
            })),
            ClientRequest::ListTools(params) => {
                let tools = server.tools.iter().map(|t| t.def.tool.clone());
                Reply::Now(self.page("tools", params, tools, |tools, next_cursor| {
                    ListToolsResult { tools, next_cursor, ..Default::default() }
                }))
            }
            ClientRequest::CallTool(params) => self.call_tool(params),
            ClientRequest::ListResources(params) => {
                let resources = server.resources.iter().map(|r| r.to_resource());
                Reply::Now(self.page("resources", params, resources, |resources, next_cursor| {
                    ListResourcesResult { resources, next_cursor, ..Default::default() }
                }))
            }
            ClientRequest::ListResourceTemplates(params) => {
                let templates = server.templates.iter().map(|t| t.def.to_template());
                Reply::Now(self.page(
                    "resources/templates",
                    params,
                    templates,
                    |templates, next| ListResourceTemplatesResult {
                        resource_templates: templates,
                        next_cursor: next,
                        ..Default::default()
                    },
                ))
            }
            ClientRequest::ReadResource(params) => self.read_resource(params),
            ClientRequest::ListPrompts(params) => {
                let prompts = server.prompts.iter().map(|p| p.prompt.clone());
                Reply::Now(self.page("prompts", params, prompts, |prompts, next_cursor| {
                    ListPromptsResult { prompts, next_cursor, ..Default::default() }
                }))
            }
            ClientRequest::GetPrompt(params) => self.get_prompt(params),
            ClientRequest::Complete(params) => match &server.completion {
                Some(handler) => {
                    let future = handler.complete(params);
                    self.later(async move {
                        future
                            .await
                            .map(|completion| CompleteResult { completion, ..Default::default() })
                    })
                }
                None => Reply::Now(Err(McpError::method_not_found("completion/complete"))),
            },
            ClientRequest::SubscriptionsListen(params) => self.listen(params),
            other => Reply::Now(Err(McpError::method_not_found(other.method()))),
        }
    }

    /// `subscriptions/listen` (2026-07-28): the acknowledgement first, then every change the
    /// filter asks for, each tagged with the listen request's id, until the client cancels.
    fn listen(self, params: SubscriptionsListenRequestParams) -> Reply {
        let agreed = notify::agreed(&params.notifications);
        let id = serde_json::to_value(&self.request_id).unwrap_or_default();
        // Subscribe before acknowledging, so no change between the two is lost.
        let mut events = self.server.bus.subscribe();
        let peer = self.peer.clone();
        Reply::Stream(Box::pin(async move {
            let mut meta = Meta::new();
            meta.insert(SUBSCRIPTION_ID_META_KEY.into(), id.clone());
            let ack = SubscriptionsAcknowledgedNotificationParams {
                meta: Some(meta.clone()),
                notifications: agreed.clone(),
            };
            let ack =
                Notification::new(method::SUBSCRIPTIONS_ACKNOWLEDGED, &ack).map_err(internal)?;
            peer.notify(ack).await?;
            while let Some(event) = events.next().await {
                let wanted = notify::wants(&agreed, &event);
                if let Some(notification) =
                    wanted.then(|| notify::to_notification(&event, Some(&id))).flatten()
                {
                    peer.notify(notification).await?;
                }
            }
            // The bus ended: close the stream with its result (spec: SHOULD).
            let done = SubscriptionsListenResult {
                meta: Some(meta),
                result_type: Some(ResultType::Complete),
            };
            to_raw(&done).map_err(internal)
        }))
    }

    /// Answers a list method with one page of `items`.
    fn page<I: Iterator, R: WireResult>(
        &self,
        kind: &str,
        params: PaginatedRequestParams,
        items: I,
        result: impl FnOnce(Vec<I::Item>, Option<String>) -> R,
    ) -> Outcome {
        let server = self.server;
        let cursor = params.cursor.as_deref();
        let (page, next) = pagination::page(&server.keys, server.page_size, kind, cursor, items)?;
        self.finish(result(page, next))
    }

    fn context(&self, meta: Option<RequestMeta>, input: Option<Arc<InputRound>>) -> Context {
        Context::new(ContextParts {
            request_id: self.request_id.clone(),
            client: self.client,
            meta,
            peer: self.peer,
            server: self.server,
            session_log_level: self.log_level,
            input,
        })
    }

    fn call_tool(self, params: CallToolRequestParams) -> Reply {
        let Some(entry) = self.server.tools.get(&params.name) else {
            // Spec (server/tools, error handling): an unknown tool is a protocol error.
            let message = format!("Unknown tool: {}", params.name);
            return Reply::Now(Err(McpError::new(INVALID_PARAMS, message)));
        };
        let arguments = params.arguments.unwrap_or_default();
        let round = match self.input_round(
            Binding::new(method::TOOLS_CALL, &params.name, &arguments),
            params.input_responses,
            params.request_state.as_deref(),
        ) {
            Ok(round) => round,
            Err(error) => return Reply::Now(Err(error)),
        };
        let cx = self.context(params.meta, round.as_ref().map(|(_, r)| Arc::clone(r)));
        let guard = cx.cancel_guard();
        match entry.call(cx, arguments, self.server.withhold_error_messages) {
            Ok(future) => self.later_in(round, guarded(guard, future)),
            Err(rejected) => Reply::Now(self.finish::<CallToolResult>(*rejected)),
        }
    }

    fn read_resource(self, params: ReadResourceRequestParams) -> Reply {
        let uri = params.uri;
        let withhold = self.server.withhold_error_messages;
        let Some((def, args)) = self.server.resolve_resource(&uri) else {
            return Reply::Now(Err(super::unknown_resource(&uri)));
        };
        let round = match self.input_round(
            Binding::new(method::RESOURCES_READ, &uri, &Map::new()),
            params.input_responses,
            params.request_state.as_deref(),
        ) {
            Ok(round) => round,
            Err(error) => return Reply::Now(Err(error)),
        };
        let cx = self.context(params.meta, round.as_ref().map(|(_, r)| Arc::clone(r)));
        let guard = cx.cancel_guard();
        let future = guarded(guard, super::resource::read(def, cx, &uri, args, withhold));
        self.later_in(round, async move {
            future.await.map(|contents| ReadResourceResult { contents, ..Default::default() })
        })
    }

    fn get_prompt(self, params: GetPromptRequestParams) -> Reply {
        let Some(def) = self.server.prompts.get(&params.name) else {
            return Reply::Now(Err(McpError::invalid_params(format!(
                "Unknown prompt: {}",
                params.name
            ))));
        };
        let args: Map<String, Value> = params
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let round = match self.input_round(
            Binding::new(method::PROMPTS_GET, &params.name, &args),
            params.input_responses,
            params.request_state.as_deref(),
        ) {
            Ok(round) => round,
            Err(error) => return Reply::Now(Err(error)),
        };
        let cx = self.context(params.meta, round.as_ref().map(|(_, r)| Arc::clone(r)));
        let guard = cx.cancel_guard();
        match def.get(cx, args, self.server.withhold_error_messages) {
            Ok(future) => self.later_in::<GetPromptResult>(round, guarded(guard, future)),
            Err(error) => Reply::Now(Err(error)),
        }
    }

    /// The MRTR round of a modern request that may ask the client for input; none in the
    /// handshake era, where questions are live requests.
    fn input_round(
        &self,
        binding: Binding,
        responses: Option<modelcontext_types::InputResponses>,
        state: Option<&str>,
    ) -> Result<Option<(Binding, Arc<InputRound>)>, McpError> {
        if self.client.era == Era::Handshake {
            return Ok(None);
        }
        let round = InputRound::open(self.server, &binding, responses, state)?;
        Ok(Some((binding, Arc::new(round))))
    }

    /// [`Call::later`], inside an MRTR round when there is one.
    fn later_in<R: WireResult>(
        self,
        round: Option<(Binding, Arc<InputRound>)>,
        future: impl std::future::Future<Output = Result<R, McpError>> + Send + 'static,
    ) -> Reply {
        match round {
            Some((binding, round)) => {
                let server = Arc::clone(self.server);
                self.later(mrtr::run(server, binding, round, future))
            }
            None => self.later(future),
        }
    }

    /// Runs `future` concurrently, then stamps and serializes its result.
    fn later<R: WireResult>(
        self,
        future: impl std::future::Future<Output = Result<R, McpError>> + Send + 'static,
    ) -> Reply {
        let stamp = Stamp::new(self.server_info, self.client.era);
        Reply::Later(Box::pin(async move { stamp.apply(future.await?) }))
    }

    fn finish<R: WireResult>(&self, result: R) -> Outcome {
        Stamp::new(self.server_info, self.client.era).apply(result)
    }
}

/// `future`, raising its context's cancellation flag if dropped before it finishes.
async fn guarded<T>(guard: CancelGuard, future: impl std::future::Future<Output = T>) -> T {
    let output = future.await;
    guard.disarm();
    output
}

/// What the modern era adds to every result: `resultType`, the `serverInfo` stamp, and the
/// caching hints on cacheable results (spec 2026-07-28, SEP-2549: `ttlMs: 0`, private by
/// default). The handshake era gets none of them.
struct Stamp {
    server_info: Option<Arc<Value>>,
}

impl Stamp {
    fn new(server_info: &Arc<Value>, era: Era) -> Stamp {
        Stamp { server_info: (era == Era::Modern).then(|| Arc::clone(server_info)) }
    }

    fn apply<R: WireResult>(&self, mut result: R) -> Outcome {
        if let Some(info) = &self.server_info {
            result.stamp(Value::clone(info));
        }
        to_raw(&result).map_err(internal)
    }
}

fn internal(err: serde_json::Error) -> McpError {
    McpError::internal(format!("result did not serialize: {err}"))
}

/// A result type with the shared result fields.
trait WireResult: Serialize + Send + 'static {
    fn stamp(&mut self, server_info: Value);
}

fn stamp_meta(meta: &mut Option<Meta>, server_info: Value) {
    meta.get_or_insert_with(Meta::new).insert(SERVER_INFO_META_KEY.into(), server_info);
}

macro_rules! wire_result {
    (plain: $($ty:ty),*) => {$(
        impl WireResult for $ty {
            fn stamp(&mut self, server_info: Value) {
                self.result_type = Some(ResultType::Complete);
                stamp_meta(&mut self.meta, server_info);
            }
        }
    )*};
    (cacheable: $($ty:ty),*) => {$(
        impl WireResult for $ty {
            fn stamp(&mut self, server_info: Value) {
                self.result_type = Some(ResultType::Complete);
                self.ttl_ms.get_or_insert(0);
                self.cache_scope.get_or_insert(CacheScope::Private);
                stamp_meta(&mut self.meta, server_info);
            }
        }
    )*};
}

impl WireResult for InputRequiredResult {
    fn stamp(&mut self, server_info: Value) {
        self.result_type = Some(ResultType::InputRequired);
        stamp_meta(&mut self.meta, server_info);
    }
}

impl<T: WireResult> WireResult for MrtrResult<T> {
    fn stamp(&mut self, server_info: Value) {
        match self {
            MrtrResult::Complete(result) => result.stamp(server_info),
            MrtrResult::InputRequired(result) => result.stamp(server_info),
        }
    }
}

wire_result!(plain: EmptyResult, CallToolResult, GetPromptResult, CompleteResult);
wire_result!(cacheable: DiscoverResult, ListToolsResult, ListResourcesResult, ListResourceTemplatesResult, ListPromptsResult, ReadResourceResult);
