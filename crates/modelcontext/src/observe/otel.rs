//! Feature `otel`: W3C trace context across the wire, and the operation metrics.
//!
//! The client injects `traceparent` and `tracestate` into each request's `params._meta`; the
//! server extracts them as the parent of its span (the conventions' "context propagation"),
//! else an HTTP `traceparent` header, else the span stays the child of whatever `tracing` span
//! is current. What a peer sends is checked by the W3C propagator: a malformed `traceparent`
//! (wrong length, bad hex, all-zero ids, unknown version 0xff) yields no context and is ignored.
//!
//! Metrics go to the global meter provider (`opentelemetry::global`), read by a server when its
//! first connection starts and by a client when it connects: set it before.

use std::sync::Arc;
use std::time::Instant;

use modelcontext_types::{McpError, RawValue};
use opentelemetry::metrics::{Histogram, UpDownCounter};
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::{Map, Value};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::{Failure, Target, failure};

const TRACEPARENT: &str = "traceparent";
const TRACESTATE: &str = "tracestate";

/// The two W3C fields, wherever they were found.
#[derive(Default)]
pub(crate) struct Carrier<'a> {
    traceparent: Option<&'a str>,
    tracestate: Option<&'a str>,
}

impl Extractor for Carrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            TRACEPARENT => self.traceparent,
            TRACESTATE => self.tracestate,
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec![TRACEPARENT, TRACESTATE]
    }
}

impl<'a> Carrier<'a> {
    /// From a parsed `_meta`.
    #[cfg(feature = "http")]
    pub(crate) fn meta(meta: Option<&'a modelcontext_types::RequestMeta>) -> Carrier<'a> {
        let field = |key| meta.and_then(|m| m.other.get(key)).and_then(Value::as_str);
        Carrier { traceparent: field(TRACEPARENT), tracestate: field(TRACESTATE) }
    }

    /// From HTTP headers.
    #[cfg(feature = "http")]
    pub(crate) fn headers(headers: &'a http::HeaderMap) -> Carrier<'a> {
        let field = |key| headers.get(key).and_then(|v| v.to_str().ok());
        Carrier { traceparent: field(TRACEPARENT), tracestate: field(TRACESTATE) }
    }

    /// The remote span context this carries, if it is well formed.
    fn context(&self) -> Option<Context> {
        self.traceparent?;
        let cx = TraceContextPropagator::new().extract(self);
        cx.span().span_context().is_valid().then_some(cx)
    }
}

/// The `_meta` trace fields of raw request params, read without parsing the rest into values.
pub(crate) fn meta_of_raw(params: Option<&RawValue>) -> Option<RawMeta> {
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "_meta")]
        meta: Option<RawMeta>,
    }
    serde_json::from_str::<Params>(params?.get()).ok()?.meta
}

/// The trace fields of a `_meta` object.
#[derive(serde::Deserialize)]
pub(crate) struct RawMeta {
    traceparent: Option<String>,
    tracestate: Option<String>,
}

impl RawMeta {
    pub(crate) fn carrier(&self) -> Carrier<'_> {
        Carrier { traceparent: self.traceparent.as_deref(), tracestate: self.tracestate.as_deref() }
    }
}

/// Makes the context a client sent (`meta`, else `transport`, an HTTP request's headers) the
/// parent of the server span `span`, before the span is first entered. The context that was
/// current (a span around `serve`, an HTTP server span) is kept as a link, as the conventions
/// ask; with no remote context it stays the parent.
pub(crate) fn adopt_remote_parent(span: &Span, meta: Carrier<'_>, transport: Carrier<'_>) {
    if span.is_disabled() {
        return;
    }
    let (remote, link) = match (meta.context(), transport.context()) {
        (Some(meta), transport) => (meta, transport),
        (None, Some(transport)) => (transport, None),
        (None, None) => return,
    };
    let ambient = Span::current().context();
    if span.set_parent(remote).is_err() {
        return;
    }
    if let Some(link) = link {
        span.add_link(link.span().span_context().clone());
    }
    let ambient = ambient.span().span_context().clone();
    if ambient.is_valid() {
        span.add_link(ambient);
    }
}

/// Writes the context of the client span `span` into the request's `params._meta`.
pub(crate) fn inject(span: &Span, params: &mut Map<String, Value>) {
    if span.is_disabled() {
        return;
    }
    let cx = span.context();
    if !cx.span().span_context().is_valid() {
        return;
    }
    let meta = params.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(meta) = meta else { return };
    TraceContextPropagator::new().inject_context(&cx, &mut MetaInjector(meta));
}

/// [`inject`] into raw params (a server's request to its client, made before it has a span).
pub(crate) fn inject_raw(span: &Span, params: Box<RawValue>) -> Box<RawValue> {
    if span.is_disabled() {
        return params;
    }
    let Ok(mut map) = serde_json::from_str::<Map<String, Value>>(params.get()) else {
        return params;
    };
    inject(span, &mut map);
    serde_json::value::to_raw_value(&map).unwrap_or(params)
}

