//! Micro-benchmarks of the server's hot paths, through the public API only.
//!
//! `cargo bench -p modelcontext --bench server` (CI only compiles them). Every bench runs on a
//! current-thread runtime, so the numbers are one core's work with no cross-thread wake-ups:
//!
//! - `tools_call/*`: one `tools/call add` line in, one answer line out, through a server
//!   serving a byte pipe with the stdio framing: decode -> dispatch -> validate -> call ->
//!   encode. `c1` waits for each answer; `pipelined_64` writes 64 requests, then reads 64.
//! - `tools_list/1000_tools`: `tools/list` of a server with 1000 tools (~250 KB answer).
//! - `validation/invalid_args`: a call whose arguments fail the input schema: the validator's
//!   error path, answered without running the tool.
//! - `client/round_trip`: `Client::call_tool` against `McpServer::in_memory()` (both sides'
//!   framing, the client's typed result).
//! - `sse/progress_10`: a 2026-07-28 `tools/call` through the HTTP endpoint as a tower
//!   service (no sockets) whose tool reports progress 10 times, so the answer is an SSE
//!   stream of 11 events.
//! - `sse/handshake_progress_10`: the same call in a 2025-11-25 session, so each of the 11
//!   events is stored in the endpoint's `EventStore` (the in-memory one) and carries an id.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use modelcontext::{Client, Context, McpServer, ToolDef, tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::runtime::Runtime;

/// Add two integers
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// Count to `n`, reporting progress on the way.
#[tool]
async fn count(ctx: Context, n: u32) -> String {
    for i in 1..=n {
        ctx.report_progress(f64::from(i), Some(f64::from(n)), None).await;
    }
    format!("counted to {n}")
}

#[derive(Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Generated {
    x: i64,
    y: Option<String>,
}

fn server(extra_tools: usize) -> McpServer {
    let schema = json!({
        "type": "object",
        "properties": {
            "x": {"type": "integer", "description": "an integer"},
            "y": {"type": "string", "description": "a string"}
        },
        "required": ["x"]
    });
    let Value::Object(schema) = schema else { unreachable!() };
    let generated = (0..extra_tools).map(|i| {
        ToolDef::new(format!("tool_{i:04}"), |_: Generated| async { "ok" })
            .description(format!("Generated tool number {i} for tools/list benchmarks"))
            .input_schema(Map::clone(&schema))
    });
    McpServer::new("bench")
        .tool(add::tool())
        .and_then(|s| s.tool(count::tool()))
        .and_then(|s| s.tools(generated))
        .expect("tools register")
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// A server serving one byte pipe with the stdio framing, and the bench's end of it.
struct Wire {
    to_server: DuplexStream,
    from_server: BufReader<DuplexStream>,
    line: Vec<u8>,
}

impl Wire {
    /// Starts `server` on a pipe and completes the handshake-era `initialize`.
    async fn start(server: McpServer) -> Wire {
        let (to_server, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, from_server) = tokio::io::duplex(1 << 20);
        let stdio = modelcontext::Stdio::new(BufReader::new(server_in), server_out);
        tokio::spawn(async move { server.serve(stdio).await });
        let mut wire = Wire { to_server, from_server: BufReader::new(from_server), line: vec![] };
        wire.send(
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#,
        )
        .await;
        wire.receive().await;
        wire
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.to_server.write_all(bytes).await.expect("write");
    }

    /// Reads one answer line; returns its length.
    async fn receive(&mut self) -> usize {
        self.line.clear();
        let n = self.from_server.read_until(b'\n', &mut self.line).await.expect("read");
        assert!(n > 0, "the server closed the pipe");
        n
    }
}

fn call_line(id: u64, name: &str, arguments: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}
"#
    )
    .into_bytes()
}

