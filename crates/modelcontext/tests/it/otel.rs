//! Feature `otel`, with opentelemetry_sdk's in-memory exporters: one trace from the client's
//! span to the server's (in memory and over HTTP), the conventions' attributes and error
//! status, handler logs on the server span, malformed `traceparent`s ignored, and the
//! operation-duration histograms.

use std::sync::OnceLock;

use modelcontext::server::NoArgs;
use modelcontext::{Client, EraMode, McpServer, ToolDef};
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

/// Spans of this thread's tasks exported to memory until the guard is dropped.
struct Traces {
    exporter: InMemorySpanExporter,
    _provider: SdkTracerProvider,
    _guard: tracing::subscriber::DefaultGuard,
}

impl Traces {
    fn install() -> Traces {
        crate::observe::always_interested();
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("it"));
        let subscriber = tracing_subscriber::registry().with(layer);
        let guard = tracing::subscriber::set_default(subscriber);
        Traces { exporter, _provider: provider, _guard: guard }
    }

    fn spans(&self) -> Vec<SpanData> {
        self.exporter.get_finished_spans().expect("spans")
    }

    /// The one finished span named `name` of `kind`.
    fn one(&self, name: &str, kind: SpanKind) -> SpanData {
        let mut found: Vec<_> =
            self.spans().into_iter().filter(|s| s.name == name && s.span_kind == kind).collect();
        assert_eq!(found.len(), 1, "{name} {kind:?}: {:#?}", self.spans());
        found.remove(0)
    }
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| &kv.value)
}

fn text(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|v| v.as_str().into_owned())
}

/// `get_author` answers and logs, `sold_out` is a tool error.
fn server() -> McpServer {
    let get_author = ToolDef::new("get_author", |_: NoArgs| async {
        tracing::info!("looking the author up");
        "Frank Herbert"
    });
    let sold_out = ToolDef::new("sold_out", |_: NoArgs| async {
        Err::<String, _>(modelcontext::ToolError::new("sold out"))
    });
    McpServer::new("otel").tools([get_author, sold_out]).expect("tools")
}

/// One trace: the host's span > the client span > the server span, with the attributes.
fn assert_one_trace(traces: &Traces, transport: &str) {
    let host = traces.one("host", SpanKind::Internal);
    let client = traces.one("tools/call get_author", SpanKind::Client);
    let server = traces.one("tools/call get_author", SpanKind::Server);
    let trace = host.span_context.trace_id();
    assert_ne!(trace, TraceId::INVALID);
    assert_eq!(client.span_context.trace_id(), trace, "{transport}");
    assert_eq!(server.span_context.trace_id(), trace, "{transport}");
    assert_eq!(client.parent_span_id, host.span_context.span_id());
    assert_eq!(server.parent_span_id, client.span_context.span_id(), "{transport}");
    assert!(server.parent_span_is_remote);

    for span in [&client, &server] {
        assert_eq!(text(span, "mcp.method.name").as_deref(), Some("tools/call"));
        assert_eq!(text(span, "gen_ai.tool.name").as_deref(), Some("get_author"));
        assert_eq!(text(span, "gen_ai.operation.name").as_deref(), Some("execute_tool"));
        assert_eq!(text(span, "network.transport").as_deref(), Some(transport));
        assert!(text(span, "jsonrpc.request.id").is_some());
        assert!(text(span, "mcp.protocol.version").is_some());
        assert_eq!(attribute(span, "error.type"), None);
        assert_eq!(span.status, Status::Unset);
    }
    // The handler's log line is an event of the server span.
    let events: Vec<_> = server.events.iter().map(|e| e.name.to_string()).collect();
    assert_eq!(events, ["looking the author up"]);
}

#[tokio::test]
async fn one_trace_from_the_client_to_the_server_in_memory() {
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let traces = Traces::install();
        let client = Client::builder().era(mode).connect(server().in_memory()).await.expect("up");
        let call = client.call_tool("get_author", json!({}));
        call.instrument(tracing::info_span!("host")).await.expect("answered");
        drop(client);
        assert_one_trace(&traces, "pipe");
    }
}

