//! Request layers (`McpServer::layer`): they see every request with its context and outcome,
//! and one that refuses answers with its own JSON-RPC error, in both eras, in memory and over
//! HTTP, without the handler running.

// Layers are deprecated for middleware; they still work.
#![allow(deprecated)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use modelcontext::server::{NoArgs, RequestInfo, RequestLayer};
use modelcontext::types::{ClientRequest, ErrorCode, McpError, RawValue};
use modelcontext::{Client, EraMode, McpServer, ToolDef};
use serde_json::json;

/// Refuses `tools/call` of `guarded` with -32050 and logs what it saw, in order.
struct Guard {
    log: Arc<Mutex<Vec<String>>>,
    name: &'static str,
}

impl RequestLayer for Guard {
    fn before(&self, request: &ClientRequest, info: &RequestInfo) -> Result<(), McpError> {
        self.log.lock().expect("lock").push(format!("{} before {}", self.name, info.method));
        match request {
            ClientRequest::CallTool(params) if params.name == "guarded" => {
                Err(McpError::new(ErrorCode(-32050), "refused by the guard"))
            }
            _ => Ok(()),
        }
    }

    fn after(&self, info: &RequestInfo, outcome: Result<&RawValue, &McpError>) {
        let verdict = match outcome {
            Ok(_) => "ok".to_owned(),
            Err(error) => error.code.to_string(),
        };
        let target = info.target.as_deref().unwrap_or("-");
        let line = format!("{} after {} {target} {verdict}", self.name, info.method);
        self.log.lock().expect("lock").push(line);
    }
}

/// A server whose `guarded` tool counts its runs, behind two guards.
fn guarded(runs: &Arc<AtomicUsize>, log: &Arc<Mutex<Vec<String>>>) -> McpServer {
    let counter = Arc::clone(runs);
    let tool = ToolDef::new("guarded", move |_: NoArgs| {
        counter.fetch_add(1, Ordering::SeqCst);
        async { "ran" }
    });
    let open = ToolDef::new("open", |_: NoArgs| async { "open" });
    McpServer::new("layers")
        .tools([tool, open])
        .expect("tools")
        .layer(Guard { log: Arc::clone(log), name: "outer" })
        .layer(Guard { log: Arc::clone(log), name: "inner" })
}

async fn refused_and_allowed(client: &Client, runs: &AtomicUsize) {
    let err = client.call_tool("guarded", json!({})).await.expect_err("refused");
    assert_eq!(err.code(), Some(ErrorCode(-32050)), "{err}");
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the handler never runs");
    let result = client.call_tool("open", json!({})).await.expect("allowed");
    assert!(!result.is_error());
}

#[tokio::test]
async fn a_layer_refuses_with_its_error_in_memory_in_both_eras() {
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let (runs, log) = (Arc::default(), Arc::default());
        let server = guarded(&runs, &log);
        let client = Client::builder().era(mode).connect(server.in_memory()).await.expect("up");
        log.lock().expect("lock").clear();
        refused_and_allowed(&client, &runs).await;
        let log = log.lock().expect("lock").clone();
        // The refusing layer stops the later ones; `after` runs inside out for those that ran.
        assert_eq!(
            log,
            [
                "outer before tools/call",
                "outer after tools/call guarded -32050",
                "outer before tools/call",
                "inner before tools/call",
                "inner after tools/call open ok",
                "outer after tools/call open ok",
            ],
            "{mode:?}"
        );
    }
}

#[cfg(feature = "http")]
#[tokio::test]
async fn a_layer_refuses_with_its_error_over_http_in_both_eras() {
    let (runs, log) = (Arc::default(), Arc::default());
    let endpoint = guarded(&runs, &log).http_endpoint();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { endpoint.serve(listener).await });
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let transport =
            modelcontext::HttpTransport::new(&format!("http://{addr}/mcp")).expect("url");
        let client = Client::builder().era(mode).connect(transport).await.expect("up");
        refused_and_allowed(&client, &runs).await;
        client.close().await;
    }
    let log = log.lock().expect("lock").clone();
    assert!(log.contains(&"outer after tools/call guarded -32050".to_owned()), "{log:?}");
}

