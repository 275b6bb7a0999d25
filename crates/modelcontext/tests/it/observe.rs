//! The SDK's spans, captured with a `tracing` layer: one per request on each side, named and
//! attributed after OpenTelemetry's MCP conventions, with handler work inside them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use modelcontext::server::NoArgs;
use modelcontext::{Client, EraMode, McpServer, ToolDef, ToolError};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Instrument, Subscriber};
use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// One span as recorded: its name, fields and the names of its ancestors, nearest first.
#[derive(Clone, Debug, Default)]
pub struct Captured {
    pub name: &'static str,
    pub fields: HashMap<String, String>,
    pub ancestors: Vec<&'static str>,
    /// Messages of the events logged inside it.
    pub events: Vec<String>,
}

impl Captured {
    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(String::as_str)
    }
}

/// Every span closed so far, and the ones still open by id.
#[derive(Clone, Default)]
pub struct Capture {
    open: Arc<Mutex<HashMap<u64, Captured>>>,
    closed: Arc<Mutex<Vec<Captured>>>,
}

impl Capture {
    /// The closed spans named `name` (`mcp.server`, `mcp.client`).
    pub fn spans(&self, name: &str) -> Vec<Captured> {
        let closed = self.closed.lock().expect("lock");
        closed.iter().filter(|span| span.name == name).cloned().collect()
    }

    fn any_open(&self) -> bool {
        let open = self.open.lock().expect("lock");
        open.values().any(|span| span.name.starts_with("mcp."))
    }

    /// Waits (a bounded number of scheduler turns) until no SDK span is open: a handler's
    /// task drops its span as it ends, which may be after the client has its answer.
    pub async fn settled(&self) {
        for _ in 0..1000 {
            if !self.any_open() {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("SDK spans still open: {:#?}", self.open.lock().expect("lock"));
    }

    /// The one closed span whose `mcp.method.name` is `method`, on side `name`.
    pub fn one(&self, name: &str, method: &str) -> Captured {
        let mut found: Vec<_> = self
            .spans(name)
            .into_iter()
            .filter(|span| span.field("mcp.method.name") == Some(method))
            .collect();
        assert_eq!(found.len(), 1, "{name} {method}: {found:#?}");
        found.remove(0)
    }
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, cx: LayerContext<'_, S>) {
        let mut span = Captured { name: attrs.metadata().name(), ..Default::default() };
        attrs.record(&mut Fields(&mut span.fields));
        if let Some(current) = cx.span(id) {
            span.ancestors = current.scope().skip(1).map(|s| s.name()).collect();
        }
        self.open.lock().expect("lock").insert(id.into_u64(), span);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: LayerContext<'_, S>) {
        if let Some(span) = self.open.lock().expect("lock").get_mut(&id.into_u64()) {
            values.record(&mut Fields(&mut span.fields));
        }
    }

    fn on_event(&self, event: &Event<'_>, cx: LayerContext<'_, S>) {
        let Some(scope) = cx.event_scope(event) else { return };
        let mut fields = HashMap::new();
        event.record(&mut Fields(&mut fields));
        let message = fields.remove("message").unwrap_or_default();
        let mut open = self.open.lock().expect("lock");
        for span in scope {
            if let Some(captured) = open.get_mut(&span.id().into_u64()) {
                captured.events.push(message.clone());
            }
        }
    }

    fn on_close(&self, id: Id, _: LayerContext<'_, S>) {
        if let Some(span) = self.open.lock().expect("lock").remove(&id.into_u64()) {
            self.closed.lock().expect("lock").push(span);
        }
    }
}

/// Installs, once, a global subscriber that is interested in everything and records nothing
/// (a bare registry). `tracing` caches per call site whether any subscriber is interested;
/// with only per-thread subscribers coming and going in parallel tests, a cache rebuilt while
/// none was alive can leave a test's spans disabled. A subscriber that is always there and
/// always interested keeps every call site enabled; each test's own subscriber still decides.
pub fn always_interested() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry());
    });
}

/// Captures the spans of this thread's tasks until the guard is dropped (the tests run on a
/// current-thread runtime, so every task of the test is on this thread).
pub fn capture() -> (Capture, tracing::subscriber::DefaultGuard) {
    always_interested();
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    (capture, tracing::subscriber::set_default(subscriber))
}

/// `get_author` answers, `sold_out` is a tool error, `broken` panics, `slow` yields first
/// (so it runs as a spawned task) and logs.
pub fn server() -> McpServer {
    let get_author = ToolDef::new("get_author", |_: NoArgs| async { "Frank Herbert" });
    let sold_out = ToolDef::new("sold_out", |_: NoArgs| async {
        Err::<String, _>(ToolError::new("sold out"))
    });
    let broken = ToolDef::new("broken", |_: NoArgs| async {
        if true {
            panic!("the handler broke");
        }
        "never"
    });
    let slow = ToolDef::new("slow", |_: NoArgs| async {
        tokio::task::yield_now().await;
        tracing::info!("inside the slow tool");
        "done"
    });
    McpServer::new("spans").tools([get_author, sold_out, broken, slow]).expect("tools")
}

