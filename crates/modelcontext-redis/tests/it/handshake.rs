//! Handshake-era (2025-11-25) sessions shared through a `RedisSessionStore`: two instances, A
//! and B, of one deployment; a session made on one is served by the other, its changes and
//! its DELETE reach both, and a Redis outage means 503 with `Retry-After`, never 404.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, StatusCode};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use modelcontext::server::NoArgs;
use modelcontext::types::LoggingLevel;
use modelcontext::{Client, Context, EraMode, HttpOptions, McpServer, ToolDef};
use modelcontext_redis::RedisSessionStore;

use crate::support::RedisServer;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"reader","version":"7"}}}"#;

/// The most a DELETE on one instance may take to end the session on the other.
const DELETE_DEADLINE: Duration = Duration::from_secs(1);

/// Instance `name`: a `log` tool (a debug line and an error line) and a `who` tool (the
/// client `initialize` described, and the instance that answered).
fn server(name: &'static str) -> McpServer {
    let log = ToolDef::new("log", |cx: Context, _: NoArgs| async move {
        cx.log(LoggingLevel::Debug, "a debug line").await;
        cx.log(LoggingLevel::Error, "an error line").await;
        "logged"
    });
    let who = ToolDef::new("who", move |cx: Context, _: NoArgs| async move {
        let client = cx.client_info().map(|info| info.name.clone()).unwrap_or_default();
        format!("{client} on {name}")
    });
    McpServer::new("shop").tool(log).expect("tool").tool(who).expect("tool")
}

/// Serves instance `name` on a loopback port with the deployment's session store.
async fn instance(redis: &RedisServer, name: &'static str) -> (SocketAddr, RedisSessionStore) {
    let store = redis
        .deployment("shop")
        .command_timeout(Duration::from_millis(300))
        .session_store()
        .expect("store");
    let options = HttpOptions::default().session_store(Arc::new(store.clone()));
    let endpoint = server(name).http_endpoint_with(options);
    let (addr, serve) = endpoint.bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    (addr, store)
}

struct Answer {
    status: StatusCode,
    headers: hyper::HeaderMap,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// One HTTP request to `addr` (in session `session`, if given).
async fn send(addr: SocketAddr, method: Method, session: Option<&str>, body: &str) -> Answer {
    let client: HyperClient<HttpConnector, Full<Bytes>> =
        HyperClient::builder(TokioExecutor::new()).build_http();
    let mut request = hyper::Request::builder()
        .method(method)
        .uri(format!("http://{addr}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    if let Some(session) = session {
        request =
            request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
    }
    let request = request.body(Full::new(Bytes::from(body.to_owned()))).expect("request");
    let response = client.request(request).await.expect("an answer");
    let (status, headers) = (response.status(), response.headers().clone());
    let body = response.into_body().collect().await.expect("body").to_bytes();
    Answer { status, headers, body: String::from_utf8_lossy(&body).into_owned() }
}

async fn post(addr: SocketAddr, session: &str, body: &str) -> Answer {
    send(addr, Method::POST, Some(session), body).await
}

fn call(id: u32, tool: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
    )
}

async fn initialize(addr: SocketAddr) -> Answer {
    send(addr, Method::POST, None, INITIALIZE).await
}

fn session_of(answer: &Answer) -> String {
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    answer.header("mcp-session-id").expect("a session id").to_owned()
}

/// Issue 14, test 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_made_on_a_is_used_on_b_and_a_delete_on_a_ends_it_on_b() {
    let Some(redis) = RedisServer::start().await else { return };
    let (a, _) = instance(&redis, "A").await;
    let (b, _) = instance(&redis, "B").await;
    let session = session_of(&initialize(a).await);
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(b, &session, initialized).await.status, StatusCode::ACCEPTED);
    let who = post(b, &session, &call(2, "who")).await;
    assert!(who.body.contains(r#""text":"reader on B""#), "{}", who.body);

    // The level set on B applies to the log tool on A (told through Redis pub/sub).
    let set_level =
        r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"error"}}"#;
    assert_eq!(post(b, &session, set_level).await.status, StatusCode::OK);
    let set_at = Instant::now();
    let mut tries = 0;
    loop {
        tries += 1;
        let logged = post(a, &session, &call(4, "log")).await;
        assert_eq!(logged.status, StatusCode::OK, "{}", logged.body);
        assert!(logged.body.contains("an error line"), "{}", logged.body);
        if !logged.body.contains("a debug line") {
            break;
        }
        assert!(set_at.elapsed() < DELETE_DEADLINE, "the level set on B never reached A");
    }
    eprintln!("logging/setLevel on B honoured on A after {:?} ({tries} calls)", set_at.elapsed());

    // DELETE on A: B's next request is 404 within 1 s.
    let deleted = send(a, Method::DELETE, Some(&session), "").await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    let deleted_at = Instant::now();
    loop {
        let answer = post(b, &session, &call(5, "who")).await;
        if answer.status == StatusCode::NOT_FOUND {
            break;
        }
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        assert!(deleted_at.elapsed() < DELETE_DEADLINE, "B still serves a deleted session");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    eprintln!("DELETE on A ended the session on B after {:?}", deleted_at.elapsed());
}

