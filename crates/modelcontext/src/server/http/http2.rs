//! HTTP/2 connections of [`HttpEndpoint::serve`](super::HttpEndpoint::serve) (feature `tls`,
//! after ALPN chose `h2`), held to the same limits as HTTP/1.1 ones.
//!
//! hyper's HTTP/2 server enforces the per-stream and per-connection settings it advertises
//! (concurrent streams, header list size, windows, frame size, and the rapid-reset guards it
//! keeps by default). What it lacks we add here: the header *count* limit (431, as HTTP/1.1
//! answers), and an idle timeout. A connection with no open stream for
//! [`HttpOptions::header_read_timeout`] is closed with GOAWAY, as an idle kept-alive HTTP/1.1
//! connection is; that also drops a peer that never sends the HTTP/2 preface. An SSE stream
//! is an open stream, so a long-lived GET keeps its connection.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::rt::{Read, Write};
use hyper::server::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::watch;

use super::HttpOptions;

/// The HTTP/2 connection settings the options ask for.
pub(super) fn builder(options: &HttpOptions) -> http2::Builder<TokioExecutor> {
    let mut builder = http2::Builder::new(TokioExecutor::new());
    // The header list size counts 32 bytes per field on top of names and values (RFC 9113
    // §6.5.2), so the HTTP/1.1 head limit admits a little less in HTTP/2; close enough for a
    // bound whose purpose is memory.
    let header_list = u32::try_from(options.limits.max_header_bytes).unwrap_or(u32::MAX);
    builder
        .timer(TokioTimer::new())
        .max_concurrent_streams(options.tls.http2_max_concurrent_streams)
        .max_header_list_size(header_list)
        .initial_stream_window_size(options.tls.http2_initial_stream_window_size)
        .initial_connection_window_size(options.tls.http2_initial_connection_window_size)
        .max_frame_size(options.tls.http2_max_frame_size)
        .keep_alive_interval(options.tls.http2_keep_alive_interval)
        .keep_alive_timeout(options.tls.http2_keep_alive_timeout);
    builder
}

/// Serves one HTTP/2 connection until it ends, closing it once idle for `idle` (see the
/// module doc).
pub(super) async fn serve<IO>(
    builder: &http2::Builder<TokioExecutor>,
    io: IO,
    served: super::served::Served,
    max_headers: usize,
    idle: Duration,
) -> Result<(), hyper::Error>
where
    IO: Read + Write + Unpin + Send + 'static,
{
    let (open, _) = watch::channel(0usize);
    let service = Streams {
        inner: TowerToHyperService::new(served),
        open: open.clone(),
        max_headers,
        span: tracing::Span::current(),
    };
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);
    tokio::select! {
        ended = connection.as_mut() => return ended,
        () = idle_for(&open, idle) => connection.as_mut().graceful_shutdown(),
    }
    // GOAWAY is sent and no stream is open: the peer has as long again to hang up.
    match tokio::time::timeout(idle, connection).await {
        Ok(ended) => ended,
        Err(_) => Ok(()),
    }
}

/// Returns once no stream has been open for `limit` in a row.
async fn idle_for(open: &watch::Sender<usize>, limit: Duration) {
    let mut changes = open.subscribe();
    loop {
        if *changes.borrow_and_update() == 0 {
            if tokio::time::timeout(limit, changes.changed()).await.is_err() {
                return;
            }
        } else if changes.changed().await.is_err() {
            return;
        }
    }
}

/// The endpoint's service, counting the streams it answers (until each response body is
/// dropped, so an SSE stream counts while it lasts) and refusing too many header fields.
#[derive(Clone)]
struct Streams {
    inner: TowerToHyperService<super::served::Served>,
    open: watch::Sender<usize>,
    max_headers: usize,
    /// The connection's span (the accept loop's, so a span around `serve`): hyper runs each
    /// stream on a task of its own, which would otherwise start with no span at all.
    span: tracing::Span,
}

/// One open stream; counted down when dropped.
struct OpenStream(watch::Sender<usize>);

impl OpenStream {
    fn new(open: &watch::Sender<usize>) -> OpenStream {
        open.send_modify(|n| *n += 1);
        OpenStream(open.clone())
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

type ServiceFuture =
    Pin<Box<dyn Future<Output = Result<Response, std::convert::Infallible>> + Send>>;

impl hyper::service::Service<hyper::Request<Incoming>> for Streams {
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = ServiceFuture;

    fn call(&self, request: hyper::Request<Incoming>) -> Self::Future {
        if request.headers().len() > self.max_headers {
            // HTTP/1.1 answers the same (hyper's own limit there); the connection serves on.
            return Box::pin(async {
                Ok(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE.into_response())
            });
        }
        let stream = OpenStream::new(&self.open);
        let answer = self.span.in_scope(|| self.inner.call(request));
        Box::pin(tracing::Instrument::instrument(
            async move {
                let response = answer.await?;
                // The guard lives as long as the body, which hyper drops when the stream ends.
                Ok(response.map(|body| {
                    Body::new(body.map_frame(move |frame| {
                        let _ = &stream;
                        frame
                    }))
                }))
            },
            self.span.clone(),
        ))
    }
}
