//! `mcp serve`'s logs and telemetry (feature `gateway`): `RUST_LOG` logs and request spans on
//! stderr (stdout may carry the protocol) and, with the `otel` feature, the spans and the SDK's
//! operation metrics exported over OTLP when a collector is named (see [`super::otlp`]).

use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::{Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

use crate::failure::Failure;

/// What must be flushed before the process ends: the exporters, when any run.
pub struct Telemetry {
    #[cfg(feature = "otel")]
    exporters: Option<super::otlp::Exporters>,
}

impl Telemetry {
    /// Installs the log subscriber, with the OTLP span layer beside it when exporting.
    pub fn init() -> Result<Telemetry, Failure> {
        let logs = tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_filter(EnvFilter::from_default_env());
        let registry = tracing_subscriber::registry().with(logs);
        #[cfg(feature = "otel")]
        {
            let exporters = super::otlp::Exporters::from_env()?;
            let spans = exporters.as_ref().and_then(super::otlp::Exporters::tracer).map(|tracer| {
                let spans = tracing_opentelemetry::layer().with_tracer(tracer);
                spans.with_filter(super::otlp::span_filter())
            });
            let _ = registry.with(spans).try_init();
            Ok(Telemetry { exporters })
        }
        #[cfg(not(feature = "otel"))]
        {
            let _ = registry.try_init();
            Ok(Telemetry {})
        }
    }

    /// Exports what is still buffered, and stops the exporters.
    pub async fn flush(self) {
        #[cfg(feature = "otel")]
        if let Some(exporters) = self.exporters {
            exporters.shutdown().await;
        }
    }
}
