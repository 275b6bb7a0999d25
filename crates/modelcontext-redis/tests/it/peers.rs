//! The client's answers to a server's requests, and its cancellations, reach the instance
//! running the request through a `RedisPeerRouter`, wherever the load balancer sends them;
//! a session's GET stream is held by one instance, and what the session sends outside a
//! request elsewhere reaches it: two instances, A and B, behind the round-robin proxy
//! (requests alternate A, B, A, B…, unless pinned).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::StatusCode;
use hyper::body::{Bytes, Incoming};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use modelcontext::server::NoArgs;
use modelcontext::{Context, Elicitation, HttpOptions, McpServer, ToolDef};
use modelcontext_redis::RedisPeerRouter;
use tokio::sync::mpsc;

use crate::support::RedisServer;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"reader","version":"7"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// How long the cancelled handler on A may keep running after B accepted the cancellation.
const CANCEL_DEADLINE: Duration = Duration::from_millis(200);
/// The most any one step of these tests may take.
const STEP: Duration = Duration::from_secs(5);
/// The instances' SSE keep-alive interval.
const KEEP_ALIVE: Duration = Duration::from_millis(100);
/// How long the instances' claims on a GET stream live unrenewed: renewed every 100 ms, so
/// a lost claim shows within that, not within the default's 5 s.
const CLAIM_TTL: Duration = Duration::from_millis(300);
/// Where the proxy sends a pinned request: instance A, instance B.
const A: usize = 0;
const B: usize = 1;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

/// Tells the test when it is dropped: the handler holding it has ended.
struct Ended(mpsc::UnboundedSender<()>);

