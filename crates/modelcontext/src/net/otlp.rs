//! The OTLP/HTTP exporters' HTTP client (features `otel` and `http`): the SDK's own
//! [`HttpClient`] (its proxies, TLS roots and connection pool) behind `opentelemetry-http`'s
//! `HttpClient` trait, so that `opentelemetry-otlp` without its default features (no reqwest,
//! no tonic) posts exports through it.

use bytes::Bytes;
use http::{Request, Response};
use opentelemetry_http::HttpError;

use super::HttpClient;

/// A collector answers an export with a small protobuf message; anything larger is not one.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// Posts OTLP exports through an [`HttpClient`], on the tokio runtime it was made on.
///
/// ```no_run
/// # fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use modelcontext::net::{HttpClient, OtlpHttpClient};
/// use opentelemetry_otlp::WithHttpConfig;
/// // Inside a tokio runtime; the endpoint comes from `OTEL_EXPORTER_OTLP_ENDPOINT`.
/// let spans = opentelemetry_otlp::SpanExporter::builder()
///     .with_http()
///     .with_http_client(OtlpHttpClient::new(HttpClient::new()))
///     .build()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct OtlpHttpClient {
    http: HttpClient,
    runtime: tokio::runtime::Handle,
}

impl OtlpHttpClient {
    /// A client on the current tokio runtime.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, as [`tokio::runtime::Handle::current`] does.
    pub fn new(http: HttpClient) -> OtlpHttpClient {
        OtlpHttpClient { http, runtime: tokio::runtime::Handle::current() }
    }
}

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for OtlpHttpClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        // The batch span processor and the periodic metric reader export from threads of their
        // own, outside any runtime (`futures::executor::block_on`); hyper needs tokio's reactor,
        // so the request runs as a task on the runtime and the exporter awaits its end.
        let http = self.http.clone();
        let exchange =
            self.runtime.spawn(async move { http.send_buffered(request, MAX_ANSWER_BYTES).await });
        // A 4xx/5xx is returned as it is: the exporter checks the status itself.
        Ok(exchange.await??)
    }
}
