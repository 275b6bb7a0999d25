//! One connection's protocol state: which era it speaks, and how each request is answered.
//!
//! Era rules (spec 2026-07-28 `basic/lifecycle`, backward compatibility): on stdio and in
//! memory the first request that commits to an era pins it for the connection. `initialize`
//! pins the handshake era; a request carrying the modern `_meta` envelope (or a modern-only
//! method) pins the modern era. A request that commits to neither (a bare `tools/list` before
//! `initialize`) is refused without pinning, so the client can still choose. `ping` is
//! answered before initialization, as the handshake-era lifecycle allows.

use std::sync::Arc;

use modelcontext_types::{
    ClientNotification, ClientRequest, Era, InitializeRequestParams, InitializeResult,
    MODERN_VERSIONS, McpError, Notification, Request, RequestMeta, UNSUPPORTED_PROTOCOL_VERSION,
    has_batches, method, negotiate_handshake, to_raw,
};
use serde_json::json;

use super::ServerInner;
use super::call::Call;
use super::context::{ClientView, SessionLogLevel};
use super::extensions::Extensions;
use super::notify::{self, Subscribed};
use super::parse::parse_request;
use super::stamp::internal;
use super::telemetry::{Link, RequestTelemetry};
use crate::engine::{Dispatch, Outcome, Peer, Reply, WeakPeer};

/// Per-connection server state, owned by the engine loop.
pub(crate) struct ServerSession {
    pub(super) server: Arc<ServerInner>,
    /// `serverInfo` as JSON, built once per connection for the modern result stamp.
    server_info: Arc<super::stamp::ServerInfoJson>,
    pub(super) era: EraState,
    pub(super) log_level: SessionLogLevel,
    /// Handshake era: the URIs of `resources/subscribe`, read by the forwarder.
    pub(super) subscribed: Subscribed,
    /// Handshake era: what forwards change notifications; stopped with the session.
    forwarder: Option<Forwarder>,
    /// How the session starts hearing changes: a task of its own unless the transport chose
    /// otherwise (an HTTP session hears them through the server's shared listeners).
    pub(super) start_forwarding: StartForwarding,
    /// What the transport knows about this connection, for every context.
    extensions: Arc<Extensions>,
    /// The transport and session, for the spans and the middleware.
    pub(super) link: Link,
    /// Handshake era: the `roots/list_changed` hook's runs on this connection.
    roots_runs: super::roots::Runs,
    /// Modern era: the client as the last request described it, reused while the envelope
    /// stays the same (a client sends the same one on every request).
    last_modern: Option<Arc<ClientView>>,
}

/// How a handshake-era session hears the server's changes, until dropped: a task of its own,
/// or an entry among what the server forwards to many sessions.
pub(super) type Forwarder = Box<dyn Send>;

/// Starts forwarding `server`'s changes to `peer`, as far as `subscribed` asks.
pub(super) type StartForwarding = fn(&ServerInner, WeakPeer, Subscribed) -> Forwarder;

