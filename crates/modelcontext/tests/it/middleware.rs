//! Async middleware (`McpServer::middleware`, `ToolDef::middleware`) on every transport: the
//! stdio framing and an in-memory connection (in both eras), an HTTP session, a stateless
//! 2026-07-28 POST and a 2025-03-26 batch. The same server on each: its middleware awaits
//! another task, rewrites `greet`'s arguments and adds to every tool result; `greet` alone has
//! a middleware of its own, inside the server's. Plus short-circuits, time-outs and panics.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use modelcontext::server::NoArgs;
use modelcontext::server::middleware::{Next, Request, Response, from_fn};
use modelcontext::types::{CallToolResult, ContentBlock, ErrorCode, McpError};
use modelcontext::{Client, EraMode, McpServer, ToolDef};
use serde_json::{Value, json};

use crate::support::{Wire, modern_meta};

#[derive(serde::Deserialize, modelcontext::schemars::JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
struct Greet {
    name: String,
}

#[derive(serde::Deserialize, modelcontext::schemars::JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
struct Echo {
    text: String,
}

/// Adds a text block to a tool result.
fn with_block(response: Response, text: &'static str) -> Response {
    response.map_result(|mut result: CallToolResult| {
        result.content.push(ContentBlock::text(text));
        result
    })
}

/// The server-wide middleware: waits for a verdict from another task, upper-cases `greet`'s
/// `name` argument, and adds the verdict to every tool result.
async fn checked(mut request: Request, next: Next) -> Response {
    let (verdict, heard) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(2)).await;
        let _ = verdict.send("checked");
    });
    let verdict = heard.await.expect("the checker answers");
    if request.tool_name() == Some("greet") {
        let arguments = request.arguments_mut().expect("a call has arguments");
        let name = arguments.get("name").and_then(Value::as_str).unwrap_or_default();
        let name = Value::String(name.to_uppercase());
        arguments.insert("name".into(), name);
    }
    let tool_call = request.tool_name().is_some();
    let response = next.run(request).await;
    if tool_call { with_block(response, verdict) } else { response }
}

/// `greet` (with a middleware of its own) and `echo` (without), behind [`checked`].
fn server() -> McpServer {
    let greet =
        ToolDef::new("greet", |Greet { name }: Greet| async move { format!("hello {name}") })
            .middleware(from_fn(|request: Request, next: Next| async move {
                tokio::task::yield_now().await;
                with_block(next.run(request).await, "greet only")
            }));
    let echo = ToolDef::new("echo", |Echo { text }: Echo| async move { text });
    McpServer::new("mw").tools([greet, echo]).expect("tools").middleware(from_fn(checked))
}

/// The result content each call gets: `greet`'s name rewritten, its own block inside the
/// server's; `echo` only the server's.
const GREET_CONTENT: &str = r#"[{"type":"text","text":"hello ADA"},{"type":"text","text":"greet only"},{"type":"text","text":"checked"}]"#;
const ECHO_CONTENT: &str = r#"[{"type":"text","text":"as is"},{"type":"text","text":"checked"}]"#;

fn call(id: u32, tool: &str, arguments: &str, meta: &str) -> String {
    let sep = if meta.is_empty() { "" } else { "," };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}{sep}{meta}}}}}"#
    )
}

/// The exact answer to a handshake-era call.
fn handshake_answer(id: u32, content: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":{content}}}}}"#)
}

/// The exact answer to a 2026-07-28 call: the stamp the handler's result had survives the
/// rewrite.
fn modern_answer(id: u32, content: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"mw","version":"0.1.0"}}}},"resultType":"complete","content":{content}}}}}"#
    )
}

