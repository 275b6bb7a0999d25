//! Handshake-era (2025-11-25 and older) sessions over Streamable HTTP.
//!
//! `initialize` without a session starts one: an engine with its own [`ServerSession`] state,
//! and an id minted from the OS CSPRNG, returned in `Mcp-Session-Id`. Later POSTs feed the
//! engine; what it sends back is routed to an HTTP stream:
//! - a response goes to the POST that carried its request;
//! - a progress notification goes to the POST whose request carried its token;
//! - anything else the server initiates (log messages, requests to the client) goes to the
//!   most recent POST still waiting, else to the standalone GET stream.
//!
//! [`ServerSession`]: crate::server
//!
//! Known limits: no resumability (`Last-Event-ID` is not replayed) and no priming events.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode};
use modelcontext_types::{HANDSHAKE_VERSIONS, McpError, Message, Request, RequestId};
use serde_json::Value;
use tokio::sync::mpsc;

use super::Shared;
use super::exchange::{
    Guard, accepted, answer, error_response, header_str, sse_event, sse_response,
};
use crate::engine::Stop;
use crate::transport::{CHANNEL_CAPACITY, Connection, Incoming};

const SESSION_HEADER: &str = "mcp-session-id";

/// Every live session of one endpoint.
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, Arc<Session>>>,
    max: usize,
    idle: Duration,
}

struct Session {
    incoming: mpsc::Sender<Incoming>,
    routes: Arc<Mutex<Routes>>,
    last_seen: Mutex<Instant>,
    /// Dropped with the session: ends the engine and aborts its handlers.
    _stop: Stop,
}

/// Where the engine's output goes.
#[derive(Default)]
struct Routes {
    waiting: HashMap<RequestId, mpsc::Sender<Message>>,
    /// Request ids in arrival order, to find the most recent one still waiting.
    recent: Vec<RequestId>,
    progress: HashMap<String, RequestId>,
    standalone: Option<mpsc::Sender<Message>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Poisoning only means a panic elsewhere mid-update; the maps stay usable.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Sessions {
    pub(crate) fn new(max: usize, idle: Duration) -> Sessions {
        Sessions { map: Mutex::new(HashMap::new()), max, idle }
    }

    /// The live session `id`; an expired one is forgotten here.
    fn get(&self, id: &str) -> Option<Arc<Session>> {
        let mut map = lock(&self.map);
        let session = map.get(id)?.clone();
        let mut last_seen = lock(&session.last_seen);
        if last_seen.elapsed() > self.idle {
            drop(last_seen);
            map.remove(id);
            return None;
        }
        *last_seen = Instant::now();
        drop(last_seen);
        Some(session)
    }

    /// Registers a new session, after dropping expired ones; `None` when full.
    fn insert(&self, id: String, session: Arc<Session>) -> bool {
        let mut map = lock(&self.map);
        map.retain(|_, s| lock(&s.last_seen).elapsed() <= self.idle);
        if map.len() >= self.max {
            return false;
        }
        map.insert(id, session);
        true
    }

    fn remove(&self, id: &str) -> bool {
        lock(&self.map).remove(id).is_some()
    }
}

/// A session id: 32 random bytes as hex, visible ASCII as the spec requires.
fn mint_id() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A handshake-era POST.
pub(crate) async fn post(shared: &Shared, headers: &HeaderMap, message: Message) -> Response {
    if let Some(version) = header_str(headers, "mcp-protocol-version") {
        if !HANDSHAKE_VERSIONS.contains(&version.trim()) {
            let error =
                McpError::invalid_request(format!("Unsupported MCP-Protocol-Version: {version}"));
            return error_response(StatusCode::BAD_REQUEST, None, error);
        }
    }
    match (header_str(headers, SESSION_HEADER), message) {
        (None, Message::Request(request)) if request.method == "initialize" => {
            initialize(shared, request).await
        }
        (None, _) => {
            let error = McpError::invalid_request(
                "Missing Mcp-Session-Id header: send initialize first (or use the 2026-07-28 _meta envelope)",
            );
            error_response(StatusCode::BAD_REQUEST, None, error)
        }
        (Some(id), message) => match shared.sessions.get(id) {
            Some(session) => session.post(message).await,
            None => session_not_found(),
        },
    }
}

fn session_not_found() -> Response {
    error_response(StatusCode::NOT_FOUND, None, McpError::invalid_request("Session not found"))
}

async fn initialize(shared: &Shared, request: Request) -> Response {
    let Some(id) = mint_id() else {
        let error = McpError::internal("No randomness available for a session id");
        return error_response(StatusCode::INTERNAL_SERVER_ERROR, Some(request.id), error);
    };
    let session = Arc::new(Session::start(shared));
    if !shared.sessions.insert(id.clone(), session.clone()) {
        let error = McpError::internal("Too many sessions; try again later");
        return error_response(StatusCode::SERVICE_UNAVAILABLE, Some(request.id), error);
    }
    let mut response = session.post(Message::Request(request)).await;
    if response.status().is_success() {
        if let Ok(value) = HeaderValue::from_str(&id) {
            response.headers_mut().insert(SESSION_HEADER, value);
        }
    } else {
        shared.sessions.remove(&id);
    }
    response
}

impl Session {
    fn start(shared: &Shared) -> Session {
        let (in_tx, in_rx) = mpsc::channel(CHANNEL_CAPACITY);
        let (out_tx, out_rx) = mpsc::channel(CHANNEL_CAPACITY);
        let connection = Connection { sender: out_tx, receiver: in_rx, shutdown: None };
        let (run, stop) = shared.server.start_session(connection);
        tokio::spawn(run);
        let routes = Arc::new(Mutex::new(Routes::default()));
        tokio::spawn(route(out_rx, routes.clone()));
        Session { incoming: in_tx, routes, last_seen: Mutex::new(Instant::now()), _stop: stop }
    }