/// Forwards changes from a task of the session's own (a stdio or in-memory connection).
fn forward_in_task(server: &ServerInner, peer: WeakPeer, subscribed: Subscribed) -> Forwarder {
    let task = notify::forward_to_session(server.bus.subscribe(), peer, subscribed);
    Box::new(AbortOnDrop(tokio::spawn(task).abort_handle()))
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

pub(super) enum EraState {
    Unpinned,
    Handshake(Arc<ClientView>),
    Modern,
}

impl ServerSession {
    pub(crate) fn new(server: Arc<ServerInner>) -> ServerSession {
        let server_info = server.info_json();
        let link = Link::new(&server, crate::transport::PIPE, None);
        ServerSession {
            server,
            server_info,
            era: EraState::Unpinned,
            log_level: SessionLogLevel::default(),
            subscribed: Subscribed::default(),
            forwarder: None,
            start_forwarding: forward_in_task,
            extensions: Arc::default(),
            link,
            roots_runs: Default::default(),
            last_modern: None,
        }
    }

    /// Attaches what the transport knows about the connection (see [`Extensions`]).
    pub(crate) fn with_extensions(mut self, extensions: Extensions) -> ServerSession {
        self.extensions = Arc::new(extensions);
        self
    }

    /// Starts forwarding change notifications to a handshake-era client (once).
    pub(super) fn forward_changes(&mut self, peer: &Peer) {
        if self.forwarder.is_some() {
            return;
        }
        let subscribed = Arc::clone(&self.subscribed);
        let forwarder = (self.start_forwarding)(&self.server, peer.downgrade(), subscribed);
        self.forwarder = Some(forwarder);
    }
}

impl Dispatch for ServerSession {
    fn max_in_flight(&self) -> usize {
        self.server.max_in_flight
    }

    fn starts_work(&self, request: &Request) -> bool {
        starts_work(&request.method)
    }

    fn accepts_batches(&self) -> bool {
        matches!(&self.era, EraState::Handshake(view) if has_batches(view.protocol_version))
    }

    fn request(&mut self, request: Request, peer: &Peer) -> Reply {
        self.request_from(
            request,
            peer,
            #[cfg(feature = "otel")]
            Default::default(),
        )
    }

    /// A refused request gets its span too, with the error attributes, so that an operator
    /// sees the refusals (the span ends at once).
    fn refused(&self, request: &Request, error: &McpError) {
        let session_id = self.link.session_id.as_deref();
        crate::observe::record_refusal(request, error, self.link.transport, session_id);
    }

    fn notification(&mut self, notification: Notification, peer: &Peer) {
        let span =
            crate::observe::server_notification_span(&notification.method, self.link.transport);
        let _entered = span.enter();
        match ClientNotification::parse(&notification.method, notification.params.as_deref()) {
            Ok(ClientNotification::Initialized(_)) => tracing::debug!("client initialized"),
            Ok(ClientNotification::RootsListChanged(_))
                if matches!(self.era, EraState::Handshake(_)) =>
            {
                let hook = self.server.on_roots_changed.as_ref();
                super::roots::changed(hook, peer, &self.extensions, &self.roots_runs);
            }
            Ok(_) => {}
            Err(err) => {
                tracing::debug!(method = %notification.method, ?err, "ignored notification")
            }
        }
    }
}

impl ServerSession {
    /// [`Dispatch::request`], with the trace context its transport carried beside the message
    /// (an HTTP POST's `traceparent` header; feature `otel`).
    pub(super) fn request_from(
        &mut self,
        request: Request,
        peer: &Peer,
        #[cfg(feature = "otel")] transport: crate::observe::otel::Carrier<'_>,
    ) -> Reply {
        let mut telemetry = RequestTelemetry::start(&request.method, &request.id, &self.link);
        #[cfg(feature = "otel")]
        telemetry.adopt_remote_parent_raw(request.params.as_deref(), transport);
        let reply = self.parse_and_dispatch(request, peer, &mut telemetry);
        telemetry.finish(reply)
    }

    /// Answers `request`: parse, era, then the method (through the middleware, in the
    /// request's span). The span is named by [`RequestTelemetry::identify`] before it is first
    /// entered: OpenTelemetry takes the name (which names the tool or prompt) when the span
    /// starts.
    fn parse_and_dispatch(
        &mut self,
        request: Request,
        peer: &Peer,
        telemetry: &mut RequestTelemetry,
    ) -> Reply {
        // Removed is removed whatever the params: refuse by name before parsing them.
        if matches!(self.era, EraState::Modern) && removed_in_modern(&request.method) {
            return Reply::Now(Err(McpError::method_not_found(&request.method)));
        }
        let parsed = match parse_request(&request.method, request.params.as_deref()) {
            Ok(parsed) => parsed,
            Err(refused) => return Reply::Now(Err(refused)),
        };
        let id = request.id;
        if let ClientRequest::Initialize(params) = &parsed {
            telemetry.identify(&parsed, negotiate_handshake(&params.protocol_version));
            let outcome = self.initialize(params);
            if outcome.is_ok() {
                self.forward_changes(peer);
            }
            return Reply::Now(outcome);
        }
        let client = match self.client_view(&parsed) {
            Ok(client) => client,
            Err(error) => return Reply::Now(Err(error)),
        };
        if client.era == Era::Modern && removed_in_modern(parsed.method()) {
            return Reply::Now(Err(McpError::method_not_found(parsed.method())));
        }
        telemetry.identify(&parsed, client.protocol_version);
        let call = Call {
            server: &self.server,
            server_info: &self.server_info,
            client: &client,
            peer,
            request_id: id,
            log_level: Some(&self.log_level),
            subscribed: Some(&self.subscribed),
            extensions: &self.extensions,
            link: &self.link,
            item_middleware: true,
        };
        call.dispatch_with_middleware(parsed)
    }

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
        self.era = EraState::Handshake(Arc::new(ClientView {
            era: Era::Handshake,
            protocol_version: version,
            info: Some(params.client_info.clone()),
            capabilities: params.capabilities.clone(),
        }));
        let mut result =
            InitializeResult::new(version, self.server.capabilities(), self.server.info.clone());
        result.instructions = self.server.instructions.clone();
        to_raw(&result).map_err(internal)
    }

    /// The modern client this request's envelope describes. The last one is reused when the
    /// envelope is the same: comparing it costs less than cloning the capabilities (800 bytes)
    /// into a new view per request (callgrind: 1,000 of a modern stdio call's 28,000 instructions).
    fn modern_client(&mut self, meta: Option<&RequestMeta>) -> Result<Arc<ClientView>, McpError> {
        if let (Some(last), Some(meta)) = (&self.last_modern, meta) {
            if describes(meta, last) {
                return Ok(Arc::clone(last));
            }
        }
        let view = Arc::new(modern_view(meta)?);
        self.last_modern = Some(Arc::clone(&view));
        Ok(view)
    }

    /// Who is asking, in which era: pins the era on the first committed request.
    fn client_view(&mut self, request: &ClientRequest) -> Result<Arc<ClientView>, McpError> {
        let meta = request.meta();
        let wants_modern = has_envelope(meta) || is_modern_only(request);
        match &self.era {
            EraState::Modern => self.modern_client(meta),
            EraState::Handshake(_) if has_envelope(meta) => Err(McpError::invalid_request(
                "this connection negotiated the handshake era with initialize; \
                 requests must not carry the 2026-07-28 _meta envelope",
            )),
            EraState::Handshake(_) if is_modern_only(request) => {
                Err(McpError::method_not_found(request.method()))
            }
            EraState::Handshake(view) => Ok(Arc::clone(view)),
            EraState::Unpinned if wants_modern => {
                let view = self.modern_client(meta)?;
                self.era = EraState::Modern;
                Ok(view)
            }
            EraState::Unpinned if matches!(request, ClientRequest::Ping(_)) => {
                Ok(Arc::new(ClientView {
                    era: Era::Handshake,
                    protocol_version: modelcontext_types::LATEST_HANDSHAKE_VERSION,
                    info: None,
                    capabilities: Default::default(),
                }))
            }
            EraState::Unpinned => Err(McpError::invalid_request(format!(
                "'{}' before initialization: send 'initialize' first, or carry the 2026-07-28 \
                 '_meta' envelope (io.modelcontextprotocol/protocolVersion and clientCapabilities)",
                request.method()
            ))),
        }
    }
}

