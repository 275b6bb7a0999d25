//! The client and the engine, in memory: era negotiation, errors as values, concurrency,
//! cancellation, timeouts and progress.

use std::time::Duration;

use modelcontext::types::{Era, INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION};
use modelcontext::{Client, Context, EraMode, ErrorKind, McpServer, ToolDef};
use serde_json::json;
use tokio::sync::oneshot;

use crate::support::{MODERN_META, Wire, bookshop};

#[tokio::test]
async fn auto_mode_picks_the_modern_era_on_a_dual_era_server() {
    let client = Client::connect(bookshop().in_memory()).await.expect("connects");
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(client.server_info().map(|i| i.name.as_str()), Some("Bookshop"));
    assert_eq!(client.instructions(), Some("Use search_books."));
}

#[tokio::test]
async fn handshake_mode_initializes() {
    let client = Client::builder()
        .era(EraMode::Handshake)
        .connect(bookshop().in_memory())
        .await
        .expect("connects");
    assert_eq!(client.era(), Era::Handshake);
    assert_eq!(client.protocol_version(), "2025-11-25");
    client.ping().await.expect("ping answers");
}

#[tokio::test]
async fn seed_results_are_values_and_protocol_errors_are_errors() {
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let client =
            Client::builder().era(mode).connect(bookshop().in_memory()).await.expect("connects");
        let ok = client.call_tool("get_author", json!({"title": "Dune"})).await.expect("result");
        assert_eq!(ok.is_error, None);
        assert_eq!(
            serde_json::to_value(&ok.content).expect("json"),
            json!([{"type": "text", "text": "Frank Herbert"}])
        );

        let failed = client
            .call_tool("get_author", json!({"title": "Nothing"}))
            .await
            .expect("still a result");
        assert_eq!(failed.is_error, Some(true));
        assert_eq!(failed.structured_content, None);

        let err = client
            .call_tool("get_author_strict", json!({"title": "Nothing"}))
            .await
            .expect_err("protocol error");
        assert_eq!(err.kind(), ErrorKind::Protocol);
        let mcp = err.as_mcp_error().expect("a JSON-RPC error");
        assert_eq!(
            (mcp.code, mcp.message.as_str()),
            (INVALID_PARAMS, "No book titled 'Nothing' in the catalog.")
        );

        let missing = client.read_resource("books://Nothing").await.expect_err("not found");
        assert_eq!(
            missing.as_mcp_error().and_then(|e| e.data.clone()),
            Some(json!({"uri": "books://Nothing"}))
        );

        let tools = client.list_all_tools().await.expect("tools");
        assert_eq!(tools.first().map(|t| t.name.as_str()), Some("get_author"));
        let prompt = client.get_prompt("review", [("title", "Dune")]).await.expect("prompt");
        assert_eq!(prompt.messages.len(), 1);
    }
}

/// A server whose `wait` tool blocks until cancelled, reporting its drop on a channel.
fn waiting_server(dropped: oneshot::Sender<()>) -> McpServer {
    let dropped = std::sync::Arc::new(std::sync::Mutex::new(Some(dropped)));
    let wait = ToolDef::new("wait", move || {
        let guard = DropSignal(dropped.lock().expect("lock").take());
        async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        }
    });
    McpServer::new("waiter").tool(wait).expect("registers")
}

struct DropSignal(Option<oneshot::Sender<()>>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

#[tokio::test]
async fn cancellation_reaches_the_handler_and_gets_no_answer() {
    let (dropped_tx, dropped_rx) = oneshot::channel();
    let mut wire = Wire::start(waiting_server(dropped_tx), "2026-07-28");
    wire.send(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"wait",{MODERN_META}}}}}"#)).await;
    wire.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}"#).await;
    tokio::time::timeout(Duration::from_secs(5), dropped_rx)
        .await
        .expect("handler dropped")
        .expect("signal");
    // The next answer is for the next request: the cancelled one never gets one.
    wire.assert_alive().await;
}

