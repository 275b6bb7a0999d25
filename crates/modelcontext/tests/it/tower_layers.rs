//! tower layers as middleware (`middleware::from_layer`): tower's own timeout for the whole
//! server, and a request-rewriting layer plus a small layer of our own for one tool only.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use modelcontext::server::NoArgs;
use modelcontext::server::middleware::{Request, Response, from_layer};
use modelcontext::types::{CallToolResult, ContentBlock};
use modelcontext::{Client, EraMode, McpServer, ToolDef};
use serde_json::json;
use tower::util::MapRequestLayer;
use tower::{Layer, Service, ServiceExt};

use crate::support::Wire;

#[derive(serde::Deserialize, modelcontext::schemars::JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
struct Echo {
    text: String,
}

/// A layer of our own: adds a text block to the result of the service it wraps.
#[derive(Clone)]
struct Stamped(&'static str);

impl<S> Layer<S> for Stamped {
    type Service = StampedService<S>;

    fn layer(&self, inner: S) -> StampedService<S> {
        StampedService { inner, text: self.0 }
    }
}

struct StampedService<S> {
    inner: S,
    text: &'static str,
}

impl<S> Service<Request> for StampedService<S>
where
    S: Service<Request, Response = Response>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let answer = self.inner.call(request);
        let text = self.text;
        Box::pin(async move {
            let response = answer.await?;
            Ok(response.map_result(|mut result: CallToolResult| {
                result.content.push(ContentBlock::text(text));
                result
            }))
        })
    }
}

/// A layer of our own that retries once: a tool result marked as an error sends the request
/// through the service again.
#[derive(Clone)]
struct RetryOnce;

impl<S> Layer<S> for RetryOnce {
    type Service = RetryOnceService<S>;

    fn layer(&self, inner: S) -> RetryOnceService<S> {
        RetryOnceService(inner)
    }
}

struct RetryOnceService<S>(S);

impl<S> Service<Request> for RetryOnceService<S>
where
    S: Service<Request, Response = Response> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let again = self.0.clone();
        let first = self.0.call(request.clone());
        Box::pin(async move {
            let response = first.await?;
            if !crate::middleware::failed(&response) {
                return Ok(response);
            }
            again.oneshot(request).await
        })
    }
}

/// The service a layer wraps runs the rest of the chain on every call: a retrying layer gets
/// the handler's second answer, which is all the client sees.
#[tokio::test]
async fn a_tower_layer_retries_a_failed_call() {
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let flaky = crate::middleware::flaky(&runs).middleware(from_layer(RetryOnce));
    let mut wire = Wire::start(McpServer::new("tower").tool(flaky).expect("tool"), "2025-11-25");
    wire.initialize().await;
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flaky","arguments":{}}}"#;
    let answer = wire.call(call).await;
    assert_eq!(
        answer,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"second time"}]}}"#
    );
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 2, "the handler ran twice");
}

/// `shout` has two layers of its own: one upper-cases its argument, one stamps its result.
/// `echo` has none. The server bounds every request with tower's `TimeoutLayer`.
fn server() -> McpServer {
    let upper = MapRequestLayer::new(|mut request: Request| {
        if let Some(arguments) = request.arguments_mut() {
            let text = arguments.get("text").and_then(|t| t.as_str()).unwrap_or_default();
            let text = text.to_uppercase();
            arguments.insert("text".into(), text.into());
        }
        request
    });
    let shout = ToolDef::new("shout", |Echo { text }: Echo| async move { text })
        .middleware(from_layer(upper))
        .middleware(from_layer(Stamped("layered")));
    let echo = ToolDef::new("echo", |Echo { text }: Echo| async move { text });
    let slow = ToolDef::new("slow", |cx: modelcontext::Context, _: NoArgs| async move {
        cx.cancelled().await;
        "cancelled"
    });
    let timeout = tower::timeout::TimeoutLayer::new(Duration::from_millis(50));
    McpServer::new("tower")
        .tools([shout, echo, slow])
        .expect("tools")
        .middleware(from_layer(timeout))
}

#[tokio::test]
async fn a_tower_layer_per_tool_and_for_the_whole_server() {
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let client = Client::builder().era(mode).connect(server().in_memory()).await.expect("up");
        let shout = client.call_tool("shout", json!({"text": "hi"})).await.expect("shout");
        assert_eq!(
            serde_json::to_string(&shout.content).expect("json"),
            r#"[{"type":"text","text":"HI"},{"type":"text","text":"layered"}]"#,
            "{mode:?}"
        );
        let echo = client.call_tool("echo", json!({"text": "hi"})).await.expect("echo");
        assert_eq!(
            serde_json::to_string(&echo.content).expect("json"),
            r#"[{"type":"text","text":"hi"}]"#,
            "{mode:?}"
        );
        // tower's timeout answers with its error, which becomes -32603.
        let error = client.call_tool("slow", json!({})).await.expect_err("timed out");
        assert_eq!(error.code(), Some(modelcontext::types::ErrorCode(-32603)), "{error}");
        assert!(error.to_string().contains("request timed out"), "{error}");
    }
}
