//! `http_request`: raw HTTP/1.1 bytes into our Streamable HTTP service, served by hyper's
//! HTTP/1.1 connection over an in-memory pipe.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use http::Request;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use modelcontext_types::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::ServiceExt;

use crate::server::http::HttpOptions;
use crate::transport::sse::SseDecoder;

/// The statuses the endpoint answers with (`server/http/`): 200 and 202, the client
/// errors of the spec's HTTP rules, 421 for a foreign Host. 5xx is never expected here: the
/// server has two tools that cannot fail and room for every session the input can open.
const ALLOWED: [u16; 11] = [200, 202, 400, 403, 404, 405, 406, 409, 413, 415, 421];

/// How long (in paused, auto-advancing Tokio time) the whole exchange may take. Time only
/// advances when every task waits, so this costs nothing unless something hangs.
const DEADLINE: Duration = Duration::from_secs(120);

/// One response the service gave, as it left the service.
#[derive(Debug, Default)]
struct Seen {
    status: u16,
    content_type: String,
    body: Vec<u8>,
    /// The body stream reached its end.
    done: bool,
}

type Log = Arc<Mutex<Vec<Seen>>>;

fn lock(log: &Log) -> std::sync::MutexGuard<'_, Vec<Seen>> {
    log.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records `response` in `log`, passing its body through unchanged.
fn record(response: Response, log: &Log) -> Response {
    let (parts, body) = response.into_parts();
    let content_type = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let index = {
        let mut log = lock(log);
        log.push(Seen { status: parts.status.as_u16(), content_type, ..Seen::default() });
        log.len() - 1
    };
    let (chunks, end) = (log.clone(), log.clone());
    let stream = body
        .into_data_stream()
        .inspect(move |chunk| {
            if let Ok(chunk) = chunk {
                lock(&chunks)[index].body.extend_from_slice(chunk);
            }
        })
        .chain(futures_util::stream::once(async move {
            lock(&end)[index].done = true;
            Ok(Bytes::new())
        }));
    Response::from_parts(parts, Body::from_stream(stream))
}

/// Every response: an allowed status, and a body that is empty, one JSON-RPC message, or an
/// SSE stream whose events carry JSON-RPC messages (or nothing: priming events).
fn check_seen(seen: &Seen) {
    let body = String::from_utf8_lossy(&seen.body);
    assert!(
        ALLOWED.contains(&seen.status),
        "status {} ({}): {body}",
        seen.status,
        seen.content_type
    );
    if seen.body.is_empty() {
        return;
    }
    if seen.content_type.starts_with("text/event-stream") {
        let mut decoder = SseDecoder::new(usize::MAX / 2);
        let mut events = Vec::new();
        decoder.feed(&seen.body, &mut events);
        for event in events {
            let event = event.expect("the server's events are within any limit");
            if !event.data.is_empty() {
                let decoded = Message::decode(event.data.as_bytes());
                assert!(decoded.is_ok(), "SSE event is not JSON-RPC: {:?}", event.data);
            }
        }
        return;
    }
    assert!(Message::decode(&seen.body).is_ok(), "body is not JSON-RPC: {body}");
}

/// The raw bytes go to hyper's HTTP/1.1 server connection, which serves our endpoint (the
/// `into_service()` tower service, two tools, a 2 KiB body limit, loopback Host/Origin only),
/// then the client side half-closes and reads until the server closes. Nothing panics;
/// every response the service produced passes `check_seen`; the exchange ends before the
/// deadline, unless a response is an SSE stream still open (a GET stream or a
/// `subscriptions/listen`, which stay open by design).
pub fn check_http_request(data: &[u8]) {
    let log: Log = Arc::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("runtime");
    let finished = runtime.block_on(exchange(data, log.clone()));
    drop(runtime);
    let log = lock(&log);
    for seen in log.iter() {
        check_seen(seen);
    }
    let open_stream =
        log.iter().any(|s| !s.done && s.content_type.starts_with("text/event-stream"));
    assert!(finished || open_stream, "the exchange hangs: {:?}", *log);
}

/// Runs the exchange; whether it ended before the deadline.
async fn exchange(data: &[u8], log: Log) -> bool {
    let options = HttpOptions::default().max_body_bytes(2048);
    let endpoint = super::engine_server().http_endpoint_with(options);
    let inner = endpoint.into_service();
    let service = tower::service_fn(move |request: Request<hyper::body::Incoming>| {
        let request = request.map(Body::new);
        let (inner, log) = (inner.clone(), log.clone());
        async move { inner.oneshot(request).await.map(|response| record(response, &log)) }
    });
    let (client, server) = tokio::io::duplex(64 * 1024);
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(10))
        .half_close(true)
        .serve_connection(TokioIo::new(server), TowerToHyperService::new(service));
    let serving = tokio::spawn(connection);
    let (mut reader, mut writer) = tokio::io::split(client);
    let talk = async move {
        let write = async {
            let _ = writer.write_all(data).await;
            let _ = writer.shutdown().await;
        };
        let read = async {
            let mut sink = [0u8; 4096];
            while let Ok(n) = reader.read(&mut sink).await {
                if n == 0 {
                    break;
                }
            }
        };
        tokio::join!(write, read);
    };
    let finished = tokio::time::timeout(DEADLINE, talk).await.is_ok();
    serving.abort();
    finished
}
