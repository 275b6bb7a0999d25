//! JSON-RPC batches (2025-03-26): the only revision whose schema has them
//! (`JSONRPCBatchRequest`, `JSONRPCBatchResponse`; 2025-06-18 removed them). A batch is taken
//! only on a session that negotiated 2025-03-26; its requests run concurrently on the session,
//! its notifications and answers go in as any other (recorded, and routed to the instance they
//! are for in a fleet), and the responses come back as one JSON array (`202` when it held no
//! request).

use axum::response::Response;
use futures_util::future::join_all;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use modelcontext_types::{McpError, Message, Response as RpcResponse, has_batches, method};
use serde_json::value::RawValue;

use super::respond::{accepted, error_response, header_str};
use super::sessions::{SESSION_HEADER, Session};
use super::{Shared, caller, json_body};
use crate::server::Extensions;

/// A POST whose body is a JSON array.
pub(crate) async fn post(
    shared: &Shared,
    headers: &HeaderMap,
    bytes: &[u8],
    extensions: Extensions,
) -> Response {
    let refuse = |message: &str| {
        error_response(StatusCode::BAD_REQUEST, None, McpError::invalid_request(message))
    };
    let id = header_str(headers, SESSION_HEADER).unwrap_or_default();
    let session = match shared.sessions.resolve(shared, id, &extensions, headers).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    if !session.protocol_version().is_some_and(has_batches) {
        return refuse("JSON-RPC batches are accepted only on sessions that negotiated 2025-03-26");
    }
    let items = match serde_json::from_slice::<Vec<Box<RawValue>>>(bytes) {
        Ok(items) if items.is_empty() => return refuse("An empty batch"),
        Ok(items) => items,
        Err(err) => {
            let error =
                McpError::new(modelcontext_types::PARSE_ERROR, format!("Parse error: {err}"));
            return error_response(StatusCode::BAD_REQUEST, None, error);
        }
    };
    // The error is boxed: a response is large beside a message.
    let messages: Vec<Result<Message, Box<RpcResponse>>> = items
        .iter()
        .map(|item| {
            Message::decode_with_depth(item.get().as_bytes(), shared.server.json_depth_limit())
                .map_err(|err| Box::new(err.to_response()))
        })
        .collect();
    // Every call's scopes are checked before any of them runs.
    let parsed = messages.iter().filter_map(|message| message.as_ref().ok());
    if let Err(refused) = caller::check_called_tools(shared, &extensions, parsed) {
        return refused;
    }
    let answers =
        join_all(messages.into_iter().map(|message| answer_element(&session, message, headers)))
            .await;
    let responses: Vec<String> =
        answers.into_iter().flatten().map(|r| Message::Response(r).encode()).collect();
    if responses.is_empty() {
        return accepted();
    }
    let mut response = Response::new(json_body(format!("[{}]", responses.join(","))));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The response one element of a batch gets, if any.
async fn answer_element(
    session: &Session,
    message: Result<Message, Box<RpcResponse>>,
    headers: &HeaderMap,
) -> Option<RpcResponse> {
    match message {
        Err(malformed) => Some(*malformed),
        Ok(Message::Request(request)) if request.method == method::INITIALIZE => {
            let error = McpError::invalid_request("initialize must not be part of a batch");
            Some(RpcResponse::error(Some(request.id), error))
        }
        Ok(Message::Request(request)) => Some(session.answer_in_batch(request, headers).await),
        Ok(other) => {
            // As if POSTed alone, so that in a fleet an answer to another instance's request
            // and a cancellation reach that instance; a batch has no status of its own to give
            // for one element, so a refusal is only logged.
            let taken = session.take_message(other).await;
            if !taken.status().is_success() {
                tracing::warn!(status = %taken.status(), "a message of a batch was not taken");
            }
            None
        }
    }
}
