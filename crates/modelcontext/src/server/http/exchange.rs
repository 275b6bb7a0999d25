//! One HTTP request in, one HTTP response out: the checks every request passes, the choice
//! of era, the modern (stateless) path, and the shape of the answer (JSON or SSE).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use modelcontext_types::{
    ClientRequest, INVALID_REQUEST, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY,
    MODERN_VERSIONS, McpError, Message, PROTOCOL_VERSION_META_KEY, ParamsError, RequestId,
    RequestMeta, Response as RpcResponse, method,
};
use tokio::sync::mpsc;

use super::caller;
use super::headers::{self, BodyFacts};
use super::{Shared, json_body, sessions};
use crate::engine::{Outcome, Peer, Reply, catching_panics};
use crate::server::{ClientView, Extensions};
use crate::transport::CHANNEL_CAPACITY;

/// Entry point for every request to the endpoint.
pub(crate) async fn handle(shared: Arc<Shared>, request: Request) -> Response {
    if let Some(refused) = check_request(&shared, &request) {
        return refused;
    }
    let extensions =
        match caller::identify(&shared, request.method(), request.uri().path(), request.headers())
            .await
        {
            Ok(extensions) => extensions,
            Err(refused) => return refused,
        };
    let modern_header = is_modern_header(request.headers());
    match *request.method() {
        Method::POST => post(shared, request, extensions).await,
        // 2026-07-28 has no GET stream and no sessions to delete.
        Method::GET | Method::DELETE if modern_header || shared.options.stateless => {
            method_not_allowed()
        }
        Method::GET => sessions::get(&shared, request.headers(), &extensions).await,
        Method::DELETE => sessions::delete(&shared, request.headers(), &extensions).await,
        _ => method_not_allowed(),
    }
}

/// Host first (421: the request was not meant for us), then Origin (403).
pub(crate) fn check_request<B>(shared: &Shared, request: &http::Request<B>) -> Option<Response> {
    let allow = &shared.options.allow;
    let headers = request.headers();
    // HTTP/2 clients name the host in `:authority`, which hyper puts in the URI, and send no
    // `Host` (RFC 9113 §8.3.1); an HTTP/1.1 request's URI has no authority (origin form).
    let host = header_str(headers, header::HOST).or(request.uri().authority().map(|a| a.as_str()));
    if !allow.host_ok(host) {
        let error = McpError::invalid_request("Invalid Host header");
        return Some(error_response(StatusCode::MISDIRECTED_REQUEST, None, error));
    }
    if !allow.origin_ok(header_str(headers, header::ORIGIN)) {
        let error = McpError::invalid_request("Invalid Origin header");
        return Some(error_response(StatusCode::FORBIDDEN, None, error));
    }
    None
}

