//! Group 5, server-sent events on both sides. Server side: GET streams and `Last-Event-ID`
//! resumption against our endpoint, in both eras. Client side: our HTTP client transport
//! reading event streams from a fake server: line ends (CRLF split across chunks too), field
//! syntax, comments, events that are not messages, and streams that end without the response.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use expect_test::expect;
use http::Method;
use modelcontext::Transport;
use modelcontext::transport::http::HttpTransport;
use modelcontext::types::Message;
use serde_json::Value;

use super::http::{Exchange, SESSION, in_session, modern_body, post, run_exchange};
use super::{Case, block_on, case, run_group};

/// A GET on the endpoint with `headers`, in a session when `session`.
fn get(session: bool, headers: &[(&'static str, &str)]) -> Exchange {
    let base = if session { in_session(headers, "") } else { post(headers, "") };
    Exchange { method: Method::GET, stream: true, ..base }
}

pub(crate) fn server_cases() -> Vec<Case<Exchange>> {
    let s = ("mcp-session-id", SESSION);
    let modern = ("mcp-protocol-version", "2026-07-28");
    vec![
        case(
            "GET with a session opens a stream",
            get(true, &[s]),
            expect!["200 text/event-stream (stream open)"],
        ),
        case(
            "GET without a session",
            get(false, &[]),
            expect![[
                r#"400 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Missing Mcp-Session-Id header"}}"#
            ]],
        ),
        case(
            "GET with an unknown session",
            get(false, &[("mcp-session-id", "nope")]),
            expect![[
                r#"404 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Session not found"}}"#
            ]],
        ),
        case(
            "GET accepting only json",
            get(true, &[s, ("accept", "application/json")]),
            expect!["200 text/event-stream (stream open)"],
        ),
        case(
            "Last-Event-ID that is not ours",
            get(true, &[s, ("last-event-id", "garbage")]),
            expect![[
                r#"404 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Unknown Last-Event-ID: garbage"}}"#
            ]],
        ),
        case(
            "Last-Event-ID of a stream that never was",
            get(true, &[s, ("last-event-id", "ff.99-0")]),
            expect![[
                r#"404 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Unknown Last-Event-ID: ff.99-0"}}"#
            ]],
        ),
        case(
            "Last-Event-ID far beyond the stream's events",
            get(true, &[s, ("last-event-id", "0.0-999999")]),
            expect![[
                r#"404 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Unknown Last-Event-ID: 0.0-999999"}}"#
            ]],
        ),
        case(
            "Last-Event-ID with a huge number",
            get(true, &[s, ("last-event-id", "0.0-99999999999999999999999")]),
            expect![[
                r#"404 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Unknown Last-Event-ID: 0.0-99999999999999999999999"}}"#
            ]],
        ),
        case(
            "modern GET",
            get(false, &[modern]),
            expect![[
                r#"405 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Method not allowed"}}"#
            ]],
        ),
        case(
            "modern GET resuming",
            get(false, &[modern, ("last-event-id", "0-0")]),
            expect![[
                r#"405 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Method not allowed"}}"#
            ]],
        ),
        case(
            "modern POST ignores Last-Event-ID",
            post(
                &[modern, ("mcp-method", "tools/list"), ("last-event-id", "0-0")],
                modern_body("tools/list", ""),
            ),
            expect![[
                r#"200 {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","tools":[{"name":"get_author","description":"Look up the author of a book in the catalog.","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}},{"name":"get_author_strict","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}},{"name":"search_books","description":"Search the catalog by title or author.","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"Title or author to search for."},"limit":{"type":"integer","format":"int64","description":"Maximum number of results.","minimum":1,"maximum":50,"default":10}},"required":["query"]}},{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"integer","format":"int64"},"b":{"type":"integer","format":"int64"}},"required":["a","b"]},"outputSchema":{"type":"object","properties":{"result":{"type":"integer"}},"required":["result"]}},{"name":"boom","inputSchema":{"type":"object","properties":{}}},{"name":"model_error","inputSchema":{"type":"object","properties":{}}}],"ttlMs":0,"cacheScope":"private"}}"#
            ]],
        ),
        case(
            "modern POST accepting only event streams",
            post(
                &[modern, ("mcp-method", "tools/list"), ("accept", "text/event-stream")],
                modern_body("tools/list", ""),
            ),
            expect![[
                r#"200 {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","tools":[{"name":"get_author","description":"Look up the author of a book in the catalog.","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}},{"name":"get_author_strict","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}},{"name":"search_books","description":"Search the catalog by title or author.","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"Title or author to search for."},"limit":{"type":"integer","format":"int64","description":"Maximum number of results.","minimum":1,"maximum":50,"default":10}},"required":["query"]}},{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"integer","format":"int64"},"b":{"type":"integer","format":"int64"}},"required":["a","b"]},"outputSchema":{"type":"object","properties":{"result":{"type":"integer"}},"required":["result"]}},{"name":"boom","inputSchema":{"type":"object","properties":{}}},{"name":"model_error","inputSchema":{"type":"object","properties":{}}}],"ttlMs":0,"cacheScope":"private"}}"#
            ]],
        ),
    ]
}

#[test]
fn sse_server_side() {
    run_group("SSE server side", 10, server_cases(), run_exchange);
}

/// What the fake server answers a `tools/call` with: a content type and the body's chunks,
/// where `{id}` stands for the request's id.
pub(crate) struct Stream {
    content_type: &'static str,
    chunks: Vec<&'static str>,
}

fn sse(chunks: &[&'static str]) -> Stream {
    Stream { content_type: "text/event-stream", chunks: chunks.to_vec() }
}

const RESULT: &str =
    r#"{"jsonrpc":"2.0","id":{id},"result":{"content":[],"resultType":"complete"}}"#;

pub(crate) fn client_cases() -> Vec<Case<Stream>> {
    vec![
        case(
            "lf line ends",
            sse(&["event: message\ndata: ", RESULT, "\n\n"]),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}"#
            ]],
        ),
        case(
            "crlf line ends",
            sse(&["event: message\r\ndata: ", RESULT, "\r\n\r\n"]),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}"#
            ]],
        ),
        case(
            "cr line ends",
            sse(&["event: message\rdata: ", RESULT, "\r\r"]),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}"#
            ]],
        ),
        case(
            "crlf split across chunks",
            sse(&[
                "data: {\"jsonrpc\":\"2.0\",\r",
                "\ndata: \"id\":{id},\"result\":{}}\r",
                "\n\r\n",
            ]),
            expect![[r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]],
        ),
        case(
            "data without a space",
            sse(&["data:", RESULT, "\n\n"]),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}"#
            ]],
        ),
        case(
            "data over two lines",
            sse(&["data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":{id},\"result\":{}}\n\n"]),
            expect![[r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]],
        ),
        case(
            "comments, unknown fields, bad retry and a nul in id first",
            sse(&[": keep-alive\nfoo: bar\nretry: soon\nid: a\0b\n\ndata: ", RESULT, "\n\n"]),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}"#
            ]],
        ),
        case(
            "byte order mark",
            sse(&["\u{feff}data: ", RESULT, "\n\n"]),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}"#
            ]],
        ),
        case(
            "priming event without data first",
            sse(&["id: 1-0\ndata:\n\ndata: ", RESULT, "\n\n"]),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}"#
            ]],
        ),
        case(
            "event of another type first",
            sse(&[
                "event: ping\ndata: {\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{\"wrong\":true}}\n\nevent: message\ndata: ",
                RESULT,
                "\n\n",
            ]),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}"#
            ]],
        ),
        case(
            "data that is not json",
            sse(&["data: hello\n\ndata: ", RESULT, "\n\n"]),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}"#
            ]],
        ),
        case(
            "a response to another request first",
            sse(&[
                "data: {\"jsonrpc\":\"2.0\",\"id\":9999,\"result\":{}}\n\ndata: ",
                RESULT,
                "\n\n",
            ]),
            expect![[r#"
                {"jsonrpc":"2.0","id":9999,"result":{}}
                {"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}"#]],
        ),
        case(
            "last event not terminated",
            sse(&["data: ", RESULT, "\n"]),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no response to request 1 on its SSE stream: the stream ended"}}"#
            ]],
        ),
        case(
            "no events at all",
            sse(&[]),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no response to request 1 on its SSE stream: the stream ended"}}"#
            ]],
        ),
        case(
            "json-rpc error in an event",
            sse(&[
                "data: {\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{\"code\":-32602,\"message\":\"bad\"}}\n\n",
            ]),
            expect![[r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#]],
        ),
        case(
            "content type with parameters",
            Stream {
                content_type: "text/event-stream; charset=utf-8",
                chunks: vec!["data: ", RESULT, "\n\n"],
            },
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}"#
            ]],
        ),
    ]
}

