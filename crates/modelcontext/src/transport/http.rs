//! The Streamable HTTP client transport: every outgoing message is a POST to one endpoint, and
//! the answers (one JSON body, or an SSE stream of messages) flow back into the engine.
//!
//! ```no_run
//! # async fn run() -> Result<(), modelcontext::Error> {
//! use modelcontext::Client;
//! use modelcontext::transport::http::HttpTransport;
//! let transport = HttpTransport::new("http://127.0.0.1:8000/mcp")?.header("x-api-key", "k")?;
//! let client = Client::connect(transport).await?;
//! // or, with default options:
//! let client = Client::connect_http("http://127.0.0.1:8000/mcp").await?;
//! # Ok(()) }
//! ```
//!
//! Both eras go through the same transport. A request whose `_meta` carries the modern
//! protocol version is sent with the 2026-07-28 routing headers (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`). Anything else follows 2025-11-25: the session id
//! and version learned from `initialize` go on every later message, the GET stream carries
//! server-initiated messages, a dropped stream resumes with `Last-Event-ID`, a session the
//! server has forgotten (404) is replaced once by replaying `initialize`, and closing the
//! client ends the session with DELETE.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use http::{Method, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use modelcontext_types::{
    CONNECTION_CLOSED, McpError, Message, Notification, PROTOCOL_VERSION_META_KEY, RawValue,
    RequestId, Response, method, to_raw,
};
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

use crate::net::{HttpClient, HttpClientBuilder, ResponseBody as Body, invalid_input};
use crate::transport::{
    CHANNEL_CAPACITY, Connection, Incoming, SessionIdWatch, Settled, Transport,
};
use crate::{Client, Error};

#[cfg(feature = "auth-client")]
mod auth;
mod headers;
mod session;
mod stream;

/// Default limit for one incoming message (a JSON body or one SSE event): 4 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// Default time allowed to open a connection (TCP, a proxy's tunnel and the TLS handshake).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = crate::net::DEFAULT_CONNECT_TIMEOUT;

/// How long a notification or response POST may wait for its (202) answer. They are posted
/// in order, so a server that never answers one must not stall every later message.
const POST_ACCEPT_TIMEOUT: Duration = Duration::from_secs(10);

const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// A Streamable HTTP endpoint to connect a [`Client`] to, with its options.
///
/// `https://` and `http://` (a plain `http://` host beyond this machine is logged once as a
/// warning). Connections go through an [`HttpClient`]: one built from this transport's
/// settings, or the one handed to [`HttpTransport::http_client`].
#[derive(Clone)]
pub struct HttpTransport {
    url: Uri,
    headers: HeaderMap,
    /// The settings of the client built at `open`, unless one was handed in.
    client_settings: HttpClientBuilder,
    client: Option<HttpClient>,
    read_timeout: Option<Duration>,
    max_message_bytes: usize,
    #[cfg(feature = "auth-client")]
    auth: Option<Arc<dyn crate::auth::client::AuthProvider>>,
    /// The handshake-era session id, for the client's spans.
    session_watch: PerConnection<SessionIdWatch>,
    /// Said once the GET stream answered after `notifications/initialized`.
    settled: PerConnection<Settled>,
}

/// What each connection of a transport has its own of (its session id, its word that the
/// session is open): a clone of the transport, a template for several connections, starts
/// afresh rather than sharing the original's.
#[derive(Default)]
struct PerConnection<T>(T);

impl<T: Default> Clone for PerConnection<T> {
    fn clone(&self) -> PerConnection<T> {
        PerConnection::default()
    }
}

impl HttpTransport {
    /// A transport for the endpoint at `url`, e.g. `https://mcp.example.com/mcp` or
    /// `http://127.0.0.1:8000/mcp` (`https://` needs the `tls` feature, on by default).
    pub fn new(url: &str) -> Result<HttpTransport, Error> {
        let parsed = crate::net::check_url(url).map_err(invalid_input)?;
        Ok(HttpTransport {
            url: parsed,
            headers: HeaderMap::new(),
            client_settings: HttpClient::builder(),
            client: None,
            read_timeout: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            #[cfg(feature = "auth-client")]
            auth: None,
            session_watch: PerConnection::default(),
            settled: PerConnection::default(),
        })
    }