pub(crate) fn header_str(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn is_modern_header(headers: &HeaderMap) -> bool {
    header_str(headers, "mcp-protocol-version").is_some_and(|v| MODERN_VERSIONS.contains(&v.trim()))
}

async fn post(shared: Arc<Shared>, request: Request, extensions: Extensions) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = match read_bytes(&shared, &parts.headers, body).await {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    let headers = parts.headers;
    // A JSON-RPC batch: only a 2025-03-26 session takes one (no later revision has them);
    // without a session it is refused below like any other array.
    let in_session = headers.contains_key(sessions::SESSION_HEADER);
    if is_batch(&bytes) && in_session && !is_modern_header(&headers) && !shared.options.stateless {
        return super::batch::post(&shared, &headers, &bytes, extensions).await;
    }
    let message = match decode(&shared, &bytes) {
        Ok(message) => message,
        Err(refused) => return refused,
    };
    if is_modern_header(&headers) || claims_modern(&message) {
        modern(&shared, &headers, message, extensions).await
    } else if shared.options.stateless {
        super::stateless::post(&shared, &headers, message, extensions).await
    } else {
        sessions::post(&shared, &headers, message, extensions).await
    }
}

/// The one JSON-RPC message of a POST body: 415 / 406 / 408 / 413 / 400 with the reason
/// otherwise.
pub(crate) async fn read_message(shared: &Shared, request: Request) -> Result<Message, Response> {
    let (parts, body) = request.into_parts();
    read_body(shared, &parts.headers, body).await
}

/// [`read_message`] for a request already split into its parts.
async fn read_body(
    shared: &Shared,
    headers: &HeaderMap,
    body: axum::body::Body,
) -> Result<Message, Response> {
    decode(shared, &read_bytes(shared, headers, body).await?)
}

/// The one JSON-RPC message of a body, or 400 with the parse error.
#[allow(clippy::result_large_err)] // the refusal is the HTTP answer itself, on a cold path
fn decode(shared: &Shared, bytes: &[u8]) -> Result<Message, Response> {
    Message::decode_with_depth(bytes, shared.server.json_depth_limit())
        .map_err(|err| rpc_response(StatusCode::BAD_REQUEST, &err.to_response()))
}

/// Whether a body is a JSON array (a JSON-RPC batch).
fn is_batch(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
}

/// A POST body's bytes, after the content checks: 415 / 406 / 408 / 413 otherwise.
async fn read_bytes(
    shared: &Shared,
    headers: &HeaderMap,
    body: axum::body::Body,
) -> Result<Bytes, Response> {
    if let Some(refused) = check_content_headers(headers) {
        return Err(refused);
    }
    let (limit, timeout) = (shared.options.max_body_bytes, shared.options.body_read_timeout);
    let Ok(read) = tokio::time::timeout(timeout, axum::body::to_bytes(body, limit)).await else {
        let error =
            McpError::invalid_request(format!("Request body not received within {timeout:?}"));
        return Err(error_response(StatusCode::REQUEST_TIMEOUT, None, error));
    };
    read.map_err(|_| {
        let error = McpError::invalid_request(format!("Request body exceeds {limit} bytes"));
        error_response(StatusCode::PAYLOAD_TOO_LARGE, None, error)
    })
}

/// 415 for a body that is not JSON; 406 when the client accepts neither JSON nor SSE.
fn check_content_headers(headers: &HeaderMap) -> Option<Response> {
    let content_type = header_str(headers, header::CONTENT_TYPE).unwrap_or("");
    if !content_type.trim_start().to_ascii_lowercase().starts_with("application/json") {
        let error = McpError::invalid_request("Content-Type must be application/json");
        return Some(error_response(StatusCode::UNSUPPORTED_MEDIA_TYPE, None, error));
    }
    if let Some(accept) = header_str(headers, header::ACCEPT) {
        let accept = accept.to_ascii_lowercase();
        let usable = ["application/json", "text/event-stream", "*/*", "application/*", "text/*"];
        if !usable.iter().any(|media| accept.contains(media)) {
            let error = McpError::invalid_request(
                "Accept must allow application/json and text/event-stream",
            );
            return Some(error_response(StatusCode::NOT_ACCEPTABLE, None, error));
        }
    }
    None
}

/// A request that carries the modern envelope (even a malformed or unsupported one) or uses
/// a modern-only method is answered on the stateless path, where its errors belong.
fn claims_modern(message: &Message) -> bool {
    let Message::Request(request) = message else { return false };
    if matches!(request.method.as_str(), method::SERVER_DISCOVER | method::SUBSCRIPTIONS_LISTEN) {
        return true;
    }
    let Some(params) = &request.params else { return false };
    // Only `_meta`'s version key is read; serde skips the rest without building it.
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<EnvelopeVersion>,
    }
    #[derive(serde::Deserialize)]
    struct EnvelopeVersion {
        // PROTOCOL_VERSION_META_KEY (serde's rename takes a literal only).
        #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
        #[serde(deserialize_with = "present")]
        version: bool,
    }
    fn present<'de, D: serde::Deserializer<'de>>(de: D) -> Result<bool, D::Error> {
        <serde::de::IgnoredAny as serde::Deserialize>::deserialize(de).map(|_| true)
    }
    serde_json::from_str::<Params>(params.get())
        .is_ok_and(|params| params.meta.is_some_and(|meta| meta.version))
}

/// The stateless path of 2026-07-28: the checks, then the handler, driven by this task and,
/// when it sends anything before its result, by the response body. No session, no engine, no
/// task: the request is parsed once, and closing the response drops (cancels) the handler.
async fn modern(
    shared: &Shared,
    headers: &HeaderMap,
    message: Message,
    extensions: Extensions,
) -> Response {
    let request = match message {
        Message::Request(request) => request,
        // Cancellation on HTTP is closing the stream; nothing else is a valid notification.
        Message::Notification(_) => return accepted(),
        Message::Response(_) | Message::BatchResponse(_) => {
            let error = McpError::invalid_request("Clients do not send responses in 2026-07-28");
            return error_response(StatusCode::BAD_REQUEST, None, error);
        }
    };
    let id = request.id.clone();
    let Admitted { request, client } = match admit_modern(shared, headers, request) {
        Ok(admitted) => admitted,
        Err((status, error)) => return error_response(status, Some(id), error),
    };
    if let ClientRequest::CallTool(params) = &request {
        if let Err(refused) = caller::check_tool_scopes(shared, &extensions, &params.name) {
            return refused;
        }
    }
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    let peer = Peer::new(tx);
    let extensions = Arc::new(extensions);
    let reply = shared.server.answer_stateless(request, id.clone(), client, &peer, extensions);
    // The handler's context holds its own clone: the channel ends when the handler does.
    drop(peer);
    answer_reply(shared, reply, rx, id).await
}

