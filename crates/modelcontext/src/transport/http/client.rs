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
//! server-initiated messages, a dropped stream resumes with `Last-Event-ID`, and closing the
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
    CONNECTION_CLOSED, McpError, Message, Notification, PROTOCOL_VERSION_META_KEY, RequestId,
    Response, to_raw,
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
#[derive(Debug, Clone)]
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
        let parsed: Uri = url.parse().map_err(|e| invalid_input(format!("invalid URL {url:?}: {e}")))?;
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
        let shared = Arc::new(Shared { http, config: self, incoming: in_tx, state: Mutex::default() });
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
        let exchange =
            Exchange { id: request.id.clone(), method: request.method.clone(), modern };
        let body = Message::Request(request).encode();
        let shared = self.clone();
        let mut state = self.state();
        state.next_task += 1;
        let task = state.next_task;
        let handle = tokio::spawn(async move {
            shared.exchange(&exchange, headers, body).await;
            shared.finished(&exchange.id, task);
        });
        let id = request_id_of(&handle_id(&state, task));
        drop(id);
        state.in_flight.insert(
            exchange_id_placeholder(),
            InFlight { task, abort: handle.abort_handle(), modern },
        );
    }
}