impl Drop for Ended {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// Lets instance B's `later` tool log, once its request is long answered.
#[derive(Clone, Default)]
struct Raise(Arc<tokio::sync::Notify>);

/// The signals of instance A's `wait` tool: it started, it ended.
struct Signals {
    started: mpsc::UnboundedReceiver<()>,
    ended: mpsc::UnboundedReceiver<()>,
}

/// Instance `name`: an `ask` tool (elicits a name), a `wait` tool (runs until cancelled,
/// telling `signals` when it starts and ends) and a `later` tool (answers at once, then logs
/// through the session, outside any request, when `raise` says so).
fn server(
    name: &'static str,
    signals: Option<(Ended, mpsc::UnboundedSender<()>)>,
    raise: Raise,
) -> McpServer {
    let ask = ToolDef::new("ask", move |cx: Context, _: NoArgs| async move {
        match cx.elicit::<Name>("Your name?").await {
            Ok(Elicitation::Accepted(answer)) => format!("{name} heard {}", answer.name),
            other => format!("{name} got {other:?}"),
        }
    });
    let signals = Arc::new(std::sync::Mutex::new(signals));
    let wait = ToolDef::new("wait", move |_: Context, _: NoArgs| {
        let signals = signals.lock().expect("signals").take();
        async move {
            let _ended = signals.map(|(ended, started)| {
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
    McpServer::new("shop")
        .tool(ask)
        .expect("tool")
        .tool(wait)
        .expect("tool")
        .tool(later)
        .expect("tool")
}

/// Serves instance `name` with the deployment's session store and peer router.
async fn instance(
    redis: &RedisServer,
    name: &'static str,
    signals: Option<(Ended, mpsc::UnboundedSender<()>)>,
    raise: Raise,
) -> (SocketAddr, RedisPeerRouter) {
    let deployment = redis.deployment("shop").command_timeout(Duration::from_millis(300));
    let store = deployment.session_store().expect("store");
    let router = deployment.peer_router().expect("router");
    // Frequent keep-alive comments: a GET stream whose client left is noticed at once.
    let options = HttpOptions::default()
        .session_store(Arc::new(store))
        .peer_router(Arc::new(router.clone()))
        .standalone_claim_ttl(CLAIM_TTL)
        .keep_alive(KEEP_ALIVE);
    let endpoint = server(name, signals, raise).http_endpoint_with(options);
    let (addr, serve) = endpoint.bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    (addr, router)
}

/// A and B behind a fresh round-robin proxy; A's `wait` tool reports to the returned signals,
/// and B's `later` tool logs when the returned [`Raise`] says so.
async fn fleet(redis: &RedisServer) -> (SocketAddr, Signals, Raise) {
    let (started_tx, started) = mpsc::unbounded_channel();
    let (ended_tx, ended) = mpsc::unbounded_channel();
    let raise = Raise::default();
    let (a, _) = instance(redis, "A", Some((Ended(ended_tx), started_tx)), Raise::default()).await;
    let (b, _) = instance(redis, "B", None, raise.clone()).await;
    (crate::proxy::round_robin(vec![a, b]).await, Signals { started, ended }, raise)
}

/// A POST through the proxy; the response's body is left to read.
async fn post(proxy: SocketAddr, session: Option<&str>, body: &str) -> hyper::Response<Incoming> {
    send(proxy, None, hyper::Method::POST, session, body).await
}

/// A request through the proxy, to `backend` when given (0 is A, 1 is B), else to the next
/// in turn.
async fn send(
    proxy: SocketAddr,
    backend: Option<usize>,
    method: hyper::Method,
    session: Option<&str>,
    body: &str,
) -> hyper::Response<Incoming> {
    let client: HyperClient<HttpConnector, Full<Bytes>> =
        HyperClient::builder(TokioExecutor::new()).build_http();
    let mut request = hyper::Request::builder()
        .method(method)
        .uri(format!("http://{proxy}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    if let Some(session) = session {
        request =
            request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
    }
    if let Some(backend) = backend {
        request = request.header(crate::proxy::PIN, backend.to_string());
    }
    let request = request.body(Full::new(Bytes::from(body.to_owned()))).expect("request");
    client.request(request).await.expect("an answer")
}

/// A session's GET stream opened on `backend`.
async fn get_stream(proxy: SocketAddr, backend: usize, session: &str) -> hyper::Response<Incoming> {
    send(proxy, Some(backend), hyper::Method::GET, Some(session), "").await
}

/// The session's GET stream, opened on A: its body.
async fn stream_on_a(proxy: SocketAddr, session: &str) -> Incoming {
    let held = get_stream(proxy, A, session).await;
    assert_eq!(held.status(), StatusCode::OK, "the GET stream opens on A");
    held.into_body()
}

/// Makes a session (initialize on A, initialized on B): the next request goes to A.
async fn session(proxy: SocketAddr) -> String {
    let made = post(proxy, None, INITIALIZE).await;
    assert_eq!(made.status(), StatusCode::OK);
    let id = made.headers()["mcp-session-id"].to_str().expect("ascii").to_owned();
    drop(made.into_body().collect().await);
    let initialized = post(proxy, Some(&id), INITIALIZED).await;
    assert_eq!(initialized.status(), StatusCode::ACCEPTED);
    id
}

/// Reads `body` until an SSE event's data satisfies `wanted`; returns that data as JSON.
async fn next_event(
    body: &mut Incoming,
    seen: &mut String,
    wanted: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    loop {
        while let Some(end) = seen.find("\n\n") {
            let event: String = seen.drain(..end + 2).collect();
            for data in event.lines().filter_map(|line| line.strip_prefix("data:")) {
                if let Ok(value) = serde_json::from_str::<serde_json::Value>(data.trim()) {
                    if wanted(&value) {
                        return value;
                    }
                }
            }
        }
        let frame = tokio::time::timeout(STEP, body.frame()).await.expect("in time");
        let frame = frame.expect("the stream goes on").expect("a frame");
        if let Ok(data) = frame.into_data() {
            seen.push_str(&String::from_utf8_lossy(&data));
        }
    }
}

/// Issue 14, test 3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_elicitation_asked_on_a_and_answered_through_b_completes_on_a() {
    let Some(redis) = RedisServer::start().await else { return };
    let (proxy, _, _) = fleet(&redis).await;
    let session = session(proxy).await;

    // Request 3 goes to A: the tool asks, on the POST's stream.
    let call =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{}}}"#;
    let asked = post(proxy, Some(&session), call).await;
    assert_eq!(asked.status(), StatusCode::OK);
    let (mut body, mut seen) = (asked.into_body(), String::new());
    let question = next_event(&mut body, &mut seen, |m| m["method"] == "elicitation/create").await;
    let id = question["id"].clone();
    assert!(id.as_str().is_some_and(|id| id.contains('/')), "an id naming its instance: {id}");

    // Request 4 goes to B, which does not run the tool: it forwards the answer to A.
    let answer = serde_json::json!({"jsonrpc": "2.0", "id": id,
        "result": {"action": "accept", "content": {"name": "Ada"}}});
    let answered = post(proxy, Some(&session), &answer.to_string()).await;
    assert_eq!(answered.status(), StatusCode::ACCEPTED);

    let result = next_event(&mut body, &mut seen, |m| m["id"] == 2).await;
    assert_eq!(result["result"]["content"][0]["text"], "A heard Ada", "{result}");
}

/// Issue 14, test 3, what must not work: an answer naming no instance of ours, or one that
/// is not there, is accepted and dropped (spec: the server answers 202 to a response), and
/// the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_answer_ids_are_dropped_without_harm() {
    let Some(redis) = RedisServer::start().await else { return };
    let (proxy, _, _) = fleet(&redis).await;
    let session = session(proxy).await;
    for id in [r#""nobody/1""#, r#""bad name!/1""#, r#""/""#, "77", r#""x/y/z""#] {
        let forged = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"action":"decline"}}}}"#);
        let answered = post(proxy, Some(&session), &forged).await;
        assert_eq!(answered.status(), StatusCode::ACCEPTED, "id {id}");
    }
    let ping = r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;
    let pong = post(proxy, Some(&session), ping).await;
    assert_eq!(pong.status(), StatusCode::OK);
}