#[tokio::test]
async fn stdio_framing_in_both_eras() {
    let mut wire = Wire::start(server(), "2025-11-25");
    wire.initialize().await;
    let answer = wire.call(&call(1, "greet", r#"{"name":"ada"}"#, "")).await;
    assert_eq!(answer, handshake_answer(1, GREET_CONTENT));
    let answer = wire.call(&call(2, "echo", r#"{"text":"as is"}"#, "")).await;
    assert_eq!(answer, handshake_answer(2, ECHO_CONTENT));

    let mut wire = Wire::start(server(), "2026-07-28");
    let meta = modern_meta("{}", "");
    let answer = wire.call(&call(1, "greet", r#"{"name":"ada"}"#, &meta)).await;
    assert_eq!(answer, modern_answer(1, GREET_CONTENT));
    let answer = wire.call(&call(2, "echo", r#"{"text":"as is"}"#, &meta)).await;
    assert_eq!(answer, modern_answer(2, ECHO_CONTENT));
}

/// Our client, in memory, in both eras: what it reads is the rewritten result.
#[tokio::test]
async fn in_memory_client_in_both_eras() {
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let client = Client::builder().era(mode).connect(server().in_memory()).await.expect("up");
        let greet = client.call_tool("greet", json!({"name": "ada"})).await.expect("greet");
        let content = serde_json::to_string(&greet.content).expect("json");
        assert_eq!(content, GREET_CONTENT, "{mode:?}");
        let echo = client.call_tool("echo", json!({"text": "as is"})).await.expect("echo");
        let content = serde_json::to_string(&echo.content).expect("json");
        assert_eq!(content, ECHO_CONTENT, "{mode:?}");
    }
}

/// The in-memory connection itself, message by message, in both eras: the exact answers.
#[tokio::test]
async fn in_memory_messages_in_both_eras() {
    use modelcontext::types::Message;
    async fn exchange(connection: &mut modelcontext::Connection, message: &str) -> String {
        let message = Message::decode_str(message).expect("a message");
        connection.sender.send(message).await.expect("the server listens");
        let answer = connection.receiver.recv().await.expect("an answer");
        answer.expect("decodes").encode()
    }
    let mut handshake = server().in_memory();
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mem","version":"1"}}}"#;
    exchange(&mut handshake, initialize).await;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let initialized = Message::decode_str(initialized).expect("a message");
    handshake.sender.send(initialized).await.expect("the server listens");
    let mut modern = server().in_memory();
    let meta = modern_meta("{}", "");
    for (id, tool, arguments, content) in [
        (1, "greet", r#"{"name":"ada"}"#, GREET_CONTENT),
        (2, "echo", r#"{"text":"as is"}"#, ECHO_CONTENT),
    ] {
        let answer = exchange(&mut handshake, &call(id, tool, arguments, "")).await;
        assert_eq!(answer, handshake_answer(id, content));
        let answer = exchange(&mut modern, &call(id, tool, arguments, &meta)).await;
        assert_eq!(answer, modern_answer(id, content));
    }
}

#[cfg(feature = "http")]
mod over_http {
    use ::http::StatusCode;
    use modelcontext::server::http::HttpOptions;
    use serde_json::Value;

    use super::*;
    use crate::http_server::start_with;
    use crate::support::assert_valid;

    /// `initialize` at `version` over HTTP; the session id.
    async fn session_at(endpoint: &crate::http_server::Http, version: &str) -> String {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        );
        let answer = endpoint.post(&[], &body).await;
        answer.header("mcp-session-id").expect("a session").to_owned()
    }

    /// A 2025-11-25 HTTP session, with our client: its calls go through the session's POSTs.
    #[tokio::test]
    async fn an_http_session() {
        let url = crate::support::serve_http(server()).await;
        let transport = modelcontext::HttpTransport::new(&url).expect("url");
        let client =
            Client::builder().era(EraMode::Handshake).connect(transport).await.expect("up");
        assert_eq!(client.protocol_version(), "2025-11-25");
        let greet = client.call_tool("greet", json!({"name": "ada"})).await.expect("greet");
        assert_eq!(serde_json::to_string(&greet.content).expect("json"), GREET_CONTENT);
        let echo = client.call_tool("echo", json!({"text": "as is"})).await.expect("echo");
        assert_eq!(serde_json::to_string(&echo.content).expect("json"), ECHO_CONTENT);
        client.close().await;
    }

    /// The same 2025-11-25 session on the wire: each call's POST is answered with the exact
    /// rewritten result, as JSON (the middleware's wait hands the call over; nothing else is
    /// sent before its answer).
    #[tokio::test]
    async fn an_http_session_on_the_wire() {
        let endpoint = start_with(server(), HttpOptions::default()).await;
        let session = session_at(&endpoint, "2025-11-25").await;
        let headers =
            [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-11-25")];
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(endpoint.post(&headers, initialized).await.status, StatusCode::ACCEPTED);
        for (id, tool, arguments, content) in [
            (1, "greet", r#"{"name":"ada"}"#, GREET_CONTENT),
            (2, "echo", r#"{"text":"as is"}"#, ECHO_CONTENT),
        ] {
            let answer = endpoint.post(&headers, &call(id, tool, arguments, "")).await;
            assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
            answer.checked_json("2025-11-25");
            assert_eq!(answer.body, handshake_answer(id, content));
        }
    }

    /// Stateless 2026-07-28 POSTs, on the wire.
    #[tokio::test]
    async fn stateless_modern_posts() {
        let endpoint = start_with(server(), HttpOptions::default()).await;
        let meta = modern_meta("{}", "");
        for (tool, arguments, content) in [
            ("greet", r#"{"name":"ada"}"#, GREET_CONTENT),
            ("echo", r#"{"text":"as is"}"#, ECHO_CONTENT),
        ] {
            let headers = [
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", tool),
            ];
            let answer = endpoint.post(&headers, &call(7, tool, arguments, &meta)).await;
            assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
            assert_eq!(answer.header("mcp-session-id"), None);
            answer.checked_json("2026-07-28");
            assert_eq!(answer.body, modern_answer(7, content));
        }
    }

    /// A 2025-03-26 session's JSON-RPC batch: each call in it goes through the middleware.
    #[tokio::test]
    async fn a_2025_03_26_batch_over_http() {
        let endpoint = start_with(server(), HttpOptions::default()).await;
        let session = session_at(&endpoint, "2025-03-26").await;
        let headers = [("mcp-session-id", session.as_str())];
        let batch = format!(
            "[{},{}]",
            call(1, "greet", r#"{"name":"ada"}"#, ""),
            call(2, "echo", r#"{"text":"as is"}"#, "")
        );
        let answer = endpoint.post(&headers, &batch).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        let value: Value = serde_json::from_str(&answer.body).expect("JSON");
        assert_valid("2025-03-26", "JSONRPCBatchResponse", &value);
        let mut items: Vec<String> =
            value.as_array().expect("an array").iter().map(Value::to_string).collect();
        items.sort();
        assert_eq!(items, [handshake_answer(1, GREET_CONTENT), handshake_answer(2, ECHO_CONTENT)]);
    }
}

/// The same batch on the stdio framing.
#[tokio::test]
async fn a_2025_03_26_batch_on_the_stdio_framing() {
    let mut wire = Wire::start(server(), "2025-03-26");
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}"#;
    wire.call(initialize).await;
    wire.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    let batch = format!(
        "[{},{}]",
        call(1, "greet", r#"{"name":"ada"}"#, ""),
        call(2, "echo", r#"{"text":"as is"}"#, "")
    );
    let answer = wire.call(&batch).await;
    let value: Value = serde_json::from_str(&answer).expect("JSON");
    let mut items: Vec<String> =
        value.as_array().expect("an array").iter().map(Value::to_string).collect();
    items.sort();
    assert_eq!(items, [handshake_answer(1, GREET_CONTENT), handshake_answer(2, ECHO_CONTENT)]);
}

/// A counted `echo` tool.
fn counted(runs: &Arc<AtomicUsize>) -> ToolDef {
    let runs = Arc::clone(runs);
    ToolDef::new("echo", move |Echo { text }: Echo| {
        runs.fetch_add(1, Ordering::SeqCst);
        async move { text }
    })
}

/// A tool that fails its first call (a tool error) and answers every later one.
pub(crate) fn flaky(runs: &Arc<AtomicUsize>) -> ToolDef {
    let runs = Arc::clone(runs);
    ToolDef::new("flaky", move || {
        let first = runs.fetch_add(1, Ordering::SeqCst) == 0;
        async move {
            if first { Err(modelcontext::ToolError::new("not yet")) } else { Ok("second time") }
        }
    })
}

/// Whether `response` is a tool result marked as an error.
pub(crate) fn failed(response: &Response) -> bool {
    let result = response.result::<CallToolResult>().and_then(Result::ok);
    result.is_some_and(|result| result.is_error == Some(true))
}

/// `Next` runs the rest of the chain as often as it is cloned: a middleware that retries a
/// failed call once gets the handler's second answer, which is all the client sees.
#[tokio::test]
async fn a_middleware_retries_a_failed_call() {
    let runs = Arc::new(AtomicUsize::new(0));
    let retry = from_fn(|request: Request, next: Next| async move {
        let response = next.clone().run(request.clone()).await;
        if failed(&response) { next.run(request).await } else { response }
    });
    let server = McpServer::new("mw").tool(flaky(&runs)).expect("tool").middleware(retry);
    let mut wire = Wire::start(server, "2025-11-25");
    wire.initialize().await;
    let answer = wire.call(&call(1, "flaky", "{}", "")).await;
    assert_eq!(
        answer,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"second time"}]}}"#
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2, "the handler ran twice");
}

/// A middleware that answers itself: the handler never runs, and the client gets its error.
#[tokio::test]
async fn a_middleware_short_circuits() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = McpServer::new("mw").tool(counted(&runs)).expect("tool").middleware(from_fn(
        |request: Request, next: Next| async move {
            if request.tool_name().is_some() {
                return Response::error(McpError::new(ErrorCode(-32050), "not today"));
            }
            next.run(request).await
        },
    ));
    let client = Client::connect(server.in_memory()).await.expect("up");
    let error = client.call_tool("echo", json!({"text": "x"})).await.expect_err("refused");
    assert_eq!(error.code(), Some(ErrorCode(-32050)), "{error}");
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the handler never ran");
    // Requests other than calls pass.
    assert_eq!(client.list_tools(None).await.expect("listed").tools.len(), 1);
}

/// A middleware that bounds the handler: a slow tool is dropped (its context sees the
/// cancellation) and the client gets the middleware's answer.
#[tokio::test]
async fn a_middleware_times_the_handler_out() {
    let slow = ToolDef::new("slow", |cx: modelcontext::Context, _: NoArgs| async move {
        cx.cancelled().await;
        "cancelled"
    });
    let fast = ToolDef::new("fast", || async { "fast" });
    let bounded = from_fn(|request: Request, next: Next| async move {
        match tokio::time::timeout(Duration::from_millis(50), next.run(request)).await {
            Ok(response) => response,
            Err(_) => {
                Response::from_result(&CallToolResult::error(vec![ContentBlock::text("timed out")]))
            }
        }
    });
    let server = McpServer::new("mw").tools([slow, fast]).expect("tools").middleware(bounded);
    let client = Client::connect(server.in_memory()).await.expect("up");
    let result = client.call_tool("slow", json!({})).await.expect("answered");
    assert_eq!(
        serde_json::to_value(&result).expect("json"),
        json!({"content": [{"type": "text", "text": "timed out"}], "isError": true})
    );
    let result = client.call_tool("fast", json!({})).await.expect("answered");
    assert_eq!(
        serde_json::to_string(&result.content).expect("json"),
        r#"[{"type":"text","text":"fast"}]"#
    );
}

/// A middleware that panics is answered -32603, as a panicking handler is; the connection
/// lives on.
#[tokio::test]
async fn a_panicking_middleware_is_an_internal_error() {
    let echo = ToolDef::new("echo", |Echo { text }: Echo| async move { text });
    let server = McpServer::new("mw").tool(echo).expect("tool").middleware(from_fn(
        |request: Request, next: Next| {
            // Before the future exists, as a plain closure body.
            assert!(request.tool_name() != Some("echo"), "middleware bug");
            next.run(request)
        },
    ));
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let client = Client::builder().era(mode).connect(server.in_memory()).await.expect("up");
        let error = client.call_tool("echo", json!({"text": "x"})).await.expect_err("panicked");
        assert_eq!(error.code(), Some(ErrorCode(-32603)), "{mode:?} {error}");
        assert_eq!(client.list_tools(None).await.expect("alive").tools.len(), 1);
    }
}

/// A request's era, version, transport and target as a middleware reads them, and a
/// middleware of a prompt and of a resource.
#[tokio::test]
async fn prompts_and_resources_have_middleware_of_their_own() {
    use modelcontext::types::GetPromptResult;
    use modelcontext::{PromptDef, ResourceDef};
    let prompt = PromptDef::new("hi", || async { "hi" }).middleware(from_fn(
        |request: Request, next: Next| async move {
            let seen = format!(
                "{} {} {:?} {}",
                request.method(),
                request.target().unwrap_or("-"),
                request.era(),
                request.transport()
            );
            next.run(request).await.map_result(|mut result: GetPromptResult| {
                result.description = Some(seen);
                result
            })
        },
    ));
    let resource = ResourceDef::new("mem://note", || async { "note" }).middleware(from_fn(
        |_: Request, _: Next| async { Response::error(McpError::invalid_params("sealed")) },
    ));
    let server = McpServer::new("mw")
        .prompt(prompt)
        .and_then(|server| server.resource(resource))
        .expect("registers");
    let client =
        Client::builder().era(EraMode::Modern).connect(server.in_memory()).await.expect("up");
    let prompt = client.get_prompt("hi", Vec::<(String, String)>::new()).await.expect("prompt");
    assert_eq!(prompt.description.as_deref(), Some("prompts/get hi Modern pipe"));
    let error = client.read_resource("mem://note").await.expect_err("sealed");
    assert_eq!(error.code(), Some(ErrorCode(-32602)), "{error}");
}

/// A result a middleware makes for a call gets the era's fields, as the tool's would.
#[tokio::test]
async fn a_middleware_answers_a_call_in_the_eras_shape() {
    let runs = Arc::new(AtomicUsize::new(0));
    let closed = from_fn(|request: Request, _: Next| async move {
        request.tool_result(CallToolResult::error(vec![ContentBlock::text("closed")]))
    });
    let server =
        || McpServer::new("mw").tool(counted(&runs).middleware(closed.clone())).expect("tool");
    let mut wire = Wire::start(server(), "2026-07-28");
    let answer = wire.call(&call(1, "echo", r#"{"text":"x"}"#, &modern_meta("{}", ""))).await;
    assert_eq!(
        answer,
        r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mw","version":"0.1.0"}},"resultType":"complete","content":[{"type":"text","text":"closed"}],"isError":true}}"#
    );
    let mut wire = Wire::start(server(), "2025-11-25");
    wire.initialize().await;
    let answer = wire.call(&call(2, "echo", r#"{"text":"x"}"#, "")).await;
    assert_eq!(
        answer,
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"closed"}],"isError":true}}"#
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the tool never ran");
}

/// Middleware runs inside the request's span, whose outcome is the one the client got: the
/// middleware's log line is among the span's events, and a refusal by a middleware is the
/// span's error.
#[tokio::test]
async fn middleware_runs_inside_the_request_span() {
    let (capture, _guard) = crate::observe::capture();
    let echo = ToolDef::new("echo", |Echo { text }: Echo| async move { text });
    let server = McpServer::new("mw").tool(echo).expect("tool").middleware(from_fn(
        |request: Request, next: Next| async move {
            tokio::task::yield_now().await;
            tracing::info!("inside the middleware");
            let text = request.arguments().and_then(|args| args.get("text"));
            if request.tool_name().is_none() || text.is_some() {
                return next.run(request).await;
            }
            Response::error(McpError::new(ErrorCode(-32050), "no text"))
        },
    ));
    let client = Client::connect(server.in_memory()).await.expect("up");
    client.call_tool("echo", json!({"text": "x"})).await.expect("answered");
    client.call_tool("echo", json!({})).await.expect_err("refused");
    drop(client);
    capture.settled().await;
    let spans = capture.spans("mcp.server");
    let calls: Vec<_> =
        spans.iter().filter(|span| span.field("mcp.method.name") == Some("tools/call")).collect();
    assert_eq!(calls.len(), 2, "{spans:#?}");
    for span in &calls {
        assert_eq!(span.events, ["inside the middleware"]);
    }
    assert_eq!(calls[0].field("error.type"), None);
    assert_eq!(calls[1].field("error.type"), Some("-32050"), "{:?}", calls[1]);
}

/// Every request after the handshake reaches the middleware, the connection's own
/// (`logging/setLevel`, `resources/subscribe`) included; `initialize` does not.
#[tokio::test]
async fn the_connections_own_requests_reach_the_middleware() {
    use std::sync::Mutex;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let note = modelcontext::ResourceDef::new("mem://note", || async { "note" });
    let server = McpServer::new("mw").resource(note).expect("resource").middleware(from_fn(
        move |request: Request, next: Next| {
            let entry = format!("{} {}", request.method(), request.target().unwrap_or("-"));
            log.lock().expect("lock").push(entry);
            next.run(request)
        },
    ));
    let mut wire = Wire::start(server, "2025-11-25");
    wire.initialize().await;
    let answer = wire
        .call(r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}"#)
        .await;
    assert_eq!(answer, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    let subscribe =
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"mem://note"}}"#;
    assert_eq!(wire.call(subscribe).await, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
    let unknown =
        r#"{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"mem://none"}}"#;
    let answer: Value = serde_json::from_str(&wire.call(unknown).await).expect("json");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(
        *seen.lock().expect("lock"),
        ["logging/setLevel -", "resources/subscribe mem://note", "resources/subscribe mem://none"]
    );
}

/// A server whose `prompts/get` answers `answer`, whatever is asked.
fn prompts_answered_with(answer: Value) -> McpServer {
    McpServer::new("odd")
        .prompt(modelcontext::PromptDef::new("hello", || async { "Say hello." }))
        .expect("prompt")
        .middleware(from_fn(move |request: Request, next: Next| {
            let answer = answer.clone();
            async move {
                match request.method() {
                    "prompts/get" => Response::from_result(&answer),
                    _ => next.run(request).await,
                }
            }
        }))
}

/// A result kind the client does not handle for the method (here a task handle for
/// `prompts/get`) is refused with its `resultType` named, not decoded as a prompt.
#[tokio::test]
async fn a_result_kind_the_client_does_not_handle_is_refused_by_name() {
    let task = json!({"resultType": "task", "task": {"taskId": "t1", "status": "working"}});
    let server = prompts_answered_with(task);
    let client =
        Client::builder().era(EraMode::Modern).connect(server.in_memory()).await.expect("connects");
    let no_arguments: [(String, String); 0] = [];
    let error = client.get_prompt("hello", no_arguments).await.expect_err("a task is no prompt");
    let error = error.as_mcp_error().expect("an error object");
    assert_eq!(
        (error.code, error.message.as_str()),
        (
            ErrorCode::INTERNAL_ERROR,
            "'prompts/get' answered with resultType 'task', which this client does not handle"
        )
    );
}

/// `resultType` is a 2026-07-28 member: from a handshake-era server, a result carrying one is
/// the result itself, not a task handle or a request for input.
#[tokio::test]
async fn a_handshake_era_answer_is_the_result_whatever_its_members() {
    let odd = json!({"resultType": "input_required", "messages": [
        {"role": "user", "content": {"type": "text", "text": "Say hello."}}
    ]});
    let server = prompts_answered_with(odd);
    let client = Client::builder()
        .era(EraMode::Handshake)
        .connect(server.in_memory())
        .await
        .expect("connects");
    let no_arguments: [(String, String); 0] = [];
    let prompt = client.get_prompt("hello", no_arguments).await.expect("the result itself");
    assert_eq!(prompt.messages.len(), 1);
    assert_eq!(prompt.messages[0].content.as_text(), Some("Say hello."));
}