    /// Adds a header to every HTTP request (e.g. `Authorization`).
    pub fn header(mut self, name: &str, value: &str) -> Result<HttpTransport, Error> {
        let (name, value) = crate::net::parse_header(name, value)?;
        self.headers.append(name, value);
        Ok(self)
    }

    /// Sets the time allowed to open a connection: TCP, a proxy's tunnel and the TLS
    /// handshake (default 30 s); `None` waits forever. Not used with
    /// [`HttpTransport::http_client`] (the client has its own).
    pub fn connect_timeout(mut self, timeout: Option<Duration>) -> HttpTransport {
        self.client_settings = self.client_settings.connect_timeout(timeout);
        self
    }

    /// Trusts the certificates in `certificate` (PEM, one or many, or one DER certificate)
    /// besides the system's roots: a private CA. Not used with
    /// [`HttpTransport::http_client`] (give the client the root instead).
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub fn root_certificate(
        mut self,
        certificate: impl AsRef<[u8]>,
    ) -> Result<HttpTransport, Error> {
        self.client_settings = self.client_settings.root_certificate(certificate)?;
        Ok(self)
    }

    /// Sends through `client` (its TLS trust, proxies, connect timeout, or your own service),
    /// e.g. one client shared by several transports and the auth module.
    pub fn http_client(mut self, client: HttpClient) -> HttpTransport {
        self.client = Some(client);
        self
    }

    /// Sets the longest silence allowed inside a response body (default: none). A server that
    /// streams progress or keep-alive comments resets it with every chunk. The client's own
    /// per-request timeout still bounds the whole request.
    pub fn read_timeout(mut self, timeout: Option<Duration>) -> HttpTransport {
        self.read_timeout = timeout;
        self
    }

    /// Sets the largest message accepted, as a JSON body or as one SSE event (default 4 MiB).
    pub fn max_message_bytes(mut self, limit: usize) -> HttpTransport {
        self.max_message_bytes = limit;
        self
    }
}

/// Header values stay out of logs: they are often credentials.
impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", &self.url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("client", &self.client_settings)
            .field("read_timeout", &self.read_timeout)
            .field("max_message_bytes", &self.max_message_bytes)
            .finish()
    }
}

// Listed on `Client`'s page, which needs no feature: the badge names the one these need.
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
impl Client {
    /// Connects to the Streamable HTTP endpoint at `url` with default options (era
    /// [`EraMode::Auto`](crate::EraMode::Auto)). For options, pass an [`HttpTransport`] to
    /// [`Client::connect`] or [`ClientBuilder::connect`](crate::ClientBuilder::connect).
    pub async fn connect_http(url: &str) -> Result<Client, Error> {
        Client::connect(HttpTransport::new(url)?).await
    }
}

impl Transport for HttpTransport {
    fn network_transport(&self) -> &'static str {
        crate::transport::TCP
    }

    fn session_id_watch(&self) -> Option<SessionIdWatch> {
        Some(self.session_watch.0.clone())
    }

    fn settled(&self) -> Option<Settled> {
        Some(self.settled.0.clone())
    }

    fn open(self) -> Connection {
        let (in_tx, in_rx) = mpsc::channel(CHANNEL_CAPACITY);
        let (out_tx, out_rx) = mpsc::channel(CHANNEL_CAPACITY);
        let http = self.client.clone().unwrap_or_else(|| self.client_settings.clone().build());
        let shared = Arc::new(Shared {
            http,
            config: self,
            incoming: in_tx,
            state: Mutex::default(),
            renewing: tokio::sync::Mutex::new(()),
        });
        let (stop_tx, stop_rx) = oneshot::channel();
        let mut dispatcher = tokio::spawn(dispatch(shared.clone(), out_rx, stop_rx));
        let shutdown = async move {
            let _ = stop_tx.send(());
            if tokio::time::timeout(POST_ACCEPT_TIMEOUT, &mut dispatcher).await.is_err() {
                dispatcher.abort();
            }
            shared.close().await;
        };
        Connection { sender: out_tx, receiver: in_rx, shutdown: Some(Box::pin(shutdown)) }
    }
}

