//! Group 4, Streamable HTTP headers and status paths of both eras, over a real socket on
//! 127.0.0.1: DNS-rebinding protection, content negotiation, the body limit at limit-1, limit
//! and limit+1, the 2026-07-28 header rules (-32020 / -32022, 404 for unknown methods), and
//! 2025-11-25 sessions. After each case the same endpoint (and session) must still answer.

use bytes::Bytes;
use expect_test::expect;
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use modelcontext::server::http::HttpOptions;

use super::{Case, block_on, case, run_group};
use crate::support::{MODERN_META, bookshop};

/// The body limit of every HTTP case.
pub(crate) const BODY_LIMIT: usize = 4096;

/// Stands for the case's session id in header values and bodies.
pub(crate) const SESSION: &str = "{session}";

/// One HTTP request, sent after an optional handshake-era `initialize`.
pub(crate) struct Exchange {
    /// Open a 2025-11-25 session first (its id replaces [`SESSION`]); the probe is then a
    /// `ping` on that session, else a modern `tools/list`.
    pub session: bool,
    pub method: Method,
    /// Added to (or, with an empty value, removed from) `content-type: application/json` and
    /// `accept: application/json, text/event-stream`.
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
    /// A GET that opens an event stream: report its head only (the stream stays open).
    pub stream: bool,
}

/// A POST of `body` with `headers`, no session.
pub(crate) fn post(headers: &[(&'static str, &str)], body: impl Into<String>) -> Exchange {
    Exchange {
        session: false,
        method: Method::POST,
        headers: headers.iter().map(|(n, v)| (*n, (*v).to_owned())).collect(),
        body: body.into(),
        stream: false,
    }
}

/// The same, on a 2025-11-25 session.
pub(crate) fn in_session(headers: &[(&'static str, &str)], body: impl Into<String>) -> Exchange {
    Exchange { session: true, ..post(headers, body) }
}

/// The headers of a correct modern request for `method` (and `name`).
fn modern_headers(
    method: &'static str,
    name: Option<&'static str>,
) -> Vec<(&'static str, &'static str)> {
    let mut headers = vec![("mcp-protocol-version", "2026-07-28"), ("mcp-method", method)];
    headers.extend(name.map(|name| ("mcp-name", name)));
    headers
}

/// A modern request body with id 1.
pub(crate) fn modern_body(method: &str, params: &str) -> String {
    let sep = if params.is_empty() { "" } else { "," };
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}{sep}{MODERN_META}}}}}"#
    )
}

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;