/// The HTTP answer to a request answered without a session: at once, or by driving its
/// handler (as JSON only, in JSON response mode).
pub(crate) async fn answer_reply(
    shared: &Shared,
    reply: Reply,
    rx: mpsc::Receiver<Message>,
    id: RequestId,
) -> Response {
    match reply {
        Reply::Now(outcome) => rpc_answer(id, outcome),
        Reply::Stream(_) if shared.options.json_response => {
            let error = McpError::invalid_request(
                "This endpoint answers with JSON only (JSON response mode): a stream such as \
                 subscriptions/listen cannot be served",
            );
            error_response(StatusCode::BAD_REQUEST, Some(id), error)
        }
        Reply::Later(future) if shared.options.json_response => {
            rpc_answer(id.clone(), drive_to_json(catching_panics(future), rx).await)
        }
        Reply::Later(future) | Reply::Stream(future) => {
            drive(catching_panics(future), rx, id).await
        }
    }
}

/// Runs a handler to its result, dropping what it sends before it (JSON response mode has no
/// stream to carry it); draining keeps a handler that sends a lot from waiting on the channel.
async fn drive_to_json<F>(mut handler: F, mut sent: mpsc::Receiver<Message>) -> Outcome
where
    F: Future<Output = Outcome> + Send + Unpin,
{
    loop {
        tokio::select! {
            biased;
            outcome = &mut handler => return outcome,
            Some(dropped) = sent.recv() => {
                tracing::debug!(message = %dropped.encode(), "JSON response mode: not sent");
            }
        }
    }
}

/// A 2026-07-28 request that passed every check, parsed into the type its method names.
struct Admitted {
    request: ClientRequest,
    client: ClientView,
}

/// Everything the HTTP layer must refuse before the request reaches the server, with the
/// status the spec pairs with each error.
fn admit_modern(
    shared: &Shared,
    headers: &HeaderMap,
    request: modelcontext_types::Request,
) -> Result<Admitted, (StatusCode, McpError)> {
    // A removed method is not found whatever its params, so it is refused before parsing;
    // over HTTP that includes `initialize` (spec: 404 + -32601).
    if request.method == method::INITIALIZE || crate::server::removed_in_modern(&request.method) {
        return Err((StatusCode::NOT_FOUND, McpError::method_not_found(&request.method)));
    }
    let parsed = match ClientRequest::parse(&request.method, request.params.as_deref()) {
        Ok(parsed) => parsed,
        Err(ParamsError::UnknownMethod) => {
            return Err((StatusCode::NOT_FOUND, McpError::method_not_found(&request.method)));
        }
        Err(err) => {
            let message = format!("Invalid params for '{}': {err}", request.method);
            return Err((StatusCode::BAD_REQUEST, McpError::invalid_params(message)));
        }
    };
    let meta = parsed.meta();
    let Some(version) = meta.and_then(|m| m.protocol_version.as_deref()) else {
        return Err((StatusCode::BAD_REQUEST, envelope_error(meta)));
    };
    // The tool's definition outlives the check: a concurrent removal cannot pull it away.
    let tool = match &parsed {
        ClientRequest::CallTool(params) => shared.server.tool_entry(&params.name),
        _ => None,
    };
    let facts = body_facts(version, &parsed, tool.as_ref().map(|entry| &entry.mirrored[..]));
    headers::check(headers, &facts).map_err(|e| (StatusCode::BAD_REQUEST, e))?;
    let client = crate::server::modern_view(meta).map_err(|e| (StatusCode::BAD_REQUEST, e))?;
    Ok(Admitted { request: parsed, client })
}

fn envelope_error(meta: Option<&RequestMeta>) -> McpError {
    crate::server::modern_view(meta).err().unwrap_or_else(|| {
        McpError::invalid_params(format!(
            "Missing required _meta field '{PROTOCOL_VERSION_META_KEY}'"
        ))
    })
}

fn body_facts<'a>(
    version: &'a str,
    request: &'a ClientRequest,
    mirrored: Option<&'a [modelcontext_types::MirroredArgument]>,
) -> BodyFacts<'a> {
    let (name, tool_call) = match request {
        ClientRequest::CallTool(params) => {
            let call = mirrored.zip(params.arguments.as_ref());
            (Some(params.name.as_str()), call)
        }
        ClientRequest::ReadResource(params) => (Some(params.uri.as_str()), None),
        ClientRequest::GetPrompt(params) => (Some(params.name.as_str()), None),
        // The tasks extension routes tasks/* by `Mcp-Name` = the task id.
        other => (other.mcp_name(), None),
    };
    BodyFacts { version, method: request.method(), name, tool_call }
}