#[cfg(feature = "http")]
#[tokio::test]
async fn one_trace_from_the_client_to_the_server_over_http() {
    let endpoint = server().http_endpoint();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { endpoint.serve(listener).await });
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let traces = Traces::install();
        let transport =
            modelcontext::HttpTransport::new(&format!("http://{addr}/mcp")).expect("url");
        let client = Client::builder().era(mode).connect(transport).await.expect("up");
        let call = client.call_tool("get_author", json!({}));
        call.instrument(tracing::info_span!("host")).await.expect("answered");
        client.close().await;
        assert_one_trace(&traces, "tcp");
        if mode == EraMode::Handshake {
            let server = traces.one("tools/call get_author", SpanKind::Server);
            assert!(text(&server, "mcp.session.id").is_some(), "a handshake-era HTTP session");
            // The client knows the session from its transport: the same id on its span.
            let client = traces.one("tools/call get_author", SpanKind::Client);
            assert_eq!(text(&client, "mcp.session.id"), text(&server, "mcp.session.id"));
        } else {
            let client = traces.one("tools/call get_author", SpanKind::Client);
            assert_eq!(text(&client, "mcp.session.id"), None, "no session in the modern era");
        }
    }
}

#[tokio::test]
async fn tool_and_protocol_errors_set_the_error_attributes_and_status() {
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let traces = Traces::install();
        let client = Client::builder().era(mode).connect(server().in_memory()).await.expect("up");
        let result = client.call_tool("sold_out", json!({})).await.expect("a tool error");
        assert!(result.is_error());
        client.call_tool("missing", json!({})).await.expect_err("a protocol error");
        drop(client);

        for kind in [SpanKind::Client, SpanKind::Server] {
            let tool_error = traces.one("tools/call sold_out", kind.clone());
            assert_eq!(text(&tool_error, "error.type").as_deref(), Some("tool_error"), "{mode:?}");
            assert!(matches!(tool_error.status, Status::Error { .. }), "{kind:?}");
            assert_eq!(attribute(&tool_error, "rpc.response.status_code"), None);

            let protocol = traces.one("tools/call missing", kind.clone());
            assert_eq!(text(&protocol, "error.type").as_deref(), Some("-32602"));
            assert_eq!(text(&protocol, "rpc.response.status_code").as_deref(), Some("-32602"));
            let Status::Error { description } = &protocol.status else {
                panic!("{kind:?}: {:?}", protocol.status)
            };
            assert!(description.contains("missing"), "{description}");
        }
    }
}

/// A resource handler that panics is answered -32603; its span says so.
#[tokio::test]
async fn a_panicking_handler_sets_the_error_attributes() {
    let traces = Traces::install();
    let broken = modelcontext::ResourceDef::new("test://broken", || async {
        if true {
            panic!("broken");
        }
        "never"
    });
    let server = McpServer::new("otel").resource(broken).expect("resource");
    let client = Client::connect(server.in_memory()).await.expect("up");
    let _ = client.read_resource("test://broken").await;
    drop(client);
    let span = traces.one("resources/read", SpanKind::Server);
    assert_eq!(text(&span, "mcp.resource.uri").as_deref(), Some("test://broken"));
    assert!(text(&span, "error.type").is_some(), "{span:#?}");
    assert!(matches!(span.status, Status::Error { .. }));
}

