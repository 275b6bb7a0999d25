//! `mcp serve` built with `otel`: its spans and the SDK's operation metrics posted as OTLP/HTTP
//! protobuf to the collector `OTEL_EXPORTER_OTLP_ENDPOINT` names, flushed when SIGTERM stops it.

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Uri, header};
use serde_json::json;

use super::{Gateway, text};
use crate::bookshop;

/// Every export a collector was sent: its path and its protobuf body.
type Exports = Arc<Mutex<Vec<(String, Bytes)>>>;

/// A collector on a loopback port: keeps each export and answers it with an empty export
/// response (nothing rejected).
async fn collector() -> (String, Exports) {
    let exports = Exports::default();
    let keep = |State(exports): State<Exports>, uri: Uri, body: Bytes| async move {
        exports.lock().expect("lock").push((uri.path().to_owned(), body));
        ([(header::CONTENT_TYPE, "application/x-protobuf")], Bytes::new())
    };
    let app = axum::Router::new().fallback(keep).with_state(Arc::clone(&exports));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, exports)
}

/// The bodies posted to `path`.
fn posted(exports: &Exports, path: &str) -> Vec<Bytes> {
    let exports = exports.lock().expect("lock");
    exports.iter().filter(|(to, _)| to == path).map(|(_, body)| body.clone()).collect()
}

fn contains(body: &[u8], needle: &[u8]) -> bool {
    body.windows(needle.len()).any(|window| window == needle)
}

/// A string attribute as protobuf encodes it: a `KeyValue` (key, field 1; value, field 2) whose
/// `AnyValue` holds `string_value` (field 1), each length-delimited (short strings only).
fn string_attribute(key: &str, value: &str) -> Vec<u8> {
    let mut encoded = vec![0x0a, key.len() as u8];
    encoded.extend_from_slice(key.as_bytes());
    encoded.extend_from_slice(&[0x12, value.len() as u8 + 2, 0x0a, value.len() as u8]);
    encoded.extend_from_slice(value.as_bytes());
    encoded
}

/// Sends SIGTERM and waits for the exit status.
async fn terminate(gateway: &mut Gateway) -> std::process::ExitStatus {
    let pid = gateway.child.id().to_string();
    let sent = Command::new("kill").args(["-TERM", &pid]).status();
    assert!(sent.expect("kill runs").success());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = gateway.child.try_wait().expect("waits") {
            return status;
        }
        assert!(Instant::now() < deadline, "mcp serve still runs 20 s after SIGTERM");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn spans_and_metrics_reach_the_collector_and_sigterm_flushes_them() {
    let (base, exports) = collector().await;
    let shop = format!("'{}'", bookshop().display());
    let mut gateway =
        Gateway::start(&["--stdio", &shop], &[("OTEL_EXPORTER_OTLP_ENDPOINT", base.as_str())]);
    let client = gateway.client().await;
    let result = client.call_tool("get_author", json!({"title": "Dune"})).await.expect("calls");
    assert_eq!(text(&result), "Frank Herbert");
    client.close().await;
    // The batch and periodic exporters would wait seconds more: only the flush at the
    // signal sends them this early.
    assert!(terminate(&mut gateway).await.success(), "SIGTERM is a clean stop");

    let traces = posted(&exports, "/v1/traces");
    let service = string_attribute("service.name", "mcp-serve");
    assert!(
        traces
            .iter()
            .any(|body| contains(body, &service) && contains(body, b"tools/call get_author")),
        "{traces:?}"
    );
    let metrics = posted(&exports, "/v1/metrics");
    assert!(
        metrics.iter().any(|body| contains(body, b"mcp.server.operation.duration")),
        "{metrics:?}"
    );
}
