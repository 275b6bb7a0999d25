//! Request layers: the application's code around every request a server answers (logging,
//! rate limits, authorization rules), and the per-request watch that runs them beside the
//! request's span.
//!
//! Order: layers run in the order they were added to the server. A request reaches them once
//! it is parsed and its era is known (a request the server refuses before that, such as
//! unparsable params or a request before `initialize`, never reaches a layer; the span still
//! records it). For each layer in turn, [`RequestLayer::before`] runs, then
//! [`RequestLayer::answer`]: the first layer that refuses (an error from `before`) or answers
//! (a result from `answer`, e.g. from a cache) ends the request there, the layers after it are
//! skipped, and the handler never runs. [`RequestLayer::after`] then runs, in reverse order,
//! for every layer whose `before` ran (the one that ended the request included), with the
//! outcome the client gets.

use std::sync::Arc;

use modelcontext_types::{ClientRequest, Era, McpError, RawValue, RequestId};
use tracing::{Instrument, Span};

use super::extensions::{Extensions, PrincipalId};
use crate::engine::{BoxFuture, Outcome, Reply, catching_panics};
use crate::observe::{self, Target};

/// Code that runs around every request the server answers, on every transport and in both
/// eras. Add one with [`McpServer::layer`](super::McpServer::layer).
///
/// Both hooks run on the task that answers the request and must not block: keep them to
/// bookkeeping (a counter, a log line), and hand slow work to a task of your own.
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

/// The layers of a server, in the order they were added.
pub(crate) type Layers = Arc<[Arc<dyn RequestLayer>]>;

/// What a server connection knows about where its requests come from.
#[derive(Clone)]
pub(crate) struct Link {
    /// `network.transport`.
    pub transport: &'static str,
    /// The HTTP session, if any.
    pub session_id: Option<Arc<str>>,
    /// The server's metric instruments (feature `otel`).
    #[cfg(feature = "otel")]
    pub instruments: Arc<observe::otel::Instruments>,
}

impl Link {
    /// A connection of `server` over `transport`, in HTTP session `session_id` if any.
    pub(crate) fn new(
        server: &super::ServerInner,
        transport: &'static str,
        session_id: Option<Arc<str>>,
    ) -> Link {
        #[cfg(not(feature = "otel"))]
        let _ = server;
        Link {
            transport,
            session_id,
            #[cfg(feature = "otel")]
            instruments: server.instruments(),
        }
    }
}

/// Where a request is answered: what its layers see beside the request.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub link: &'a Link,
    pub extensions: &'a Arc<Extensions>,
    pub layers: &'a Layers,
}

/// One request being watched: its span and the layers that saw it. Idle, and free, when no
/// subscriber wants the span and the server has no layer.
pub(crate) struct Watch {
    span: Span,
    tool_call: bool,
    layers: Option<Ran>,
    /// The duration metric and the in-flight count (feature `otel`).
    #[cfg(feature = "otel")]
    timing: Option<observe::otel::Timing>,
}

/// The layers whose `before` ran, and what they saw.
struct Ran {
    info: Arc<RequestInfo>,
    layers: Layers,
    count: usize,
}

impl Watch {
    /// Starts watching `request` (its span starts now, before it is parsed).
    #[inline]
    pub(crate) fn start(method: &str, id: &RequestId, link: &Link) -> Watch {
        let span = observe::server_span(method, id, link.transport);
        if let Some(session) = &link.session_id {
            if !span.is_disabled() {
                span.record("mcp.session.id", &**session);
            }
        }
        let tool_call = method == modelcontext_types::method::TOOLS_CALL;
        Watch {
            span,
            tool_call,
            layers: None,
            #[cfg(feature = "otel")]
            timing: Some(observe::otel::Timing::start(
                Arc::clone(&link.instruments),
                observe::otel::Side::Server,
                method,
                link.transport,
            )),
        }
    }

    /// Makes the trace context the client sent the parent of the span (feature `otel`): the
    /// `_meta` of the raw params, else `transport` (an HTTP request's headers). Called before
    /// the span is first entered.
    #[cfg(feature = "otel")]
    pub(crate) fn adopt_remote_parent_raw(
        &self,
        params: Option<&RawValue>,
        transport: observe::otel::Carrier<'_>,
    ) {
        if self.span.is_disabled() {
            return;
        }
        let meta = observe::otel::meta_of_raw(params);
        let carrier = meta.as_ref().map(|meta| meta.carrier()).unwrap_or_default();
        observe::otel::adopt_remote_parent(&self.span, carrier, transport);
    }