/// The answer to request `id` as one JSON body.
pub(crate) fn rpc_answer(id: RequestId, outcome: Outcome) -> Response {
    let response = RpcResponse { id: Some(id), result: outcome };
    rpc_response(status_of(&response), &response)
}

/// Runs a stateless request's handler: one JSON body when its result comes before anything
/// else, an SSE stream when it sends notifications (progress, logs, a listen stream's
/// changes) first. The stream's body owns the handler from then on, so a client that closes
/// the stream drops it (spec 2026-07-28: closing the stream is the cancellation).
async fn drive<F>(mut handler: F, mut sent: mpsc::Receiver<Message>, id: RequestId) -> Response
where
    F: Future<Output = Outcome> + Send + Unpin + 'static,
{
    // The handler first: most finish in this poll, and what they sent is then already queued.
    let first = tokio::select! {
        biased;
        outcome = &mut handler => match sent.try_recv() {
            Ok(first) => return sse_response(finished_stream(first, sent, id, outcome)),
            Err(_) => return rpc_answer(id, outcome),
        },
        Some(first) = sent.recv() => first,
    };
    let head = futures_util::stream::once(std::future::ready(Ok(sse_message(first))));
    let rest = futures_util::stream::unfold(Some((handler, sent, id)), next_event);
    sse_response(Body::from_stream(head.chain(rest)))
}

/// The rest of a driven handler's SSE stream: each message it sends as an event, then, once
/// it finishes, whatever it sent last and its result in one chunk; then the end.
async fn next_event<F>(
    state: Option<(F, mpsc::Receiver<Message>, RequestId)>,
) -> Option<(Result<Bytes, Infallible>, Option<(F, mpsc::Receiver<Message>, RequestId)>)>
where
    F: Future<Output = Outcome> + Send + Unpin,
{
    let (mut handler, mut sent, id) = state?;
    tokio::select! {
        biased;
        outcome = &mut handler => Some((Ok(last_events(&mut sent, id, outcome)), None)),
        Some(message) = sent.recv() => Some((Ok(sse_message(message)), Some((handler, sent, id)))),
    }
}

/// A stream for a handler that finished with messages still queued: those, then its result.
fn finished_stream(
    first: Message,
    mut sent: mpsc::Receiver<Message>,
    id: RequestId,
    outcome: Outcome,
) -> Body {
    let mut bytes = sse_message(first).to_vec();
    bytes.extend_from_slice(&last_events(&mut sent, id, outcome));
    Body::from(bytes)
}

/// What is still queued, then the response, as SSE events.
fn last_events(sent: &mut mpsc::Receiver<Message>, id: RequestId, outcome: Outcome) -> Bytes {
    let mut bytes = Vec::new();
    while let Ok(message) = sent.try_recv() {
        bytes.extend_from_slice(&sse_message(message));
    }
    let response = RpcResponse { id: Some(id), result: outcome };
    bytes.extend_from_slice(&sse_message(Message::Response(response)));
    Bytes::from(bytes)
}

/// One message as an SSE event without an id (a stateless stream cannot be resumed).
fn sse_message(message: Message) -> Bytes {
    sse_event(&Delivery { event_id: None, message })
}

/// Keeps the exchange alive; dropped with the response body, so a client that goes away
/// cancels the handler (spec 2026-07-28: closing the stream is the cancellation).
pub(crate) struct Guard<T>(pub Option<T>);

/// One message for an HTTP stream, with its SSE event id when the stream is resumable.
pub(crate) struct Delivery {
    pub event_id: Option<String>,
    pub message: Message,
}

impl From<Message> for Delivery {
    fn from(message: Message) -> Delivery {
        Delivery { event_id: None, message }
    }
}

impl From<Box<Delivery>> for Delivery {
    fn from(delivery: Box<Delivery>) -> Delivery {
        *delivery
    }
}

/// The sending end of one HTTP stream of a session. Deliveries are boxed: a channel allocates
/// its first block of 32 slots when it is made, and a session holds its GET stream's channel
/// for as long as the stream is open, idle or not (5 KiB of slots unboxed, 256 bytes boxed).
pub(crate) type StreamTx = mpsc::Sender<Box<Delivery>>;

/// The receiving end of [`StreamTx`], read by the stream's response body.
pub(crate) type StreamRx = mpsc::Receiver<Box<Delivery>>;

