//! The Streamable HTTP endpoint over real sockets on 127.0.0.1: every status-code path of both
//! eras, with exact JSON-RPC bodies validated against the revision's schema.

use std::net::SocketAddr;

use bytes::Bytes;
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::rt::TokioExecutor;
use modelcontext::server::http::HttpOptions;
use modelcontext::{Context, McpServer, ToolDef};
use serde_json::Value;

use crate::support::{MODERN_META, assert_valid, bookshop, result_definition};

/// A running endpoint and a plain HTTP client for it (also used by `http_modes`).
pub(crate) struct Http {
    addr: SocketAddr,
    client: HyperClient<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>,
}

/// What came back.
pub(crate) struct Answer {
    pub status: StatusCode,
    pub headers: http::HeaderMap,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn content_type(&self) -> &str {
        self.header("content-type").unwrap_or("")
    }

    /// The body as one `application/json` message, checked against `revision`'s schema.
    pub fn checked_json(&self, revision: &str) -> Value {
        assert_eq!(self.content_type(), "application/json", "{}", self.body);
        let value = self.json();
        assert_valid(revision, "JSONRPCMessage", &value);
        value
    }
}

async fn start(server: McpServer) -> Http {
    start_with(server, HttpOptions::default()).await
}

pub(crate) async fn start_with(server: McpServer, options: HttpOptions) -> Http {
    let (addr, serve) = server.http_endpoint_with(options).bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    Http { addr, client: HyperClient::builder(TokioExecutor::new()).build_http() }
}

impl Http {
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub async fn send(&self, method: Method, headers: &[(&str, &str)], body: &str) -> Answer {
        let mut request =
            http::Request::builder().method(method).uri(format!("http://{}/mcp", self.addr));
        if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("accept")) {
            request = request.header("accept", "application/json, text/event-stream");
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(Full::new(Bytes::from(body.to_owned()))).expect("request");
        let response = self.client.request(request).await.expect("response");
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.into_body().collect().await.expect("body").to_bytes();
        Answer { status, headers, body: String::from_utf8_lossy(&body).into_owned() }
    }

    pub async fn post(&self, headers: &[(&str, &str)], body: &str) -> Answer {
        let mut all = vec![("content-type", "application/json")];
        all.extend_from_slice(headers);
        self.send(Method::POST, &all, body).await
    }

    /// A 2026-07-28 request with correct headers.
    async fn modern(&self, method: &str, name: Option<&str>, params: &str) -> Answer {
        let sep = if params.is_empty() { "" } else { "," };
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}{sep}{MODERN_META}}}}}"#
        );
        let mut headers = vec![("mcp-protocol-version", "2026-07-28"), ("mcp-method", method)];
        if let Some(name) = name {
            headers.push(("mcp-name", name));
        }
        let answer = self.post(&headers, &body).await;
        if answer.status == StatusCode::OK
            && answer.header("content-type") == Some("application/json")
        {
            let json = answer.json();
            assert_valid("2026-07-28", "JSONRPCMessage", &json);
            if let (Some(result), Some(def)) = (json.get("result"), result_definition(method)) {
                assert_valid("2026-07-28", def, result);
            }
        }
        answer
    }
}

#[tokio::test]
async fn modern_requests_are_served_statelessly_with_json() {
    let http = start(bookshop()).await;
    let answer = http
        .modern(
            "tools/call",
            Some("get_author"),
            r#""name":"get_author","arguments":{"title":"Nothing"}"#,
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header("mcp-session-id"), None, "2026-07-28 never mints sessions");
    assert_eq!(
        answer.body,
        r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"Error executing tool get_author: No book titled 'Nothing' in the catalog."}],"isError":true}}"#
    );
    let strict = http
        .modern(
            "tools/call",
            Some("get_author_strict"),
            r#""name":"get_author_strict","arguments":{"title":"Nothing"}"#,
        )
        .await;
    assert_eq!(
        (strict.status, strict.body.as_str()),
        (
            StatusCode::OK,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"No book titled 'Nothing' in the catalog."}}"#
        )
    );
    let missing =
        http.modern("resources/read", Some("books://Nothing"), r#""uri":"books://Nothing""#).await;
    assert_eq!(missing.json()["error"]["data"], serde_json::json!({"uri": "books://Nothing"}));
    let discover = http.modern("server/discover", None, "").await;
    assert_eq!(discover.json()["result"]["supportedVersions"], serde_json::json!(["2026-07-28"]));
}