/// A `traceparent` of the wrong length, with bad hex, with all-zero ids or an unknown
/// version is ignored: the request is answered, and the server span starts its own trace.
#[tokio::test]
async fn a_malformed_traceparent_is_ignored() {
    let bad = [
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
        "00-0af7651916cd43dd8448eb211c80319X-b7ad6b7169203331-01",
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
        "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "",
    ];
    for traceparent in bad {
        let traces = Traces::install();
        let mut wire = crate::support::Wire::start(server(), "2025-11-25");
        wire.initialize().await;
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "get_author", "arguments": {},
            "_meta": {"traceparent": traceparent, "tracestate": "k=v"}}});
        let answer = wire.call(&call.to_string()).await;
        assert!(answer.contains("Frank Herbert"), "{traceparent}: {answer}");
        drop(wire);
        let span = traces.one("tools/call get_author", SpanKind::Server);
        assert_eq!(span.parent_span_id, SpanId::INVALID, "{traceparent}");
        assert!(!span.parent_span_is_remote);
    }
}

/// The meter provider of this test binary, set once before any server of the metric test is
/// built (servers read it on their first connection).
fn metrics() -> &'static (SdkMeterProvider, InMemoryMetricExporter) {
    static METRICS: OnceLock<(SdkMeterProvider, InMemoryMetricExporter)> = OnceLock::new();
    METRICS.get_or_init(|| {
        let exporter = InMemoryMetricExporter::default();
        let reader = PeriodicReader::builder(exporter.clone()).build();
        let provider = SdkMeterProvider::builder().with_reader(reader).build();
        opentelemetry::global::set_meter_provider(provider.clone());
        (provider, exporter)
    })
}

/// The count of the last exported data point of histogram `name` that carries `attribute`.
fn histogram_count(name: &str, attribute: &KeyValue) -> Option<(u64, Vec<KeyValue>)> {
    let (provider, exporter) = metrics();
    provider.force_flush().expect("flush");
    let exported = exporter.get_finished_metrics().expect("metrics");
    let mut found = None;
    for resource in &exported {
        for metric in resource.scope_metrics().flat_map(|scope| scope.metrics()) {
            let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() else {
                continue;
            };
            if metric.name() != name {
                continue;
            }
            for point in histogram.data_points() {
                let attributes: Vec<KeyValue> = point.attributes().cloned().collect();
                if attributes.contains(attribute) {
                    found = Some((point.count(), attributes));
                }
            }
        }
    }
    found
}

#[tokio::test]
async fn n_calls_give_histograms_with_count_n_and_the_attributes() {
    metrics();
    let counted = ToolDef::new("counted_for_metrics", |_: NoArgs| async { "ok" });
    let server = McpServer::new("metrics").tool(counted).expect("tool");
    let client = Client::connect(server.in_memory()).await.expect("up");
    const N: u64 = 5;
    for _ in 0..N {
        client.call_tool("counted_for_metrics", json!({})).await.expect("answered");
    }
    drop(client);
    let tool = KeyValue::new("gen_ai.tool.name", "counted_for_metrics");
    for name in ["mcp.server.operation.duration", "mcp.client.operation.duration"] {
        let (count, attributes) = histogram_count(name, &tool).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(count, N, "{name}");
        for expected in [
            KeyValue::new("mcp.method.name", "tools/call"),
            KeyValue::new("gen_ai.operation.name", "execute_tool"),
            KeyValue::new("network.transport", "pipe"),
        ] {
            assert!(attributes.contains(&expected), "{name}: {attributes:?}");
        }
        assert!(attributes.iter().any(|kv| kv.key.as_str() == "mcp.protocol.version"));
    }
}

