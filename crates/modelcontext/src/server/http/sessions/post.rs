//! A session's POSTs (`initialize` starts a session; any other request, notification or
//! answer goes to the session its header names) and its DELETE.

use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, HeaderValue, StatusCode};
use modelcontext_types::{HANDSHAKE_VERSIONS, McpError, Message, Request, method};

use crate::server::http::headers::PROTOCOL_VERSION;
use crate::server::http::respond::{error_response, header_str};
use crate::server::http::session_store::SessionRecord;
use crate::server::http::{Shared, caller};
use crate::server::{Extensions, PrincipalId};

use super::refusals::{session_not_found, store_unavailable};
use super::session::{SESSION_HEADER, Session, mint_id};
use super::table::end;

/// A handshake-era POST.
pub(crate) async fn post(
    shared: &Shared,
    headers: &HeaderMap,
    message: Message,
    extensions: Extensions,
) -> Response {
    if let Some(version) = header_str(headers, PROTOCOL_VERSION) {
        if !HANDSHAKE_VERSIONS.contains(&version.trim()) {
            let error =
                McpError::invalid_request(format!("Unsupported MCP-Protocol-Version: {version}"));
            return error_response(StatusCode::BAD_REQUEST, None, error);
        }
    }
    if let Err(refused) = caller::check_called_tools(shared, &extensions, [&message]) {
        return refused;
    }
    match (header_str(headers, SESSION_HEADER), message) {
        (None, Message::Request(request)) if request.method == method::INITIALIZE => {
            // The session's handlers see the headers of the POST that opened it.
            let extensions = caller::with_headers(extensions, headers.clone());
            initialize(shared, headers, request, extensions).await
        }
        (None, _) => {
            let error = McpError::invalid_request(
                "Missing Mcp-Session-Id header: send initialize first (or use the 2026-07-28 _meta envelope)",
            );
            error_response(StatusCode::BAD_REQUEST, None, error)
        }
        (Some(id), message) => {
            match shared.sessions.resolve(shared, id, &extensions, headers).await {
                Ok(session) => session.post(message, headers).await,
                Err(refused) => refused,
            }
        }
    }
}

pub(super) async fn initialize(
    shared: &Shared,
    headers: &HeaderMap,
    request: Request,
    extensions: Extensions,
) -> Response {
    let Some(id) = mint_id() else {
        let error = McpError::internal("No randomness available for a session id");
        return error_response(StatusCode::INTERNAL_SERVER_ERROR, Some(request.id), error);
    };
    let principal = extensions.get::<PrincipalId>().map(|p| p.0.clone());
    let session = Arc::new(Session::start(shared, id.clone(), extensions));
    if !shared.sessions.insert(session.clone()) {
        let error = McpError::internal("Too many sessions; try again later");
        return error_response(StatusCode::SERVICE_UNAVAILABLE, Some(request.id), error);
    }
    // Kept for the record only when there is a store to keep it in.
    let params = shared.sessions.records.as_ref().map(|_| raw_params(&request));
    let mut response = session.post(Message::Request(request), headers).await;
    if let (Some(params), Some(version)) = (params, session.protocol_version()) {
        let mut record = SessionRecord::new(&id, version, params);
        record.principal = principal;
        if let Err(refused) = shared.sessions.create(record).await {
            end(shared, &id);
            return refused;
        }
    }
    if response.status().is_success() {
        if let Ok(value) = HeaderValue::from_str(&id) {
            response.headers_mut().insert(SESSION_HEADER, value);
        }
    } else {
        end(shared, &id);
    }
    response
}

/// A request's params as JSON text (`{}` without any).
pub(super) fn raw_params(request: &Request) -> String {
    request.params.as_ref().map_or_else(|| "{}".to_owned(), |params| params.get().to_owned())
}

/// DELETE: ends a session (on every instance, when it is shared); later requests with its id
/// get 404.
pub(crate) async fn delete(
    shared: &Shared,
    headers: &HeaderMap,
    extensions: &Extensions,
) -> Response {
    let Some(id) = header_str(headers, SESSION_HEADER) else {
        let error = McpError::invalid_request("Missing Mcp-Session-Id header");
        return error_response(StatusCode::BAD_REQUEST, None, error);
    };
    let session = match shared.sessions.resolve(shared, id, extensions, headers).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    if let Some(records) = &session.records {
        // Deleted in the store first: if that fails the session lives on, and the client can
        // retry.
        if let Err(error) = records.delete(id).await {
            return store_unavailable(error);
        }
    }
    if end(shared, id) {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::OK;
        response
    } else {
        session_not_found()
    }
}
