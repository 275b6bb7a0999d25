//! The answers a session's requests get when the session, its store or its router cannot
//! serve them: 404, 409, 503 with `Retry-After`.

use axum::response::Response;
use http::{HeaderValue, StatusCode};
use modelcontext_types::McpError;

use crate::server::http::respond::error_response;
use crate::server::http::session_store::StoreError;

/// How long a client should wait before retrying a request the session store could not serve.
pub(super) const RETRY_AFTER_SECONDS: &str = "1";

/// 503 with `Retry-After`: the session store could not answer, so the session may well exist.
pub(super) fn store_unavailable(error: StoreError) -> Response {
    tracing::warn!(%error, "a handshake-era request refused: the session store is unavailable");
    retry_later(&error)
}

/// 503 with `Retry-After`: the event store could not answer, so the stream may well exist.
pub(super) fn event_store_unavailable(error: &StoreError) -> Response {
    tracing::warn!(%error, "a resumption refused: the event store is unavailable");
    retry_later(&"Event store unavailable")
}

/// 503 with `Retry-After` for what could not be done now but may work when tried again.
pub(super) fn retry_later(error: &dyn std::fmt::Display) -> Response {
    let error = McpError::internal(format!("{error}; try again later"));
    let mut response = error_response(StatusCode::SERVICE_UNAVAILABLE, None, error);
    response
        .headers_mut()
        .insert(http::header::RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER_SECONDS));
    response
}

/// 503 with `Retry-After`: the client's answer could not be passed to the instance waiting
/// for it; posting it again may work.
pub(super) fn router_unavailable(error: crate::server::http::RouteError) -> Response {
    tracing::warn!(%error, "an answer for another instance refused: the peer router is unavailable");
    retry_later(&error)
}

pub(super) fn too_many_sessions() -> Response {
    let error = McpError::internal("Too many sessions; try again later");
    error_response(StatusCode::SERVICE_UNAVAILABLE, None, error)
}

pub(crate) fn session_not_found() -> Response {
    error_response(StatusCode::NOT_FOUND, None, McpError::invalid_request("Session not found"))
}