    async fn post(&self, message: Message) -> Response {
        let Message::Request(request) = message else {
            // Notifications and the client's answers to our requests: accepted, no body.
            return match self.incoming.send(Ok(message)).await {
                Ok(()) => accepted(),
                Err(_) => session_not_found(),
            };
        };
        let id = request.id.clone();
        let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
        self.register(&request, tx);
        if self.incoming.send(Ok(Message::Request(request))).await.is_err() {
            return session_not_found();
        }
        // Spec 2025-11-25: a dropped connection is not a cancellation, so nothing to guard.
        answer(rx, id, Guard(None::<()>)).await
    }

    fn register(&self, request: &Request, tx: mpsc::Sender<Message>) {
        let mut routes = lock(&self.routes);
        if let Some(token) = progress_token(request) {
            routes.progress.insert(token, request.id.clone());
        }
        routes.recent.push(request.id.clone());
        routes.waiting.insert(request.id.clone(), tx);
    }
}

fn progress_token(request: &Request) -> Option<String> {
    let params: Value = serde_json::from_str(request.params.as_ref()?.get()).ok()?;
    Some(params.get("_meta")?.get("progressToken")?.to_string())
}

/// Delivers the engine's output to the right HTTP stream.
async fn route(mut output: mpsc::Receiver<Message>, routes: Arc<Mutex<Routes>>) {
    while let Some(message) = output.recv().await {
        let target = lock(&routes).target_for(&message);
        match target {
            Some(tx) => {
                let _ = tx.send(message).await;
            }
            None => tracing::debug!("no open stream for a server message; dropped"),
        }
    }
}

impl Routes {
    fn target_for(&mut self, message: &Message) -> Option<mpsc::Sender<Message>> {
        match message {
            Message::Response(response) => {
                let id = response.id.as_ref()?;
                self.recent.retain(|r| r != id);
                self.progress.retain(|_, r| r != id);
                self.waiting.remove(id)
            }
            Message::Notification(n) if n.method == "notifications/progress" => {
                let token = progress_token_of(n.params.as_deref())?;
                let id = self.progress.get(&token)?;
                self.waiting.get(id).cloned()
            }
            _ => self.latest_waiting().or_else(|| self.standalone.clone()),
        }
    }

    fn latest_waiting(&self) -> Option<mpsc::Sender<Message>> {
        self.recent
            .iter()
            .rev()
            .find_map(|id| self.waiting.get(id).filter(|tx| !tx.is_closed()).cloned())
    }
}

fn progress_token_of(params: Option<&serde_json::value::RawValue>) -> Option<String> {
    let params: Value = serde_json::from_str(params?.get()).ok()?;
    Some(params.get("progressToken")?.to_string())
}

/// GET: the standalone SSE stream for server-initiated messages of a session.
pub(crate) async fn get(shared: &Shared, headers: &HeaderMap) -> Response {
    let Some(id) = header_str(headers, SESSION_HEADER) else {
        let error = McpError::invalid_request("Missing Mcp-Session-Id header");
        return error_response(StatusCode::BAD_REQUEST, None, error);
    };
    let Some(session) = shared.sessions.get(id) else { return session_not_found() };
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    {
        let mut routes = lock(&session.routes);
        if routes.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
            let error = McpError::invalid_request("This session already has a GET stream");
            return error_response(StatusCode::CONFLICT, None, error);
        }
        routes.standalone = Some(tx);
    }
    sse_response(standalone_body(rx, shared.options.keep_alive))
}

/// Server messages as SSE events, with a `:` comment whenever the stream has been quiet.
fn standalone_body(rx: mpsc::Receiver<Message>, keep_alive: Duration) -> Body {
    let stream = futures_util::stream::unfold(rx, move |mut rx| async move {
        let bytes = match tokio::time::timeout(keep_alive, rx.recv()).await {
            Ok(Some(message)) => sse_event(&message),
            Ok(None) => return None,
            Err(_) => {
                let mut buf = Vec::new();
                crate::transport::sse::comment(&mut buf, "keep-alive");
                Bytes::from(buf)
            }
        };
        Some((Ok::<_, std::convert::Infallible>(bytes), rx))
    });
    Body::from_stream(stream)
}

/// DELETE: ends a session; later requests with its id get 404.
pub(crate) fn delete(shared: &Shared, headers: &HeaderMap) -> Response {
    let Some(id) = header_str(headers, SESSION_HEADER) else {
        let error = McpError::invalid_request("Missing Mcp-Session-Id header");
        return error_response(StatusCode::BAD_REQUEST, None, error);
    };
    if shared.sessions.remove(id) {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::OK;
        response
    } else {
        session_not_found()
    }
}