#[tokio::test]
async fn each_request_has_a_server_span_and_a_client_span_on_the_conventions() {
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let (capture, _guard) = capture();
        let outer = tracing::info_span!("application");
        let connection = outer.in_scope(|| server().in_memory());
        let client = Client::builder().era(mode).connect(connection).await.expect("up");
        client.call_tool("get_author", json!({})).await.expect("answered");
        drop(client);
        capture.settled().await;

        let server = capture.one("mcp.server", "tools/call");
        assert_eq!(server.field("otel.name"), Some("tools/call get_author"), "{mode:?}");
        assert_eq!(server.field("otel.kind"), Some("server"));
        assert_eq!(server.field("gen_ai.tool.name"), Some("get_author"));
        assert_eq!(server.field("gen_ai.operation.name"), Some("execute_tool"));
        assert_eq!(server.field("network.transport"), Some("pipe"));
        assert!(server.field("jsonrpc.request.id").is_some());
        assert!(server.field("mcp.protocol.version").is_some());
        assert_eq!(server.field("error.type"), None);
        // A span the application opened around serving is the parent.
        assert!(server.ancestors.contains(&"application"), "{:?}", server.ancestors);

        let client_span = capture.one("mcp.client", "tools/call");
        assert_eq!(client_span.field("otel.name"), Some("tools/call get_author"));
        assert_eq!(client_span.field("otel.kind"), Some("client"));
        assert_eq!(client_span.field("jsonrpc.request.id"), server.field("jsonrpc.request.id"));
        assert_eq!(client_span.field("mcp.protocol.version"), server.field("mcp.protocol.version"));
    }
}

#[tokio::test]
async fn failures_set_the_error_attributes() {
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let (capture, _guard) = capture();
        let client = Client::builder().era(mode).connect(server().in_memory()).await.expect("up");
        let result = client.call_tool("sold_out", json!({})).await.expect("a tool error");
        assert_eq!(result.is_error, Some(true));
        client.call_tool("no_such_tool", json!({})).await.expect_err("a protocol error");
        let _ = client.call_tool("broken", json!({})).await;
        drop(client);
        capture.settled().await;

        let spans = capture.spans("mcp.server");
        let by_tool = |name: &str| {
            spans
                .iter()
                .find(|span| span.field("gen_ai.tool.name") == Some(name))
                .unwrap_or_else(|| panic!("{name}: {spans:#?}"))
                .clone()
        };
        let tool_error = by_tool("sold_out");
        assert_eq!(tool_error.field("error.type"), Some("tool_error"), "{mode:?}");
        assert_eq!(tool_error.field("otel.status_code"), Some("ERROR"));
        assert_eq!(tool_error.field("rpc.response.status_code"), None);

        let unknown = by_tool("no_such_tool");
        assert_eq!(unknown.field("error.type"), Some("-32602"));
        assert_eq!(unknown.field("rpc.response.status_code"), Some("-32602"));
        assert_eq!(unknown.field("otel.status_code"), Some("ERROR"));

        // A panic in a tool is a tool error (the SDK's policy); either way the span says so.
        let panicked = by_tool("broken");
        assert!(panicked.field("error.type").is_some(), "{panicked:#?}");

        let client_spans = capture.spans("mcp.client");
        let client_unknown = client_spans
            .iter()
            .find(|span| span.field("gen_ai.tool.name") == Some("no_such_tool"))
            .expect("client span");
        assert_eq!(client_unknown.field("error.type"), Some("-32602"));
    }
}

#[tokio::test]
async fn handler_work_and_its_logs_run_inside_the_request_span() {
    let (capture, _guard) = capture();
    let client = Client::connect(server().in_memory()).await.expect("up");
    client.call_tool("slow", json!({})).await.expect("answered");
    drop(client);
    capture.settled().await;
    let slow = capture.one("mcp.server", "tools/call");
    assert_eq!(slow.events, ["inside the slow tool"]);
}

#[tokio::test]
async fn a_user_span_around_serve_is_the_parent() {
    let (capture, _guard) = capture();
    let (client_end, server_end) = modelcontext::transport::memory_pair();
    let server = server();
    let serving = async move { server.serve(server_end).await };
    let serving = serving.instrument(tracing::info_span!("serving"));
    tokio::spawn(serving);
    let client = Client::connect(client_end).await.expect("up");
    client.call_tool("slow", json!({})).await.expect("answered");
    drop(client);
    capture.settled().await;
    let slow = capture.one("mcp.server", "tools/call");
    assert_eq!(slow.ancestors, ["serving"]);
}

