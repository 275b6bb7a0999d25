//! What the SDK records about each message: a `tracing` span per request on both sides, named
//! and attributed after OpenTelemetry's semantic conventions for MCP (`docs/gen-ai/mcp.md` of
//! open-telemetry/semantic-conventions), and with the `otel` feature the trace context in
//! `params._meta` and the operation metrics (see `docs::observability`).
//!
//! Cheap when nobody listens: spans are at DEBUG level, so with no subscriber (or one that
//! filters them out) [`tracing::Span::is_disabled`] is true, no field is computed, no name is
//! formatted and no future is wrapped.

use modelcontext_types::{ClientRequest, McpError, RawValue, RequestId, method};
use tracing::field::Empty;
use tracing::{Instrument, Span};

use crate::engine::{Outcome, Peer, Reply, RequestOptions};

#[cfg(feature = "otel")]
pub(crate) mod otel;

/// A request span of one side, every field of the conventions declared (recorded later when
/// not known yet): a span's fields are fixed where it is created.
macro_rules! request_span {
    ($target:literal, $name:literal, $kind:literal, $method:expr, $id:expr, $version:expr, $transport:expr) => {
        tracing::debug_span!(
            target: $target,
            $name,
            otel.name = $method,
            otel.kind = $kind,
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = $method,
            mcp.protocol.version = $version,
            mcp.session.id = Empty,
            jsonrpc.request.id = %$id,
            gen_ai.operation.name = Empty,
            gen_ai.tool.name = Empty,
            gen_ai.prompt.name = Empty,
            mcp.resource.uri = Empty,
            network.transport = $transport,
            error.type = Empty,
            rpc.response.status_code = Empty,
        )
    };
}

/// The span of a request the server answers (kind SERVER). Its name in OpenTelemetry is set
/// by [`name_target`] once the request is parsed; until then it is the method alone.
#[inline]
pub(crate) fn server_span(method: &str, id: &RequestId, transport: &'static str) -> Span {
    request_span!("modelcontext::server", "mcp.server", "server", method, id, Empty, transport)
}

/// Records a request the server refused before dispatch (the in-flight limit) on a span of
/// its own, ended at once. Cold and kept out of line: the answering path's spans stay as they
/// were compiled.
#[cold]
#[inline(never)]
pub(crate) fn record_refusal(
    request: &modelcontext_types::Request,
    error: &McpError,
    transport: &'static str,
    session_id: Option<&str>,
) {
    let (method, id) = (request.method.as_str(), &request.id);
    let span =
        request_span!("modelcontext::server", "mcp.server", "server", method, id, Empty, transport);
    if !span.is_disabled() {
        span.record("mcp.session.id", session_id);
        record_outcome(&span, false, Err(error));
    }
}

/// The span of a notification the server receives (no id, nothing to answer).
pub(crate) fn server_notification_span(method: &str, transport: &'static str) -> Span {
    tracing::debug_span!(
        target: "modelcontext::server",
        "mcp.server",
        otel.name = method,
        otel.kind = "server",
        mcp.method.name = method,
        network.transport = transport,
    )
}

/// The span of a request the client sends (kind CLIENT).
pub(crate) fn client_span(
    method: &str,
    id: &RequestId,
    protocol_version: &str,
    transport: &'static str,
) -> Span {
    request_span!(
        "modelcontext::client",
        "mcp.client",
        "client",
        method,
        id,
        protocol_version,
        transport
    )
}

/// The span of a request the server sends its client (`elicitation/create`,
/// `sampling/createMessage`, `roots/list`): CLIENT kind, a child of the span current where it is
/// sent (the handler's request span).
fn server_outgoing_span(method: &str, id: &RequestId, protocol_version: Option<&str>) -> Span {
    request_span!(
        "modelcontext::server",
        "mcp.server.outgoing",
        "client",
        method,
        id,
        protocol_version,
        Empty
    )
}

/// The span in which a client answers a request of its server: SERVER kind.
pub(crate) fn client_incoming_span(method: &str, id: &RequestId, transport: &'static str) -> Span {
    request_span!(
        "modelcontext::client",
        "mcp.client.incoming",
        "server",
        method,
        id,
        Empty,
        transport
    )
}

/// Sends a request of the server to its client and waits for the answer, in a CLIENT span
/// that records how it ended; with feature `otel` the span's context goes into
/// `params._meta`, so the client's span is its child.
pub(crate) async fn request_client(
    peer: &Peer,
    method: &str,
    params: Box<RawValue>,
    options: RequestOptions,
    protocol_version: Option<&'static str>,
) -> Outcome {
    let id = peer.next_id();
    let span = server_outgoing_span(method, &id, protocol_version);
    #[cfg(feature = "otel")]
    let params = otel::inject_raw(&span, params);
    let outcome = peer.request(id, method, Some(params), options).instrument(span.clone()).await;
    record(&span, false, &outcome);
    outcome
}