/// A whole handshake-era client through a load balancer without stickiness: every request
/// goes to the other instance, and the session works throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_client_through_a_round_robin_proxy_needs_no_sticky_sessions() {
    use modelcontext::transport::http::HttpTransport;
    let Some(redis) = RedisServer::start().await else { return };
    let (a, _) = instance(&redis, "A").await;
    let (b, _) = instance(&redis, "B").await;
    let proxy = crate::proxy::round_robin(vec![a, b]).await;
    let transport = HttpTransport::new(&format!("http://{proxy}/mcp")).expect("url");
    let client =
        Client::builder().era(EraMode::Handshake).connect(transport).await.expect("connected");
    let mut served_by = std::collections::BTreeSet::new();
    for _ in 0..10 {
        let result = client.call_tool("who", serde_json::json!({})).await.expect("called");
        let content = serde_json::to_value(&result.content).expect("json");
        let text = content[0]["text"].as_str().unwrap_or_default().to_owned();
        let instance = text.rsplit(" on ").next().unwrap_or_default().to_owned();
        served_by.insert(instance);
    }
    let served_by: Vec<String> = served_by.into_iter().collect();
    assert_eq!(served_by, ["A", "B"], "both instances served the one session");
}

/// Issue 14, test 7 (the handshake half): Redis restarted mid-run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_redis_is_away_uncached_sessions_get_503_then_service_recovers() {
    let Some(mut redis) = RedisServer::start().await else { return };
    let (a, store_a) = instance(&redis, "A").await;
    let (b, store_b) = instance(&redis, "B").await;
    let session = session_of(&initialize(a).await);

    redis.kill().await;
    // A holds the session: it serves it without Redis.
    let held = post(a, &session, &call(2, "who")).await;
    assert_eq!(held.status, StatusCode::OK, "{}", held.body);
    // B must load it: 503 with Retry-After, never 404. After a few failures the breaker
    // answers at once instead of waiting out the command timeout.
    let mut slowest_after_open = Duration::ZERO;
    for attempt in 0..8 {
        let started = Instant::now();
        let answer = post(b, &session, &call(3, "who")).await;
        assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE, "{}", answer.body);
        assert_eq!(answer.header("retry-after"), Some("1"));
        if attempt >= 3 {
            slowest_after_open = slowest_after_open.max(started.elapsed());
        }
    }
    assert!(store_b.stats().short_circuited > 0, "{:?}", store_b.stats());
    assert!(slowest_after_open < Duration::from_millis(300), "{slowest_after_open:?}");
    let refused = initialize(a).await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE, "{}", refused.body);

    redis.start_again().await;
    let restarted = Instant::now();
    // Recovery: a new session is made on one instance and used on the other.
    let recovered = loop {
        let made = initialize(b).await;
        if made.status == StatusCode::OK {
            let session = session_of(&made);
            let used = post(a, &session, &call(4, "who")).await;
            if used.status == StatusCode::OK {
                break restarted.elapsed();
            }
        }
        assert!(restarted.elapsed() < Duration::from_secs(10), "no recovery within 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // The restarted Redis kept nothing (no persistence): the old session is gone, and every
    // instance says so with 404 once it can ask.
    let gone = post(b, &session, &call(5, "who")).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.body);
    eprintln!(
        "redis restart: handshake sessions served again {recovered:?} after Redis was back; \
         breaker A {:?}, B {:?}",
        store_a.stats(),
        store_b.stats()
    );
}