/// Issue 14, test 6.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancellation_posted_to_b_stops_the_handler_on_a() {
    let Some(redis) = RedisServer::start().await else { return };
    let (proxy, mut signals, _) = fleet(&redis).await;
    let session = session(proxy).await;

    // Request 3 goes to A; its POST waits for an answer that never comes.
    let call =
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait","arguments":{}}}"#;
    let waiting = tokio::spawn({
        let session = session.clone();
        async move { post(proxy, Some(&session), call).await }
    });
    tokio::time::timeout(STEP, signals.started.recv()).await.expect("started on A");

    // Request 4 goes to B.
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"changed my mind"}}"#;
    let cancelled = post(proxy, Some(&session), cancel).await;
    assert_eq!(cancelled.status(), StatusCode::ACCEPTED);
    let accepted = Instant::now();
    let ended = tokio::time::timeout(CANCEL_DEADLINE, signals.ended.recv()).await;
    assert!(ended.is_ok(), "the handler on A still ran {CANCEL_DEADLINE:?} after B accepted");
    eprintln!("notifications/cancelled on B ended the handler on A after {:?}", accepted.elapsed());
    waiting.abort();
}

/// Issue 14: only one instance holds a session's GET stream, and what the session sends
/// outside a request on another instance reaches it there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_instance_holds_the_get_stream_and_b_logs_reach_it_on_a() {
    let Some(redis) = RedisServer::start().await else { return };
    let (proxy, _, raise) = fleet(&redis).await;
    let session = session(proxy).await;

    let (mut stream, mut seen) = (stream_on_a(proxy, &session).await, String::new());
    let second = get_stream(proxy, B, &session).await;
    assert_eq!(second.status(), StatusCode::CONFLICT, "a second GET stream, on B");

    // B's `later` tool answers at once; then, outside any request, it logs on B.
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"later","arguments":{}}}"#;
    let answered = send(proxy, Some(B), hyper::Method::POST, Some(&session), call).await;
    assert_eq!(answered.status(), StatusCode::OK);
    drop(answered.into_body().collect().await);
    raise.0.notify_one();
    let log = next_event(&mut stream, &mut seen, |m| m["method"] == "notifications/message").await;
    assert_eq!(log["params"]["data"], "raised on B", "{log}");

    // A's stream ends (its client left); then B may hold one.
    drop(stream);
    let started = Instant::now();
    let taken = loop {
        let again = get_stream(proxy, B, &session).await;
        if again.status() != StatusCode::CONFLICT || started.elapsed() > STEP {
            break again;
        }
        tokio::time::sleep(KEEP_ALIVE / 2).await;
    };
    assert_eq!(taken.status(), StatusCode::OK, "B takes the GET stream once A's has ended");
    eprintln!("the GET stream moved from A to B {:?} after A's client left", started.elapsed());
}

/// The key holding session `session`'s GET-stream claim (the router's documented layout).
fn claim_key(session: &str) -> String {
    format!("modelcontext:shop:session:{{{session}}}:standalone")
}

/// A connection of the test's own to `redis`, to play what the instances cannot.
async fn admin(redis: &RedisServer) -> redis::aio::MultiplexedConnection {
    let client = redis::Client::open(redis.url()).expect("url");
    client.get_multiplexed_async_connection().await.expect("connected")
}