/// `reply` recorded on `span`: an answer at once ends the span now; a handler runs inside it
/// and ends it with its outcome.
pub(crate) fn traced_reply(span: Span, reply: Reply) -> Reply {
    if span.is_disabled() {
        return reply;
    }
    match reply {
        Reply::Now(outcome) => {
            record(&span, false, &outcome);
            Reply::Now(outcome)
        }
        Reply::Later(handler) => {
            let recorded = span.clone();
            Reply::Later(Box::pin(
                async move {
                    let outcome = handler.await;
                    record(&recorded, false, &outcome);
                    outcome
                }
                .instrument(span),
            ))
        }
        Reply::Stream(stream) => Reply::Stream(Box::pin(stream.instrument(span))),
    }
}

/// What a request is about, as the conventions name it: a tool, a prompt, or a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    Tool(&'a str),
    Prompt(&'a str),
    Resource(&'a str),
}

impl<'a> Target<'a> {
    /// The target of a parsed request, if its method has one.
    pub(crate) fn of(request: &'a ClientRequest) -> Option<Target<'a>> {
        match request {
            ClientRequest::CallTool(params) => Some(Target::Tool(&params.name)),
            ClientRequest::GetPrompt(params) => Some(Target::Prompt(&params.name)),
            ClientRequest::ReadResource(params) => Some(Target::Resource(&params.uri)),
            ClientRequest::Subscribe(params) => Some(Target::Resource(&params.uri)),
            ClientRequest::Unsubscribe(params) => Some(Target::Resource(&params.uri)),
            _ => None,
        }
    }

    /// The target of an outgoing request, read from its params object.
    pub(crate) fn of_params(
        method: &str,
        params: &'a serde_json::Map<String, serde_json::Value>,
    ) -> Option<Target<'a>> {
        let field = |key| params.get(key).and_then(serde_json::Value::as_str);
        match method {
            method::TOOLS_CALL => field("name").map(Target::Tool),
            method::PROMPTS_GET => field("name").map(Target::Prompt),
            method::RESOURCES_READ
            | method::RESOURCES_SUBSCRIBE
            | method::RESOURCES_UNSUBSCRIBE => field("uri").map(Target::Resource),
            _ => None,
        }
    }

    /// The name or URI.
    pub(crate) fn value(self) -> &'a str {
        match self {
            Target::Tool(name) | Target::Prompt(name) | Target::Resource(name) => name,
        }
    }
}

/// Records what the request is about. The span name becomes `{method} {target}` for a tool or
/// a prompt; a resource URI is only an attribute, since the conventions keep high-cardinality
/// URIs out of span names by default.
pub(crate) fn name_target(span: &Span, method: &str, target: Option<Target<'_>>) {
    if span.is_disabled() {
        return;
    }
    match target {
        Some(Target::Tool(name)) => {
            span.record("otel.name", format!("{method} {name}"));
            span.record("gen_ai.tool.name", name);
            span.record("gen_ai.operation.name", "execute_tool");
        }
        Some(Target::Prompt(name)) => {
            span.record("otel.name", format!("{method} {name}"));
            span.record("gen_ai.prompt.name", name);
        }
        Some(Target::Resource(uri)) => {
            span.record("mcp.resource.uri", uri);
        }
        None => {}
    }
}

/// How a request ended, in the conventions' terms.
#[derive(Debug)]
pub(crate) enum Failure<'a> {
    /// A JSON-RPC error: `error.type` and `rpc.response.status_code` are its code.
    Rpc(&'a McpError),
    /// A tool result with `isError: true`.
    Tool,
}

impl Failure<'_> {
    /// `error.type`.
    pub(crate) fn error_type(&self) -> String {
        match self {
            Failure::Rpc(error) => error.code.to_string(),
            Failure::Tool => "tool_error".to_owned(),
        }
    }
}

/// The failure `outcome` is, if any. A result is read for `isError` only when it answers a
/// `tools/call` (`tool_call`).
pub(crate) fn failure<'a>(
    tool_call: bool,
    outcome: Result<&RawValue, &'a McpError>,
) -> Option<Failure<'a>> {
    match outcome {
        Err(error) => Some(Failure::Rpc(error)),
        Ok(result) if tool_call && is_tool_error(result) => Some(Failure::Tool),
        Ok(_) => None,
    }
}

/// Whether a `tools/call` result says `isError: true`.
fn is_tool_error(result: &RawValue) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(rename = "isError", default)]
        is_error: Option<bool>,
    }
    serde_json::from_str::<Probe>(result.get()).is_ok_and(|probe| probe.is_error == Some(true))
}

/// Records the end of a request on its span: the error attributes and status, if it failed.
/// `tool_call`: whether it was a `tools/call`, whose result may be a tool error.
pub(crate) fn record_outcome(span: &Span, tool_call: bool, outcome: Result<&RawValue, &McpError>) {
    if span.is_disabled() {
        return;
    }
    let Some(failure) = failure(tool_call, outcome) else { return };
    span.record("error.type", failure.error_type());
    span.record("otel.status_code", "ERROR");
    if let Failure::Rpc(error) = failure {
        span.record("rpc.response.status_code", error.code.to_string());
        span.record("otel.status_description", error.message.as_str());
    }
}

/// [`record_outcome`] for an [`Outcome`].
pub(crate) fn record(span: &Span, tool_call: bool, outcome: &Outcome) {
    record_outcome(span, tool_call, outcome.as_deref())
}
