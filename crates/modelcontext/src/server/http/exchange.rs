//! One HTTP request in, one HTTP response out: where each request goes. The Host and Origin
//! checks and the caller's identity first; then by method and era to the modern (stateless)
//! path, a stateless handshake-era POST, a session's POST, GET stream or DELETE, or a batch.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use http::{HeaderMap, Method};
use modelcontext_types::MODERN_VERSIONS;

use super::body::{decode, is_batch, read_bytes};
use super::headers::PROTOCOL_VERSION;
use super::modern::{claims_modern, modern};
use super::respond::{header_str, method_not_allowed};
use super::security::check_request;
use super::{Shared, caller, sessions};
use crate::server::Extensions;

/// Entry point for every request to the endpoint.
pub(crate) async fn handle(shared: Arc<Shared>, request: Request) -> Response {
    if let Some(refused) = check_request(&shared, &request) {
        return refused;
    }
    let (parts, body) = request.into_parts();
    let extensions =
        match caller::identify(&shared, &parts.method, parts.uri.path(), &parts.headers).await {
            Ok(extensions) => extensions,
            Err(refused) => return refused,
        };
    let modern_header = is_modern_header(&parts.headers);
    match parts.method {
        Method::POST => post(shared, parts.headers, body, modern_header, extensions).await,
        // 2026-07-28 has no GET stream and no sessions to delete.
        Method::GET | Method::DELETE if modern_header || shared.options.sessions.stateless => {
            method_not_allowed()
        }
        Method::GET => sessions::get(&shared, &parts.headers, &extensions).await,
        Method::DELETE => sessions::delete(&shared, &parts.headers, &extensions).await,
        _ => method_not_allowed(),
    }
}

fn is_modern_header(headers: &HeaderMap) -> bool {
    header_str(headers, PROTOCOL_VERSION).is_some_and(|v| MODERN_VERSIONS.contains(&v.trim()))
}

async fn post(
    shared: Arc<Shared>,
    headers: HeaderMap,
    body: Body,
    modern_header: bool,
    extensions: Extensions,
) -> Response {
    let bytes = match read_bytes(&shared, &headers, body).await {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    // A JSON-RPC batch: only a 2025-03-26 session takes one (no later revision has them);
    // without a session it is refused below like any other array.
    let in_session = headers.contains_key(sessions::SESSION_HEADER);
    if is_batch(&bytes) && in_session && !modern_header && !shared.options.sessions.stateless {
        return super::batch::post(&shared, &headers, &bytes, extensions).await;
    }
    let message = match decode(&shared, &bytes) {
        Ok(message) => message,
        Err(refused) => return refused,
    };
    if modern_header || claims_modern(&message) {
        modern(&shared, headers, message, extensions).await
    } else if shared.options.sessions.stateless {
        super::stateless::post(&shared, headers, message, extensions).await
    } else {
        sessions::post(&shared, &headers, message, extensions).await
    }
}
