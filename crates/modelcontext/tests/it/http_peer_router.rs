//! Two HTTP endpoints of one server sharing a `MemorySessionStore` and a `MemoryPeerRouter`
//! (the Redis router has the same tests against a real Redis): the client's answer to a
//! request A sent, POSTed to B, reaches A's handler; a cancellation POSTed to B stops the
//! handler running on A; a session's GET stream is held by one of them, and what the session
//! sends outside a request on the other reaches it. A 2025-03-26 session's answers and
//! cancellations inside a JSON-RPC batch are routed the same way.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::StatusCode;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::rt::TokioExecutor;
use modelcontext::server::NoArgs;
use modelcontext::server::http::{HttpOptions, MemoryPeerRouter, MemorySessionStore};
use modelcontext::{Context, Elicitation, McpServer, ToolDef};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::http_server::{Http, start_with};

pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"reader","version":"7"}}}"#;
pub(crate) const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
/// The one revision with JSON-RPC batches; it has `roots/list`, not elicitation.
const BATCHES: &str = "2025-03-26";
const INITIALIZE_BATCHES: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{"roots":{}},"clientInfo":{"name":"reader","version":"7"}}}"#;
/// The most any one step may take.
const STEP: Duration = Duration::from_secs(5);
/// The endpoints' SSE keep-alive interval: a GET stream whose client left is noticed soon.
const KEEP_ALIVE: Duration = Duration::from_millis(50);

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

/// Tells the test when dropped: the handler holding it has ended.
struct Ended(mpsc::UnboundedSender<()>);

