//! The endpoint's plain answers: a JSON-RPC response as one JSON body with the HTTP status the
//! spec pairs with it, refusals, and 202 Accepted.

use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use modelcontext_types::{
    INVALID_REQUEST, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY, McpError, RequestId,
    Response as RpcResponse,
};

use super::json_body;
use crate::engine::Outcome;

pub(crate) fn header_str(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The answer to request `id` as one JSON body.
pub(crate) fn rpc_answer(id: RequestId, outcome: Outcome) -> Response {
    let response = RpcResponse { id: Some(id), result: outcome };
    rpc_response(status_of(&response), &response)
}

/// 404 for an unknown method, 400 for a missing client capability, otherwise 200: a JSON-RPC
/// error from a handler (an unknown resource, a tool's own `McpError`) is a normal answer.
pub(crate) fn status_of(response: &RpcResponse) -> StatusCode {
    match &response.result {
        Err(e) if e.code == METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        Err(e) if e.code == MISSING_REQUIRED_CLIENT_CAPABILITY => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// The status of a request refused before it reached a handler: 404 for a method the server
/// does not serve, 400 for anything else wrong with it.
pub(crate) fn refusal_status(error: &McpError) -> StatusCode {
    if error.code == METHOD_NOT_FOUND { StatusCode::NOT_FOUND } else { StatusCode::BAD_REQUEST }
}

pub(crate) fn rpc_response(status: StatusCode, response: &RpcResponse) -> Response {
    let mut http = Response::new(json_body(response.encode()));
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

pub(crate) fn method_not_allowed() -> Response {
    let error = McpError::new(INVALID_REQUEST, "Method not allowed");
    let mut response = error_response(StatusCode::METHOD_NOT_ALLOWED, None, error);
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
    response
}