#[tokio::test]
async fn a_duplicate_id_in_flight_is_refused() {
    let (dropped_tx, _dropped_rx) = oneshot::channel();
    let mut wire = Wire::start(waiting_server(dropped_tx), "2026-07-28");
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"wait",{MODERN_META}}}}}"#
    );
    wire.send(&call).await;
    let answer = wire.call(&call).await;
    assert_eq!(
        answer,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Request id 1 is already in use"}}"#
    );
    wire.assert_alive().await;
}

#[tokio::test(start_paused = true)]
async fn a_timeout_is_an_error_and_cancels_the_request() {
    let (dropped_tx, dropped_rx) = oneshot::channel();
    let client = Client::builder()
        .timeout(Some(Duration::from_millis(500)))
        .connect(waiting_server(dropped_tx).in_memory())
        .await
        .expect("connects");
    let err = client.call_tool("wait", json!({})).await.expect_err("times out");
    assert_eq!(err.kind(), ErrorKind::Timeout);
    dropped_rx.await.expect("the server dropped the handler after notifications/cancelled");
}

#[tokio::test]
async fn requests_run_concurrently() {
    let (release_tx, release_rx) = tokio::sync::watch::channel(false);
    let gate = ToolDef::new("gate", move || {
        let mut rx = release_rx.clone();
        async move {
            let _ = rx.wait_for(|open| *open).await;
            "through"
        }
    });
    let open = ToolDef::new("open", move || {
        let tx = release_tx.clone();
        async move {
            let _ = tx.send(true);
            "opened"
        }
    });
    let server = McpServer::new("gates").tool(gate).expect("gate").tool(open).expect("open");
    let client = Client::connect(server.in_memory()).await.expect("connects");
    // `gate` only finishes once `open` ran: a serial engine would deadlock here.
    let (gated, opened) =
        tokio::join!(client.call_tool("gate", json!({})), client.call_tool("open", json!({})));
    assert_eq!(gated.expect("gate").is_error, None);
    assert_eq!(opened.expect("open").is_error, None);
}