struct MetaInjector<'a>(&'a mut Map<String, Value>);

impl Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

/// The conventions' bucket boundaries for the operation durations, in seconds.
const DURATION_BOUNDARIES: [f64; 14] =
    [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

/// The instruments of one server or client, made from the global meter provider when it
/// first needs them.
#[cfg_attr(not(feature = "http"), allow(dead_code))] // the gauges of the HTTP endpoint
pub(crate) struct Instruments {
    server_duration: Histogram<f64>,
    client_duration: Histogram<f64>,
    in_flight: UpDownCounter<i64>,
    sessions: UpDownCounter<i64>,
    sse_streams: UpDownCounter<i64>,
}

impl std::fmt::Debug for Instruments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Instruments")
    }
}

impl Instruments {
    pub(crate) fn from_global() -> Arc<Instruments> {
        let meter = opentelemetry::global::meter("modelcontext");
        let duration = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(DURATION_BOUNDARIES.to_vec())
                .build()
        };
        let count = |name: &'static str, unit: &'static str, description: &'static str| {
            meter.i64_up_down_counter(name).with_unit(unit).with_description(description).build()
        };
        Arc::new(Instruments {
            server_duration: duration(
                "mcp.server.operation.duration",
                "MCP request duration as observed on the receiver",
            ),
            client_duration: duration(
                "mcp.client.operation.duration",
                "MCP request duration as observed on the sender",
            ),
            in_flight: count(
                "modelcontext.server.requests.in_flight",
                "{request}",
                "Requests the server is answering",
            ),
            sessions: count(
                "modelcontext.server.sessions.open",
                "{session}",
                "Open Streamable HTTP sessions",
            ),
            sse_streams: count(
                "modelcontext.server.sse_streams.open",
                "{stream}",
                "Open SSE streams of the HTTP endpoints",
            ),
        })
    }

    /// One more (`1`) or one less (`-1`) open HTTP session.
    #[cfg(feature = "http")]
    pub(crate) fn sessions(&self, delta: i64) {
        self.sessions.add(delta, &[]);
    }

    /// One more (`1`) or one less (`-1`) open SSE stream.
    #[cfg(feature = "http")]
    pub(crate) fn sse_streams(&self, delta: i64) {
        self.sse_streams.add(delta, &[]);
    }
}

/// Which side measures an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Server,
    Client,
}

/// One operation being timed, with the attributes known so far.
pub(crate) struct Timing {
    instruments: Arc<Instruments>,
    side: Side,
    start: Instant,
    attributes: Vec<KeyValue>,
}

impl Timing {
    /// Starts timing a request of `method` (counted in flight on the server side).
    pub(crate) fn start(
        instruments: Arc<Instruments>,
        side: Side,
        method: &str,
        transport: &'static str,
    ) -> Timing {
        if side == Side::Server {
            instruments.in_flight.add(1, &[]);
        }
        let attributes = vec![
            KeyValue::new("mcp.method.name", method.to_owned()),
            KeyValue::new("network.transport", transport),
        ];
        Timing { instruments, side, start: Instant::now(), attributes }
    }

    /// Adds what the parsed request says: its target and protocol version.
    pub(crate) fn identify(&mut self, target: Option<Target<'_>>, protocol_version: &str) {
        self.attributes.push(KeyValue::new("mcp.protocol.version", protocol_version.to_owned()));
        match target {
            Some(Target::Tool(name)) => {
                self.attributes.push(KeyValue::new("gen_ai.tool.name", name.to_owned()));
                self.attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            }
            Some(Target::Prompt(name)) => {
                self.attributes.push(KeyValue::new("gen_ai.prompt.name", name.to_owned()));
            }
            // The conventions make the URI opt-in on metrics (cardinality).
            Some(Target::Resource(_)) | None => {}
        }
    }

    /// Records the duration with the outcome's error attributes.
    pub(crate) fn finish(mut self, tool_call: bool, outcome: Result<&RawValue, &McpError>) {
        if let Some(failure) = failure(tool_call, outcome) {
            self.attributes.push(KeyValue::new("error.type", failure.error_type()));
            if let Failure::Rpc(error) = failure {
                let code = error.code.to_string();
                self.attributes.push(KeyValue::new("rpc.response.status_code", code));
            }
        }
        let seconds = self.start.elapsed().as_secs_f64();
        let instruments = &self.instruments;
        match self.side {
            Side::Server => {
                instruments.server_duration.record(seconds, &self.attributes);
            }
            Side::Client => instruments.client_duration.record(seconds, &self.attributes),
        }
    }
}

impl Drop for Timing {
    fn drop(&mut self) {
        // Finished or abandoned (a cancelled handler), the request is no longer in flight.
        if self.side == Side::Server {
            self.instruments.in_flight.add(-1, &[]);
        }
    }
}
