//! The stateless path of 2026-07-28: a request that claims the modern era is checked (removed
//! methods, params, the envelope, the `Mcp-*` header mirrors, tool scopes), answered without
//! a session or an engine, and its answer shaped as one JSON body or an SSE stream.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderMap, StatusCode};
use modelcontext_types::{
    ClientRequest, McpError, Message, PROTOCOL_VERSION_META_KEY, RequestId, RequestMeta,
    Response as RpcResponse, method,
};
use tokio::sync::mpsc;

use super::Shared;
use super::body::may_carry_meta;
use super::caller;
use super::headers::{self, BodyFacts};
use super::respond::{accepted, error_response, refusal_status, rpc_answer};
use super::stream::{sse_message, sse_response};
use crate::engine::{Outcome, Peer, Reply, catching_panics};
use crate::server::Extensions;
use crate::server::front_end::{ClientView, modern_view, parse_request, removed_in_modern};
use crate::transport::CHANNEL_CAPACITY;

/// A request that carries the modern envelope (even a malformed or unsupported one) or uses
/// a modern-only method is answered on the stateless path, where its errors belong.
pub(crate) fn claims_modern(message: &Message) -> bool {
    let Message::Request(request) = message else { return false };
    if matches!(request.method.as_str(), method::SERVER_DISCOVER | method::SUBSCRIPTIONS_LISTEN) {
        return true;
    }
    let Some(params) = &request.params else { return false };
    if !may_carry_meta(params.get()) {
        return false;
    }
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
pub(crate) async fn modern(
    shared: &Shared,
    headers: HeaderMap,
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
    let Admitted { request, client } = match admit_modern(shared, &headers, request) {
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
    let extensions = Arc::new(caller::with_headers(extensions, headers));
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
        Reply::Stream(_) if shared.options.streams.json_response => {
            let error = McpError::invalid_request(
                "This endpoint answers with JSON only (JSON response mode): a stream such as \
                 subscriptions/listen cannot be served",
            );
            error_response(StatusCode::BAD_REQUEST, Some(id), error)
        }
        Reply::Later(future) if shared.options.streams.json_response => {
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
    if request.method == method::INITIALIZE || removed_in_modern(&request.method) {
        return Err((StatusCode::NOT_FOUND, McpError::method_not_found(&request.method)));
    }
    let parsed = parse_request(&request.method, request.params.as_deref())
        .map_err(|refused| (refusal_status(&refused), refused))?;
    let meta = parsed.meta();
    let Some(version) = meta.and_then(|m| m.protocol_version.as_deref()) else {
        return Err((StatusCode::BAD_REQUEST, envelope_error(meta)));
    };
    // The tool's definition outlives the check: a concurrent removal cannot pull it away.
    let tool = match &parsed {
        ClientRequest::CallTool(params) => shared.server.tool_entry(&params.name),
        _ => None,
    };
    let mirrored = tool.as_deref().map(|tool| tool.listing.mirrors.as_slice());
    let facts = body_facts(version, &parsed, mirrored);
    headers::check(headers, &facts).map_err(|e| (StatusCode::BAD_REQUEST, e))?;
    let client = modern_view(meta).map_err(|e| (StatusCode::BAD_REQUEST, e))?;
    Ok(Admitted { request: parsed, client })
}

fn envelope_error(meta: Option<&RequestMeta>) -> McpError {
    modern_view(meta).err().unwrap_or_else(|| {
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