impl Drop for Ended {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// Lets the `later` tool log, once its request is long answered.
#[derive(Clone, Default)]
struct Raise(Arc<tokio::sync::Notify>);

/// Instance `name`: `ask` elicits a name; `roots` lists the client's roots; `wait` runs until
/// cancelled, telling `started`
/// when it starts and dropping an [`Ended`] when it ends; `later` answers at once, then logs
/// through the session, outside any request, when `raise` says so.
fn server(
    name: &'static str,
    signals: Option<(mpsc::UnboundedSender<()>, Ended)>,
    raise: Raise,
) -> McpServer {
    let ask = ToolDef::new("ask", move |cx: Context, _: NoArgs| async move {
        match cx.elicit::<Name>("Your name?").await {
            Ok(Elicitation::Accepted(answer)) => format!("{name} heard {}", answer.name),
            other => format!("{name} got {other:?}"),
        }
    });
    let roots = ToolDef::new("roots", move |cx: Context, _: NoArgs| async move {
        match cx.list_roots().await {
            Ok(roots) => {
                let uris: Vec<_> = roots.iter().map(|root| root.uri.as_str()).collect();
                format!("{name} sees {}", uris.join(", "))
            }
            Err(error) => format!("{name} got {error}"),
        }
    });
    let signals = Arc::new(Mutex::new(signals));
    let wait = ToolDef::new("wait", move |_: Context, _: NoArgs| {
        let signals = signals.lock().expect("signals").take();
        async move {
            let _ended = signals.map(|(started, ended)| {
                let _ = started.send(());
                ended
            });
            std::future::pending::<()>().await;
            "never"
        }
    });
    let later = ToolDef::new("later", move |cx: Context, _: NoArgs| {
        let raise = raise.clone();
        async move {
            tokio::spawn(async move {
                raise.0.notified().await;
                cx.info(format!("raised on {name}")).await;
            });
            "later"
        }
    });
    McpServer::new("shared")
        .tool(ask)
        .expect("tool")
        .tool(wait)
        .expect("tool")
        .tool(later)
        .expect("tool")
        .tool(roots)
        .expect("tool")
}

struct Pair {
    a: Http,
    b: Http,
    started: mpsc::UnboundedReceiver<()>,
    ended: mpsc::UnboundedReceiver<()>,
    /// Lets B's `later` tool log.
    raise: Raise,
}

/// Endpoints A and B on one store and one router.
async fn pair() -> Pair {
    let store = Arc::new(MemorySessionStore::default());
    let router = MemoryPeerRouter::new();
    let options = |name: &str| {
        HttpOptions::default()
            .session_store(store.clone())
            .peer_router(router.instance(name))
            .keep_alive(KEEP_ALIVE)
    };
    let (started_tx, started) = mpsc::unbounded_channel();
    let (ended_tx, ended) = mpsc::unbounded_channel();
    let raise = Raise::default();
    let signals = Some((started_tx, Ended(ended_tx)));
    let a = start_with(server("A", signals, Raise::default()), options("A")).await;
    let b = start_with(server("B", None, raise.clone()), options("B")).await;
    Pair { a, b, started, ended, raise }
}

/// The session's GET stream, asked of the endpoint at `url`.
async fn get_stream(url: &str, session: &str) -> hyper::Response<Incoming> {
    let client: HyperClient<_, Full<Bytes>> =
        HyperClient::builder(TokioExecutor::new()).build_http();
    let request = http::Request::get(url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(Full::new(Bytes::new()))
        .expect("request");
    client.request(request).await.expect("an answer")
}

/// A POST in `session` (or none) whose body is left to read.
pub(crate) async fn post(
    url: &str,
    session: Option<&str>,
    body: &str,
) -> hyper::Response<Incoming> {
    post_as(url, session, "2025-11-25", body).await
}

/// A POST in `session`, which negotiated `version`.
async fn post_as(
    url: &str,
    session: Option<&str>,
    version: &str,
    body: &str,
) -> hyper::Response<Incoming> {
    let client: HyperClient<_, Full<Bytes>> =
        HyperClient::builder(TokioExecutor::new()).build_http();
    let mut request = http::Request::post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
        // The header came with 2025-06-18; a 2025-03-26 client sends none.
        if version != BATCHES {
            request = request.header("mcp-protocol-version", version);
        }
    }
    let request = request.body(Full::new(Bytes::from(body.to_owned()))).expect("request");
    client.request(request).await.expect("an answer")
}

/// A session made on A and initialized on B.
async fn session(pair: &Pair) -> String {
    session_as(pair, "2025-11-25", INITIALIZE).await
}

/// A session of `version`, made on A by `initialize` and initialized on B.
async fn session_as(pair: &Pair, version: &str, initialize: &str) -> String {
    let made = post_as(&pair.a.url(), None, version, initialize).await;
    assert_eq!(made.status(), StatusCode::OK);
    let id = made.headers()["mcp-session-id"].to_str().expect("ascii").to_owned();
    drop(made.into_body().collect().await);
    let initialized = post_as(&pair.b.url(), Some(&id), version, INITIALIZED).await;
    assert_eq!(initialized.status(), StatusCode::ACCEPTED);
    id
}

/// Reads SSE `body` until an event's data satisfies `wanted`; returns it.
async fn next_event(
    body: &mut Incoming,
    seen: &mut String,
    wanted: impl Fn(&Value) -> bool,
) -> Value {
    loop {
        while let Some(end) = seen.find("\n\n") {
            let event: String = seen.drain(..end + 2).collect();
            for data in event.lines().filter_map(|line| line.strip_prefix("data:")) {
                match serde_json::from_str::<Value>(data.trim()) {
                    Ok(value) if wanted(&value) => return value,
                    _ => {}
                }
            }
        }
        let frame = tokio::time::timeout(STEP, body.frame()).await.expect("in time");
        if let Ok(data) = frame.expect("the stream goes on").expect("a frame").into_data() {
            seen.push_str(&String::from_utf8_lossy(&data));
        }
    }
}

#[tokio::test]
async fn an_answer_posted_to_b_reaches_the_elicitation_waiting_on_a() {
    let pair = pair().await;
    let session = session(&pair).await;
    let call =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{}}}"#;
    let asked = post(&pair.a.url(), Some(&session), call).await;
    assert_eq!(asked.status(), StatusCode::OK);
    let (mut body, mut seen) = (asked.into_body(), String::new());
    let question = next_event(&mut body, &mut seen, |m| m["method"] == "elicitation/create").await;
    assert_eq!(question["id"], "A/1", "the id names the instance that asked: {question}");

    let answer = serde_json::json!({"jsonrpc": "2.0", "id": question["id"],
        "result": {"action": "accept", "content": {"name": "Ada"}}});
    let answered = post(&pair.b.url(), Some(&session), &answer.to_string()).await;
    assert_eq!(answered.status(), StatusCode::ACCEPTED);
    let result = next_event(&mut body, &mut seen, |m| m["id"] == 2).await;
    assert_eq!(result["result"]["content"][0]["text"], "A heard Ada", "{result}");
}

#[tokio::test]
async fn answers_naming_no_waiting_instance_are_dropped_and_the_session_goes_on() {
    let pair = pair().await;
    let session = session(&pair).await;
    for id in [r#""nobody/1""#, r#""A/99""#, r#""bad name!/1""#, r#""/""#, "77", r#""x/y/z""#] {
        let forged = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"action":"decline"}}}}"#);
        let answered = post(&pair.b.url(), Some(&session), &forged).await;
        assert_eq!(answered.status(), StatusCode::ACCEPTED, "id {id}");
    }
    let ping = r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;
    assert_eq!(post(&pair.a.url(), Some(&session), ping).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_cancellation_posted_to_b_stops_the_handler_on_a() {
    let mut pair = pair().await;
    let session = session(&pair).await;
    let call =
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait","arguments":{}}}"#;
    let a_url = pair.a.url();
    let waiting = tokio::spawn({
        let session = session.clone();
        async move { post(&a_url, Some(&session), call).await }
    });
    tokio::time::timeout(STEP, pair.started.recv()).await.expect("started on A");

    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"changed my mind"}}"#;
    assert_eq!(post(&pair.b.url(), Some(&session), cancel).await.status(), StatusCode::ACCEPTED);
    let accepted = Instant::now();
    let ended = tokio::time::timeout(Duration::from_millis(200), pair.ended.recv()).await;
    assert!(ended.is_ok(), "the handler on A still ran 200 ms after B accepted the cancellation");
    assert!(accepted.elapsed() < Duration::from_millis(200));
    waiting.abort();
}