/// Over HTTP/2 (TLS, ALPN `h2`) hyper answers each stream on a task of its own: the span the
/// application opened around serving still reaches the request's.
#[cfg(feature = "tls")]
#[tokio::test]
async fn a_user_span_around_serve_is_the_parent_over_http2() {
    use modelcontext::server::http::{HttpOptions, ServerTls};
    use modelcontext::transport::http::HttpTransport;
    let (capture, _guard) = capture();
    let ca = crate::test_ca::TestCa::new();
    let leaf = ca.leaf(&["localhost"]);
    let tls = ServerTls::from_pem(leaf.chain_pem.as_bytes(), leaf.key_pem.as_bytes()).expect("tls");
    let endpoint = server().http_endpoint_with(HttpOptions::default().tls(tls));
    let (addr, serve) = endpoint.bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve.instrument(tracing::info_span!("serving")));
    let url = format!("https://localhost:{}/mcp", addr.port());
    let transport = HttpTransport::new(&url).expect("url").root_certificate(ca.root_pem());
    let client = Client::builder().era(EraMode::Modern).connect(transport.expect("root")).await;
    let client = client.expect("up");
    client.call_tool("get_author", json!({})).await.expect("answered");
    client.close().await;
    capture.settled().await;
    let call = capture.one("mcp.server", "tools/call");
    assert_eq!(call.ancestors.last(), Some(&"serving"), "{call:#?}");
}

/// `roots` lists the client's roots; `sign_in` asks it to open a URL.
fn asking_server() -> McpServer {
    use modelcontext::server::Context;
    let roots = ToolDef::new("roots", |cx: Context, _: NoArgs| async move {
        Ok::<_, modelcontext::McpError>(cx.list_roots().await?.len().to_string())
    });
    let sign_in = ToolDef::new("sign_in", |cx: Context, _: NoArgs| async move {
        let action = cx.elicit_url("Sign in", "https://shop.example/login").await?;
        Ok::<_, modelcontext::McpError>(format!("{action:?}"))
    });
    McpServer::new("asks").tools([roots, sign_in]).expect("tools")
}

#[tokio::test]
async fn requests_to_the_client_have_a_client_span_and_a_server_span() {
    use modelcontext::McpError;
    use modelcontext::types::Root;
    let (capture, _guard) = capture();
    let client = Client::builder()
        .era(EraMode::Handshake)
        .on_roots(|| async { Ok(vec![Root::new("file:///books")]) })
        .on_elicit(|_| async { Err(McpError::invalid_request("no browser here")) })
        .connect(asking_server().in_memory())
        .await
        .expect("up");
    client.call_tool("roots", json!({})).await.expect("answered");
    let _ = client.call_tool("sign_in", json!({})).await;
    drop(client);
    capture.settled().await;

    // The server's request: CLIENT kind, inside the span of the tool call that asked.
    let asked = capture.one("mcp.server.outgoing", "roots/list");
    assert_eq!(asked.field("otel.kind"), Some("client"));
    assert_eq!(asked.field("otel.name"), Some("roots/list"));
    assert!(asked.field("mcp.protocol.version").is_some());
    assert_eq!(asked.field("error.type"), None);
    assert_eq!(asked.ancestors.first(), Some(&"mcp.server"), "{:?}", asked.ancestors);
    // The client's answer: SERVER kind, the same request id.
    let answered = capture.one("mcp.client.incoming", "roots/list");
    assert_eq!(answered.field("otel.kind"), Some("server"));
    assert_eq!(answered.field("network.transport"), Some("pipe"));
    assert_eq!(answered.field("jsonrpc.request.id"), asked.field("jsonrpc.request.id"));
    assert_eq!(answered.field("error.type"), None);

    // A refusal by the client's handler is an error on both sides.
    for side in ["mcp.server.outgoing", "mcp.client.incoming"] {
        let refused = capture.one(side, "elicitation/create");
        assert_eq!(refused.field("error.type"), Some("-32600"), "{side}");
        assert_eq!(refused.field("rpc.response.status_code"), Some("-32600"), "{side}");
        assert_eq!(refused.field("otel.status_code"), Some("ERROR"), "{side}");
    }
}

#[tokio::test]
async fn a_request_refused_by_the_in_flight_limit_has_a_span_with_the_error() {
    let started = Arc::new(tokio::sync::Notify::new());
    let running = Arc::clone(&started);
    let wait = ToolDef::new("wait", move |_: NoArgs| {
        let running = Arc::clone(&running);
        async move {
            running.notify_one();
            std::future::pending::<&'static str>().await
        }
    });
    let server = server().tool(wait).expect("tool").max_in_flight(1);
    let (capture, _guard) = capture();
    let client = Client::connect(server.in_memory()).await.expect("up");
    let waiting = client.call_tool("wait", json!({}));
    tokio::pin!(waiting);
    tokio::select! {
        _ = &mut waiting => panic!("the wait tool answered"),
        () = started.notified() => {}
    }
    let refused = client.call_tool("get_author", json!({})).await.expect_err("refused");
    assert!(refused.to_string().contains("Server busy"), "{refused}");

    let spans = capture.spans("mcp.server");
    let refusal = spans.iter().find(|s| s.field("error.type").is_some()).expect("a refusal span");
    assert_eq!(refusal.field("mcp.method.name"), Some("tools/call"));
    assert_eq!(refusal.field("error.type"), Some("-32603"));
    assert_eq!(refusal.field("otel.status_code"), Some("ERROR"));
    assert!(refusal.field("otel.status_description").is_some_and(|d| d.contains("Server busy")));
    assert!(refusal.field("jsonrpc.request.id").is_some());
}
