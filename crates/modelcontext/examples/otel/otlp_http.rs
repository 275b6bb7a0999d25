//! The OTLP/HTTP exporters' HTTP client: the SDK's own [`modelcontext::net::HttpClient`] (its
//! proxies, TLS roots and connection pool), behind `opentelemetry-http`'s `HttpClient` trait.
//! Shared with the `otel` integration test, which runs it against a receiver of its own.

use bytes::Bytes;
use http::{Request, Response};
use opentelemetry_http::HttpError;

/// A collector answers an export with a small protobuf message; anything larger is not one.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// Posts OTLP exports through the SDK's HTTP client, on the tokio runtime it was made on.
#[derive(Debug, Clone)]
pub struct OtlpHttpClient {
    http: modelcontext::net::HttpClient,
    runtime: tokio::runtime::Handle,
}

impl OtlpHttpClient {
    /// A client on the current tokio runtime. Must be called inside one.
    pub fn new(http: modelcontext::net::HttpClient) -> OtlpHttpClient {
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
