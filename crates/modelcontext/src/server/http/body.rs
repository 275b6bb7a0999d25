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
    let (limit, timeout) =
        (shared.options.limits.max_body_bytes, shared.options.limits.body_read_timeout);
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
    let content_type = header_str(headers, header::CONTENT_TYPE).unwrap_or("").trim_start();
    if !starts_with_ignore_case(content_type, "application/json") {
        let error = McpError::invalid_request("Content-Type must be application/json");
        return Some(error_response(StatusCode::UNSUPPORTED_MEDIA_TYPE, None, error));
    }
    if let Some(accept) = header_str(headers, header::ACCEPT) {
        let usable = ["application/json", "text/event-stream", "*/*", "application/*", "text/*"];
        if !usable.iter().any(|media| contains_ignore_case(accept, media)) {
            let error = McpError::invalid_request(
                "Accept must allow application/json and text/event-stream",
            );
            return Some(error_response(StatusCode::NOT_ACCEPTABLE, None, error));
        }
    }
    None
}

/// Whether `text` starts with `prefix`, ASCII case ignored (media types are case-insensitive).
fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// Whether `text` contains `needle`, ASCII case ignored, without lowercasing a copy.
fn contains_ignore_case(text: &str, needle: &str) -> bool {
    let needle = needle.as_bytes();
    text.as_bytes().windows(needle.len()).any(|window| window.eq_ignore_ascii_case(needle))
}

/// Whether request params may have a `_meta` member: `false` only when the text cannot
/// (no `_meta` in it, and no escape that could spell the key otherwise), which settles most
/// requests without parsing their params for it.
pub(crate) fn may_carry_meta(params: &str) -> bool {
    let params = params.as_bytes();
    // One SIMD scan for the two bytes that matter; a substring search costs more on short
    // params.
    memchr::memchr2_iter(b'_', b'\\', params)
        .any(|at| params[at] == b'\\' || params[at + 1..].starts_with(b"meta"))
}

#[cfg(test)]
mod tests {
    use super::may_carry_meta;

    #[test]
    fn params_without_meta_are_told_apart_without_parsing() {
        assert!(!may_carry_meta(r#"{"name":"add","arguments":{"a":1,"b_c":2}}"#));
        assert!(!may_carry_meta("{}"));
        assert!(!may_carry_meta("_"));
        assert!(may_carry_meta(r#"{"_meta":{"progressToken":1}}"#));
        // An escaped key may spell `_meta`: only a parse can tell.
        assert!(may_carry_meta(r#"{"\u005fmeta":{}}"#));
        // Conservative: the word inside a value still sends the params to the parser.
        assert!(may_carry_meta(r#"{"text":"_meta"}"#));
    }
}
