//! A POST's body: the content headers checked (415, 406), the bytes read within the size and
//! time limits (413, 408), and the one JSON-RPC message decoded (400 with the parse error).

use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, StatusCode, header};
use modelcontext_types::{McpError, Message};

use super::Shared;
use super::respond::{error_response, header_str, rpc_response};

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
pub(crate) fn decode(shared: &Shared, bytes: &[u8]) -> Result<Message, Response> {
    Message::decode_with_depth(bytes, shared.server.json_depth_limit())
        .map_err(|err| rpc_response(StatusCode::BAD_REQUEST, &err.to_response()))
}

/// Whether a body is a JSON array (a JSON-RPC batch).
pub(crate) fn is_batch(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
}

/// A POST body's bytes, after the content checks: 415 / 406 / 408 / 413 otherwise.
pub(crate) async fn read_bytes(
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