/// Reads `body` until it ends; panics if it goes on for [`STEP`].
async fn until_ended(body: &mut Incoming) {
    let ended = async { while let Some(Ok(_)) = body.frame().await {} };
    tokio::time::timeout(STEP, ended).await.expect("the stream ended");
}

/// A GET stream whose claim another ticket took (here one of an instance `ghost` the test
/// keeps alive, written over A's) ends on A within a renewal period; once `ghost` is gone
/// (its liveness key deleted), B takes the stream over although its claim is still there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_whose_claim_was_overwritten_ends_and_b_takes_it() {
    let Some(redis) = RedisServer::start().await else { return };
    let (proxy, _, _) = fleet(&redis).await;
    let session = session(proxy).await;
    let mut stream = stream_on_a(proxy, &session).await;

    let mut admin = admin(&redis).await;
    let (key, ghost) = (claim_key(&session), "modelcontext:shop:alive:ghost");
    let () = redis::cmd("SET").arg(ghost).arg(1).query_async(&mut admin).await.expect("SET");
    let mut overwrite = redis::cmd("SET");
    overwrite.arg(&key).arg("ghost/1").arg("PX").arg(60_000);
    let () = overwrite.query_async(&mut admin).await.expect("SET");
    let lost = Instant::now();
    until_ended(&mut stream).await;
    eprintln!("A's GET stream ended {:?} after its claim was taken", lost.elapsed());
    assert!(lost.elapsed() < CLAIM_TTL, "ended within a renewal period: {:?}", lost.elapsed());
    let refused = get_stream(proxy, B, &session).await;
    assert_eq!(refused.status(), StatusCode::CONFLICT, "the live ghost holds it now");

    let _: i64 = redis::cmd("DEL").arg(ghost).query_async(&mut admin).await.expect("DEL");
    let taken = get_stream(proxy, B, &session).await;
    assert_eq!(taken.status(), StatusCode::OK, "B takes the GET stream once its holder is gone");
}

/// A claim that vanished (its key deleted) lets B take the stream: A, which still had it
/// open, sees B's ticket at its next renewal and ends its own, so only B's stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_whose_claim_vanished_ends_once_b_takes_it() {
    let Some(redis) = RedisServer::start().await else { return };
    let (proxy, _, _) = fleet(&redis).await;
    let session = session(proxy).await;
    let mut stream = stream_on_a(proxy, &session).await;

    let mut admin = admin(&redis).await;
    let key = claim_key(&session);
    let a_ticket: String = redis::cmd("GET").arg(&key).query_async(&mut admin).await.expect("GET");
    let _: i64 = redis::cmd("DEL").arg(&key).query_async(&mut admin).await.expect("DEL");
    let taken = get_stream(proxy, B, &session).await;
    // A's renewal may have come first and taken the claim back: then B is refused, and A's
    // stream goes on, which is as right.
    if taken.status() == StatusCode::CONFLICT {
        eprintln!("A renewed its claim before B's GET: nothing to show");
        return;
    }
    assert_eq!(taken.status(), StatusCode::OK, "B takes the GET stream");
    let lost = Instant::now();
    until_ended(&mut stream).await;
    eprintln!("A's GET stream ended {:?} after B took the claim", lost.elapsed());
    assert!(lost.elapsed() < CLAIM_TTL, "ended within a renewal period: {:?}", lost.elapsed());
    let held: Option<String> =
        redis::cmd("GET").arg(&key).query_async(&mut admin).await.expect("GET");
    assert!(held.is_some_and(|ticket| ticket != a_ticket), "B's claim stays, A's is gone");
}

/// A GET while Redis does not answer (every client paused) gets 503 with `Retry-After`
/// within the command timeout, never a hang; once Redis answers again, a GET opens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_while_redis_does_not_answer_is_503_and_opens_once_it_does() {
    let Some(redis) = RedisServer::start().await else { return };
    let (proxy, _, _) = fleet(&redis).await;
    let session = session(proxy).await;

    let pause = Duration::from_millis(1_000);
    let mut admin = admin(&redis).await;
    let () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(pause.as_millis() as u64)
        .arg("ALL")
        .query_async(&mut admin)
        .await
        .expect("CLIENT PAUSE");
    let paused = Instant::now();
    let refused =
        tokio::time::timeout(STEP, get_stream(proxy, A, &session)).await.expect("no hang");
    eprintln!("a GET during the outage was answered in {:?}", paused.elapsed());
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(refused.headers().contains_key("retry-after"), "{:?}", refused.headers());
    assert!(paused.elapsed() < pause, "answered before Redis was back: {:?}", paused.elapsed());

    let opened = loop {
        let again = get_stream(proxy, B, &session).await;
        if again.status() == StatusCode::OK || paused.elapsed() > STEP {
            break again;
        }
        tokio::time::sleep(KEEP_ALIVE).await;
    };
    assert_eq!(opened.status(), StatusCode::OK, "a GET opens once Redis answers");
    eprintln!("a GET opened {:?} after the outage began", paused.elapsed());
}