/// A pipelining client sends a burst of requests in one write. The server answers it a slice
/// at a time: the first answers are written while later requests of the burst are not yet
/// handled, so the client can read and send more meanwhile (on a current-thread runtime, as
/// `#[tokio::test]`'s, the order is deterministic: the test reads the first answer as soon
/// as it is written). Before, every answer waited for the whole burst.
#[tokio::test]
async fn a_burst_of_requests_is_answered_before_it_is_all_handled() {
    const BURST: usize = 64;
    let handled = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&handled);
    let count = ToolDef::new("count", move || {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        async move { n.to_string() }
    });
    let mut wire = Wire::start(McpServer::new("counter").tool(count).expect("count"), "2026-07-28");
    let burst: Vec<String> = (1..=BURST)
        .map(|id| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"count","arguments":{{}},{MODERN_META}}}}}"#
            )
        })
        .collect();
    wire.send_bytes(burst.join("\n").as_bytes()).await;
    let first = wire.recv().await;
    let handled_when_first_answer_arrived = handled.load(std::sync::atomic::Ordering::SeqCst);
    assert!(first.contains(r#""id":1,"#), "{first}");
    // With slices of 16: 16 handled. Before: 55 (the reader's buffer held 55 lines).
    assert!(
        handled_when_first_answer_arrived <= BURST / 2,
        "the first answer waited for {handled_when_first_answer_arrived} of {BURST} requests"
    );
    // And every request of the burst is answered, in order (each handler finishes at once).
    for id in 2..=BURST {
        let answer = wire.recv().await;
        assert!(answer.contains(&format!(r#""id":{id},"#)), "{answer}");
        assert!(answer.contains(&format!(r#""text":"{id}""#)), "{answer}");
    }
}

#[tokio::test]
async fn progress_is_sent_only_with_a_token() {
    let slow = ToolDef::new("slow", |cx: Context, _: modelcontext::server::NoArgs| async move {
        cx.report_progress(1.0, Some(2.0), Some("half")).await;
        "done"
    });
    let server = McpServer::new("progress").tool(slow).expect("registers");
    let mut wire = Wire::start(server, "2026-07-28");
    let with_token = r#""_meta":{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let progress = wire.call(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"slow",{with_token}}}}}"#)).await;
    assert_eq!(
        progress,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,"total":2,"message":"half"}}"#
    );
    assert!(wire.recv().await.contains(r#""text":"done""#));
    let answer = wire.call(&format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"slow",{MODERN_META}}}}}"#)).await;
    assert!(
        answer.starts_with(r#"{"jsonrpc":"2.0","id":2,"result""#),
        "no progress without a token: {answer}"
    );
}

#[tokio::test]
async fn the_modern_envelope_is_checked_on_every_request() {
    let mut wire = Wire::start(bookshop(), "2026-07-28");
    let missing =
        wire.call(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#).await;
    assert_eq!(
        missing,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Missing required _meta field 'io.modelcontextprotocol/protocolVersion'"}}"#
    );
    let unsupported = wire.call(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#).await;
    assert_eq!(
        unsupported,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2099-01-01"}}}"#
    );
    let no_caps = wire.call(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#).await;
    assert_eq!(
        no_caps,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Missing required _meta field 'io.modelcontextprotocol/clientCapabilities'"}}"#
    );
    // A valid request pins the modern era; initialize is refused from then on, and ping is gone.
    wire.assert_alive().await;
    let init = wire.call(r#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#).await;
    assert!(init.contains(&format!(r#""code":{}"#, UNSUPPORTED_PROTOCOL_VERSION.0)), "{init}");
    let ping = wire
        .call(&format!(r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{{MODERN_META}}}}}"#))
        .await;
    assert_eq!(
        ping,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found","data":"ping"}}"#
    );
}

#[tokio::test]
async fn discover_advertises_versions_capabilities_and_cache_hints() {
    let mut wire = Wire::start(bookshop(), "2026-07-28");
    let answer = wire
        .call(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{MODERN_META}}}}}"#
        ))
        .await;
    expect_test::expect![[r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},"instructions":"Use search_books.","ttlMs":0,"cacheScope":"private"}}"#]].assert_eq(&answer);
}

#[tokio::test]
async fn initialize_negotiates_or_counter_offers() {
    for (offered, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-06-18", "2025-06-18"),
        ("1999-01-01", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ] {
        let revision = if answered == "2025-11-25" { "2025-11-25" } else { answered };
        let mut wire =
            Wire::start(bookshop(), if revision == "2024-11-05" { "2024-11-05" } else { revision });
        let answer = wire.call(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{offered}","capabilities":{{}},"clientInfo":{{"name":"x","version":"1"}}}}}}"#)).await;
        assert!(
            answer.contains(&format!(r#""protocolVersion":"{answered}""#)),
            "{offered}: {answer}"
        );
    }
}

#[tokio::test]
async fn set_level_is_accepted_in_the_handshake_era() {
    let mut wire = Wire::start(bookshop(), "2025-11-25");
    wire.initialize().await;
    let answer = wire
        .call(
            r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"warning"}}"#,
        )
        .await;
    assert_eq!(answer, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
}

#[tokio::test]
async fn a_removed_method_is_not_found_whatever_its_params() {
    let mut wire = Wire::start(bookshop(), "2026-07-28");
    wire.assert_alive().await;
    for method in ["logging/setLevel", "resources/subscribe", "resources/unsubscribe", "ping"] {
        let line =
            format!(r#"{{"jsonrpc":"2.0","id":9,"method":"{method}","params":{{{MODERN_META}}}}}"#);
        let answer = wire.call(&line).await;
        assert_eq!(
            answer,
            format!(
                r#"{{"jsonrpc":"2.0","id":9,"error":{{"code":-32601,"message":"Method not found","data":"{method}"}}}}"#
            )
        );
    }
}

#[tokio::test]
async fn requests_beyond_the_in_flight_limit_are_refused_and_the_connection_serves_on() {
    let wait = ToolDef::new("wait", std::future::pending::<&'static str>);
    let server = McpServer::new("busy").tool(wait).expect("registers").max_in_flight(2);
    let mut wire = Wire::start(server, "2026-07-28");
    let call = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"wait",{MODERN_META}}}}}"#
        )
    };
    wire.send(&call(1)).await; // limit - 1 running: accepted
    wire.send(&call(2)).await; // limit running: accepted
    let refused = wire.call(&call(3)).await; // limit + 1
    assert_eq!(
        refused,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Server busy: 2 requests already in flight; retry later"}}"#
    );
    // Cancelling one frees a slot; the connection keeps serving.
    wire.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#)
        .await;
    wire.assert_alive().await;
}

#[tokio::test]
async fn auto_mode_falls_back_whatever_code_refuses_the_probe() {
    use modelcontext::transport::memory_pair;
    use modelcontext::types::{Message, Response, to_raw};
    let (client_end, mut server_end) = memory_pair();
    // A handshake-only server that refuses the probe with -32000, as the TypeScript SDK 1.x does.
    let server = tokio::spawn(async move {
        while let Some(Ok(Message::Request(request))) = server_end.receiver.recv().await {
            let answer = match request.method.as_str() {
                "server/discover" => Response::error(
                    Some(request.id),
                    modelcontext::McpError::new(
                        modelcontext::types::ErrorCode(-32000),
                        "Bad Request: Server not initialized",
                    ),
                ),
                "initialize" => {
                    let result = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "old", "version": "1"}});
                    Response::ok(request.id, to_raw(&result).expect("json"))
                }
                _ => continue,
            };
            if server_end.sender.send(Message::Response(answer)).await.is_err() {
                return;
            }
        }
    });
    let client = Client::connect(client_end).await.expect("falls back to initialize");
    assert_eq!((client.era(), client.protocol_version()), (Era::Handshake, "2025-11-25"));
    drop(client);
    let _ = server.await;
}

/// A handler without its own panic guard (here a completion handler) must not take the
/// connection down: whether it panics in its first poll (answered in the engine loop) or
/// after waiting (answered by its task), the request gets -32603 and the connection serves on.
#[tokio::test]
async fn a_panicking_handler_is_answered_with_an_internal_error() {
    use modelcontext::types::{CompleteRequestParams, Completion};
    let server = McpServer::new("panics").completion(|params: CompleteRequestParams| async move {
        if params.argument.value == "later" {
            tokio::task::yield_now().await;
        }
        if params.argument.value != "fine" {
            panic!("the handler broke");
        }
        Ok(Completion::default())
    });
    let mut wire = Wire::start(server, "2025-11-25");
    wire.initialize().await;
    for (id, value) in [(1, "now"), (2, "later")] {
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"completion/complete","params":{{"ref":{{"type":"ref/prompt","name":"p"}},"argument":{{"name":"a","value":"{value}"}}}}}}"#
        );
        let answer: serde_json::Value =
            serde_json::from_str(&wire.call(&request).await).expect("json");
        assert_eq!(
            answer,
            json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32603, "message": "Internal error: the request handler panicked"}})
        );
        wire.assert_alive().await;
    }
}