/// What the dispatcher and every exchange of one connection share.
struct Shared {
    http: HttpClient,
    config: HttpTransport,
    incoming: mpsc::Sender<Incoming>,
    /// Held for map and field operations only, never across an `.await`.
    state: Mutex<State>,
    /// Serializes session renewals: requests that meet the same expired session renew it once.
    renewing: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct State {
    /// `Mcp-Session-Id` from the `initialize` answer (2025-11-25).
    session_id: Option<HeaderValue>,
    /// The version `initialize` negotiated: set means the connection is in the handshake era.
    handshake_version: Option<String>,
    /// Requests whose POST is still being read, so a cancellation can abort them.
    in_flight: HashMap<RequestId, InFlight>,
    next_task: u64,
    /// `x-mcp-header` arguments per tool, learned from `tools/list` results: (path, token).
    tool_headers: HashMap<String, Vec<modelcontext_types::MirroredArgument>>,
    /// The standalone GET stream, while it runs.
    get_stream: Option<AbortHandle>,
    /// The POST endpoint of the 2024-11-05 HTTP+SSE transport, once the server turned out to
    /// speak only that.
    legacy_endpoint: Option<Uri>,
    /// The params of the client's `initialize`, replayed when the session expires.
    initialize_params: Option<Option<Box<RawValue>>>,
    /// Sessions opened on the client's behalf after an expiry, for unique request ids.
    renewals: u64,
    /// Why the last authorization failed, for the error of the request it leaves refused.
    #[cfg(feature = "auth-client")]
    auth_failure: Option<String>,
}

struct InFlight {
    task: u64,
    abort: AbortHandle,
    modern: bool,
}

/// The request an answer belongs to.
struct Exchange {
    id: RequestId,
    method: String,
    modern: bool,
}

/// Takes each outgoing message in order. Requests are posted concurrently; notifications and
/// responses wait for their (202) answer, so `notifications/initialized` reaches the server
/// before any later request does.
async fn dispatch(
    shared: Arc<Shared>,
    mut outgoing: mpsc::Receiver<Message>,
    mut stop: oneshot::Receiver<()>,
) {
    loop {
        let message = tokio::select! {
            _ = &mut stop => return,
            message = outgoing.recv() => match message {
                Some(message) => message,
                None => return,
            },
        };
        match message {
            Message::Request(request) => shared.start_request(request),
            Message::Notification(notification) => shared.notify(notification).await,
            Message::Response(response) => {
                let headers = shared.session_headers(false);
                shared.post_in_order(response.into(), headers).await;
            }
            // The engine answers a batch only on a transport that delivers one (stdio).
            Message::BatchResponse(_) => {}
        }
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means another task panicked mid-update; the fields stay valid.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn start_request(self: &Arc<Self>, request: modelcontext_types::Request) {
        let params: Option<Value> =
            request.params.as_ref().and_then(|p| serde_json::from_str(p.get()).ok());
        let modern_version = params.as_ref().and_then(|p| {
            p.get("_meta")?.get(PROTOCOL_VERSION_META_KEY)?.as_str().map(str::to_owned)
        });
        let modern = modern_version.is_some();
        let headers = match &modern_version {
            Some(version) => self.modern_headers(&request.method, version, params.as_ref()),
            None => self.session_headers(request.method == method::INITIALIZE),
        };
        let id = request.id.clone();
        let exchange = Exchange { id: id.clone(), method: request.method.clone(), modern };
        let initialize = (request.method == method::INITIALIZE).then(|| request.params.clone());
        let body = Bytes::from(Message::Request(request).encode());
        let shared = self.clone();
        let mut state = self.state();
        if let Some(params) = initialize {
            // Kept to open a new session if this one expires (404).
            state.initialize_params = Some(params);
        }
        state.next_task += 1;
        let task = state.next_task;
        // Spawned under the lock, so the task cannot finish (and unregister) before it is
        // registered.
        let handle = tokio::spawn(async move {
            shared.exchange(&exchange, headers, body).await;
            shared.finished(&exchange.id, task);
        });
        state.in_flight.insert(id, InFlight { task, abort: handle.abort_handle(), modern });
    }

    fn finished(&self, id: &RequestId, task: u64) {
        let mut state = self.state();
        // A reused id may already belong to a newer request; only remove our own entry.
        if state.in_flight.get(id).is_some_and(|f| f.task == task) {
            state.in_flight.remove(id);
        }
    }

    /// Posts a notification, unless it is a modern cancellation: over HTTP in 2026-07-28,
    /// closing the request's stream is the cancellation, and there is nothing to post.
    async fn notify(self: &Arc<Self>, notification: Notification) {
        if notification.method == method::CANCELLED && self.cancel(&notification) {
            return;
        }
        let initialized = notification.method == method::INITIALIZED;
        let headers = self.session_headers(false);
        self.post_in_order(notification.into(), headers).await;
        if !initialized {
            return;
        }
        // The 2024-11-05 transport's one stream is already open.
        if self.state().legacy_endpoint.is_none() {
            self.start_get_stream().await;
        }
        self.config.settled.0.say();
    }

    /// Stops reading the cancelled request's answer. Returns true when the notification must
    /// not be posted (a modern request, or no handshake-era session at all).
    fn cancel(&self, notification: &Notification) -> bool {
        let id = notification
            .params
            .as_ref()
            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
            .and_then(|p| serde_json::from_value::<RequestId>(p.get("requestId")?.clone()).ok());
        let mut state = self.state();
        match id.and_then(|id| state.in_flight.remove(&id)) {
            Some(in_flight) => {
                in_flight.abort.abort();
                in_flight.modern
            }
            None => state.handshake_version.is_none() && state.legacy_endpoint.is_none(),
        }
    }

    /// POSTs a notification or response and waits (a bounded time) for the answer, which
    /// should be 202.
    async fn post_in_order(&self, message: Message, headers: HeaderMap) {
        let post = async {
            match self.send(Method::POST, headers, message.encode().into()).await {
                Ok(answer) if answer.status().is_success() => {
                    let _ = self.read_body(answer.into_body()).await;
                }
                Ok(answer) => {
                    let status = answer.status();
                    let body = self.read_body(answer.into_body()).await.unwrap_or_default();
                    let body = String::from_utf8_lossy(&body);
                    tracing::warn!(%status, %body, "server refused a message");
                }
                Err(err) => tracing::warn!(%err, "could not post a message"),
            }
        };
        if tokio::time::timeout(POST_ACCEPT_TIMEOUT, post).await.is_err() {
            tracing::warn!("no answer to a posted message within {POST_ACCEPT_TIMEOUT:?}");
        }
    }

    /// Posts one request and delivers its answer: a JSON body, an SSE stream, or an error.
    async fn exchange(self: &Arc<Self>, exchange: &Exchange, headers: HeaderMap, body: Bytes) {
        let Some(answer) = self.post_request(exchange, headers, &body).await else { return };
        let answer = match answer {
            Ok(answer) => answer,
            Err(err) => {
                let message = format!("HTTP request to {} failed: {err}", self.config.url);
                return self.fail(&exchange.id, McpError::new(CONNECTION_CLOSED, message)).await;
            }
        };
        let status = answer.status();
        if self.state().legacy_endpoint.is_some() && status.is_success() {
            // 2024-11-05: the answer to every POST arrives on the SSE stream.
            return;
        }
        // Spec 2025-11-25, backwards compatibility: `initialize` refused with 400, 404 or 405
        // means the server may speak the 2024-11-05 HTTP+SSE transport.
        let old_server = matches!(status.as_u16(), 400 | 404 | 405);
        if exchange.method == method::INITIALIZE && old_server && self.fall_back_to_sse(body).await
        {
            return;
        }
        if exchange.method == method::INITIALIZE && status.is_success() {
            self.remember_session(answer.headers());
        }
        let content_type = content_type(answer.headers());
        let body = answer.into_body();
        if status == StatusCode::ACCEPTED {
            let message = "the server answered a request with 202 Accepted and no response";
            return self.fail(&exchange.id, McpError::internal(message)).await;
        }
        if !status.is_success() {
            return self.http_error(exchange, status, &content_type, body).await;
        }
        if content_type.starts_with("text/event-stream") {
            return self.read_stream(exchange, body).await;
        }
        if !content_type.starts_with("application/json") {
            let message = format!("unexpected Content-Type {content_type:?} in the answer");
            return self.fail(&exchange.id, McpError::internal(message)).await;
        }
        let failure = match self.read_body(body).await.map(|bytes| Message::decode(&bytes)) {
            Ok(Ok(message)) => match self.deliver(Some(exchange), message).await {
                true => return,
                false => "the JSON answer is not the response to this request".to_owned(),
            },
            Ok(Err(err)) => format!("the JSON answer is not a JSON-RPC message: {err}"),
            Err(err) => err,
        };
        self.fail(&exchange.id, McpError::internal(failure)).await;
    }

    /// Posts a request, recovering once from what the client can fix by itself: an expired
    /// session (404, 2025-11-25: the client MUST start a new one) and a `tools/call` refused
    /// for its headers (-32020, 2026-07-28: the client SHOULD list the tools again and retry,
    /// its `x-mcp-header` knowledge was stale). `None` when the answer is already delivered.
    async fn post_request(
        self: &Arc<Self>,
        exchange: &Exchange,
        headers: HeaderMap,
        body: &Bytes,
    ) -> Option<Result<http::Response<Body>, String>> {
        let session = headers.get(SESSION_ID).cloned();
        let answer = match self.send(Method::POST, headers, body.clone()).await {
            Ok(answer) => answer,
            Err(err) => return Some(Err(err)),
        };
        let status = answer.status();
        if status == StatusCode::NOT_FOUND && exchange.method != method::INITIALIZE {
            if let Some(session) = session {
                if self.renew_session(&session).await {
                    return Some(
                        self.send(Method::POST, self.session_headers(false), body.clone()).await,
                    );
                }
            }
        }
        if status != StatusCode::BAD_REQUEST
            || !exchange.modern
            || exchange.method != method::TOOLS_CALL
        {
            return Some(Ok(answer));
        }
        let content_type = content_type(answer.headers());
        let bytes = self.read_body(answer.into_body()).await.unwrap_or_default();
        if headers::is_header_mismatch(&bytes) {
            if let Some(headers) = self.relearn_tool_headers(body).await {
                return Some(self.send(Method::POST, headers, body.clone()).await);
            }
        }
        self.error_answer(exchange, status, &content_type, &bytes).await;
        None
    }

    /// A non-2xx answer: its JSON-RPC error when the body has one, else `HTTP <status>`.
    async fn http_error(&self, exchange: &Exchange, status: StatusCode, ct: &str, body: Body) {
        let bytes = self.read_body(body).await.unwrap_or_default();
        self.error_answer(exchange, status, ct, &bytes).await;
    }

    /// Delivers a non-2xx answer whose body is already read.
    async fn error_answer(&self, exchange: &Exchange, status: StatusCode, ct: &str, bytes: &[u8]) {
        if ct.starts_with("application/json") {
            if let Ok(Message::Response(response)) = Message::decode(bytes) {
                #[cfg(feature = "auth-client")]
                let response = self.explain_refused_response(status, response);
                if self.deliver(Some(exchange), Message::Response(response)).await {
                    return;
                }
            }
        }
        let reason = status.canonical_reason().unwrap_or("");
        let mut message = format!("HTTP {}: {reason}", status.as_u16());
        if status == StatusCode::NOT_FOUND && self.state().session_id.is_some() {
            message.push_str(" (the session has ended; connect again)");
        }
        #[cfg(feature = "auth-client")]
        self.explain_refusal(status, &mut message);
        let text: String = String::from_utf8_lossy(bytes).chars().take(200).collect();
        let data = serde_json::json!({ "status": status.as_u16(), "body": text });
        self.fail(&exchange.id, McpError::internal(message).with_data(data)).await;
    }

    /// Hands a message to the engine. An error without an id, on an exchange's own answer, is
    /// that request's (servers reject some requests before reading their id). Returns true
    /// when the message is the exchange's response.
    async fn deliver(&self, exchange: Option<&Exchange>, mut message: Message) -> bool {
        let mut answered = false;
        if let (Some(exchange), Message::Response(response)) = (exchange, &mut message) {
            if response.id.is_none() && response.result.is_err() {
                response.id = Some(exchange.id.clone());
            }
            answered = response.id.as_ref() == Some(&exchange.id);
            if answered {
                self.observe(exchange, response);
            }
        }
        let _ = self.incoming.send(Ok(message)).await;
        answered
    }

    /// Learns from results as they pass: the negotiated version from `initialize`, the
    /// `x-mcp-header` arguments from `tools/list` (dropping tools whose annotations are
    /// invalid, as 2026-07-28 requires of clients).
    fn observe(&self, exchange: &Exchange, response: &mut Response) {
        let Ok(raw) = &response.result else { return };
        match exchange.method.as_str() {
            method::INITIALIZE => {
                let result: Option<Value> = serde_json::from_str(raw.get()).ok();
                let version = result.as_ref().and_then(|r| r.get("protocolVersion")?.as_str());
                self.state().handshake_version = version.map(str::to_owned);
            }
            method::TOOLS_LIST => {
                let Ok(mut result) = serde_json::from_str::<Map<String, Value>>(raw.get()) else {
                    return;
                };
                if self.learn_tools(&mut result) {
                    if let Ok(raw) = to_raw(&result) {
                        response.result = Ok(raw);
                    }
                }
            }
            _ => {}
        }
    }

    async fn fail(&self, id: &RequestId, error: McpError) {
        let _ = self.incoming.send(Ok(Response::error(Some(id.clone()), error).into())).await;
    }

    async fn send(
        &self,
        method: Method,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<http::Response<Body>, String> {
        #[cfg(feature = "auth-client")]
        if let Some(provider) = self.config.auth.clone() {
            return self.send_authorized(&*provider, method, headers, body).await;
        }
        self.send_once(method, headers, body).await
    }

    async fn send_once(
        &self,
        method: Method,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<http::Response<Body>, String> {
        let mut request = http::Request::new(Full::new(body));
        // Messages go to the legacy transport's POST endpoint once it is in use.
        let legacy = self.state().legacy_endpoint.clone().filter(|_| method == Method::POST);
        *request.uri_mut() = legacy.unwrap_or_else(|| self.config.url.clone());
        *request.method_mut() = method;
        *request.headers_mut() = headers;
        self.http.send(request).await
    }

    /// A whole (JSON) body, up to the message limit.
    async fn read_body(&self, mut body: Body) -> Result<Vec<u8>, String> {
        let mut bytes = Vec::new();
        while let Some(chunk) = next_chunk(&mut body, self.config.read_timeout).await? {
            if bytes.len() + chunk.len() > self.config.max_message_bytes {
                return Err(format!(
                    "the answer exceeds the limit of {} bytes",
                    self.config.max_message_bytes
                ));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }
}

/// The next data chunk of a body; `None` at its end.
async fn next_chunk(body: &mut Body, timeout: Option<Duration>) -> Result<Option<Bytes>, String> {
    loop {
        let frame = match timeout {
            Some(limit) => tokio::time::timeout(limit, body.frame())
                .await
                .map_err(|_| format!("no data from the server for {limit:?}"))?,
            None => body.frame().await,
        };
        match frame {
            None => return Ok(None),
            Some(Err(err)) => return Err(format!("reading the answer failed: {err}")),
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    return Ok(Some(data));
                }
            }
        }
    }
}

fn content_type(headers: &HeaderMap) -> String {
    let value = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    value.trim().to_ascii_lowercase()
}