#[test]
fn sse_client_side() {
    run_group("SSE client side", 10, client_cases(), run_client);
}

/// Our client transport against a fake endpoint that answers `tools/call` with the case's
/// stream and `tools/list` with plain JSON. Returns every message the transport delivered up
/// to the call's answer; the list afterwards must succeed on the same transport.
fn run_client(case: &Stream) -> String {
    let content_type = case.content_type;
    let chunks: Vec<String> = case.chunks.iter().map(|c| (*c).to_owned()).collect();
    block_on(async move {
        let url = fake(content_type, chunks).await;
        let mut connection = HttpTransport::new(&url).expect("url").open();
        let meta = crate::support::MODERN_META;
        send(
            &connection,
            &format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x",{meta}}}}}"#
            ),
        )
        .await;
        // Everything delivered up to the call's answer: the transport must answer every request,
        // with an error if the stream never carried the response.
        let mut answer = vec![next(&mut connection).await];
        while !answer.last().is_some_and(|a| a.starts_with(r#"{"jsonrpc":"2.0","id":1,"#)) {
            answer.push(next(&mut connection).await);
        }
        send(
            &connection,
            &format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{{meta}}}}}"#),
        )
        .await;
        let list = next(&mut connection).await;
        assert!(list.starts_with(r#"{"jsonrpc":"2.0","id":2,"result""#), "still serving: {list}");
        answer.join("\n")
    })
}

