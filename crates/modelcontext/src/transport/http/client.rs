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

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use http::{Method, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as Body;
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use modelcontext_types::{
    CONNECTION_CLOSED, McpError, Message, Notification, PROTOCOL_VERSION_META_KEY, RawValue,
    RequestId, Response, to_raw,
};
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

use crate::transport::sse::{SseDecoder, SseEvent};
use crate::transport::{CHANNEL_CAPACITY, Connection, Incoming, Transport};
use crate::{Client, Error};

/// Default limit for one incoming message (a JSON body or one SSE event): 4 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// Default time allowed to open a TCP connection.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Reconnection delay when the server sent no `retry:` (the Python SDK's default too).
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// Consecutive reconnections that bring no event before a stream is given up.
const MAX_RECONNECTS: u32 = 3;
/// The session's DELETE must not hold up a closing client for long.
const DELETE_TIMEOUT: Duration = Duration::from_secs(5);

const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// A Streamable HTTP endpoint to connect a [`Client`] to, with its options.
///
/// Plain `http://` only: TLS is not built in yet.
#[derive(Clone)]
pub struct HttpTransport {
    url: Uri,
    headers: HeaderMap,
    connect_timeout: Option<Duration>,
    read_timeout: Option<Duration>,
    max_message_bytes: usize,
}

impl HttpTransport {
    /// A transport for the endpoint at `url`, e.g. `http://127.0.0.1:8000/mcp`.
    pub fn new(url: &str) -> Result<HttpTransport, Error> {
        let parsed: Uri =
            url.parse().map_err(|e| invalid_input(format!("invalid URL {url:?}: {e}")))?;
        match parsed.scheme_str() {
            Some("http") if parsed.host().is_some() => {}
            Some("https") => {
                return Err(invalid_input(format!(
                    "{url}: https is not supported yet (no TLS connector); use http://"
                )));
            }
            _ => return Err(invalid_input(format!("{url}: expected an http:// URL with a host"))),
        }
        Ok(HttpTransport {
            url: parsed,
            headers: HeaderMap::new(),
            connect_timeout: Some(DEFAULT_CONNECT_TIMEOUT),
            read_timeout: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        })
    }

    /// Adds a header to every HTTP request (e.g. `Authorization`).
    pub fn header(mut self, name: &str, value: &str) -> Result<HttpTransport, Error> {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| invalid_input(format!("invalid header name {name:?}: {e}")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|e| invalid_input(format!("invalid value for header {name}: {e}")))?;
        self.headers.append(name, value);
        Ok(self)
    }

    /// Sets the time allowed to open a connection (default 30 s); `None` waits forever.
    pub fn connect_timeout(mut self, timeout: Option<Duration>) -> HttpTransport {
        self.connect_timeout = timeout;
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
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("max_message_bytes", &self.max_message_bytes)
            .finish()
    }
}

fn invalid_input(message: String) -> Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, message).into()
}

impl Client {
    /// Connects to the Streamable HTTP endpoint at `url` with default options (era
    /// [`EraMode::Auto`](crate::EraMode::Auto)). For options, pass an [`HttpTransport`] to
    /// [`Client::connect`] or [`ClientBuilder::connect`](crate::ClientBuilder::connect).
    pub async fn connect_http(url: &str) -> Result<Client, Error> {
        Client::connect(HttpTransport::new(url)?).await
    }
}

impl Transport for HttpTransport {
    fn open(self) -> Connection {
        let (in_tx, in_rx) = mpsc::channel(CHANNEL_CAPACITY);
        let (out_tx, out_rx) = mpsc::channel(CHANNEL_CAPACITY);
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(self.connect_timeout);
        let http = Hyper::builder(TokioExecutor::new()).build(connector);
        let shared = Arc::new(Shared {
            http,
            config: self,
            incoming: in_tx,
            state: Mutex::default(),
            renewing: tokio::sync::Mutex::new(()),
        });
        let (stop_tx, stop_rx) = oneshot::channel();
        let dispatcher = tokio::spawn(dispatch(shared.clone(), out_rx, stop_rx));
        let shutdown = async move {
            let _ = stop_tx.send(());
            let _ = dispatcher.await;
            shared.close().await;
        };
        Connection { sender: out_tx, receiver: in_rx, shutdown: Some(Box::pin(shutdown)) }
    }
}