#[tokio::test]
async fn one_endpoint_holds_the_get_stream_and_what_b_sends_outside_a_request_reaches_it() {
    let pair = pair().await;
    let session = session(&pair).await;
    let held = get_stream(&pair.a.url(), &session).await;
    assert_eq!(held.status(), StatusCode::OK, "the GET stream opens on A");
    let (mut stream, mut seen) = (held.into_body(), String::new());
    let again_on_a = get_stream(&pair.a.url(), &session).await;
    assert_eq!(again_on_a.status(), StatusCode::CONFLICT, "a second GET stream, on A");
    let on_b = get_stream(&pair.b.url(), &session).await;
    assert_eq!(on_b.status(), StatusCode::CONFLICT, "a second GET stream, on B");

    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"later","arguments":{}}}"#;
    let answered = post(&pair.b.url(), Some(&session), call).await;
    assert_eq!(answered.status(), StatusCode::OK);
    drop(answered.into_body().collect().await);
    pair.raise.0.notify_one();
    let log = next_event(&mut stream, &mut seen, |m| m["method"] == "notifications/message").await;
    assert_eq!(log["params"]["data"], "raised on B", "{log}");

    // The client leaves A's stream: A notices at its next keep-alive and lets the stream go.
    drop(stream);
    let started = Instant::now();
    let taken = loop {
        let again = get_stream(&pair.b.url(), &session).await;
        if again.status() != StatusCode::CONFLICT || started.elapsed() > STEP {
            break again;
        }
        tokio::time::sleep(KEEP_ALIVE / 2).await;
    };
    assert_eq!(taken.status(), StatusCode::OK, "B takes the GET stream once A's has ended");
}

#[tokio::test]
async fn an_answer_inside_a_batch_posted_to_b_reaches_the_request_waiting_on_a() {
    let pair = pair().await;
    let session = session_as(&pair, BATCHES, INITIALIZE_BATCHES).await;
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"roots","arguments":{}}}"#;
    let asked = post_as(&pair.a.url(), Some(&session), BATCHES, call).await;
    assert_eq!(asked.status(), StatusCode::OK);
    let (mut body, mut seen) = (asked.into_body(), String::new());
    let question = next_event(&mut body, &mut seen, |m| m["method"] == "roots/list").await;
    assert_eq!(question["id"], "A/1", "the id names the instance that asked: {question}");

    // The answer shares its batch with a ping, answered by B itself.
    let batch = serde_json::json!([
        {"jsonrpc": "2.0", "id": question["id"], "result": {"roots": [{"uri": "file:///shelf"}]}},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
    ]);
    let answered = post_as(&pair.b.url(), Some(&session), BATCHES, &batch.to_string()).await;
    assert_eq!(answered.status(), StatusCode::OK);
    let pong = answered.into_body().collect().await.expect("body").to_bytes();
    assert_eq!(&pong[..], br#"[{"jsonrpc":"2.0","id":3,"result":{}}]"#);
    let result = next_event(&mut body, &mut seen, |m| m["id"] == 2).await;
    assert_eq!(result["result"]["content"][0]["text"], "A sees file:///shelf", "{result}");
}

#[tokio::test]
async fn a_cancellation_inside_a_batch_posted_to_b_stops_the_handler_on_a() {
    let mut pair = pair().await;
    let session = session_as(&pair, BATCHES, INITIALIZE_BATCHES).await;
    let call =
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait","arguments":{}}}"#;
    let a_url = pair.a.url();
    let waiting = tokio::spawn({
        let session = session.clone();
        async move { post_as(&a_url, Some(&session), BATCHES, call).await }
    });
    tokio::time::timeout(STEP, pair.started.recv()).await.expect("started on A");

    let cancel =
        r#"[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}]"#;
    let posted = post_as(&pair.b.url(), Some(&session), BATCHES, cancel).await;
    assert_eq!(posted.status(), StatusCode::ACCEPTED);
    let ended = tokio::time::timeout(STEP, pair.ended.recv()).await;
    assert!(ended.is_ok(), "the handler on A still runs after B took the cancellation");
    waiting.abort();
}
