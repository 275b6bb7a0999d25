//! `mcp serve`'s OTLP export (feature `otel`): the request spans and the SDK's operation
//! metrics as OTLP/HTTP protobuf, through the SDK's own HTTP client, to the collector the
//! standard variables name. Spans go when `OTEL_EXPORTER_OTLP_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, metrics when `OTEL_EXPORTER_OTLP_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` is; with none, nothing is built and nothing runs. The
//! exporters read the other `OTEL_EXPORTER_OTLP_*` variables (headers, timeout) themselves.

use modelcontext::net::{HttpClient, OtlpHttpClient};
use opentelemetry::Key;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{ExporterBuildError, MetricExporter, SpanExporter, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use tracing_subscriber::filter::{LevelFilter, Targets};

use crate::failure::Failure;

/// `service.name` when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` gives one.
const SERVICE_NAME: &str = "mcp-serve";

/// The providers exporting, one per signal a variable asks for.
pub struct Exporters {
    spans: Option<SdkTracerProvider>,
    metrics: Option<SdkMeterProvider>,
}

impl Exporters {
    /// The exporters the environment asks for, or `None` when it names no collector. The meter
    /// provider is made the global one: the SDK reads it when the first connection starts.
    pub fn from_env() -> Result<Option<Exporters>, Failure> {
        let wants_spans =
            named(&["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]);
        let wants_metrics =
            named(&["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"]);
        if !wants_spans && !wants_metrics {
            return Ok(None);
        }
        let http = OtlpHttpClient::new(HttpClient::new());
        let resource = resource();
        let spans = wants_spans.then(|| span_provider(http.clone(), resource.clone()));
        let metrics = wants_metrics.then(|| meter_provider(http, resource));
        let exporters = Exporters { spans: spans.transpose()?, metrics: metrics.transpose()? };
        if let Some(metrics) = &exporters.metrics {
            opentelemetry::global::set_meter_provider(metrics.clone());
        }
        Ok(Some(exporters))
    }

    /// The tracer the span layer hands spans to, when spans are exported.
    pub fn tracer(&self) -> Option<SdkTracer> {
        Some(self.spans.as_ref()?.tracer("mcp-serve"))
    }

    /// Exports what is buffered and stops. Off the runtime's threads: the processors' threads
    /// block on exports that run as tasks on this runtime.
    pub async fn shutdown(self) {
        let stopped = tokio::task::spawn_blocking(move || {
            let spans = self.spans.map(|provider| provider.shutdown());
            let metrics = self.metrics.map(|provider| provider.shutdown());
            spans.into_iter().chain(metrics).filter_map(Result::err).collect::<Vec<_>>()
        });
        for error in stopped.await.unwrap_or_default() {
            eprintln!("mcp serve: OTLP export at shutdown: {error}");
        }
    }
}

/// The span layer's own filter, not `RUST_LOG`'s: the SDK's request spans are at DEBUG level,
/// and the logs stay as asked.
pub fn span_filter() -> Targets {
    Targets::new().with_target("modelcontext", LevelFilter::DEBUG).with_default(LevelFilter::INFO)
}

/// Whether any of `variables` is set to something.
fn named(variables: &[&str]) -> bool {
    variables.iter().any(|name| std::env::var_os(name).is_some_and(|value| !value.is_empty()))
}

/// The detected resource (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`), named `mcp-serve`
/// when they give no name (the SDK's fallback is `unknown_service`).
fn resource() -> Resource {
    let detected = Resource::builder().build();
    let name = detected.get(&Key::from_static_str("service.name"));
    match name {
        Some(name) if !name.as_str().starts_with("unknown_service") => detected,
        _ => Resource::builder().with_service_name(SERVICE_NAME).build(),
    }
}

/// Spans are batched: exporting one at a time would post once per span.
fn span_provider(http: OtlpHttpClient, resource: Resource) -> Result<SdkTracerProvider, Failure> {
    let exporter =
        SpanExporter::builder().with_http().with_http_client(http).build().map_err(unusable)?;
    Ok(SdkTracerProvider::builder().with_resource(resource).with_batch_exporter(exporter).build())
}

fn meter_provider(http: OtlpHttpClient, resource: Resource) -> Result<SdkMeterProvider, Failure> {
    let exporter =
        MetricExporter::builder().with_http().with_http_client(http).build().map_err(unusable)?;
    Ok(SdkMeterProvider::builder().with_resource(resource).with_periodic_exporter(exporter).build())
}

fn unusable(error: ExporterBuildError) -> Failure {
    Failure::Usage(format!("OTEL_EXPORTER_OTLP_*: {error}"))
}
