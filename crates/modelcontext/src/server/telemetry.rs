//! What every request leaves behind: its span and its metrics (feature `otel`). Started
//! before a request is parsed and finished with its answer, so refusals are recorded too;
//! middleware and handlers run inside the span.

use std::sync::Arc;

use modelcontext_types::{ClientRequest, RequestId};
use tracing::{Instrument, Span};

use crate::engine::{BoxFuture, Outcome, Reply, catching_panics};
use crate::observe::{self, Target};

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

/// One request's telemetry: its span and its metrics. Idle, and free, when no subscriber
/// wants the span and (feature `otel`) no metrics are kept.
pub(crate) struct RequestTelemetry {
    pub(super) span: Span,
    tool_call: bool,
    /// The duration metric and the in-flight count (feature `otel`).
    #[cfg(feature = "otel")]
    timing: Option<observe::otel::Timing>,
}

impl RequestTelemetry {
    /// Starts watching `request` (its span starts now, before it is parsed).
    #[inline]
    pub(crate) fn start(method: &str, id: &RequestId, link: &Link) -> RequestTelemetry {
        let span = observe::server_span(method, id, link.transport);
        if let Some(session) = &link.session_id {
            if !span.is_disabled() {
                span.record("mcp.session.id", &**session);
            }
        }
        let tool_call = method == modelcontext_types::method::TOOLS_CALL;
        RequestTelemetry {
            span,
            tool_call,
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
        params: Option<&modelcontext_types::RawValue>,
        transport: observe::otel::Carrier<'_>,
    ) {
        if self.span.is_disabled() {
            return;
        }
        let meta = observe::otel::meta_of_raw(params);
        let carrier = meta.as_ref().map(|meta| meta.carrier()).unwrap_or_default();
        observe::otel::adopt_remote_parent(&self.span, carrier, transport);
    }

    /// The request is parsed and its protocol version known: names the span and records what
    /// the request is about (before the span is first entered: OpenTelemetry takes the name
    /// when the span starts).
    #[inline]
    pub(crate) fn identify(&mut self, request: &ClientRequest, protocol_version: &'static str) {
        #[cfg(not(feature = "otel"))]
        if self.span.is_disabled() {
            // Nobody records this request: nothing to name.
            return;
        }
        let target = Target::of(request);
        observe::name_target(&self.span, request.method(), target);
        if !self.span.is_disabled() {
            self.span.record("mcp.protocol.version", protocol_version);
        }
        #[cfg(feature = "otel")]
        if let Some(timing) = &mut self.timing {
            timing.identify(target, protocol_version);
        }
    }

    /// Wraps the reply so that its end is recorded; idle telemetry returns it as it is.
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
        self.span.is_disabled()
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
    }
}
