//! Stateless handshake-era serving ([`HttpOptions::stateless`](super::HttpOptions::stateless)):
//! the 2025-11-25 wire without sessions, for fleets without a session store. Every POST stands
//! alone; `initialize` is answered but leaves nothing behind.

use std::sync::Arc;

use axum::response::Response;
use http::{HeaderMap, StatusCode};
use modelcontext_types::{
    ClientRequest, EmptyResult, Era, InitializeRequestParams, McpError, Message,
    ServerCapabilities, negotiate_handshake, to_raw,
};
use tokio::sync::mpsc;

use super::headers::PROTOCOL_VERSION;
use super::modern::answer_reply;
use super::respond::{accepted, error_response, header_str, refusal_status};
use super::{Shared, caller};
use crate::engine::{Peer, Reply};
use crate::server::Extensions;
use crate::server::front_end::{ClientView, parse_request};
use crate::transport::CHANNEL_CAPACITY;

/// The revision a request without `MCP-Protocol-Version` is taken to speak (spec 2025-06-18
/// and later, transports: assume 2025-03-26).
const HEADERLESS_VERSION: &str = "2025-03-26";

/// One POST of the handshake era, served on its own.
pub(crate) async fn post(
    shared: &Shared,
    headers: HeaderMap,
    message: Message,
    extensions: Extensions,
) -> Response {
    // Notifications (initialized, cancelled) and answers have nothing to reach.
    let Message::Request(request) = message else { return accepted() };
    let id = request.id.clone();
    let parsed = match parse_request(&request.method, request.params.as_deref()) {
        Ok(parsed) => parsed,
        Err(refused) => return error_response(refusal_status(&refused), Some(id), refused),
    };
    if let ClientRequest::CallTool(params) = &parsed {
        if let Err(refused) = caller::check_tool_scopes(shared, &extensions, &params.name) {
            return refused;
        }
    }
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    let peer = Peer::new(tx);
    let reply = match parsed {
        ClientRequest::Initialize(params) => Reply::Now(initialize(shared, &params)),
        // The level would apply to this request only, which is over once answered.
        ClientRequest::SetLevel(_) => Reply::Now(to_raw(&EmptyResult::default()).map_err(internal)),
        ClientRequest::Subscribe(_) | ClientRequest::Unsubscribe(_) => {
            let error = McpError::method_not_found(request.method.as_str());
            return error_response(StatusCode::NOT_FOUND, Some(id), error);
        }
        other => {
            let version = header_str(&headers, PROTOCOL_VERSION).unwrap_or(HEADERLESS_VERSION);
            let client = ClientView {
                era: Era::Handshake,
                protocol_version: negotiate_handshake(version.trim()),
                info: None,
                // No session remembers what `initialize` declared: nothing is assumed.
                capabilities: Default::default(),
            };
            let extensions = Arc::new(caller::with_headers(extensions, headers));
            shared.server.answer_stateless(other, id.clone(), client, &peer, extensions)
        }
    };
    drop(peer);
    answer_reply(shared, reply, rx, id).await
}

/// The `initialize` result, without the capabilities a stateless endpoint cannot honour:
/// nobody would receive a change notification or a resource update.
fn initialize(shared: &Shared, params: &InitializeRequestParams) -> crate::engine::Outcome {
    let server = &shared.server;
    let version = negotiate_handshake(&params.protocol_version);
    let result = server.initialize_result(version, stateless(server.capabilities()));
    to_raw(&result).map_err(internal)
}

fn stateless(mut capabilities: ServerCapabilities) -> ServerCapabilities {
    if let Some(tools) = &mut capabilities.tools {
        tools.list_changed = None;
    }
    if let Some(prompts) = &mut capabilities.prompts {
        prompts.list_changed = None;
    }
    if let Some(resources) = &mut capabilities.resources {
        resources.list_changed = None;
        resources.subscribe = None;
    }
    capabilities
}

fn internal(err: serde_json::Error) -> McpError {
    McpError::internal(format!("result did not serialize: {err}"))
}