#[tokio::test]
async fn modern_header_rules() {
    let http = start(bookshop()).await;
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{{{MODERN_META}}}}}"#);
    type Case<'a> = (&'a [(&'a str, &'a str)], StatusCode, i64);
    let cases: &[Case<'_>] = &[
        (&[("mcp-protocol-version", "2026-07-28")], StatusCode::BAD_REQUEST, -32020),
        (
            &[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "TOOLS/LIST")],
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (
            &[("mcp-protocol-version", "2025-11-25"), ("mcp-method", "tools/list")],
            StatusCode::BAD_REQUEST,
            -32020,
        ),
        (&[("mcp-method", "tools/list")], StatusCode::BAD_REQUEST, -32020),
    ];
    for (headers, status, code) in cases {
        let answer = http.post(headers, &body).await;
        assert_eq!(
            (answer.status, answer.json()["error"]["code"].as_i64()),
            (*status, Some(*code)),
            "{headers:?}: {}",
            answer.body
        );
        assert_eq!(answer.json()["id"], 7);
    }
    let trimmed = http
        .post(&[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "  tools/list  ")], &body)
        .await;
    assert_eq!(trimmed.status, StatusCode::OK, "{}", trimmed.body);
    let name = http
        .modern("tools/call", Some("other"), r#""name":"get_author","arguments":{"title":"Dune"}"#)
        .await;
    assert_eq!(name.json()["error"]["code"], -32020);
}

#[tokio::test]
async fn modern_envelope_and_method_errors_carry_their_status() {
    let http = start(bookshop()).await;
    let unsupported = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let answer = http
        .post(&[("mcp-protocol-version", "2099-01-01"), ("mcp-method", "tools/list")], unsupported)
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        answer.body,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2099-01-01"}}}"#
    );

    let no_meta = http
        .post(
            &[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")],
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
        )
        .await;
    assert_eq!(
        (no_meta.status, no_meta.json()["error"]["code"].as_i64()),
        (StatusCode::BAD_REQUEST, Some(-32602))
    );

    // Removed methods are 404 whatever their params: the suite sends them with only `_meta`.
    for method in ["initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"]
    {
        let answer = http.modern(method, None, "").await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{method}: {}", answer.body);
    }
    for method in ["ping", "initialize", "logging/setLevel", "resources/subscribe", "foo/bar"] {
        let params = match method {
            "initialize" => {
                r#""protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"x","version":"1"}"#
            }
            "logging/setLevel" => r#""level":"info""#,
            "resources/subscribe" => r#""uri":"books://Dune""#,
            _ => "",
        };
        let answer = http.modern(method, None, params).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{method}: {}", answer.body);
        assert_eq!(answer.json()["error"]["code"], -32601, "{method}");
    }

    let notification = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":1,{MODERN_META}}}}}"#
    );
    let answer = http
        .post(
            &[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "notifications/cancelled")],
            &notification,
        )
        .await;
    assert_eq!((answer.status, answer.body.as_str()), (StatusCode::ACCEPTED, ""));

    for method in [Method::GET, Method::DELETE] {
        let answer = http.send(method, &[("mcp-protocol-version", "2026-07-28")], "").await;
        assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED);
    }
}

