//! The Streamable HTTP client transport against tiny fake servers on 127.0.0.1: each fake
//! answers fixed JSON or SSE bodies and records every HTTP request it saw, so the tests pin
//! both what the client sends (method, headers, body) and what it makes of each answer.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use expect_test::{Expect, expect};
use futures_util::StreamExt;
use modelcontext::transport::http::HttpTransport;
use modelcontext::types::{Era, Message};
use modelcontext::{Client, Connection, EraMode, McpServer, Transport};
use serde_json::{Value, json};
use tokio::sync::{Barrier, oneshot};

/// One HTTP request as the fake server saw it.
#[derive(Debug, Clone)]
struct Seen {
    verb: String,
    /// The headers the tests care about, lower-case names.
    headers: BTreeMap<String, String>,
    body: Value,
}

impl Seen {
    /// The JSON-RPC method, or the kind of message for responses.
    fn method(&self) -> &str {
        match self.body.get("method").and_then(Value::as_str) {
            Some(method) => method,
            None if self.body.get("id").is_some() => "(response)",
            None => "",
        }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

const RECORDED: &[&str] = &[
    "accept",
    "content-type",
    "last-event-id",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "mcp-session-id",
];

type Answer = Arc<dyn Fn(&Seen) -> Response + Send + Sync>;

/// A fake MCP endpoint at `/mcp`.
struct Fake {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Fake {
    async fn start(answer: impl Fn(&Seen) -> Response + Send + Sync + 'static) -> Fake {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let answer: Answer = Arc::new(answer);
        let record = seen.clone();
        let handler = move |request: Request| {
            let (record, answer) = (record.clone(), answer.clone());
            async move {
                let (parts, body) = request.into_parts();
                let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
                let headers = parts
                    .headers
                    .iter()
                    .filter(|(name, _)| {
                        RECORDED.contains(&name.as_str()) || name.as_str().starts_with("mcp-param-")
                    })
                    .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("<binary>").to_owned()))
                    .collect();
                let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                let seen = Seen { verb: parts.method.to_string(), headers, body };
                record.lock().expect("not poisoned").push(seen.clone());
                answer(&seen)
            }
        };
        let app = axum::Router::new().route("/mcp", axum::routing::any(handler));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Fake { url, seen }
    }

    fn transport(&self) -> HttpTransport {
        HttpTransport::new(&self.url).expect("valid url")
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("not poisoned").clone()
    }

    /// Every request, one line each plus its headers: what the server saw, in order.
    fn transcript(&self) -> String {
        let mut out = String::new();
        for seen in self.seen() {
            out.push_str(&format!("{} {}\n", seen.verb, seen.method()));
            for (name, value) in &seen.headers {
                out.push_str(&format!("  {name}: {value}\n"));
            }
        }
        out
    }
}

fn respond(status: u16, content_type: &str, body: impl Into<Body>) -> Response {
    let mut response = Response::new(body.into());
    *response.status_mut() = http::StatusCode::from_u16(status).expect("status");
    if !content_type.is_empty() {
        response.headers_mut().insert("content-type", content_type.parse().expect("ascii"));
    }
    response
}

fn json_answer(value: Value) -> Response {
    respond(200, "application/json", value.to_string())
}

fn sse_answer(body: &str) -> Response {
    respond(200, "text/event-stream", body.to_owned())
}

fn accepted() -> Response {
    respond(202, "", Body::empty())
}

/// The result of `id` as a JSON-RPC response.
fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

const MODERN: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn request(id: i64, method: &str, params: &str) -> Message {
    let text =
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}}}}}"#);
    Message::decode_str(&text).expect("valid message")
}

/// The next message from the server, as JSON text.
async fn next(connection: &mut Connection) -> String {
    let wait = tokio::time::timeout(Duration::from_secs(5), connection.receiver.recv());
    match wait.await.expect("a message within 5 s") {
        Some(Ok(message)) => message.encode(),
        other => panic!("expected a message, got {other:?}"),
    }
}

async fn send(connection: &Connection, message: Message) {
    connection.sender.send(message).await.expect("transport running");
}

async fn shut_down(mut connection: Connection) {
    let shutdown = connection.shutdown.take().expect("a shutdown future");
    drop(connection);
    tokio::time::timeout(Duration::from_secs(5), shutdown).await.expect("shuts down");
}