/// Whether a request of method `name` runs the application's code (a tool, a resource, a
/// prompt, a completion), the work [`McpServer::max_in_flight`](super::McpServer::max_in_flight)
/// bounds. The others are answered from the server's own state at once, or are a listen
/// stream, which waits rather than works; they pass however busy the connection is.
pub(super) fn starts_work(name: &str) -> bool {
    matches!(
        name,
        method::TOOLS_CALL
            | method::RESOURCES_READ
            | method::PROMPTS_GET
            | method::COMPLETION_COMPLETE
    )
}

fn has_envelope(meta: Option<&RequestMeta>) -> bool {
    meta.is_some_and(|m| m.protocol_version.is_some() || m.client_capabilities.is_some())
}

/// Requests 2026-07-28 removed (besides `initialize`, which a modern connection answers with
/// -32022): -32601 on a modern connection.
pub(crate) fn removed_in_modern(name: &str) -> bool {
    matches!(
        name,
        method::PING
            | method::LOGGING_SET_LEVEL
            | method::RESOURCES_SUBSCRIBE
            | method::RESOURCES_UNSUBSCRIBE
    )
}

fn is_modern_only(request: &ClientRequest) -> bool {
    matches!(request, ClientRequest::Discover(_) | ClientRequest::SubscriptionsListen(_))
}

/// Whether `meta` is the envelope `view` was made from: what [`modern_view`] would make of it.
fn describes(meta: &RequestMeta, view: &ClientView) -> bool {
    meta.protocol_version.as_deref() == Some(view.protocol_version)
        && meta.client_capabilities.as_deref() == Some(&view.capabilities)
        && meta.client_info.as_deref() == view.info.as_ref()
}

/// Checks the per-request envelope of 2026-07-28 (`basic/index`, request metadata): version
/// first, then its support, then the capabilities.
pub(crate) fn modern_view(meta: Option<&RequestMeta>) -> Result<ClientView, McpError> {
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
        .as_deref()
        .cloned()
        .ok_or_else(|| missing(modelcontext_types::CLIENT_CAPABILITIES_META_KEY))?;
    Ok(ClientView {
        era: Era::Modern,
        protocol_version: version,
        info: meta.client_info.as_deref().cloned(),
        capabilities,
    })
}
