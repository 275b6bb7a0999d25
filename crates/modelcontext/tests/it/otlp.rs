//! Features `otel` and `http`: `net::OtlpHttpClient` (the SDK's `HttpClient` behind
//! `opentelemetry-http`'s trait), as `examples/otel.rs` uses it, posts real exports to a tiny
//! OTLP/HTTP receiver on loopback.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::post;
use modelcontext::server::NoArgs;
use modelcontext::{Client, McpServer, ToolDef};
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

/// One export as the receiver saw it.
#[derive(Debug, Clone)]
struct Export {
    path: &'static str,
    content_type: String,
    body: Bytes,
}

type Received = Arc<Mutex<Vec<Export>>>;

/// An OTLP/HTTP receiver on a loopback port: records every export and answers with an empty
/// (protobuf) export response.
async fn receiver() -> (String, Received) {
    let received = Received::default();
    let record = |path: &'static str| {
        move |State(received): State<Received>, headers: HeaderMap, body: Bytes| async move {
            let content_type = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            received.lock().expect("lock").push(Export { path, content_type, body });
            (StatusCode::OK, [(header::CONTENT_TYPE, "application/x-protobuf")], Bytes::new())
        }
    };
    let app = Router::new()
        .route("/v1/traces", post(record("/v1/traces")))
        .route("/v1/metrics", post(record("/v1/metrics")))
        .with_state(received.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), received)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

/// The exporters built as the example builds them, with the receiver's URLs in place of
/// `OTEL_EXPORTER_OTLP_ENDPOINT` (tests must not set process-wide variables).
fn providers(base: &str) -> (SdkTracerProvider, SdkMeterProvider) {
    let no_proxy = modelcontext::net::HttpClient::builder().no_proxy().build();
    let http = modelcontext::net::OtlpHttpClient::new(no_proxy);
    let spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(http.clone())
        .with_endpoint(format!("{base}/v1/traces"))
        .build()
        .expect("span exporter");
    let metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_http_client(http)
        .with_endpoint(format!("{base}/v1/metrics"))
        .build()
        .expect("metric exporter");
    (
        SdkTracerProvider::builder().with_batch_exporter(spans).build(),
        SdkMeterProvider::builder().with_periodic_exporter(metrics).build(),
    )
}

#[tokio::test]
async fn the_otlp_http_client_exports_spans_and_metrics_as_protobuf() {
    crate::observe::always_interested();
    let (base, received) = receiver().await;
    let (tracer_provider, meter_provider) = providers(&base);

    let layer = tracing_opentelemetry::layer().with_tracer(tracer_provider.tracer("it"));
    let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
    let add = ToolDef::new("add", |_: NoArgs| async { "3" });
    let server = McpServer::new("otlp").tool(add).expect("tool");
    let client = Client::connect(server.in_memory()).await.expect("up");
    client.call_tool("add", json!({})).await.expect("answered");
    drop(client);
    drop(guard);
    meter_provider.meter("it").u64_counter("otlp.test.calls").build().add(1, &[]);

    // The processors export from threads of their own and wait there for the request, which
    // runs on this (current-thread) runtime: flush off it, and keep it running meanwhile.
    let flushed = tokio::task::spawn_blocking(move || {
        tracer_provider.force_flush().and(tracer_provider.shutdown())?;
        meter_provider.force_flush().and(meter_provider.shutdown())
    });
    flushed.await.expect("joined").expect("exported");

    let exports = received.lock().expect("lock").clone();
    let traces: Vec<_> = exports.iter().filter(|e| e.path == "/v1/traces").collect();
    let metrics: Vec<_> = exports.iter().filter(|e| e.path == "/v1/metrics").collect();
    assert!(!traces.is_empty() && !metrics.is_empty(), "{exports:?}");
    for export in &exports {
        assert_eq!(export.content_type, "application/x-protobuf");
    }
    // Protobuf keeps strings as they are: the span's name and the metric's are in the bytes.
    assert!(traces.iter().any(|e| contains(&e.body, b"tools/call add")), "{traces:?}");
    assert!(metrics.iter().any(|e| contains(&e.body, b"otlp.test.calls")), "{metrics:?}");
}