/// A tool function that panics while building its future, before any `async` code runs, is
/// behind the same barrier as one that panics inside it: a tool error without the message,
/// and the connection serves on.
#[tokio::test]
async fn a_tool_that_panics_before_its_future_exists_is_a_tool_error() {
    fn panics_early(_: modelcontext::server::NoArgs) -> std::future::Ready<&'static str> {
        panic!("before the future")
    }
    let server = McpServer::new("panics").tool(ToolDef::new("early", panics_early)).expect("tool");
    let mut wire = Wire::start(server, "2025-11-25");
    wire.initialize().await;
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"early"}}"#;
    let answer: serde_json::Value = serde_json::from_str(&wire.call(request).await).expect("json");
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": "Error executing tool early"}], "isError": true}})
    );
    wire.assert_alive().await;
}

#[tokio::test]
async fn ping_on_a_modern_connection_fails_locally_with_method_not_found() {
    let client = Client::builder()
        .era(EraMode::Modern)
        .connect(bookshop().in_memory())
        .await
        .expect("connects");
    let err = client.ping().await.expect_err("2026-07-28 removed ping");
    let mcp = err.as_mcp_error().expect("a JSON-RPC error");
    assert_eq!(mcp.code, modelcontext::types::METHOD_NOT_FOUND);
    // The connection is untouched.
    client.list_tools(None).await.expect("still serving");
}