    /// [`Watch::adopt_remote_parent_raw`] for a parsed request.
    #[cfg(all(feature = "otel", feature = "http"))]
    pub(crate) fn adopt_remote_parent(
        &self,
        request: &ClientRequest,
        transport: observe::otel::Carrier<'_>,
    ) {
        let meta = observe::otel::Carrier::meta(request.meta());
        observe::otel::adopt_remote_parent(&self.span, meta, transport);
    }

    /// The request is parsed and its era known: names the span and records what the request
    /// is about (before the span is first entered: OpenTelemetry takes the name when the span
    /// starts), then asks the layers, inside the span. `Ok(None)`: on to the handler;
    /// otherwise the answer of the layer that refused or answered.
    #[inline]
    pub(crate) fn admit(
        &mut self,
        request: &ClientRequest,
        id: &RequestId,
        era: (Era, &'static str),
        scope: Scope<'_>,
    ) -> Result<Option<Box<RawValue>>, McpError> {
        #[cfg(not(feature = "otel"))]
        if self.span.is_disabled() && scope.layers.is_empty() {
            // Nobody records this request: nothing to name, nobody to ask.
            return Ok(None);
        }
        let (era, protocol_version) = era;
        let target = Target::of(request);
        observe::name_target(&self.span, request.method(), target);
        if !self.span.is_disabled() {
            self.span.record("mcp.protocol.version", protocol_version);
        }
        #[cfg(feature = "otel")]
        if let Some(timing) = &mut self.timing {
            timing.identify(target, protocol_version);
        }
        if scope.layers.is_empty() {
            return Ok(None);
        }
        let info = Arc::new(RequestInfo {
            method: request.method().to_owned(),
            id: id.clone(),
            target: target.map(|t| t.value().to_owned()),
            era,
            protocol_version,
            session_id: scope.link.session_id.clone(),
            transport: scope.link.transport,
            extensions: Arc::clone(scope.extensions),
        });
        let mut ran = Ran { info, layers: Arc::clone(scope.layers), count: 0 };
        let verdict = self.span.in_scope(|| ran.before(request));
        self.layers = Some(ran);
        verdict
    }

    /// Wraps the reply so that its end is recorded and the layers' `after` hooks run; an idle
    /// watch returns it as it is.
    #[inline]
    pub(crate) fn finish(mut self, reply: Reply) -> Reply {
        match reply {
            Reply::Now(outcome) => {
                let span = self.span.clone();
                span.in_scope(|| self.ended(&outcome));
                Reply::Now(outcome)
            }
            Reply::Later(future) => Reply::Later(self.around(future)),
            Reply::Stream(future) => Reply::Stream(self.around(future)),
        }
    }

    #[inline]
    fn is_idle(&self) -> bool {
        #[cfg(feature = "otel")]
        if self.timing.is_some() {
            return false;
        }
        self.span.is_disabled() && self.layers.is_none()
    }

    /// The handler, run inside the request's span, its end recorded (a panic too: it is
    /// answered here, as the engine would).
    #[inline]
    fn around(mut self, future: BoxFuture<Outcome>) -> BoxFuture<Outcome> {
        if self.is_idle() {
            return future;
        }
        let span = self.span.clone();
        Box::pin(
            async move {
                let outcome = catching_panics(future).await;
                self.ended(&outcome);
                outcome
            }
            .instrument(span),
        )
    }

    fn ended(&mut self, outcome: &Outcome) {
        observe::record(&self.span, self.tool_call, outcome);
        #[cfg(feature = "otel")]
        if let Some(timing) = self.timing.take() {
            timing.finish(self.tool_call, outcome.as_deref());
        }
        if let Some(ran) = &self.layers {
            ran.after(outcome.as_deref());
        }
    }
}

impl Ran {
    fn before(&mut self, request: &ClientRequest) -> Result<Option<Box<RawValue>>, McpError> {
        for layer in self.layers.iter() {
            self.count += 1;
            layer.before(request, &self.info)?;
            if let Some(answer) = layer.answer(request, &self.info) {
                return Ok(Some(answer));
            }
        }
        Ok(None)
    }

    fn after(&self, outcome: Result<&RawValue, &McpError>) {
        for layer in self.layers[..self.count].iter().rev() {
            layer.after(&self.info, outcome);
        }
    }
}