#[track_caller]
fn check(actual: &str, expect: Expect) {
    expect.assert_eq(actual);
}

#[tokio::test]
async fn json_answer_is_one_message_and_modern_headers_mirror_the_body() {
    let fake = Fake::start(|seen| {
        json_answer(result(&seen.body["id"], json!({"content": [], "resultType": "complete"})))
    })
    .await;
    let mut connection = fake.transport().open();
    let params = format!(r#"{MODERN},"name":"get_author","arguments":{{"title":"Dune"}}"#);
    send(&connection, request(1, "tools/call", &params)).await;
    check(
        &next(&mut connection).await,
        expect![[r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}"#]],
    );
    let uri = format!(r#"{MODERN},"uri":"books://Zürich""#);
    send(&connection, request(2, "resources/read", &uri)).await;
    next(&mut connection).await;
    send(&connection, request(3, "tools/list", MODERN)).await;
    next(&mut connection).await;
    shut_down(connection).await;
    check(
        &fake.transcript(),
        expect![[r#"
            POST tools/call
              accept: application/json, text/event-stream
              content-type: application/json
              mcp-method: tools/call
              mcp-name: get_author
              mcp-protocol-version: 2026-07-28
            POST resources/read
              accept: application/json, text/event-stream
              content-type: application/json
              mcp-method: resources/read
              mcp-name: =?base64?Ym9va3M6Ly9aw7xyaWNo?=
              mcp-protocol-version: 2026-07-28
            POST tools/list
              accept: application/json, text/event-stream
              content-type: application/json
              mcp-method: tools/list
              mcp-protocol-version: 2026-07-28
        "#]],
    );
}

#[tokio::test]
async fn sse_answer_delivers_progress_before_the_response_as_it_arrives() {
    let (release_tx, release_rx) = oneshot::channel::<()>();
    let release = Arc::new(Mutex::new(Some(release_rx)));
    let fake = Fake::start(move |seen| {
        let id = seen.body["id"].clone();
        let release = release.lock().expect("not poisoned").take();
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "t", "progress": 1, "total": 2}});
        let first = format!("event: message\ndata: {progress}\n\n");
        let last = format!(": keep-alive\n\nevent: message\ndata: {}\n\n", result(&id, json!({})));
        let state = (0, release, first, last);
        let chunks =
            futures_util::stream::unfold(state, |(step, release, first, last)| async move {
                let (chunk, release) = match step {
                    0 => (first.clone(), release),
                    1 => {
                        // The response only goes out once the test saw the progress.
                        if let Some(release) = release {
                            let _ = release.await;
                        }
                        (last.clone(), None)
                    }
                    _ => return None,
                };
                Some((Ok::<_, Infallible>(Bytes::from(chunk)), (step + 1, release, first, last)))
            });
        respond(200, "text/event-stream", Body::from_stream(chunks))
    })
    .await;
    let mut connection = fake.transport().open();
    send(&connection, request(7, "tools/call", &format!(r#"{MODERN},"name":"slow""#))).await;
    check(
        &next(&mut connection).await,
        expect![[
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":2}}"#
        ]],
    );
    release_tx.send(()).expect("server waiting");
    check(&next(&mut connection).await, expect![[r#"{"jsonrpc":"2.0","id":7,"result":{}}"#]]);
    shut_down(connection).await;
}

#[tokio::test]
async fn requests_are_posted_concurrently() {
    // Both answers wait until both requests arrived: posting them one after the other would
    // deadlock (and time out).
    let barrier = Arc::new(Barrier::new(2));
    let fake = Fake::start(move |seen| {
        let (barrier, answer) = (barrier.clone(), result(&seen.body["id"], json!({})));
        let body = futures_util::stream::once(async move {
            barrier.wait().await;
            Ok::<_, Infallible>(Bytes::from(answer.to_string()))
        });
        respond(200, "application/json", Body::from_stream(body))
    })
    .await;
    let mut connection = fake.transport().open();
    send(&connection, request(1, "tools/list", MODERN)).await;
    send(&connection, request(2, "prompts/list", MODERN)).await;
    let mut answers = [next(&mut connection).await, next(&mut connection).await];
    answers.sort();
    check(
        &answers.join("\n"),
        expect![[r#"
            {"jsonrpc":"2.0","id":1,"result":{}}
            {"jsonrpc":"2.0","id":2,"result":{}}"#]],
    );
    shut_down(connection).await;
}

#[tokio::test]
async fn handshake_era_sends_session_and_version_opens_the_get_stream_and_deletes() {
    let fake = Fake::start(|seen| match (seen.verb.as_str(), seen.method()) {
        ("POST", "initialize") => {
            let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "serverInfo": {"name": "fake", "version": "1"}});
            let mut answer = json_answer(result(&seen.body["id"], init));
            answer.headers_mut().insert("mcp-session-id", "s-123".parse().expect("ascii"));
            answer
        }
        ("POST", "notifications/initialized") => accepted(),
        ("POST", "tools/list") => json_answer(result(&seen.body["id"], json!({"tools": []}))),
        ("GET", _) => respond(405, "", Body::empty()),
        ("DELETE", _) => respond(200, "", Body::empty()),
        _ => respond(500, "text/plain", "unexpected"),
    })
    .await;
    let client = Client::builder().era(EraMode::Handshake).connect(fake.transport()).await;
    let client = client.expect("connects");
    assert_eq!(client.era(), Era::Handshake);
    assert_eq!(client.protocol_version(), "2025-06-18");
    let tools = client.list_tools(None).await.expect("tools/list");
    assert!(tools.tools.is_empty());
    // The GET stream starts after `notifications/initialized`; let it be refused first.
    wait_for(&fake, |seen| seen.iter().any(|s| s.verb == "GET")).await;
    client.close().await;
    check(
        &fake.transcript(),
        expect![[r#"
            POST initialize
              accept: application/json, text/event-stream
              content-type: application/json
            POST notifications/initialized
              accept: application/json, text/event-stream
              content-type: application/json
              mcp-protocol-version: 2025-06-18
              mcp-session-id: s-123
            GET 
              accept: text/event-stream
              mcp-protocol-version: 2025-06-18
              mcp-session-id: s-123
            POST tools/list
              accept: application/json, text/event-stream
              content-type: application/json
              mcp-protocol-version: 2025-06-18
              mcp-session-id: s-123
            DELETE 
              accept: application/json, text/event-stream
              mcp-protocol-version: 2025-06-18
              mcp-session-id: s-123
        "#]],
    );
}

/// Waits (at most 5 s) until the fake has seen what `done` looks for.
async fn wait_for(fake: &Fake, done: impl Fn(&[Seen]) -> bool) {
    for _ in 0..500 {
        if done(&fake.seen()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the fake server never saw it:\n{}", fake.transcript());
}

#[tokio::test]
async fn get_stream_carries_server_requests_and_the_client_posts_its_answers() {
    let fake = Fake::start(|seen| match (seen.verb.as_str(), seen.method()) {
        ("POST", "initialize") => {
            let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "fake", "version": "1"}});
            let mut answer = json_answer(result(&seen.body["id"], init));
            answer.headers_mut().insert("mcp-session-id", "s-9".parse().expect("ascii"));
            answer
        }
        ("GET", _) => {
            let ping = json!({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"});
            // The stream stays open after the ping, as a real GET stream does.
            let events = futures_util::stream::iter([Ok::<_, Infallible>(Bytes::from(format!(
                "id: g1\ndata:\n\nid: g2\nevent: message\ndata: {ping}\n\n"
            )))])
            .chain(futures_util::stream::pending());
            respond(200, "text/event-stream", Body::from_stream(events))
        }
        _ => accepted(),
    })
    .await;
    let client = Client::builder().era(EraMode::Handshake).connect(fake.transport()).await;
    let client = client.expect("connects");
    wait_for(&fake, |seen| seen.iter().any(|s| s.method() == "(response)")).await;
    client.close().await;
    let answer = fake.seen().into_iter().find(|s| s.method() == "(response)").expect("answered");
    check(&answer.body.to_string(), expect![[r#"{"jsonrpc":"2.0","id":"srv-1","result":{}}"#]]);
    assert_eq!(answer.header("mcp-session-id"), Some("s-9"));
}

#[tokio::test]
async fn a_dropped_request_stream_resumes_with_last_event_id() {
    let fake = Fake::start(|seen| match seen.verb.as_str() {
        // The POST's stream primes an id, asks for a 10 ms retry, and drops.
        "POST" if seen.method() == "tools/call" => sse_answer("id: ev-1\nretry: 10\ndata:\n\n"),
        "GET" if seen.header("last-event-id") == Some("ev-1") => {
            let response = result(&json!(5), json!({"content": []}));
            sse_answer(&format!("id: ev-2\ndata: {response}\n\n"))
        }
        _ => respond(500, "text/plain", "unexpected"),
    })
    .await;
    let mut connection = fake.transport().open();
    send(&connection, request(5, "tools/call", r#""name":"slow""#)).await;
    check(
        &next(&mut connection).await,
        expect![[r#"{"jsonrpc":"2.0","id":5,"result":{"content":[]}}"#]],
    );
    shut_down(connection).await;
    check(
        &fake.transcript(),
        expect![[r#"
            POST tools/call
              accept: application/json, text/event-stream
              content-type: application/json
            GET 
              accept: text/event-stream
              last-event-id: ev-1
        "#]],
    );
}

#[tokio::test]
async fn http_errors_become_json_rpc_errors_for_the_request() {
    let fake = Fake::start(|seen| match seen.body["params"]["name"].as_str() {
        // A JSON-RPC error body whose id the server could not read: it is still ours.
        Some("mismatch") => respond(
            400,
            "application/json",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"header mismatch"}}"#,
        ),
        Some("gone") => respond(404, "text/plain", "Not Found"),
        Some("accepted") => accepted(),
        Some("html") => respond(200, "text/html", "<p>hi</p>"),
        _ => respond(500, "text/plain", "boom"),
    })
    .await;
    let mut connection = fake.transport().open();
    let mut answers = Vec::new();
    for (id, name) in [(1, "mismatch"), (2, "gone"), (3, "crash"), (4, "accepted"), (5, "html")] {
        let params = format!(r#"{MODERN},"name":"{name}""#);
        send(&connection, request(id, "tools/call", &params)).await;
        answers.push(next(&mut connection).await);
    }
    shut_down(connection).await;
    check(
        &answers.join("\n"),
        expect![[r#"
            {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"header mismatch"}}
            {"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"HTTP 404: Not Found","data":{"status":404,"body":"Not Found"}}}
            {"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"HTTP 500: Internal Server Error","data":{"status":500,"body":"boom"}}}
            {"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"the server answered a request with 202 Accepted and no response"}}
            {"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"unexpected Content-Type \"text/html\" in the answer"}}"#]],
    );
}

#[tokio::test]
async fn unreachable_server_fails_the_request_as_closed() {
    // Bind and drop a listener: nothing listens on that port any more.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    drop(listener);
    let err = Client::connect_http(&url).await.expect_err("nothing listens");
    assert_eq!(err.kind(), modelcontext::ErrorKind::Closed, "{err}");
}

#[tokio::test]
async fn auto_mode_falls_back_to_initialize_when_discover_gets_an_http_error() {
    let fake = Fake::start(|seen| match seen.method() {
        "server/discover" => respond(404, "text/plain", "Not Found"),
        "initialize" => {
            let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "old", "version": "1"}});
            json_answer(result(&seen.body["id"], init))
        }
        _ => accepted(),
    })
    .await;
    let client = Client::connect(fake.transport()).await.expect("falls back");
    assert_eq!(client.era(), Era::Handshake);
    assert_eq!(client.server_info().map(|i| i.name.as_str()), Some("old"));
    client.close().await;
}

#[tokio::test]
async fn notifications_get_202_and_deliver_nothing() {
    let fake = Fake::start(|seen| match seen.method() {
        "tools/list" => json_answer(result(&seen.body["id"], json!({"tools": []}))),
        _ => accepted(),
    })
    .await;
    let mut connection = fake.transport().open();
    let note =
        Message::decode_str(r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#);
    send(&connection, note.expect("valid")).await;
    send(&connection, request(1, "tools/list", MODERN)).await;
    // The first message delivered is the response: the 202 added nothing.
    check(
        &next(&mut connection).await,
        expect![[r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#]],
    );
    shut_down(connection).await;
    let methods: Vec<_> = fake.seen().iter().map(|s| s.method().to_owned()).collect();
    assert_eq!(methods, ["notifications/roots/list_changed", "tools/list"]);
}

#[tokio::test]
async fn modern_cancellation_closes_the_stream_instead_of_posting() {
    let fake = Fake::start(|seen| match seen.method() {
        "tools/call" => {
            let events = futures_util::stream::pending::<Result<Bytes, Infallible>>();
            respond(200, "text/event-stream", Body::from_stream(events))
        }
        _ => json_answer(result(&seen.body["id"], json!({}))),
    })
    .await;
    let mut connection = fake.transport().open();
    send(&connection, request(1, "tools/call", &format!(r#"{MODERN},"name":"forever""#))).await;
    wait_for(&fake, |seen| !seen.is_empty()).await;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    send(&connection, Message::decode_str(cancel).expect("valid")).await;
    send(&connection, request(2, "tools/list", MODERN)).await;
    check(&next(&mut connection).await, expect![[r#"{"jsonrpc":"2.0","id":2,"result":{}}"#]]);
    shut_down(connection).await;
    let methods: Vec<_> = fake.seen().iter().map(|s| s.method().to_owned()).collect();
    assert_eq!(methods, ["tools/call", "tools/list"]);
}

#[tokio::test]
async fn tool_arguments_marked_x_mcp_header_are_mirrored_and_bad_tools_dropped() {
    let fake = Fake::start(|seen| match seen.method() {
        "tools/list" => {
            let tools = json!({"tools": [
                {"name": "deploy", "inputSchema": {"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
                    "count": {"type": "integer", "x-mcp-header": "Count"},
                    "note": {"type": "string"}}}},
                {"name": "broken", "inputSchema": {"type": "object", "properties": {
                    "ratio": {"type": "number", "x-mcp-header": "Ratio"}}}}
            ], "resultType": "complete"});
            json_answer(result(&seen.body["id"], tools))
        }
        _ => json_answer(result(&seen.body["id"], json!({"content": []}))),
    })
    .await;
    let mut connection = fake.transport().open();
    send(&connection, request(1, "tools/list", MODERN)).await;
    let listed: Value = serde_json::from_str(&next(&mut connection).await).expect("json");
    let names: Vec<_> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("deploy")], "a tool with an invalid annotation is dropped");
    let args = r#""arguments":{"region":" eu west ","dry":true,"count":3,"note":"x"}"#;
    send(&connection, request(2, "tools/call", &format!(r#"{MODERN},"name":"deploy",{args}"#)))
        .await;
    next(&mut connection).await;
    shut_down(connection).await;
    let call = fake.seen().into_iter().find(|s| s.method() == "tools/call").expect("called");
    let params: Vec<_> = call.headers.iter().filter(|(n, _)| n.starts_with("mcp-param-")).collect();
    check(
        &format!("{params:?}"),
        expect![[
            r#"[("mcp-param-count", "3"), ("mcp-param-dry-run", "true"), ("mcp-param-region", "=?base64?IGV1IHdlc3Qg?=")]"#
        ]],
    );
}

#[tokio::test]
async fn oversized_messages_fail_the_request() {
    let fake = Fake::start(|seen| {
        let big = json!({"content": [{"type": "text", "text": "x".repeat(500)}]});
        let response = result(&seen.body["id"], big);
        match seen.body["params"]["name"].as_str() {
            Some("sse") => sse_answer(&format!("data: {response}\n\n")),
            _ => json_answer(response),
        }
    })
    .await;
    let mut connection = fake.transport().max_message_bytes(200).open();
    let mut answers = Vec::new();
    for (id, name) in [(1, "json"), (2, "sse")] {
        send(&connection, request(id, "tools/call", &format!(r#"{MODERN},"name":"{name}""#))).await;
        answers.push(next(&mut connection).await);
    }
    shut_down(connection).await;
    check(
        &answers.join("\n"),
        expect![[r#"
            {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"the answer exceeds the limit of 200 bytes"}}
            {"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"no response to request 2 on its SSE stream: an SSE event exceeds the limit of 200 bytes"}}"#]],
    );
}

#[test]
fn urls_other_than_http_or_https_are_refused() {
    for url in ["ftp://x/mcp", "not a url", "/mcp", "https:///mcp"] {
        let err = HttpTransport::new(url).expect_err(url);
        assert_eq!(err.kind(), modelcontext::ErrorKind::Io, "{url}: {err}");
    }
    // Without the `tls` feature, https:// is refused up front, naming the feature.
    #[cfg(not(feature = "tls"))]
    {
        let err = HttpTransport::new("https://example.com/mcp").expect_err("no TLS built in");
        assert!(format!("{err:#}").contains("needs the `tls` feature"), "{err:#}");
    }
    assert!(
        HttpTransport::new("http://127.0.0.1:1/mcp")
            .expect("valid")
            .header("bad name", "v")
            .is_err()
    );
}

/// Our client against our own server, both eras, over a real socket.
#[tokio::test]
async fn our_client_drives_our_server_in_both_eras() {
    let server: McpServer = crate::support::bookshop();
    let endpoint = server.http_endpoint();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { endpoint.serve(listener).await });
    let url = format!("http://{addr}/mcp");
    for (mode, era) in [
        (EraMode::Modern, Era::Modern),
        (EraMode::Handshake, Era::Handshake),
        (EraMode::Auto, Era::Modern),
    ] {
        let transport = HttpTransport::new(&url).expect("valid url");
        let client = Client::builder().era(mode).connect(transport).await.expect("connects");
        assert_eq!(client.era(), era);
        let result = client.call_tool("get_author", json!({"title": "Dune"})).await.expect("call");
        assert!(!result.is_error(), "{mode:?}");
        let missing =
            client.call_tool("get_author", json!({"title": "Nothing"})).await.expect("call");
        assert!(missing.is_error(), "{mode:?}");
        let tools = client.list_all_tools().await.expect("tools/list");
        assert!(tools.iter().any(|t| t.name == "get_author"), "{mode:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn an_expired_session_is_renewed_once_without_the_caller_noticing() {
    let initializes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let fake = Fake::start(move |seen| match (seen.verb.as_str(), seen.method()) {
        ("POST", "initialize") => {
            let n = initializes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "fake", "version": "1"}});
            // The renewal's answer comes as SSE, as the Python SDK sends it.
            let id = &seen.body["id"];
            let mut answer = match n {
                0 => json_answer(result(id, init)),
                _ => sse_answer(&format!("event: message\ndata: {}\n\n", result(id, init))),
            };
            let session = if n == 0 { "first" } else { "second" };
            answer.headers_mut().insert("mcp-session-id", session.parse().expect("ascii"));
            answer
        }
        ("POST", "tools/list") if seen.header("mcp-session-id") == Some("first") => respond(
            404,
            "application/json",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}"#,
        ),
        ("POST", "tools/list") => json_answer(result(&seen.body["id"], json!({"tools": []}))),
        ("GET", _) => respond(405, "", Body::empty()),
        _ => accepted(),
    })
    .await;
    let client = Client::builder().era(EraMode::Handshake).connect(fake.transport()).await;
    let client = client.expect("connects");
    let tools = client.list_tools(None).await.expect("renewed transparently");
    assert!(tools.tools.is_empty());
    client.close().await;
    let lines: Vec<String> = fake
        .seen()
        .iter()
        .filter(|s| s.verb == "POST" || s.verb == "DELETE")
        .map(|s| {
            let id = s.body.get("id").map(|id| format!(" id={id}")).unwrap_or_default();
            let session = s.header("mcp-session-id").unwrap_or("-");
            format!("{} {}{id} session={session}", s.verb, s.method())
        })
        .collect();
    check(
        &lines.join("\n"),
        expect![[r#"
            POST initialize id=1 session=-
            POST notifications/initialized session=first
            POST tools/list id=2 session=first
            POST initialize id="modelcontext-renew-1" session=-
            POST notifications/initialized session=second
            POST tools/list id=2 session=second
            DELETE  session=second"#]],
    );
}

/// A server that only speaks the 2024-11-05 HTTP+SSE transport (ours, with `legacy_sse`, at
/// `/sse`): `initialize` POSTed there is refused, and the client falls back to GET + `endpoint`.
#[tokio::test]
async fn falls_back_to_the_2024_11_05_sse_transport() {
    let options = modelcontext::server::http::HttpOptions::default().legacy_sse(true);
    let endpoint = crate::support::bookshop().http_endpoint_with(options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { endpoint.serve(listener).await });
    let url = format!("http://{addr}/sse");
    for mode in [EraMode::Handshake, EraMode::Auto] {
        let transport = HttpTransport::new(&url).expect("valid url");
        let client = Client::builder().era(mode).connect(transport).await.expect("connects");
        assert_eq!(client.era(), Era::Handshake, "{mode:?}");
        let result = client.call_tool("get_author", json!({"title": "Dune"})).await.expect("call");
        check(
            &serde_json::to_string(&result.content).expect("json"),
            expect![[r#"[{"type":"text","text":"Frank Herbert"}]"#]],
        );
        client.close().await;
    }
}

/// 2026-07-28: a `tools/call` refused with HeaderMismatch because the client never listed the
/// tools (so it sent no `Mcp-Param-*`) is retried once after listing them, every page.
#[tokio::test]
async fn a_header_mismatch_relists_the_tools_and_retries_once() {
    let fake = Fake::start(|seen| match seen.method() {
        "tools/list" if seen.body["params"].get("cursor").is_none() => {
            let page = json!({"tools": [{"name": "other", "inputSchema": {"type": "object"}}],
                "nextCursor": "p2", "resultType": "complete"});
            json_answer(result(&seen.body["id"], page))
        }
        "tools/list" => {
            let page = json!({"tools": [{"name": "deploy", "inputSchema": {"type": "object",
                "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}],
                "resultType": "complete"});
            json_answer(result(&seen.body["id"], page))
        }
        "tools/call" if seen.header("mcp-param-region").is_none() => respond(
            400,
            "application/json",
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"missing Mcp-Param-Region"}}"#,
        ),
        _ => json_answer(result(&seen.body["id"], json!({"content": []}))),
    })
    .await;
    let mut connection = fake.transport().open();
    let call = format!(r#"{MODERN},"name":"deploy","arguments":{{"region":"eu"}}"#);
    send(&connection, request(9, "tools/call", &call)).await;
    check(
        &next(&mut connection).await,
        expect![[r#"{"jsonrpc":"2.0","id":9,"result":{"content":[]}}"#]],
    );
    shut_down(connection).await;
    let lines: Vec<String> = fake
        .seen()
        .iter()
        .map(|s| {
            let cursor = s.body["params"].get("cursor").map(|c| format!(" cursor={c}"));
            let region = s.header("mcp-param-region").map(|r| format!(" region={r}"));
            format!(
                "{} id={}{}{}",
                s.method(),
                s.body["id"],
                cursor.unwrap_or_default(),
                region.unwrap_or_default()
            )
        })
        .collect();
    check(
        &lines.join("\n"),
        expect![[r#"
        tools/call id=9
        tools/list id="modelcontext-relist-1"
        tools/list id="modelcontext-relist-2" cursor="p2"
        tools/call id=9 region=eu"#]],
    );
}

/// 200 calls at once through one client, against our server: each POST on its own (pooled)
/// connection, every answer back to its caller.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_calls_through_one_client() {
    let endpoint = crate::support::bookshop().http_endpoint();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    tokio::spawn(async move { endpoint.serve(listener).await });
    for mode in [EraMode::Modern, EraMode::Handshake] {
        let transport = HttpTransport::new(&url).expect("valid url");
        let client = Client::builder().era(mode).connect(transport).await.expect("connects");
        let calls = (0..200).map(|i| {
            let title = if i % 2 == 0 { "Dune" } else { "Neuromancer" };
            let client = &client;
            async move { (title, client.call_tool("get_author", json!({ "title": title })).await) }
        });
        for (title, result) in futures_util::future::join_all(calls).await {
            let result = result.unwrap_or_else(|e| panic!("{mode:?} {title}: {e}"));
            let want = if title == "Dune" { "Frank Herbert" } else { "William Gibson" };
            let got = serde_json::to_string(&result.content).expect("json");
            assert!(got.contains(want), "{mode:?} {title}: {got}");
        }
        client.close().await;
    }
}

/// The conformance suite's `request-metadata` case: the first POST is refused with HTTP 400
/// and -32022 naming the supported revisions; the client retries with one of them, header and
/// `_meta` agreeing.
#[tokio::test]
async fn a_rejected_protocol_version_is_retried_with_a_supported_one() {
    let rejected = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let fake = Fake::start(move |seen| {
        if !rejected.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let error = json!({"jsonrpc": "2.0", "id": seen.body["id"], "error": {
                "code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}});
            return respond(400, "application/json", error.to_string());
        }
        let discovered = json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {}, "ttlMs": 0, "cacheScope": "private"});
        json_answer(result(&seen.body["id"], discovered))
    })
    .await;
    let client = Client::builder().era(EraMode::Modern).connect(fake.transport()).await;
    let client = client.expect("negotiates on the retry");
    assert_eq!(client.protocol_version(), "2026-07-28");
    let seen = fake.seen();
    assert_eq!(seen.len(), 2, "{}", fake.transcript());
    let retry = &seen[1];
    assert_eq!(retry.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(
        retry.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    client.close().await;
}
