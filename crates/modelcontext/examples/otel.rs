//! OpenTelemetry (feature `otel`): one trace from a host's span through an MCP client call to
//! the server's handler, and the operation metrics, exported with OTLP or to stdout.
//!
//! `cargo run --example otel --features otel` starts an HTTP server on a loopback port, calls
//! its tool three times from a client in the same process under one application span, then
//! flushes: the spans (`call_tools` > `tools/call add` CLIENT > `tools/call add` SERVER, one
//! trace id) and the `mcp.*.operation.duration` histograms. The `tracing` log lines go to
//! stderr (`RUST_LOG` honoured).
//!
//! With `OTEL_EXPORTER_OTLP_ENDPOINT` set (`http://localhost:4318`, a collector's OTLP/HTTP
//! port), spans and metrics are posted there as OTLP/HTTP protobuf (`/v1/traces`,
//! `/v1/metrics`; the exporter's other `OTEL_EXPORTER_OTLP_*` variables apply too), through the
//! SDK's own HTTP client (`net::OtlpHttpClient`): no reqwest, no gRPC stack. Without it they print on
//! stdout.

use modelcontext::{Client, HttpTransport, McpServer, tool};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde_json::json;
use tracing::Instrument;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    tracing::info!(a, b, "adding");
    a + b
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (tracer_provider, meter_provider) = init_telemetry()?;

    let server = McpServer::new("otel-example").tool(add::tool())?;
    let (addr, serve) = server.http_endpoint().bind("127.0.0.1:0").await?;
    tokio::spawn(serve);

    let client = Client::connect(HttpTransport::new(&format!("http://{addr}/mcp"))?).await?;
    async {
        for a in 1..=3 {
            let result = client.call_tool("add", json!({"a": a, "b": 2})).await?;
            tracing::info!(?result.structured_content, "answered");
        }
        Ok::<_, modelcontext::Error>(())
    }
    .instrument(tracing::info_span!("call_tools"))
    .await?;
    client.close().await;

    tracer_provider.shutdown()?;
    meter_provider.shutdown()?;
    Ok(())
}

/// Spans through `tracing-opentelemetry` to the exporter, metrics to the global meter
/// provider (set before the first request: the SDK reads it once), logs to stderr. The SDK's
/// request spans are at DEBUG level: the filter must let them through.
fn init_telemetry() -> Result<(SdkTracerProvider, SdkMeterProvider), Box<dyn std::error::Error>> {
    let (tracer_provider, meter_provider) = match std::env::var_os("OTEL_EXPORTER_OTLP_ENDPOINT") {
        Some(_) => otlp_providers()?,
        None => stdout_providers(),
    };
    opentelemetry::global::set_meter_provider(meter_provider.clone());

    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,modelcontext=debug"));
    let otel = tracing_opentelemetry::layer().with_tracer(tracer_provider.tracer("otel-example"));
    let logs = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    tracing_subscriber::registry().with(filter).with(otel).with(logs).init();
    Ok((tracer_provider, meter_provider))
}

/// OTLP/HTTP exporters; the endpoint comes from `OTEL_EXPORTER_OTLP_ENDPOINT`, to which they
/// append `/v1/traces` and `/v1/metrics`. Spans are batched: exporting one at a time would post
/// once per span.
fn otlp_providers() -> Result<(SdkTracerProvider, SdkMeterProvider), Box<dyn std::error::Error>> {
    use opentelemetry_otlp::WithHttpConfig;
    let http = modelcontext::net::OtlpHttpClient::new(modelcontext::net::HttpClient::new());
    let spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(http.clone())
        .build()?;
    let metrics =
        opentelemetry_otlp::MetricExporter::builder().with_http().with_http_client(http).build()?;
    let tracer_provider = SdkTracerProvider::builder().with_batch_exporter(spans).build();
    let meter_provider = SdkMeterProvider::builder().with_periodic_exporter(metrics).build();
    Ok((tracer_provider, meter_provider))
}

fn stdout_providers() -> (SdkTracerProvider, SdkMeterProvider) {
    let tracer_provider = SdkTracerProvider::builder()
        .with_simple_exporter(opentelemetry_stdout::SpanExporter::default())
        .build();
    let meter_provider = SdkMeterProvider::builder()
        .with_periodic_exporter(opentelemetry_stdout::MetricExporter::default())
        .build();
    (tracer_provider, meter_provider)
}
