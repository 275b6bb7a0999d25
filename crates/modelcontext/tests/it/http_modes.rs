//! The HTTP server's modes: JSON response mode (every request answered with one
//! `application/json` body, never SSE) and stateless handshake-era serving (no sessions), over
//! real sockets on 127.0.0.1, every JSON body checked against its revision's schema.

use http::{Method, StatusCode};
use modelcontext::server::NoArgs;
use modelcontext::server::http::HttpOptions;
use modelcontext::transport::http::HttpTransport;
use modelcontext::{Client, Context, EraMode, McpServer, ToolDef};
use serde_json::{Value, json};

use crate::http_server::{Http, start_with};
use crate::support::{assert_valid, modern_meta};

/// A server whose `slow` tool reports progress before its result, and whose `ask` tool asks
/// the client a question.
fn server() -> McpServer {
    let slow = ToolDef::new("slow", |cx: Context, _: NoArgs| async move {
        for step in 1..=3 {
            cx.report_progress(f64::from(step), Some(3.0), None).await;
        }
        "done"
    });
    let ask = ToolDef::new("ask", |cx: Context, _: NoArgs| async move {
        cx.list_roots().await.map(|roots| format!("{} roots", roots.len()))
    });
    McpServer::new("modes").tool(slow).and_then(|s| s.tool(ask)).expect("registers")
}

async fn start(options: HttpOptions) -> Http {
    start_with(server(), options).await
}

/// `initialize` at 2025-11-25; the session id, if the endpoint gave one.
async fn initialize(endpoint: &Http) -> (Value, Option<String>) {
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let answer = endpoint.post(&[], body).await;
    (answer.checked_json("2025-11-25"), answer.header("mcp-session-id").map(str::to_owned))
}

const SLOW_CALL: &str = r#""name":"slow","arguments":{}"#;

#[tokio::test]
async fn json_response_mode_never_streams() {
    let endpoint = start(HttpOptions::default().json_response(true)).await;
    // Modern: progress before the result would make an SSE stream; here it is dropped.
    let meta = modern_meta("{}", r#""progressToken":"p""#);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{SLOW_CALL},{meta}}}}}"#
    );
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "slow"),
    ];
    let answer = endpoint.post(&headers, &body).await;
    let value = answer.checked_json("2026-07-28");
    assert_eq!(value["result"]["content"][0]["text"], "done", "{value}");
    assert_valid("2026-07-28", "CallToolResult", &value["result"]);

    // A listen stream cannot be answered as one body.
    let meta = modern_meta("{}", "");
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{meta}}}}}"#
    );
    let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "subscriptions/listen")];
    let answer = endpoint.post(&headers, &body).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.checked_json("2026-07-28")["error"]["code"], -32600);

    // A 2025-11-25 session: the same call answers JSON, its progress goes to the GET stream.
    let (_, session) = initialize(&endpoint).await;
    let session = session.expect("a session");
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{{SLOW_CALL},"_meta":{{"progressToken":"q"}}}}}}"#
    );
    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let answer = endpoint.post(&headers, &body).await;
    assert_eq!(answer.checked_json("2025-11-25")["result"]["content"][0]["text"], "done");
}