/// What the dispatcher and every exchange of one connection share.
struct Shared {
    http: Hyper<HttpConnector, Full<Bytes>>,
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
    tool_headers: HashMap<String, Vec<(Vec<String>, String)>>,
    /// The standalone GET stream, while it runs.
    get_stream: Option<AbortHandle>,
    /// The POST endpoint of the 2024-11-05 HTTP+SSE transport, once the server turned out to
    /// speak only that.
    legacy_endpoint: Option<Uri>,
    /// The params of the client's `initialize`, replayed when the session expires.
    initialize_params: Option<Option<Box<RawValue>>>,
    /// Sessions opened on the client's behalf after an expiry, for unique request ids.
    renewals: u64,
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

/// How reading one SSE body ended.
#[derive(Default)]
struct Pumped {
    /// The response to the exchange's request arrived.
    answered: bool,
    /// Events carrying a message or an id (progress, for the reconnect budget).
    events: usize,
    /// Why the stream broke, if it did not simply end.
    failure: Option<String>,
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
            None => self.session_headers(request.method == "initialize"),
        };
        let id = request.id.clone();
        let exchange = Exchange { id: id.clone(), method: request.method.clone(), modern };
        let initialize = (request.method == "initialize").then(|| request.params.clone());
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
        if notification.method == "notifications/cancelled" && self.cancel(&notification) {
            return;
        }
        let initialized = notification.method == "notifications/initialized";
        let headers = self.session_headers(false);
        self.post_in_order(notification.into(), headers).await;
        // The 2024-11-05 transport's one stream is already open.
        if initialized && self.state().legacy_endpoint.is_none() {
            self.start_get_stream();
        }
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

    /// POSTs a notification or response and waits for the answer, which should be 202.
    async fn post_in_order(&self, message: Message, headers: HeaderMap) {
        match self.send(Method::POST, headers, message.encode().into()).await {
            Ok(answer) if answer.status().is_success() => {
                let _ = self.read_body(answer.into_body()).await;
            }
            Ok(answer) => {
                let status = answer.status();
                let body = self.read_body(answer.into_body()).await.unwrap_or_default();
                tracing::warn!(%status, body = %String::from_utf8_lossy(&body), "server refused a message");
            }
            Err(err) => tracing::warn!(%err, "could not post a message"),
        }
    }