async fn send(connection: &modelcontext::Connection, text: &str) {
    let message = Message::decode_str(text).expect("valid message");
    connection.sender.send(message).await.expect("transport running");
}

async fn next(connection: &mut modelcontext::Connection) -> String {
    let wait = tokio::time::timeout(Duration::from_secs(5), connection.receiver.recv());
    match wait.await.expect("a message within 5 s") {
        Some(Ok(message)) => message.encode(),
        other => panic!("expected a message, got {other:?}"),
    }
}

/// A fake endpoint on 127.0.0.1; returns its URL.
async fn fake(content_type: &'static str, chunks: Vec<String>) -> String {
    let chunks = Arc::new(chunks);
    let handler = move |body: Bytes| {
        let chunks = Arc::clone(&chunks);
        async move {
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let id = request["id"].to_string();
            if request["method"] == "tools/list" {
                let result = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[],"resultType":"complete"}}}}"#
                );
                return respond("application/json", Body::from(result));
            }
            let parts: Vec<Result<Bytes, Infallible>> =
                chunks.iter().map(|c| Ok(Bytes::from(c.replace("{id}", &id)))).collect();
            respond(content_type, Body::from_stream(futures_util::stream::iter(parts)))
        }
    };
    let app = axum::Router::new().route("/mcp", axum::routing::post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

fn respond(content_type: &str, body: Body) -> Response {
    let mut response = Response::new(body);
    response.headers_mut().insert("content-type", content_type.parse().expect("ascii"));
    response
}