/// What a layer is told about the request: era, version, transport and session.
#[cfg(feature = "http")]
#[tokio::test]
async fn a_layer_sees_the_era_transport_and_session() {
    #[derive(Default)]
    struct Seen(Mutex<Vec<(String, &'static str, &'static str, bool)>>);
    struct Record(Arc<Seen>);
    impl RequestLayer for Record {
        fn before(&self, _: &ClientRequest, info: &RequestInfo) -> Result<(), McpError> {
            let entry = (
                format!("{:?}", info.era),
                info.protocol_version,
                info.transport,
                info.session_id.is_some(),
            );
            self.0.0.lock().expect("lock").push(entry);
            Ok(())
        }
    }
    let seen = Arc::new(Seen::default());
    let open = ToolDef::new("open", |_: NoArgs| async { "open" });
    let server =
        McpServer::new("layers").tool(open).expect("tool").layer(Record(Arc::clone(&seen)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let endpoint = server.http_endpoint();
    tokio::spawn(async move { endpoint.serve(listener).await });
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let transport =
            modelcontext::HttpTransport::new(&format!("http://{addr}/mcp")).expect("url");
        let client = Client::builder().era(mode).connect(transport).await.expect("up");
        seen.0.lock().expect("lock").clear();
        client.call_tool("open", json!({})).await.expect("ok");
        let last = seen.0.lock().expect("lock").last().cloned().expect("seen");
        match mode {
            EraMode::Handshake => assert_eq!(last, ("Handshake".into(), "2025-11-25", "tcp", true)),
            _ => assert_eq!((last.0.as_str(), last.2, last.3), ("Modern", "tcp", false)),
        }
        client.close().await;
    }
    let client = Client::connect(server.in_memory()).await.expect("up");
    client.call_tool("open", json!({})).await.expect("ok");
    let last = seen.0.lock().expect("lock").last().cloned().expect("seen");
    assert_eq!((last.2, last.3), ("pipe", false));
}

/// Answers a repeated `tools/call` from the results `after` saw, per era and tool.
#[derive(Default)]
struct Cache {
    results: Mutex<std::collections::HashMap<String, Box<RawValue>>>,
}

impl Cache {
    fn key(info: &RequestInfo) -> Option<String> {
        Some(format!("{:?} {}", info.era, info.tool_name()?))
    }
}

impl RequestLayer for Cache {
    fn answer(&self, _: &ClientRequest, info: &RequestInfo) -> Option<Box<RawValue>> {
        self.results.lock().expect("lock").get(&Cache::key(info)?).cloned()
    }

    fn after(&self, info: &RequestInfo, outcome: Result<&RawValue, &McpError>) {
        if let (Some(key), Ok(result)) = (Cache::key(info), outcome) {
            self.results.lock().expect("lock").insert(key, result.to_owned());
        }
    }
}

#[tokio::test]
async fn a_layer_answers_from_its_cache_and_the_handler_runs_once_per_era() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let tool = ToolDef::new("count", move |_: NoArgs| {
        let run = counter.fetch_add(1, Ordering::SeqCst) + 1;
        async move { format!("run {run}") }
    });
    let log = Arc::default();
    let server = McpServer::new("cached")
        .tool(tool)
        .expect("tool")
        .layer(Guard { log: Arc::clone(&log), name: "guard" })
        .layer(Cache::default());
    for (mode, first) in [(EraMode::Handshake, "run 1"), (EraMode::Modern, "run 2")] {
        let client = Client::builder().era(mode).connect(server.in_memory()).await.expect("up");
        for _ in 0..3 {
            let result = client.call_tool("count", json!({})).await.expect("answered");
            let result = serde_json::to_value(&result).expect("json");
            assert_eq!(result["content"][0]["text"], first, "{mode:?}");
        }
    }
    assert_eq!(runs.load(Ordering::SeqCst), 2, "once per era, then from the cache");
    // The layer before the cache saw every call, answered or not, and its outcome.
    let log = log.lock().expect("lock").clone();
    let calls = |line: &str| log.iter().filter(|l| *l == line).count();
    assert_eq!(calls("guard before tools/call"), 6, "{log:?}");
    assert_eq!(calls("guard after tools/call count ok"), 6, "{log:?}");
}

/// Layers run as middleware, outside every other: a layer added after a middleware still
/// sees the request first and the outcome last.
#[tokio::test]
async fn a_layer_runs_outside_the_middleware_whenever_it_was_added() {
    use modelcontext::server::middleware::{Next, Request, from_fn};
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let inner = Arc::clone(&log);
    let open = ToolDef::new("open", |_: NoArgs| async { "open" });
    let server = McpServer::new("layers")
        .tool(open)
        .expect("tool")
        .middleware(from_fn(move |request: Request, next: Next| {
            let log = Arc::clone(&inner);
            async move {
                log.lock().expect("lock").push(format!("middleware {}", request.method()));
                next.run(request).await
            }
        }))
        .layer(Guard { log: Arc::clone(&log), name: "layer" });
    let client = Client::connect(server.in_memory()).await.expect("up");
    log.lock().expect("lock").clear();
    client.call_tool("open", json!({})).await.expect("ok");
    assert_eq!(
        *log.lock().expect("lock"),
        ["layer before tools/call", "middleware tools/call", "layer after tools/call open ok"]
    );
}