/// Over stateless HTTP, a request whose `_meta` has no trace context takes the HTTP
/// `traceparent` header's; one whose `_meta` has it keeps that, and links the header's.
#[cfg(feature = "http")]
#[tokio::test]
async fn an_http_traceparent_header_is_the_fallback_parent() {
    use http_body_util::{BodyExt, Full};
    const HEADER: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const META: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let (addr, serve) = server().http_endpoint().bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    let http = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<bytes::Bytes>>();
    for in_meta in [None, Some(META)] {
        let traces = Traces::install();
        let extra = in_meta.map(|tp| format!(r#""traceparent":"{tp}""#)).unwrap_or_default();
        let meta = crate::support::modern_meta("{}", &extra);
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"get_author","arguments":{{}},{meta}}}}}"#
        );
        let request = http::Request::post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "get_author")
            .header("traceparent", HEADER)
            .body(Full::new(bytes::Bytes::from(body)))
            .expect("request");
        let response = http.request(request).await.expect("response");
        let answer = response.into_body().collect().await.expect("body").to_bytes();
        assert!(String::from_utf8_lossy(&answer).contains("Frank Herbert"));
        let span = traces.one("tools/call get_author", SpanKind::Server);
        let (trace, parent) = match in_meta {
            None => ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"),
            Some(_) => ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"),
        };
        assert_eq!(span.span_context.trace_id().to_string(), trace, "{in_meta:?}");
        assert_eq!(span.parent_span_id.to_string(), parent);
        if in_meta.is_some() {
            let linked: Vec<_> =
                span.links.iter().map(|l| l.span_context.trace_id().to_string()).collect();
            assert!(linked.contains(&"4bf92f3577b34da6a3ce929d0e0e4736".to_owned()), "{linked:?}");
        }
    }
}

/// The same in a handshake-era HTTP session: each POST's own `traceparent` header.
#[cfg(feature = "http")]
#[tokio::test]
async fn an_http_traceparent_header_reaches_a_session_request() {
    use http_body_util::{BodyExt, Full};
    const HEADER: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let (addr, serve) = server().http_endpoint().bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    let http = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<bytes::Bytes>>();
    let post = |session: Option<String>, traceparent: Option<&str>, body: String| {
        let mut request = http::Request::post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        if let Some(traceparent) = traceparent {
            request = request.header("traceparent", traceparent);
        }
        http.request(request.body(Full::new(bytes::Bytes::from(body))).expect("request"))
    };
    let traces = Traces::install();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"it","version":"1"}}}"#;
    let response = post(None, None, init.to_owned()).await.expect("initialize");
    let session = response.headers()["mcp-session-id"].to_str().expect("ascii").to_owned();
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_author","arguments":{}}}"#;
    let response = post(Some(session), Some(HEADER), call.to_owned()).await.expect("call");
    let answer = response.into_body().collect().await.expect("body").to_bytes();
    assert!(String::from_utf8_lossy(&answer).contains("Frank Herbert"));
    let span = traces.one("tools/call get_author", SpanKind::Server);
    assert_eq!(span.span_context.trace_id().to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(span.parent_span_id.to_string(), "00f067aa0ba902b7");
    assert!(text(&span, "mcp.session.id").is_some());
}

#[tokio::test]
async fn a_request_to_the_client_continues_the_trace_of_the_call_that_asked() {
    use modelcontext::server::Context;
    let roots = ToolDef::new("roots", |cx: Context, _: NoArgs| async move {
        Ok::<_, modelcontext::McpError>(cx.list_roots().await?.len().to_string())
    });
    let server = McpServer::new("asks").tool(roots).expect("tool");
    let traces = Traces::install();
    let client = Client::builder()
        .era(EraMode::Handshake)
        .on_roots(|| async { Ok(vec![modelcontext::types::Root::new("file:///books")]) })
        .connect(server.in_memory())
        .await
        .expect("up");
    client.call_tool("roots", json!({})).await.expect("answered");
    drop(client);

    let call = traces.one("tools/call roots", SpanKind::Server);
    let asked = traces.one("roots/list", SpanKind::Client);
    let answered = traces.one("roots/list", SpanKind::Server);
    let trace = call.span_context.trace_id();
    assert_eq!(asked.span_context.trace_id(), trace);
    assert_eq!(answered.span_context.trace_id(), trace);
    assert_eq!(asked.parent_span_id, call.span_context.span_id());
    assert_eq!(answered.parent_span_id, asked.span_context.span_id());
    assert!(answered.parent_span_is_remote);
    assert_eq!(text(&asked, "mcp.method.name").as_deref(), Some("roots/list"));
}