/// Our client, in both eras, calls `slow` on an endpoint with `options`.
async fn our_client_is_served(options: HttpOptions) {
    let endpoint = start(options).await;
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let transport = HttpTransport::new(&endpoint.url()).expect("url");
        let client = Client::builder().era(mode).connect(transport).await.expect("connects");
        let result = client.call_tool("slow", json!({})).await.expect("answered");
        assert_eq!(result.is_error, None, "{mode:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn both_modes_serve_our_client_in_both_eras() {
    our_client_is_served(HttpOptions::default().json_response(true)).await;
    our_client_is_served(HttpOptions::default().stateless(true)).await;
    our_client_is_served(HttpOptions::default().stateless(true).json_response(true)).await;
}

#[tokio::test]
async fn stateless_handshake_serving_keeps_no_session() {
    let endpoint = start(HttpOptions::default().stateless(true)).await;
    let (init, session) = initialize(&endpoint).await;
    assert_eq!(session, None, "no Mcp-Session-Id");
    assert_valid("2025-11-25", "InitializeResult", &init["result"]);
    assert_eq!(init["result"]["capabilities"]["tools"], json!({}), "no listChanged: {init}");

    // Any later request stands alone, without a session id.
    let version = [("mcp-protocol-version", "2025-11-25")];
    let list = endpoint.post(&version, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).await;
    assert_eq!(
        list.checked_json("2025-11-25")["result"]["tools"].as_array().map(Vec::len),
        Some(2)
    );
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{{SLOW_CALL}}}}}"#);
    let call = endpoint.post(&version, &body).await;
    assert_eq!(call.checked_json("2025-11-25")["result"]["content"][0]["text"], "done");
    // No server-to-client requests: nobody would be there to answer.
    let body =
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","arguments":{}}}"#;
    let ask = endpoint.post(&version, body).await;
    assert_eq!(ask.checked_json("2025-11-25")["error"]["code"], -32021);
    let body =
        r#"{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"x://y"}}"#;
    assert_eq!(endpoint.post(&version, body).await.status, StatusCode::NOT_FOUND);
    let notification = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(endpoint.post(&version, notification).await.status, StatusCode::ACCEPTED);
    // No GET stream, no session to delete.
    assert_eq!(endpoint.send(Method::GET, &[], "").await.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(endpoint.send(Method::DELETE, &[], "").await.status, StatusCode::METHOD_NOT_ALLOWED);
}

/// `initialize` at `version`; the session id.
async fn session_at(endpoint: &Http, version: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    );
    let answer = endpoint.post(&[], &body).await;
    let session = answer.headers.get("mcp-session-id").and_then(|v| v.to_str().ok());
    session.expect("a session").to_owned()
}

#[tokio::test]
async fn a_2025_03_26_session_takes_json_rpc_batches() {
    let endpoint = start(HttpOptions::default()).await;
    let session = session_at(&endpoint, "2025-03-26").await;
    let headers = [("mcp-session-id", session.as_str())];
    let batch = format!(
        r#"[{{"jsonrpc":"2.0","id":1,"method":"tools/list"}},{{"jsonrpc":"2.0","method":"notifications/initialized"}},{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{{SLOW_CALL},"_meta":{{"progressToken":"b"}}}}}},{{"jsonrpc":"2.0","id":3,"method":"initialize","params":{{}}}}]"#
    );
    let answer = endpoint.post(&headers, &batch).await;
    assert_eq!((answer.status, answer.content_type()), (StatusCode::OK, "application/json"));
    let value: Value = serde_json::from_str(&answer.body).expect("JSON");
    assert_valid("2025-03-26", "JSONRPCBatchResponse", &value);
    let by_id = |id: i64| value.as_array().and_then(|a| a.iter().find(|r| r["id"] == id)).cloned();
    assert_eq!(by_id(1).expect("tools/list")["result"]["tools"].as_array().map(Vec::len), Some(2));
    assert_eq!(by_id(2).expect("tools/call")["result"]["content"][0]["text"], "done");
    assert_eq!(by_id(3).expect("initialize")["error"]["code"], -32600, "{value}");

    // Only notifications: accepted, no body. Empty or malformed: refused.
    let only = r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;
    assert_eq!(endpoint.post(&headers, only).await.status, StatusCode::ACCEPTED);
    assert_eq!(endpoint.post(&headers, "[]").await.status, StatusCode::BAD_REQUEST);
    let malformed = endpoint.post(&headers, r#"[{"jsonrpc":"2.0","id":9}]"#).await;
    let value: Value = serde_json::from_str(&malformed.body).expect("JSON");
    assert_eq!(value[0]["error"]["code"], -32600, "{value}");
}

#[tokio::test]
async fn later_revisions_and_sessionless_posts_refuse_batches() {
    let endpoint = start(HttpOptions::default()).await;
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#;
    let session = session_at(&endpoint, "2025-11-25").await;
    let answer = endpoint.post(&[("mcp-session-id", session.as_str())], batch).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.checked_json("2025-11-25")["error"]["code"], -32600);
    let answer = endpoint.post(&[], batch).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.body);
}