    /// Posts one request and delivers its answer: a JSON body, an SSE stream, or an error.
    async fn exchange(self: &Arc<Self>, exchange: &Exchange, headers: HeaderMap, body: Bytes) {
        let session = headers.get(SESSION_ID).cloned();
        let mut answer = self.send(Method::POST, headers, body.clone()).await;
        // Spec 2025-11-25: a 404 on a session means it has ended, and the client MUST start a
        // new one. Done here, once, so the caller never sees the expiry.
        let expired = answer.as_ref().is_ok_and(|a| a.status() == StatusCode::NOT_FOUND);
        if let Some(session) = session.filter(|_| expired && exchange.method != "initialize") {
            if self.renew_session(&session).await {
                answer = self.send(Method::POST, self.session_headers(false), body.clone()).await;
            }
        }
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
        if exchange.method == "initialize" && old_server && self.fall_back_to_sse(body).await {
            return;
        }
        if exchange.method == "initialize" && status.is_success() {
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

    /// Opens a new session in place of `expired`: replays the client's `initialize` (its answer
    /// stays inside the transport), sends `notifications/initialized`, restarts the GET stream.
    /// Returns true when a session other than `expired` is in place.
    async fn renew_session(self: &Arc<Self>, expired: &HeaderValue) -> bool {
        let _renewing = self.renewing.lock().await;
        let (params, id) = {
            let mut state = self.state();
            if state.session_id.as_ref() != Some(expired) {
                // Another request renewed it while this one waited.
                return state.session_id.is_some();
            }
            let Some(params) = state.initialize_params.clone() else { return false };
            state.renewals += 1;
            (params, RequestId::String(format!("modelcontext-renew-{}", state.renewals)))
        };
        tracing::debug!("session expired (404); initializing a new one");
        let request =
            modelcontext_types::Request { id: id.clone(), method: "initialize".into(), params };
        let body = Bytes::from(Message::Request(request).encode());
        let answer = match self.send(Method::POST, self.session_headers(true), body).await {
            Ok(answer) if answer.status().is_success() => answer,
            _ => return false,
        };
        self.remember_session(answer.headers());
        let Some(Ok(result)) = self.read_own_response(&id, answer).await else { return false };
        let result: Option<Value> = serde_json::from_str(result.get()).ok();
        let version = result.as_ref().and_then(|r| r.get("protocolVersion")?.as_str());
        self.state().handshake_version = version.map(str::to_owned);
        let initialized = Notification { method: "notifications/initialized".into(), params: None };
        self.post_in_order(initialized.into(), self.session_headers(false)).await;
        self.start_get_stream();
        self.state().session_id.is_some()
    }

    /// The response to `id` in an answer (JSON or SSE), without handing anything to the engine.
    async fn read_own_response(
        &self,
        id: &RequestId,
        answer: http::Response<Body>,
    ) -> Option<Result<Box<RawValue>, McpError>> {
        let ours = |message: Result<Message, _>| match message {
            Ok(Message::Response(response)) if response.id.as_ref() == Some(id) => {
                Some(response.result)
            }
            _ => None,
        };
        if !content_type(answer.headers()).starts_with("text/event-stream") {
            return ours(Message::decode(&self.read_body(answer.into_body()).await.ok()?));
        }
        // The stream may stay open after the response: read only up to it.
        let mut body = answer.into_body();
        let mut decoder = SseDecoder::new(self.config.max_message_bytes);
        let mut events = Vec::new();
        while let Some(chunk) = next_chunk(&mut body, self.config.read_timeout).await.ok()? {
            decoder.feed(&chunk, &mut events);
            let found =
                events.drain(..).flatten().find_map(|e| ours(Message::decode(e.data.as_bytes())));
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// Switches to the 2024-11-05 HTTP+SSE transport if the server speaks it: GET on the URL
    /// answers an SSE stream whose first event, `endpoint`, names where to POST. Then the
    /// stream carries every message from the server, and `initialize` is posted again there.
    async fn fall_back_to_sse(self: &Arc<Self>, initialize: Bytes) -> bool {
        let Ok(mut body) = self.open_stream(None).await else { return false };
        let mut decoder = SseDecoder::new(self.config.max_message_bytes);
        let mut events = Vec::new();
        let endpoint = loop {
            match next_chunk(&mut body, Some(self.fallback_wait())).await {
                Ok(Some(chunk)) => decoder.feed(&chunk, &mut events),
                _ => return false,
            }
            let first = events.drain(..).flatten().next();
            if let Some(event) = first {
                if event.event.as_deref() != Some("endpoint") {
                    return false;
                }
                break event.data;
            }
        };
        let Some(uri) = same_origin(&self.config.url, &endpoint) else {
            tracing::warn!(%endpoint, "ignoring an SSE endpoint on another origin");
            return false;
        };
        tracing::debug!(%uri, "the server speaks the 2024-11-05 HTTP+SSE transport");
        self.state().legacy_endpoint = Some(uri);
        let shared = self.clone();
        let reader = tokio::spawn(async move {
            let mut retry = None;
            shared.pump(body, &mut decoder, &mut retry, None, None).await;
            tracing::debug!("the HTTP+SSE stream ended");
        });
        if let Some(old) = self.state().get_stream.replace(reader.abort_handle()) {
            old.abort();
        }
        let posted = self.send(Method::POST, self.base_headers(), initialize).await;
        posted.is_ok_and(|answer| answer.status().is_success())
    }

    /// How long the fallback waits for the `endpoint` event.
    fn fallback_wait(&self) -> Duration {
        self.config.read_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT)
    }

    /// A non-2xx answer: its JSON-RPC error when the body has one, else `HTTP <status>`.
    async fn http_error(&self, exchange: &Exchange, status: StatusCode, ct: &str, body: Body) {
        let bytes = self.read_body(body).await.unwrap_or_default();
        if ct.starts_with("application/json") {
            if let Ok(Message::Response(response)) = Message::decode(&bytes) {
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
        let text: String = String::from_utf8_lossy(&bytes).chars().take(200).collect();
        let data = serde_json::json!({ "status": status.as_u16(), "body": text });
        self.fail(&exchange.id, McpError::internal(message).with_data(data)).await;
    }

    /// Reads a request's SSE answer; in the handshake era a stream that drops before the
    /// response is resumed with GET and `Last-Event-ID` (spec 2025-11-25, resumability).
    async fn read_stream(&self, exchange: &Exchange, body: Body) {
        let mut decoder = SseDecoder::new(self.config.max_message_bytes);
        let mut retry = None;
        let timeout = self.config.read_timeout;
        let mut pumped = self.pump(body, &mut decoder, &mut retry, Some(exchange), timeout).await;
        let mut failures = 0;
        while !pumped.answered && !exchange.modern && failures < MAX_RECONNECTS {
            let Some(last_id) = decoder.last_event_id().map(str::to_owned) else { break };
            tokio::time::sleep(retry.map_or(DEFAULT_RETRY, Duration::from_millis)).await;
            let body = match self.open_stream(Some(&last_id)).await {
                Ok(body) => body,
                Err(reason) => {
                    tracing::debug!(%reason, "resuming the request stream failed");
                    failures += 1;
                    continue;
                }
            };
            pumped = self.pump(body, &mut decoder, &mut retry, Some(exchange), timeout).await;
            failures = if pumped.events > 0 { 0 } else { failures + 1 };
        }
        if !pumped.answered {
            let reason = pumped.failure.unwrap_or_else(|| "the stream ended".to_owned());
            let message =
                format!("no response to request {} on its SSE stream: {reason}", exchange.id);
            self.fail(&exchange.id, McpError::internal(message)).await;
        }
    }

    /// Delivers every message of an SSE body until it ends (or the request is answered).
    async fn pump(
        &self,
        mut body: Body,
        decoder: &mut SseDecoder,
        retry: &mut Option<u64>,
        exchange: Option<&Exchange>,
        timeout: Option<Duration>,
    ) -> Pumped {
        let mut pumped = Pumped::default();
        let mut events = Vec::new();
        loop {
            let chunk = match next_chunk(&mut body, timeout).await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => return pumped,
                Err(reason) => return Pumped { failure: Some(reason), ..pumped },
            };
            decoder.feed(&chunk, &mut events);
            for event in events.drain(..) {
                match event {
                    Ok(event) => {
                        *retry = event.retry.or(*retry);
                        pumped.events += usize::from(event.id.is_some() || !event.data.is_empty());
                        pumped.answered |= self.on_event(exchange, event).await;
                    }
                    Err(too_large) if exchange.is_some() => {
                        return Pumped { failure: Some(too_large.to_string()), ..pumped };
                    }
                    Err(too_large) => tracing::warn!(%too_large, "skipped an SSE event"),
                }
            }
            if pumped.answered {
                return pumped;
            }
        }
    }

    /// One event: its data is a JSON-RPC message unless it is empty (a priming event).
    async fn on_event(&self, exchange: Option<&Exchange>, event: SseEvent) -> bool {
        if event.data.is_empty() || !matches!(event.event.as_deref(), None | Some("message")) {
            return false;
        }
        match Message::decode(event.data.as_bytes()) {
            Ok(message) => self.deliver(exchange, message).await,
            Err(err) => {
                tracing::debug!(%err, "skipped an SSE event that is not a JSON-RPC message");
                false
            }
        }
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
            "initialize" => {
                let result: Option<Value> = serde_json::from_str(raw.get()).ok();
                let version = result.as_ref().and_then(|r| r.get("protocolVersion")?.as_str());
                self.state().handshake_version = version.map(str::to_owned);
            }
            "tools/list" => {
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

    /// Records each tool's header arguments; returns true when an invalid tool was dropped.
    fn learn_tools(&self, result: &mut Map<String, Value>) -> bool {
        let Some(Value::Array(tools)) = result.get_mut("tools") else { return false };
        let before = tools.len();
        let mut state = self.state();
        tools.retain(|tool| {
            let Some(name) = tool.get("name").and_then(Value::as_str) else { return true };
            match header_arguments(tool.get("inputSchema").unwrap_or(&Value::Null)) {
                Ok(headers) => {
                    state.tool_headers.insert(name.to_owned(), headers);
                    true
                }
                Err(reason) => {
                    tracing::warn!(tool = name, %reason, "dropping a tool: invalid x-mcp-header");
                    state.tool_headers.remove(name);
                    false
                }
            }
        });
        tools.len() != before
    }

    async fn fail(&self, id: &RequestId, error: McpError) {
        let _ = self.incoming.send(Ok(Response::error(Some(id.clone()), error).into())).await;
    }

    fn remember_session(&self, headers: &HeaderMap) {
        let mut state = self.state();
        // Spec 2025-11-25: visible ASCII only; anything else is not a session id we can echo.
        let id = headers
            .get(SESSION_ID)
            .filter(|v| v.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b)));
        state.session_id = id.cloned();
        state.handshake_version = None;
    }

    /// The headers of every POST.
    fn base_headers(&self) -> HeaderMap {
        let mut headers = self.config.headers.clone();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        headers
    }

    /// Handshake era: the session id and negotiated version (not on `initialize` itself).
    fn session_headers(&self, initialize: bool) -> HeaderMap {
        let mut headers = self.base_headers();
        if initialize {
            return headers;
        }
        let state = self.state();
        if let Some(id) = &state.session_id {
            headers.insert(SESSION_ID, id.clone());
        }
        if let Some(version) = state.handshake_version.as_deref() {
            if let Ok(value) = HeaderValue::from_str(version) {
                headers.insert(PROTOCOL_VERSION, value);
            }
        }
        headers
    }

    /// 2026-07-28: the request's routing headers, mirrored from its body.
    fn modern_headers(&self, method: &str, version: &str, params: Option<&Value>) -> HeaderMap {
        let mut headers = self.base_headers();
        insert_encoded(&mut headers, PROTOCOL_VERSION, version);
        insert_encoded(&mut headers, MCP_METHOD, method);
        let name_key = match method {
            "tools/call" | "prompts/get" => "name",
            "resources/read" => "uri",
            _ => return headers,
        };
        let Some(name) = params.and_then(|p| p.get(name_key)?.as_str()) else { return headers };
        insert_encoded(&mut headers, MCP_NAME, name);
        if method != "tools/call" {
            return headers;
        }
        let Some(arguments) = params.and_then(|p| p.get("arguments")) else { return headers };
        let state = self.state();
        for (path, token) in state.tool_headers.get(name).into_iter().flatten() {
            let value = path.iter().try_fold(arguments, |node, key| node.get(key));
            let rendered = match value {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Bool(b)) => b.to_string(),
                Some(Value::Number(n)) => n.to_string(),
                _ => continue,
            };
            if let Ok(name) = HeaderName::from_bytes(format!("mcp-param-{token}").as_bytes()) {
                insert_encoded(&mut headers, name, &rendered);
            }
        }
        headers
    }

    /// Starts the standalone GET stream (2025-11-25) for server-initiated messages.
    fn start_get_stream(self: &Arc<Self>) {
        let shared = self.clone();
        let handle = tokio::spawn(async move { shared.listen().await });
        if let Some(old) = self.state().get_stream.replace(handle.abort_handle()) {
            old.abort();
        }
    }

    /// Reads the GET stream, reconnecting after `retry` with `Last-Event-ID`, until the server
    /// says there is none (405), the session is gone, or reconnecting keeps failing.
    async fn listen(&self) {
        let mut decoder = SseDecoder::new(self.config.max_message_bytes);
        let mut retry = None;
        let mut failures = 0;
        while failures < MAX_RECONNECTS {
            let last_id = decoder.last_event_id().map(str::to_owned);
            match self.open_stream(last_id.as_deref()).await {
                Ok(body) => {
                    let pumped = self.pump(body, &mut decoder, &mut retry, None, None).await;
                    failures = if pumped.events > 0 { 0 } else { failures + 1 };
                }
                Err(reason) if reason.starts_with("HTTP 405") || reason.starts_with("HTTP 404") => {
                    tracing::debug!(%reason, "no GET stream");
                    return;
                }
                Err(reason) => {
                    tracing::debug!(%reason, "opening the GET stream failed");
                    failures += 1;
                }
            }
            tokio::time::sleep(retry.map_or(DEFAULT_RETRY, Duration::from_millis)).await;
        }
    }

    /// GET on the endpoint for an SSE stream, resuming after `last_id` when given.
    async fn open_stream(&self, last_id: Option<&str>) -> Result<Body, String> {
        let mut headers = self.session_headers(false);
        headers.remove(CONTENT_TYPE);
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Some(value) = last_id.and_then(|id| HeaderValue::from_str(id).ok()) {
            headers.insert(LAST_EVENT_ID, value);
        }
        let answer =
            self.send(Method::GET, headers, Bytes::new()).await.map_err(|e| e.to_string())?;
        let status = answer.status();
        if !status.is_success() {
            return Err(format!("HTTP {}", status.as_u16()));
        }
        if !content_type(answer.headers()).starts_with("text/event-stream") {
            return Err("the GET answer is not an event stream".to_owned());
        }
        Ok(answer.into_body())
    }

    /// Shutdown: stops every stream and ends the session with DELETE (a 405 is fine).
    async fn close(&self) {
        let session = {
            let mut state = self.state();
            for (_, in_flight) in state.in_flight.drain() {
                in_flight.abort.abort();
            }
            if let Some(stream) = state.get_stream.take() {
                stream.abort();
            }
            state.session_id.clone()
        };
        if session.is_none() {
            return;
        }
        let mut headers = self.session_headers(false);
        headers.remove(CONTENT_TYPE);
        let delete = self.send(Method::DELETE, headers, Bytes::new());
        match tokio::time::timeout(DELETE_TIMEOUT, delete).await {
            Ok(Ok(answer)) => tracing::debug!(status = %answer.status(), "session deleted"),
            Ok(Err(err)) => tracing::debug!(%err, "DELETE of the session failed"),
            Err(_) => tracing::debug!("DELETE of the session timed out"),
        }
    }

    async fn send(
        &self,
        method: Method,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<http::Response<Body>, hyper_util::client::legacy::Error> {
        let mut request = http::Request::new(Full::new(body));
        // Messages go to the legacy transport's POST endpoint once it is in use.
        let legacy = self.state().legacy_endpoint.clone().filter(|_| method == Method::POST);
        *request.uri_mut() = legacy.unwrap_or_else(|| self.config.url.clone());
        *request.method_mut() = method;
        *request.headers_mut() = headers;
        self.http.request(request).await
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

/// The `endpoint` of the 2024-11-05 transport as a URI, if it is on `base`'s origin (a path,
/// or an absolute URL with the same scheme and authority): anything else could send the
/// session to another server.
fn same_origin(base: &Uri, endpoint: &str) -> Option<Uri> {
    let endpoint = endpoint.trim();
    let uri: Uri = if endpoint.starts_with('/') {
        let authority = base.authority()?;
        format!("{}://{authority}{endpoint}", base.scheme_str()?).parse().ok()?
    } else {
        endpoint.parse().ok()?
    };
    (uri.scheme() == base.scheme() && uri.authority() == base.authority()).then_some(uri)
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

/// Inserts a header, wrapping a value that would not survive HTTP as `=?base64?...?=`.
fn insert_encoded(headers: &mut HeaderMap, name: HeaderName, value: &str) {
    if let Ok(value) = HeaderValue::from_str(&encode_header_value(value)) {
        headers.insert(name, value);
    }
}

/// Spec 2026-07-28 (transports, custom headers): printable ASCII without surrounding spaces
/// goes verbatim; anything else (non-ASCII, control characters, edge whitespace, or a value
/// that looks like the sentinel itself) is sent as `=?base64?<UTF-8 in base64>?=`.
pub(crate) fn encode_header_value(value: &str) -> String {
    let printable = value.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=") && value.len() >= 11;
    if printable && value.trim() == value && !sentinel {
        return value.to_owned();
    }
    format!("=?base64?{}?=", crate::base64::encode(value.as_bytes()))
}

/// JSON Schema keywords whose value is one subschema, a list of them, or a map of them. Any
/// of these leaves the pure `properties` chain an `x-mcp-header` must sit on.
const SUBSCHEMA_ONE: &[&str] = &[
    "items",
    "contains",
    "unevaluatedItems",
    "additionalProperties",
    "propertyNames",
    "unevaluatedProperties",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];
const SUBSCHEMA_LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
const SUBSCHEMA_MAP: &[&str] = &["patternProperties", "dependentSchemas", "$defs", "definitions"];

/// The `x-mcp-header` arguments of a tool's input schema as (property path, header token), or
/// why the annotations are invalid (spec 2026-07-28: on a property reached through
/// `properties` only, an RFC 9110 token, on a string, integer or boolean, unique ignoring case).
fn header_arguments(schema: &Value) -> Result<Vec<(Vec<String>, String)>, String> {
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    let mut stack: Vec<(Option<Vec<String>>, &Value)> = vec![(Some(Vec::new()), schema)];
    while let Some((path, node)) = stack.pop() {
        let Value::Object(object) = node else { continue };
        if let Some(token) = object.get("x-mcp-header") {
            let Some(path) = path.clone().filter(|p| !p.is_empty()) else {
                return Err("x-mcp-header outside a chain of `properties`".to_owned());
            };
            let at = path.join(".");
            let Some(token) = token.as_str().filter(|t| is_token(t)) else {
                return Err(format!("property {at:?}: x-mcp-header must be an RFC 9110 token"));
            };
            if !matches!(
                object.get("type").and_then(Value::as_str),
                Some("string" | "integer" | "boolean")
            ) {
                return Err(format!(
                    "property {at:?}: x-mcp-header needs type string, integer or boolean"
                ));
            }
            if !seen.insert(token.to_ascii_lowercase()) {
                return Err(format!("property {at:?}: x-mcp-header {token:?} is used twice"));
            }
            found.push((path, token.to_owned()));
        }
        for (keyword, value) in object {
            match (keyword.as_str(), value) {
                ("properties", Value::Object(properties)) => {
                    for (name, sub) in properties {
                        let sub_path = path.as_ref().map(|p| {
                            let mut sub_path = p.clone();
                            sub_path.push(name.clone());
                            sub_path
                        });
                        stack.push((sub_path, sub));
                    }
                }
                (k, sub) if SUBSCHEMA_ONE.contains(&k) => stack.push((None, sub)),
                (k, Value::Array(subs)) if SUBSCHEMA_LIST.contains(&k) => {
                    stack.extend(subs.iter().map(|sub| (None, sub)));
                }
                (k, Value::Object(subs)) if SUBSCHEMA_MAP.contains(&k) => {
                    stack.extend(subs.values().map(|sub| (None, sub)));
                }
                _ => {}
            }
        }
    }
    Ok(found)
}

/// RFC 9110 token characters: what a header name may contain.
fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn header_values_are_base64_wrapped_only_when_unsafe() {
        let cases = [
            ("us-west1", "us-west1"),
            ("", ""),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("Zürich", "=?base64?WsO8cmljaA==?="),
            (
                "a
b",
                "=?base64?YQpi?=",
            ),
            ("=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="),
        ];
        for (plain, sent) in cases {
            assert_eq!(encode_header_value(plain), sent, "{plain:?}");
        }
    }

    #[test]
    fn header_arguments_follow_properties_only() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"dry": {"type": "boolean", "x-mcp-header": "Dry-Run"}}}
        }});
        let mut found = header_arguments(&schema).expect("valid");
        found.sort();
        assert_eq!(
            found,
            [
                (vec!["opts".into(), "dry".into()], "Dry-Run".into()),
                (vec!["region".into()], "Region".into())
            ]
        );
    }

    #[test]
    fn invalid_header_annotations_are_reported() {
        let cases = [
            json!({"x-mcp-header": "Root"}),
            json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "bad name"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": 1}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}}),
            json!({"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
        ];
        for schema in cases {
            assert!(header_arguments(&schema).is_err(), "{schema}");
        }
    }
}