fn tools_call(c: &mut Criterion) {
    let rt = runtime();
    let mut wire = rt.block_on(Wire::start(server(0)));
    let one = call_line(1, "add", r#"{"a":41,"b":1}"#);
    let mut group = c.benchmark_group("tools_call");
    group.throughput(Throughput::Elements(1));
    group.bench_function("c1", |b| {
        b.iter(|| {
            rt.block_on(async {
                wire.send(&one).await;
                black_box(wire.receive().await)
            })
        })
    });
    let batch: Vec<u8> =
        (0..64).flat_map(|i| call_line(100 + i, "add", r#"{"a":41,"b":1}"#)).collect();
    group.throughput(Throughput::Elements(64));
    group.bench_function("pipelined_64", |b| {
        b.iter(|| {
            rt.block_on(async {
                wire.send(&batch).await;
                for _ in 0..64 {
                    black_box(wire.receive().await);
                }
            })
        })
    });
    group.finish();
}

fn tools_list(c: &mut Criterion) {
    let rt = runtime();
    let mut wire = rt.block_on(Wire::start(server(1000)));
    let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}
"#;
    let bytes = rt.block_on(async {
        wire.send(list).await;
        wire.receive().await
    });
    assert!(bytes > 200_000, "tools/list of 1000 tools is only {bytes} bytes");
    let mut group = c.benchmark_group("tools_list");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("1000_tools", |b| {
        b.iter(|| {
            rt.block_on(async {
                wire.send(list).await;
                black_box(wire.receive().await)
            })
        })
    });
    group.finish();
}

fn validation(c: &mut Criterion) {
    let rt = runtime();
    let mut wire = rt.block_on(Wire::start(server(0)));
    let bad = call_line(1, "add", r#"{"a":"forty-one","b":1.5}"#);
    let answer = rt.block_on(async {
        wire.send(&bad).await;
        wire.receive().await;
        String::from_utf8_lossy(&wire.line).into_owned()
    });
    assert!(answer.contains(r#""isError":true"#), "not a validation failure: {answer}");
    c.bench_function("validation/invalid_args", |b| {
        b.iter(|| {
            rt.block_on(async {
                wire.send(&bad).await;
                black_box(wire.receive().await)
            })
        })
    });
}

fn client_round_trip(c: &mut Criterion) {
    let rt = runtime();
    let server = server(0);
    // `in_memory` spawns the server, so it runs inside the runtime.
    let client = rt.block_on(async { Client::connect(server.in_memory()).await }).expect("connect");
    let args = json!({"a": 41, "b": 1});
    c.bench_function("client/round_trip", |b| {
        b.iter(|| {
            rt.block_on(async {
                let result = client.call_tool("add", args.clone()).await.expect("call");
                black_box(result)
            })
        })
    });
    rt.block_on(client.close());
}

fn sse(c: &mut Criterion) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    let rt = runtime();
    let service = server(0).http_endpoint().into_service();
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": "count", "arguments": {"n": 10},
            "_meta": {
                "progressToken": "p",
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    })
    .to_string();
    let post = || {
        http::Request::post("/mcp")
            .header("host", "127.0.0.1")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "count")
            .body(axum::body::Body::from(body.clone()))
            .expect("request")
    };
    let once = || {
        let service = service.clone();
        let request = post();
        async move {
            let response = service.oneshot(request).await.expect("infallible");
            assert_eq!(response.status(), 200);
            response.into_body().collect().await.expect("body").to_bytes()
        }
    };
    let stream = rt.block_on(once());
    let text = String::from_utf8_lossy(&stream);
    assert_eq!(
        text.matches("event: message").count(),
        11,
        "not 10 progress events + result: {text}"
    );
    c.bench_function("sse/progress_10", |b| {
        b.iter(|| rt.block_on(async { black_box(once().await) }))
    });
}

/// A handshake-era POST of `body` to the endpoint, in `session` if given.
fn handshake_post(body: &str, session: Option<&str>) -> http::Request<axum::body::Body> {
    let mut request = http::Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.body(axum::body::Body::from(body.to_owned())).expect("request")
}

fn sse_handshake(c: &mut Criterion) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    let rt = runtime();
    let service = server(0).http_endpoint().into_service();
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}
    })
    .to_string();
    let session = rt.block_on(async {
        let response =
            service.clone().oneshot(handshake_post(&initialize, None)).await.expect("infallible");
        let id = response.headers()["mcp-session-id"].to_str().expect("ascii").to_owned();
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        service.clone().oneshot(handshake_post(initialized, Some(&id))).await.expect("infallible");
        id
    });
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "count", "arguments": {"n": 10}, "_meta": {"progressToken": "p"}}
    })
    .to_string();
    let once = || {
        let request = handshake_post(&body, Some(&session));
        let service = service.clone();
        async move {
            let response = service.oneshot(request).await.expect("infallible");
            assert_eq!(response.status(), 200);
            response.into_body().collect().await.expect("body").to_bytes()
        }
    };
    let stream = rt.block_on(once());
    let text = String::from_utf8_lossy(&stream);
    assert_eq!(text.matches("event: message").count(), 11, "not 11 stored events: {text}");
    c.bench_function("sse/handshake_progress_10", |b| {
        b.iter(|| rt.block_on(async { black_box(once().await) }))
    });
}

fn config() -> Criterion {
    // Small and quick: these track regressions of the hot paths, the harness measures speed.
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = tools_call, tools_list, validation, client_round_trip, sse, sse_handshake
}
criterion_main!(benches);
