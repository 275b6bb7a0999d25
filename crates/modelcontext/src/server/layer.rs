//! Request layers: the application's code around every request a server answers (logging,
//! rate limits, authorization rules), each run as a middleware of the server.
//!
//! Order: layers run in the order they were added to the server, before any middleware. A
//! request reaches them where it would reach a middleware (see
//! [`middleware`](super::middleware): once it is parsed and its era is known; never
//! `initialize`). For each layer in turn, [`RequestLayer::before`] runs, then
//! [`RequestLayer::answer`]: the first layer that refuses (an error from `before`) or answers
//! (a result from `answer`, e.g. from a cache) ends the request there, the layers after it are
//! skipped, and the handler never runs. [`RequestLayer::after`] then runs, in reverse order,
//! for every layer whose `before` ran (the one that ended the request included), with the
//! outcome the client gets.
//!
//! Deprecated: [`Middleware`](super::Middleware) does all this and more (it can await,
//! rewrite the request and the result, and run for one tool).

// The deprecated layers are still run here.
#![allow(deprecated)]

use std::sync::Arc;

use modelcontext_types::{ClientRequest, Era, McpError, RawValue, RequestId};

use super::extensions::{Extensions, PrincipalId};
use super::middleware::{Middleware, Next, Request, Response, ResponseFuture};

/// Code that runs around every request the server answers, on every transport and in both
/// eras. Add one with [`McpServer::layer`](super::McpServer::layer).
///
/// Both hooks run on the task that answers the request and must not block: keep them to
/// bookkeeping (a counter, a log line), and hand slow work to a task of your own.
#[deprecated(
    since = "0.1.0",
    note = "use `Middleware` (`McpServer::middleware`): async, around the handler, per tool too"
)]
pub trait RequestLayer: Send + Sync + 'static {
    /// Called before the handler, with the parsed request. An error answers the request with
    /// that JSON-RPC error: the handler never runs, and neither do later layers.
    fn before(&self, request: &ClientRequest, info: &RequestInfo) -> Result<(), McpError> {
        let _ = (request, info);
        Ok(())
    }

    /// Called after this layer's `before` let the request through: a result answers the
    /// request with it instead of the handler (a cache; the layers after this one are
    /// skipped). It is sent as it is, so it should be a result this request's era and
    /// protocol version would get: one saved by [`after`](RequestLayer::after) for the same
    /// method, target, arguments, era and principal.
    fn answer(&self, request: &ClientRequest, info: &RequestInfo) -> Option<Box<RawValue>> {
        let _ = (request, info);
        None
    }

    /// Called with the outcome the client gets: the result, or the JSON-RPC error.
    fn after(&self, info: &RequestInfo, outcome: Result<&RawValue, &McpError>) {
        let _ = (info, outcome);
    }
}

/// One request as a [`RequestLayer`] sees it.
#[derive(Debug)]
#[non_exhaustive]
pub struct RequestInfo {
    /// The method, e.g. `tools/call`.
    pub method: String,
    /// The JSON-RPC id.
    pub id: RequestId,
    /// The tool or prompt name, or the resource URI, for the methods that have one.
    pub target: Option<String>,
    /// The era of the request.
    pub era: Era,
    /// The protocol revision the request speaks.
    pub protocol_version: &'static str,
    /// The HTTP session (`Mcp-Session-Id`) of a handshake-era HTTP request.
    pub session_id: Option<Arc<str>>,
    /// `pipe` (stdio, in memory) or `tcp` (HTTP), as OpenTelemetry's `network.transport`.
    pub transport: &'static str,
    /// What the transport attached: HTTP headers, the authenticated principal...
    pub extensions: Arc<Extensions>,
}

impl RequestInfo {
    /// The authenticated principal, if the transport has one.
    pub fn principal(&self) -> Option<&PrincipalId> {
        self.extensions.get::<PrincipalId>()
    }

    /// The tool a `tools/call` calls.
    pub fn tool_name(&self) -> Option<&str> {
        match self.method.as_str() {
            modelcontext_types::method::TOOLS_CALL => self.target.as_deref(),
            _ => None,
        }
    }
}

/// A layer run as a middleware: `before`, then `answer`, then the rest of the chain; `after`
/// with whatever the request ends with.
pub(super) struct LayerMiddleware(pub Arc<dyn RequestLayer>);

impl Middleware for LayerMiddleware {
    fn handle(&self, request: Request, next: Next) -> ResponseFuture {
        let layer = Arc::clone(&self.0);
        Box::pin(async move {
            let info = RequestInfo::of(&request);
            let response = match layer.before(request.request(), &info) {
                Err(refusal) => Response::error(refusal),
                Ok(()) => match layer.answer(request.request(), &info) {
                    Some(answer) => Response::new(Ok(answer)),
                    None => next.run(request).await,
                },
            };
            layer.after(&info, response.outcome());
            response
        })
    }
}

impl RequestInfo {
    fn of(request: &Request) -> RequestInfo {
        RequestInfo {
            method: request.method().to_owned(),
            id: request.id().clone(),
            target: request.target().map(str::to_owned),
            era: request.era(),
            protocol_version: request.protocol_version(),
            session_id: request.session_id().map(Arc::from),
            transport: request.transport(),
            extensions: request.shared_extensions(),
        }
    }
}