/// How long a router's liveness key lives in these tests (the default is 3 s).
const LIVENESS: Duration = Duration::from_millis(300);

/// An instance that dies holding a session's GET stream (its runtime shut down: no release,
/// no renewal, as a crash) does not keep the stream until its claim (the default 15 s here)
/// expires: once its liveness key is gone, a GET on B takes the stream over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_held_by_a_dead_instance_is_taken_over_by_b_promptly() {
    let Some(redis) = RedisServer::start().await else { return };
    let deployment = redis.deployment("shop").command_timeout(Duration::from_millis(300));
    let deployment = deployment.instance_liveness(LIVENESS);
    let options = {
        let deployment = deployment.clone();
        move || {
            let store = deployment.session_store().expect("store");
            let router = deployment.peer_router().expect("router");
            HttpOptions::default()
                .session_store(Arc::new(store))
                .peer_router(Arc::new(router))
                .keep_alive(KEEP_ALIVE)
        }
    };
    let a = crate::events::InstanceA::start(server("A", None, Raise::default()), options);
    let (b, _) = instance(&redis, "B", None, Raise::default()).await;
    let proxy = crate::proxy::round_robin(vec![a.addr, b]).await;
    let session = session(proxy).await;
    let held = get_stream(proxy, A, &session).await;
    assert_eq!(held.status(), StatusCode::OK, "the GET stream opens on A");

    tokio::task::spawn_blocking(move || a.stop()).await.expect("A stopped");
    let died = Instant::now();
    let mut admin = admin(&redis).await;
    let left: Option<String> =
        redis::cmd("GET").arg(claim_key(&session)).query_async(&mut admin).await.expect("GET");
    assert!(left.is_some(), "A died without releasing its claim");
    drop(held);

    let taken = loop {
        let again = get_stream(proxy, B, &session).await;
        if again.status() != StatusCode::CONFLICT || died.elapsed() > STEP {
            break again;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(taken.status(), StatusCode::OK, "B takes the dead instance's GET stream");
    let waited = died.elapsed();
    eprintln!("B took the GET stream {waited:?} after A died (liveness {LIVENESS:?})");
    assert!(waited < modelcontext::server::http::STANDALONE_CLAIM_TTL / 5, "{waited:?}");
}

/// The takeover contract against Redis: a router dropped holding a claim (its liveness
/// no longer renewed) loses it to another within its liveness period.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_peer_router_frees_a_dead_holders_claim() {
    let Some(redis) = RedisServer::start().await else { return };
    let deployment = redis.deployment("contract").instance_liveness(LIVENESS);
    let a = Arc::new(deployment.peer_router().expect("router"));
    let b = deployment.peer_router().expect("router");
    let within = LIVENESS * 4;
    modelcontext::testing::contracts::peer_router_takeover(a, &b, within).await;
}

/// Issue 14, test 8 (the router's part): the contract suite against Redis, as a user
/// limited by the ACL of `docs::deployment`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_peer_router_meets_the_peer_router_contract() {
    let Some(redis) = RedisServer::start().await else { return };
    let rules = "on >s3cret resetchannels &modelcontext:contract:* resetkeys \
                 ~modelcontext:contract:* -@all +publish +subscribe +ping +eval +exists +hset \
                 +hgetall +smembers +sadd +srem +pttl +pexpire +del +get +set";
    redis.add_user("contract", rules).await;
    let url = redis.url().replace("redis://", "redis://contract:s3cret@");
    let deployment = modelcontext_redis::Deployment::new(&url, "contract").expect("deployment");
    let a = deployment.peer_router().expect("router");
    let b = deployment.peer_router().expect("router");
    modelcontext::testing::contracts::peer_router(&a, &b).await;
}