/// Turns the messages for request `id` into the HTTP answer: one JSON body when the response
/// comes first, an SSE stream when notifications (progress, logs) or server requests come
/// before it. `priming` is the id of the priming event a resumable stream starts with.
pub(crate) async fn answer<D, T>(
    mut rx: mpsc::Receiver<D>,
    id: RequestId,
    priming: Option<String>,
    guard: Guard<T>,
) -> Response
where
    D: Into<Delivery> + Send + 'static,
    T: Send + 'static,
{
    let Some(first) = rx.recv().await.map(Into::into) else {
        let error = McpError::internal("The request ended without an answer");
        return error_response(StatusCode::INTERNAL_SERVER_ERROR, Some(id), error);
    };
    if let Message::Response(response) = &first.message {
        return rpc_response(status_of(response), response);
    }
    let mut prefix = Vec::new();
    if let Some(priming) = priming {
        // Spec 2025-11-25: an event with an id and empty data first, so even a stream that
        // drops before its first message can be resumed; `retry` paces the reconnection.
        crate::transport::sse::write_event(&mut prefix, Some(&priming), None, "");
        crate::transport::sse::retry(&mut prefix, RETRY_MS);
    }
    prefix.extend_from_slice(&sse_event(&first));
    let head = futures_util::stream::once(async move {
        Ok::<_, std::convert::Infallible>(Bytes::from(prefix))
    });
    let rest = sse_stream(rx, Some(id), None, guard);
    sse_response(Body::from_stream(head.chain(rest).boxed()))
}

/// How long a client waits before reconnecting a dropped stream, in milliseconds.
pub(crate) const RETRY_MS: u64 = 1000;

/// The rest of an SSE stream: each delivery as an event, until the response to `end_on`
/// (never, for `None`), with a `:` comment after `keep_alive` of silence if given.
pub(crate) fn sse_stream<D, T>(
    rx: mpsc::Receiver<D>,
    end_on: Option<RequestId>,
    keep_alive: Option<std::time::Duration>,
    guard: Guard<T>,
) -> impl futures_util::Stream<Item = Result<Bytes, std::convert::Infallible>> + Send + 'static
where
    D: Into<Delivery> + Send + 'static,
    T: Send + 'static,
{
    futures_util::stream::unfold((rx, guard, false), move |(mut rx, guard, done)| {
        let end_on = end_on.clone();
        async move {
            if done {
                return None;
            }
            let next = match keep_alive {
                Some(period) => match tokio::time::timeout(period, rx.recv()).await {
                    Ok(next) => next,
                    Err(_) => {
                        let mut buf = Vec::new();
                        crate::transport::sse::comment(&mut buf, "keep-alive");
                        return Some((Ok(Bytes::from(buf)), (rx, guard, false)));
                    }
                },
                None => rx.recv().await,
            };
            let delivery: Delivery = next?.into();
            let finished = end_on.is_some()
                && matches!(&delivery.message, Message::Response(r) if r.id == end_on);
            Some((Ok(sse_event(&delivery)), (rx, guard, finished)))
        }
    })
}

/// One message as one SSE event (messages are single-line JSON, so one `data:` line).
pub(crate) fn sse_event(delivery: &Delivery) -> Bytes {
    let mut buf = Vec::with_capacity(256);
    let data = delivery.message.encode();
    let id = delivery.event_id.as_deref();
    crate::transport::sse::write_event(&mut buf, id, Some("message"), &data);
    Bytes::from(buf)
}

pub(crate) fn sse_response(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// 404 for an unknown method, 400 for a missing client capability, otherwise 200: a JSON-RPC
/// error from a handler (an unknown resource, a tool's own `McpError`) is a normal answer.
fn status_of(response: &RpcResponse) -> StatusCode {
    match &response.result {
        Err(e) if e.code == METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        Err(e) if e.code == MISSING_REQUIRED_CLIENT_CAPABILITY => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

pub(crate) fn rpc_response(status: StatusCode, response: &RpcResponse) -> Response {
    let mut http = Response::new(json_body(Message::Response(response.clone()).encode()));
    *http.status_mut() = status;
    http.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    http
}

pub(crate) fn error_response(
    status: StatusCode,
    id: Option<RequestId>,
    error: McpError,
) -> Response {
    rpc_response(status, &RpcResponse::error(id, error))
}

pub(crate) fn accepted() -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

fn method_not_allowed() -> Response {
    let error = McpError::new(INVALID_REQUEST, "Method not allowed");
    let mut response = error_response(StatusCode::METHOD_NOT_ALLOWED, None, error);
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
    response
}