#[tokio::test]
async fn protection_and_framing_statuses() {
    let http = start(bookshop()).await;
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let evil_host = http.post(&[("host", "evil.example.com")], ping).await;
    assert_eq!(evil_host.status, StatusCode::MISDIRECTED_REQUEST);
    let evil_origin = http.post(&[("origin", "http://evil.example.com")], ping).await;
    assert_eq!(
        (evil_origin.status, evil_origin.body.as_str()),
        (
            StatusCode::FORBIDDEN,
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Origin header"}}"#
        )
    );
    let local_origin = http.post(&[("origin", "http://localhost:5173")], ping).await;
    assert_ne!(local_origin.status, StatusCode::FORBIDDEN);

    let text = http.send(Method::POST, &[("content-type", "text/plain")], ping).await;
    assert_eq!(text.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let accept = http.post(&[("accept", "text/html")], ping).await;
    assert_eq!(accept.status, StatusCode::NOT_ACCEPTABLE);
    // Media types and host names are case-insensitive.
    let upper = [("content-type", "Application/JSON"), ("accept", "TEXT/Event-Stream")];
    let upper = http.send(Method::POST, &upper, ping).await;
    assert_eq!(upper.status, StatusCode::BAD_REQUEST, "{}", upper.body);
    assert!(upper.body.contains("Missing Mcp-Session-Id"), "{}", upper.body);
    let upper_host = http.post(&[("host", "LocalHost:1")], ping).await;
    assert_eq!(upper_host.status, StatusCode::BAD_REQUEST, "{}", upper_host.body);
    let malformed = http.post(&[], r#"{"jsonrpc":"2.0","id":1,"#).await;
    assert_eq!(
        (malformed.status, malformed.json()["error"]["code"].as_i64()),
        (StatusCode::BAD_REQUEST, Some(-32700))
    );
    let batch = http.post(&[], &format!("[{ping}]")).await;
    assert_eq!(
        (batch.status, batch.json()["error"]["code"].as_i64()),
        (StatusCode::BAD_REQUEST, Some(-32600))
    );
    let put = http.send(Method::PUT, &[], "").await;
    assert_eq!(put.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn the_body_limit_is_enforced_at_the_limit() {
    let options = HttpOptions::default().max_body_bytes(1024);
    let http = start_with(bookshop(), options).await;
    let body_of = |len: usize| {
        let head = r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#;
        let tail = r#""}}"#;
        format!("{head}{}{tail}", "x".repeat(len - head.len() - tail.len()))
    };
    for (len, limited) in [(1023, false), (1024, false), (1025, true)] {
        let answer = http.post(&[], &body_of(len)).await;
        assert_eq!(
            answer.status == StatusCode::PAYLOAD_TOO_LARGE,
            limited,
            "{len} bytes: {}",
            answer.status
        );
    }
}

#[tokio::test]
async fn handshake_sessions_live_from_initialize_to_delete() {
    let http = start(bookshop()).await;
    let init = http.post(&[], r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    assert_eq!(init.status, StatusCode::OK);
    assert_valid("2025-11-25", "InitializeResult", &init.json()["result"]);
    let session = init.header("mcp-session-id").expect("a session id").to_owned();
    assert!(session.len() >= 32 && session.bytes().all(|b| (0x21..=0x7e).contains(&b)));

    let with_session =
        [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let initialized =
        http.post(&with_session, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    assert_eq!(initialized.status, StatusCode::ACCEPTED);
    let call = http.post(&with_session, r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#).await;
    assert_eq!(
        call.body,
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Frank Herbert"}]}}"#
    );

    let no_session = http.post(&[], r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#).await;
    assert_eq!(no_session.status, StatusCode::BAD_REQUEST);
    let unknown = http
        .post(&[("mcp-session-id", "nope")], r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#)
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let bad_version = http
        .post(
            &[("mcp-session-id", session.as_str()), ("mcp-protocol-version", "1999-01-01")],
            r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
        )
        .await;
    assert_eq!(bad_version.status, StatusCode::BAD_REQUEST);

    let deleted = http.send(Method::DELETE, &[("mcp-session-id", session.as_str())], "").await;
    assert_eq!(deleted.status, StatusCode::OK);
    let after = http.post(&with_session, r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#).await;
    assert_eq!(after.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_session_limit_answers_503() {
    let options = HttpOptions::default().max_sessions(1);
    let http = start_with(bookshop(), options).await;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    assert_eq!(http.post(&[], init).await.status, StatusCode::OK);
    assert_eq!(http.post(&[], init).await.status, StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn progress_before_the_result_turns_the_answer_into_sse() {
    let slow = ToolDef::new("slow", |cx: Context, _: modelcontext::server::NoArgs| async move {
        cx.report_progress(1.0, Some(2.0), Some("half")).await;
        "done"
    });
    let http = start(McpServer::new("progress").tool(slow).expect("registers")).await;
    let meta = r#""_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"slow",{meta}}}}}"#
    );
    let answer = http
        .post(
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "slow"),
            ],
            &body,
        )
        .await;
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    let events: Vec<&str> = answer.body.split("\n\n").filter(|e| !e.is_empty()).collect();
    assert_eq!(events.len(), 2, "{}", answer.body);
    assert_eq!(
        events[0],
        r#"event: message
data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":2,"message":"half"}}"#
    );
    assert!(
        events[1].starts_with("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\""),
        "{}",
        events[1]
    );
}

/// Reads SSE frames until `needle` has arrived; returns everything read so far.
async fn read_until(body: &mut hyper::body::Incoming, needle: &str) -> String {
    let mut seen = String::new();
    while !seen.contains(needle) {
        let frame = body.frame().await.expect("stream open").expect("frame");
        if let Some(data) = frame.data_ref() {
            seen.push_str(&String::from_utf8_lossy(data));
        }
    }
    seen
}

/// The `id:` of the last event in `text` that carries data.
fn last_event_id(text: &str) -> String {
    text.split("\n\n")
        .filter(|event| event.contains("data: {"))
        .filter_map(|event| event.lines().find_map(|l| l.strip_prefix("id: ")))
        .last()
        .expect("an event with an id")
        .to_owned()
}

#[tokio::test]
async fn a_dropped_stream_resumes_with_last_event_id_and_loses_nothing() {
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let opened = gate.clone();
    let slow = ToolDef::new("slow", move |cx: Context, _: modelcontext::server::NoArgs| {
        let gate = opened.clone();
        async move {
            cx.report_progress(1.0, Some(3.0), Some("one")).await;
            gate.notified().await;
            cx.report_progress(2.0, Some(3.0), Some("two")).await;
            "done"
        }
    });
    let http = start(McpServer::new("resume").tool(slow).expect("registers")).await;
    let init = http.post(&[], r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    let session = init.header("mcp-session-id").expect("session").to_owned();

    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"tok"}}}"#;
    let request = http::Request::post(format!("http://{}/mcp", http.addr))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session.as_str())
        .body(Full::new(Bytes::from(call)))
        .expect("request");
    let response = http.client.request(request).await.expect("response");
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let first = read_until(&mut body, "\"one\"").await;
    assert!(
        // `<this endpoint>.<stream 2>-<position 0>`: streams 1 and 2 are the POSTs'.
        first.starts_with("id: ") && first.contains(".2-0\ndata:\n\nretry: 1000\n\n"),
        "priming event first: {first:?}"
    );
    let resume_from = last_event_id(&first);
    drop(body); // the connection drops mid-call; the tool keeps running (not a cancellation)
    gate.notify_one();

    let resumed = http
        .send(
            Method::GET,
            &[("mcp-session-id", session.as_str()), ("last-event-id", resume_from.as_str())],
            "",
        )
        .await;
    assert_eq!(resumed.status, StatusCode::OK);
    let events: Vec<&str> = resumed.body.split("\n\n").filter(|e| e.contains("data: {")).collect();
    assert_eq!(events.len(), 2, "{}", resumed.body);
    assert!(
        events[0].contains(r#""progress":2"#) && events[0].contains("\"two\""),
        "{}",
        events[0]
    );
    assert!(
        events[1].contains(r#""id":2,"result""#) && events[1].contains("done"),
        "{}",
        events[1]
    );

    let foreign = http
        .send(
            Method::GET,
            &[("mcp-session-id", session.as_str()), ("last-event-id", "ff.99-0")],
            "",
        )
        .await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn an_idle_session_expires() {
    let options = HttpOptions::default().session_idle_timeout(std::time::Duration::ZERO);
    let http = start_with(bookshop(), options).await;
    let init = http.post(&[], r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    let session = init.header("mcp-session-id").expect("session").to_owned();
    let later = http
        .post(
            &[("mcp-session-id", session.as_str())],
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        )
        .await;
    assert_eq!(later.status, StatusCode::NOT_FOUND, "idle longer than the timeout: gone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_clients_of_both_eras() {
    let http = std::sync::Arc::new(start(bookshop()).await);
    let clients = (0..200).map(|n| {
        let http = http.clone();
        tokio::spawn(async move {
            if n % 2 == 0 {
                for _ in 0..5 {
                    let answer = http.modern("tools/call", Some("add"), r#""name":"add","arguments":{"a":2,"b":3}"#).await;
                    assert_eq!(answer.json()["result"]["structuredContent"]["result"], 5, "{}", answer.body);
                }
            } else {
                let init = http.post(&[], r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).await;
                let session = init.header("mcp-session-id").expect("session").to_owned();
                let headers = [("mcp-session-id", session.as_str())];
                for id in 2..7 {
                    let call = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{id},"b":1}}}}}}"#);
                    let answer = http.post(&headers, &call).await;
                    assert_eq!(answer.json()["result"]["structuredContent"]["result"], id + 1, "{}", answer.body);
                }
                assert_eq!(http.send(Method::DELETE, &headers, "").await.status, StatusCode::OK);
            }
        })
    });
    for client in clients.collect::<Vec<_>>() {
        client.await.expect("client succeeded");
    }
}

#[tokio::test]
async fn the_2024_11_05_http_sse_transport_when_switched_on() {
    let options = HttpOptions::default().legacy_sse(true);
    let (addr, serve) =
        bookshop().http_endpoint_with(options).bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    let http = Http { addr, client: HyperClient::builder(TokioExecutor::new()).build_http() };
    let open = http::Request::get(format!("http://{addr}/sse"))
        .body(Full::new(Bytes::new()))
        .expect("request");
    let response = http.client.request(open).await.expect("response");
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut events = response.into_body();
    let first = read_until(&mut events, "sessionId=").await;
    let endpoint =
        first.lines().find_map(|l| l.strip_prefix("data: ")).expect("endpoint event").to_owned();
    assert!(first.starts_with("event: endpoint\n"), "{first}");

    let post = |body: &'static str| {
        let request = http::Request::post(format!("http://{addr}{endpoint}"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .expect("request");
        http.client.request(request)
    };
    let init = post(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}"#).await.expect("post");
    assert_eq!(init.status(), StatusCode::ACCEPTED);
    let answer = read_until(&mut events, r#""id":1"#).await;
    assert!(answer.contains(r#""protocolVersion":"2024-11-05""#), "{answer}");
    let call = post(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#).await.expect("post");
    assert_eq!(call.status(), StatusCode::ACCEPTED);
    assert!(read_until(&mut events, r#""id":2"#).await.contains("Frank Herbert"));

    let unknown = http.post(&[], "{}").await;
    assert_ne!(unknown.status, StatusCode::ACCEPTED, "the Streamable HTTP endpoint is unaffected");
}

#[tokio::test]
async fn nested_x_mcp_header_arguments_are_checked_and_bad_annotations_refused() {
    let schema = |value: serde_json::Value| value.as_object().cloned().expect("object");
    let nested =
        schema(serde_json::json!({"type": "object", "properties": {"opts": {"type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}}));
    let tool = ToolDef::new("nested", |_: serde_json::Value| async { "ok" }).input_schema(nested);
    let http = start(McpServer::new("headers").tool(tool).expect("valid annotation")).await;
    let params = r#""name":"nested","arguments":{"opts":{"region":"eu"}}"#;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{params},{MODERN_META}}}}}"#
    );
    let base = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "nested"),
    ];
    let without = http.post(&base, &body).await;
    assert_eq!(
        (without.status, without.json()["error"]["code"].as_i64()),
        (StatusCode::BAD_REQUEST, Some(-32020))
    );
    let mut with = base.to_vec();
    with.push(("mcp-param-region", "eu"));
    assert_eq!(http.post(&with, &body).await.status, StatusCode::OK);

    let invalid = [
        serde_json::json!({"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}),
        // Reached through `$ref` (how schemars writes a nested struct): not statically reachable.
        serde_json::json!({"type": "object", "properties": {"o": {"$ref": "#/$defs/O"}},
            "$defs": {"O": {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}}}}),
    ];
    for input in invalid {
        let bad =
            ToolDef::new("bad", |_: serde_json::Value| async { "ok" }).input_schema(schema(input));
        let refused = McpServer::new("bad").tool(bad).expect_err("refused at registration");
        assert!(refused.to_string().contains("invalid x-mcp-header annotation"), "{refused}");
    }
}

#[tokio::test]
async fn handlers_see_the_http_headers_of_their_request() {
    let tool = ToolDef::new("agent", |cx: Context, _: modelcontext::server::NoArgs| async move {
        let headers = cx.http_headers().expect("served over HTTP");
        headers.get("user-agent").and_then(|v| v.to_str().ok()).unwrap_or("none").to_owned()
    });
    let http = start(McpServer::new("headers").tool(tool).expect("registers")).await;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"agent",{MODERN_META}}}}}"#
    );
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "agent"),
        ("user-agent", "probe/1.0"),
    ];
    let answer = http.post(&headers, &body).await;
    assert!(answer.body.contains(r#""text":"probe/1.0""#), "{}", answer.body);
}

/// A handshake-era session's handlers see the headers of the POST that opened it, whichever
/// POST carries the call.
#[tokio::test]
async fn session_handlers_see_the_headers_of_the_post_that_opened_the_session() {
    let tool = ToolDef::new("agent", |cx: Context, _: modelcontext::server::NoArgs| async move {
        let headers = cx.http_headers().expect("served over HTTP");
        headers.get("user-agent").and_then(|v| v.to_str().ok()).unwrap_or("none").to_owned()
    });
    let http = start(McpServer::new("headers").tool(tool).expect("registers")).await;
    let init = http.post(&[("user-agent", "opener/1.0")], r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    let session = init.header("mcp-session-id").expect("a session id").to_owned();
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
        ("user-agent", "later/2.0"),
    ];
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agent"}}"#;
    let answer = http.post(&headers, call).await;
    assert_eq!(
        answer.body,
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"opener/1.0"}]}}"#
    );
}

/// `serve` answers other paths as the endpoint's router does: 404 with an empty body.
#[tokio::test]
async fn other_paths_are_not_found_as_the_router_answers_them() {
    let endpoint = bookshop().http_endpoint();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let routed = listener.local_addr().expect("address");
    let router = endpoint.router();
    tokio::spawn(async move { endpoint.serve_router(listener, router).await });
    let http = start(bookshop()).await;
    for path in ["/", "/mcp/", "/MCP", "/other", "/mcp/x"] {
        let mut answers = Vec::new();
        for addr in [http.addr, routed] {
            let request = http::Request::builder()
                .method(Method::POST)
                .uri(format!("http://{addr}{path}"))
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)))
                .expect("request");
            let response = http.client.request(request).await.expect("response");
            let status = response.status();
            let body = response.into_body().collect().await.expect("body").to_bytes();
            answers.push((status, body));
        }
        assert_eq!(answers[0], (StatusCode::NOT_FOUND, Bytes::new()), "{path}");
        assert_eq!(answers[0], answers[1], "{path}");
    }
}

/// Params that do not parse are refused in the same words on every path: a 2026-07-28 POST,
/// a stateless handshake-era POST, and (in `corpus/lifecycle.rs`) stdio and memory.
#[tokio::test]
async fn malformed_params_are_refused_in_the_same_words_over_http() {
    let expected = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'tools/call': invalid type: integer `5`, expected a string at line 1 column 9"}}"#;

    let http = start(bookshop()).await;
    let modern = http.modern("tools/call", Some("5"), r#""name":5"#).await;
    assert_eq!((modern.status, modern.body.as_str()), (StatusCode::BAD_REQUEST, expected));

    let stateless = start_with(bookshop(), HttpOptions::default().stateless(true)).await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}"#;
    let answer = stateless.post(&[("mcp-protocol-version", "2025-11-25")], body).await;
    assert_eq!((answer.status, answer.body.as_str()), (StatusCode::BAD_REQUEST, expected));
}
