//! The deprecated HTTP+SSE transport of 2024-11-05, for old clients (off by default; turn it on
//! with [`HttpOptions::legacy_sse`](super::HttpOptions)).
//!
//! `GET /sse` opens a session: the first event (`endpoint`) names the URL to POST to,
//! `/messages?sessionId=<id>`; every POST there is answered `202 Accepted`, and every message
//! the server sends, responses included, arrives on the SSE stream. Sessions, Host/Origin
//! checks and limits are the same as for Streamable HTTP.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use http::StatusCode;
use modelcontext_types::{McpError, Message};

use super::body::read_message;
use super::respond::{accepted, error_response};
use super::security::check_request;
use super::sessions::Session;
use super::stream::{BodyGuard, sse_response, sse_stream};
use super::{Shared, caller};

/// The routes of the legacy transport, to merge into the endpoint's router.
pub(crate) fn routes(shared: Arc<Shared>) -> axum::Router {
    axum::Router::new()
        .route("/sse", axum::routing::get(open))
        .route("/messages", axum::routing::post(message))
        .with_state(shared)
}

async fn open(State(shared): State<Arc<Shared>>, request: Request) -> Response {
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
    let slot = match super::sessions::endpoint_stream_slot(&shared) {
        Ok(slot) => slot,
        Err(refused) => return refused,
    };
    let extensions = caller::with_headers(extensions, request.headers().clone());
    let Some((id, rx)) = Session::open_legacy(&shared, extensions) else {
        let error = McpError::internal("Too many sessions; try again later");
        return error_response(StatusCode::SERVICE_UNAVAILABLE, None, error);
    };
    let mut first = Vec::new();
    let endpoint = format!("/messages?sessionId={id}");
    crate::transport::sse::write_event(&mut first, None, Some("endpoint"), &endpoint);
    let head = futures_util::stream::once(async move { Ok(Bytes::from(first)) });
    let keep_alive = Some(shared.options.streams.keep_alive);
    let rest = sse_stream(rx, None, keep_alive, BodyGuard(Some(slot)));
    sse_response(Body::from_stream(head.chain(rest)))
}

/// The `sessionId` query parameter (ids are hex, so no percent-decoding is needed).
fn session_id(request: &Request) -> Option<String> {
    let query = request.uri().query()?;
    query.split('&').find_map(|pair| pair.strip_prefix("sessionId=")).map(str::to_owned)
}

async fn message(State(shared): State<Arc<Shared>>, request: Request) -> Response {
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
    let Some(id) = session_id(&request) else {
        let error = McpError::invalid_request("Missing sessionId query parameter");
        return error_response(StatusCode::BAD_REQUEST, None, error);
    };
    let message: Message = match read_message(&shared, request).await {
        Ok(message) => message,
        Err(refused) => return refused,
    };
    match shared.sessions.find(&id, &extensions) {
        Some(session) if session.forward(message).await => accepted(),
        _ => error_response(
            StatusCode::NOT_FOUND,
            None,
            McpError::invalid_request("Session not found"),
        ),
    }
}