/// A modern `server/discover` of exactly `len` bytes (padded inside its params).
fn discover_of_len(len: usize) -> String {
    let body = modern_body("server/discover", r#""pad":"""#);
    let at = body.find(r#""pad":""#).expect("pad") + r#""pad":""#.len();
    let pad = "x".repeat(len - body.len());
    format!("{}{pad}{}", &body[..at], &body[at..])
}

pub(crate) fn cases() -> Vec<Case<Exchange>> {
    let list = modern_body("tools/list", "");
    let call = modern_body("tools/call", r#""name":"get_author","arguments":{"title":"Dune"}"#);
    let list_headers = modern_headers("tools/list", None);
    let call_headers = |name: &'static str| {
        let mut h = modern_headers("tools/call", None);
        h.push(("mcp-name", name));
        h
    };
    let with = |extra: &[(&'static str, &'static str)]| [list_headers.as_slice(), extra].concat();
    vec![
        // Protection and content negotiation.
        case(
            "foreign host",
            post(&[("host", "evil.example.com")], PING),
            expect![[
                r#"421 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Host header"}}"#
            ]],
        ),
        case(
            "foreign origin",
            post(&[("origin", "http://evil.example.com")], PING),
            expect![[
                r#"403 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Origin header"}}"#
            ]],
        ),
        case(
            "origin null",
            post(&[("origin", "null")], PING),
            expect![[
                r#"403 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Origin header"}}"#
            ]],
        ),
        case(
            "loopback origin on another port",
            post(&[("origin", "http://localhost:5173")], INIT),
            expect![[
                r#"200 {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},"serverInfo":{"name":"Bookshop","version":"1.0.0"},"instructions":"Use search_books."}}"#
            ]],
        ),
        case(
            "content type text/plain",
            post(&[("content-type", "text/plain")], PING),
            expect![[
                r#"415 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Content-Type must be application/json"}}"#
            ]],
        ),
        case(
            "no content type",
            post(&[("content-type", "")], PING),
            expect![[
                r#"415 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Content-Type must be application/json"}}"#
            ]],
        ),
        case(
            "content type with a charset",
            post(&[("content-type", "application/json; charset=utf-8")], INIT),
            expect![[
                r#"200 {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},"serverInfo":{"name":"Bookshop","version":"1.0.0"},"instructions":"Use search_books."}}"#
            ]],
        ),
        case(
            "accept text/html only",
            post(&[("accept", "text/html")], PING),
            expect![[
                r#"406 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Accept must allow application/json and text/event-stream"}}"#
            ]],
        ),
        case(
            "no accept header",
            post(&[("accept", "")], INIT),
            expect![[
                r#"200 {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},"serverInfo":{"name":"Bookshop","version":"1.0.0"},"instructions":"Use search_books."}}"#
            ]],
        ),
        case(
            "malformed body",
            post(&[], r#"{"jsonrpc":"2.0","id":1,"#),
            expect![[
                r#"400 {"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: EOF while parsing a value at line 1 column 24"}}"#
            ]],
        ),
        case(
            "empty body",
            post(&[], ""),
            expect![[
                r#"400 {"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: EOF while parsing a value at line 1 column 0"}}"#
            ]],
        ),
        case(
            "a batch",
            post(&[], format!("[{PING}]")),
            expect![[
                r#"400 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: batches (JSON arrays) are not supported since 2025-06-18: send one message at a time"}}"#
            ]],
        ),
        case(
            "body of limit-1 bytes",
            post(&modern_headers("server/discover", None), discover_of_len(BODY_LIMIT - 1)),
            expect![[
                r#"200 {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},"instructions":"Use search_books.","ttlMs":0,"cacheScope":"private"}}"#
            ]],
        ),
        case(
            "body of exactly the limit",
            post(&modern_headers("server/discover", None), discover_of_len(BODY_LIMIT)),
            expect![[
                r#"200 {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},"instructions":"Use search_books.","ttlMs":0,"cacheScope":"private"}}"#
            ]],
        ),
        case(
            "body of limit+1 bytes",
            post(&modern_headers("server/discover", None), discover_of_len(BODY_LIMIT + 1)),
            expect![[
                r#"413 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Request body exceeds 4096 bytes"}}"#
            ]],
        ),
        case(
            "PUT",
            Exchange { method: Method::PUT, ..post(&[], "") },
            expect![[
                r#"405 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Method not allowed"}}"#
            ]],
        ),
        // 2026-07-28 headers.
        case(
            "modern without Mcp-Method",
            post(&[("mcp-protocol-version", "2026-07-28")], list.clone()),
            expect![[
                r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Missing required header mcp-method"}}"#
            ]],
        ),
        case(
            "modern with Mcp-Method in capitals",
            post(
                &[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "TOOLS/LIST")],
                list.clone(),
            ),
            expect![[
                r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mcp-method is 'TOOLS/LIST' but the body says 'tools/list'"}}"#
            ]],
        ),
        case(
            "modern with a version header that differs from the body",
            post(
                &[("mcp-protocol-version", "2025-11-25"), ("mcp-method", "tools/list")],
                list.clone(),
            ),
            expect![[
                r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mcp-protocol-version is '2025-11-25' but the body says '2026-07-28'"}}"#
            ]],
        ),
        case(
            "modern without a version header",
            post(&[("mcp-method", "tools/list")], list.clone()),
            expect![[
                r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Missing required header mcp-protocol-version"}}"#
            ]],
        ),
        case(
            "modern with an unsupported version",
            post(
                &[("mcp-protocol-version", "2099-01-01"), ("mcp-method", "tools/list")],
                list.replace("2026-07-28", "2099-01-01"),
            ),
            expect![[
                r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2099-01-01"}}}"#
            ]],
        ),
        case(
            "tools/call without Mcp-Name",
            post(&modern_headers("tools/call", None), call.clone()),
            expect![[
                r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Missing required header mcp-name"}}"#
            ]],
        ),
        case(
            "tools/call with another Mcp-Name",
            post(&call_headers("other"), call.clone()),
            expect![[
                r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mcp-name is 'other' but the body says 'get_author'"}}"#
            ]],
        ),
        case(
            "tools/call with Mcp-Name in base64",
            post(&call_headers("=?base64?Z2V0X2F1dGhvcg==?="), call.clone()),
            expect![[
                r#"200 {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"Frank Herbert"}]}}"#
            ]],
        ),
        case(
            "tools/call with invalid base64 in Mcp-Name",
            post(&call_headers("=?base64?!!!?="), call.clone()),
            expect![[
                r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mcp-name has an invalid base64 encoding"}}"#
            ]],
        ),
        case(
            "tools/call with Mcp-Name padded by spaces",
            post(&call_headers("  get_author  "), call.clone()),
            expect![[
                r#"200 {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"Frank Herbert"}]}}"#
            ]],
        ),
        case(
            "Mcp-Method twice",
            post(&with(&[("mcp-method", "tools/call")]), list.clone()),
            expect![[
                r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mcp-method appears more than once"}}"#
            ]],
        ),
        case(
            "Mcp-Method with bytes beyond ascii",
            post(
                &[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list\u{e9}")],
                list.clone(),
            ),
            expect![[
                r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mcp-method has characters outside visible ASCII"}}"#
            ]],
        ),
        case(
            "unknown method",
            post(&modern_headers("foo/bar", None), modern_body("foo/bar", "")),
            expect![[
                r#"404 {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":"foo/bar"}}"#
            ]],
        ),
        case(
            "initialize as a modern request",
            post(&modern_headers("initialize", None), modern_body("initialize", "")),
            expect![[
                r#"404 {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":"initialize"}}"#
            ]],
        ),
        case(
            "modern without _meta",
            post(&list_headers, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#),
            expect![[
                r#"400 {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Missing required _meta field 'io.modelcontextprotocol/protocolVersion'"}}"#
            ]],
        ),
        case(
            "modern notification",
            post(
                &modern_headers("notifications/cancelled", None),
                format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":1,{MODERN_META}}}}}"#
                ),
            ),
            expect!["202"],
        ),
        case(
            "a response posted without a session",
            post(&[], r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            expect![[
                r#"400 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Missing Mcp-Session-Id header: send initialize first (or use the 2026-07-28 _meta envelope)"}}"#
            ]],
        ),
        // 2025-11-25 sessions.
        case(
            "request without a session id",
            post(&[], r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#),
            expect![[
                r#"400 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Missing Mcp-Session-Id header: send initialize first (or use the 2026-07-28 _meta envelope)"}}"#
            ]],
        ),
        case(
            "unknown session id",
            post(&[("mcp-session-id", "nope")], PING),
            expect![[
                r#"404 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Session not found"}}"#
            ]],
        ),
        case(
            "session id with a control character",
            post(&[("mcp-session-id", "a\tb")], PING),
            expect![[
                r#"404 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Session not found"}}"#
            ]],
        ),
        case(
            "unsupported version on a session",
            in_session(
                &[("mcp-session-id", SESSION), ("mcp-protocol-version", "1999-01-01")],
                PING,
            ),
            expect![[
                r#"400 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Unsupported MCP-Protocol-Version: 1999-01-01"}}"#
            ]],
        ),
        case(
            "initialize again on a session",
            in_session(&[("mcp-session-id", SESSION)], INIT),
            expect![[
                r#"200 {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},"serverInfo":{"name":"Bookshop","version":"1.0.0"},"instructions":"Use search_books."}}"#
            ]],
        ),
        case(
            "a response to nothing on a session",
            in_session(&[("mcp-session-id", SESSION)], r#"{"jsonrpc":"2.0","id":99,"result":{}}"#),
            expect!["202"],
        ),
        case(
            "DELETE of an unknown session",
            Exchange { method: Method::DELETE, ..post(&[("mcp-session-id", "nope")], "") },
            expect![[
                r#"404 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Session not found"}}"#
            ]],
        ),
    ]
}

#[test]
fn http_headers_and_statuses() {
    run_group("HTTP headers and statuses", 30, cases(), run_exchange);
}

/// Sends the case to a fresh bookshop endpoint, then proves it still serves (a modern
/// `tools/list`, or a `ping` on the case's session). Returns `STATUS BODY`.
pub(crate) fn run_exchange(case: &Exchange) -> String {
    block_on(async {
        let options = HttpOptions::default().max_body_bytes(BODY_LIMIT);
        let (addr, serve) =
            bookshop().http_endpoint_with(options).bind("127.0.0.1:0").await.expect("bind");
        tokio::spawn(serve);
        let client: HyperClient<HttpConnector, Full<Bytes>> =
            HyperClient::builder(TokioExecutor::new()).build_http();
        let url = format!("http://{addr}/mcp");
        let session = match case.session {
            true => Some(open_session(&client, &url).await),
            false => None,
        };
        let fill = |text: &str| text.replace(SESSION, session.as_deref().unwrap_or(""));
        let headers: Vec<(&str, String)> =
            case.headers.iter().map(|(name, value)| (*name, fill(value))).collect();
        let (status, content_type, body) =
            send(&client, &url, case.method.clone(), &headers, fill(&case.body), case.stream).await;
        let probe = match &session {
            Some(id) => {
                let headers =
                    [("mcp-session-id", id.clone()), ("mcp-protocol-version", "2025-11-25".into())];
                send(
                    &client,
                    &url,
                    Method::POST,
                    &headers,
                    r#"{"jsonrpc":"2.0","id":"alive","method":"ping"}"#.into(),
                    false,
                )
                .await
            }
            None => {
                let headers = [
                    ("mcp-protocol-version", "2026-07-28".to_owned()),
                    ("mcp-method", "tools/list".into()),
                ];
                let body = modern_body("tools/list", "").replace(r#""id":1"#, r#""id":"alive""#);
                send(&client, &url, Method::POST, &headers, body, false).await
            }
        };
        assert_eq!(probe.0, StatusCode::OK, "the endpoint still serves: {}", probe.2);
        assert!(
            probe.2.contains(r#""id":"alive","result""#),
            "the endpoint still serves: {}",
            probe.2
        );
        if case.stream && content_type == "text/event-stream" {
            return format!("{} {content_type} (stream open)", status.as_u16());
        }
        format!("{} {body}", status.as_u16()).trim_end().to_owned()
    })
}

async fn open_session(client: &HyperClient<HttpConnector, Full<Bytes>>, url: &str) -> String {
    let request = http::Request::post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(Full::new(Bytes::from(INIT)))
        .expect("request");
    let response = client.request(request).await.expect("initialize");
    let id = response.headers()["mcp-session-id"].to_str().expect("ascii").to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let headers = [("mcp-session-id", id.clone()), ("mcp-protocol-version", "2025-11-25".into())];
    let (status, _, _) = send(client, url, Method::POST, &headers, initialized.into(), false).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    id
}

/// Sends one request; the default content type and accept headers unless `headers` names
/// them (an empty value drops the header). Returns status, content type and body (the body
/// only when `head_only` is false or the answer is not a stream).
pub(crate) async fn send(
    client: &HyperClient<HttpConnector, Full<Bytes>>,
    url: &str,
    method: Method,
    headers: &[(&str, String)],
    body: String,
    head_only: bool,
) -> (StatusCode, String, String) {
    let mut request = http::Request::builder().method(method).uri(url);
    let named = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    if !named("content-type") {
        request = request.header("content-type", "application/json");
    }
    if !named("accept") {
        request = request.header("accept", "application/json, text/event-stream");
    }
    for (name, value) in headers.iter().filter(|(_, value)| !value.is_empty()) {
        let value = http::HeaderValue::from_bytes(value.as_bytes()).expect("header value");
        request = request.header(*name, value);
    }
    let request = request.body(Full::new(Bytes::from(body))).expect("request");
    let response = client.request(request).await.expect("response");
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    if head_only && content_type == "text/event-stream" {
        return (status, content_type, String::new());
    }
    let body = response.into_body().collect().await.expect("body").to_bytes();
    (status, content_type, String::from_utf8_lossy(&body).into_owned())
}
