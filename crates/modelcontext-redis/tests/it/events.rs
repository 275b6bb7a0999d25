//! `RedisEventStore` against the `EventStore` contract, what it leaves in Redis and what it
//! costs there, and a handshake-era stream cut on instance A and resumed from the shared log
//! "on B" (another handle on the same Redis) while A still runs the call, or after A stopped.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use hyper::body::{Body as _, Incoming};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use modelcontext::server::http::{
    Appended, EventFeed, EventStore, HttpOptions, StoreFuture, StreamId,
};
use modelcontext::testing::contracts;
use modelcontext::types::Message;
use modelcontext::{Context, McpServer, ToolDef};
use modelcontext_redis::RedisEventStore;
use tokio::sync::{Notify, mpsc};

use crate::support::RedisServer;

/// The keys of deployment `name` still in Redis.
async fn keys_of(redis: &RedisServer, name: &str) -> Vec<String> {
    let client = redis::Client::open(redis.url()).expect("url");
    let mut connection = client.get_multiplexed_async_connection().await.expect("connected");
    let pattern = format!("modelcontext:{name}:*");
    redis::cmd("KEYS").arg(pattern).query_async(&mut connection).await.expect("KEYS")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_event_store_meets_the_contract_and_leaves_no_key_behind() {
    let Some(redis) = RedisServer::start().await else { return };
    let a = redis.deployment("events").event_store().expect("store");
    let b = redis.deployment("events").event_store().expect("store");
    contracts::event_store(&a, &b).await;
    assert_eq!(keys_of(&redis, "events").await, Vec::<String>::new());
    // Beyond the pool of blocking connections, feeds poll: the contract holds there too.
    let polling = redis.deployment("events").event_store().expect("store").max_followers(0);
    contracts::event_store(&polling, &a).await;
}

fn note(n: u32) -> Message {
    Message::decode_str(&format!(r#"{{"jsonrpc":"2.0","method":"n","params":{{"n":{n}}}}}"#))
        .expect("a notification")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_short_ttls_no_stream_key_is_left_after_delete_and_expiry() {
    let Some(redis) = RedisServer::start().await else { return };
    let ttl = Duration::from_millis(300);
    let store = redis.deployment("ttl").event_store().expect("store").ttl(ttl);
    let post = StreamId { instance: 7, number: 1 };
    for session in ["deleted", "expired"] {
        for stream in [StreamId::STANDALONE, post] {
            store.append(session, stream, &note(1)).stored().await.expect("stored");
        }
    }
    assert_eq!(keys_of(&redis, "ttl").await.len(), 6, "two streams and an index per session");
    store.end_session("deleted").await.expect("ended");
    let left = keys_of(&redis, "ttl").await;
    assert!(left.iter().all(|key| key.contains("{expired}")), "DELETE leaves nothing: {left:?}");
    tokio::time::sleep(ttl * 2).await;
    assert_eq!(keys_of(&redis, "ttl").await, Vec::<String>::new(), "expiry leaves nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_event_is_one_pipeline_of_four_commands() {
    let Some(redis) = RedisServer::start().await else { return };
    let store = redis.deployment("cost").event_store().expect("store");
    let stream = StreamId { instance: 7, number: 1 };
    store.append("s", stream, &note(0)).stored().await.expect("connected and stored");
    let before = redis.commands_run().await;
    for n in 1..=100 {
        store.append("s", stream, &note(n)).stored().await.expect("stored");
    }
    let after = redis.commands_run().await;
    let per_event: std::collections::BTreeMap<&str, f64> = after
        .iter()
        .map(|(name, calls)| {
            (name.as_str(), (calls - before.get(name).unwrap_or(&0)) as f64 / 100.0)
        })
        .filter(|(_, per)| *per > 0.0)
        .collect();
    println!("Redis commands per stored SSE event: {per_event:?}");
    let expected = [("pexpire", 2.0), ("sadd", 1.0), ("xadd", 1.0)];
    assert_eq!(per_event, expected.into_iter().collect(), "one XADD, its PEXPIRE, the index");
}

/// Wraps a store and says when an answer (a response) has been stored.
#[derive(Clone)]
pub(crate) struct Tap {
    pub(crate) store: RedisEventStore,
    pub(crate) answered: mpsc::UnboundedSender<String>,
}

impl EventStore for Tap {
    fn append(&self, session: &str, stream: StreamId, message: &Message) -> Appended {
        let storing = self.store.append(session, stream, message);
        let answer = matches!(message, Message::Response(_));
        let answered = self.answered.clone();
        Appended::Pending(Box::pin(async move {
            let id = storing.stored().await?;
            if answer {
                let _ = answered.send(id.clone());
            }
            Ok(id)
        }))
    }

    fn follow(
        &self,
        session: &str,
        stream: StreamId,
        after: &str,
    ) -> StoreFuture<'static, Option<EventFeed>> {
        self.store.follow(session, stream, after)
    }

    fn end_session(&self, session: &str) -> StoreFuture<'static, ()> {
        self.store.end_session(session)
    }
}

/// Progress notifications sent before the stream is cut, and in all.
pub(crate) const CUT_AFTER: u64 = 50;
pub(crate) const PROGRESS: u64 = 200;

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub(crate) struct NoArguments {}

/// A server whose `count` tool reports progress 1..=50, waits for `gate`, reports 51..=200,
/// then answers.
pub(crate) fn counting_server(gate: Arc<Notify>) -> McpServer {
    let count = ToolDef::new("count", move |ctx: Context, NoArguments {}: NoArguments| {
        let gate = gate.clone();
        async move {
            for n in 1..=PROGRESS {
                ctx.report_progress(n as f64, Some(PROGRESS as f64), None).await;
                if n == CUT_AFTER {
                    gate.notified().await;
                }
            }
            "counted"
        }
    });
    McpServer::new("counter").tool(count).expect("tool")
}

/// Instance A: the server on its own runtime and thread, so stopping it ends every task it
/// ran, as a process exit would.
pub(crate) struct InstanceA {
    pub(crate) addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl InstanceA {
    /// Serves `server` with the options `options` makes (on A's runtime, so that what they
    /// spawn stops with A).
    pub(crate) fn start(
        server: McpServer,
        options: impl FnOnce() -> HttpOptions + Send + 'static,
    ) -> InstanceA {
        let (ready, address) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let endpoint = server.http_endpoint_with(options());
                let (addr, serve) = endpoint.bind("127.0.0.1:0").await.expect("bind");
                ready.send(addr).expect("ready");
                tokio::select! {
                    _ = serve => {}
                    _ = stopped => {}
                }
            });
            runtime.shutdown_timeout(Duration::from_secs(5));
        });
        let addr = address.recv_timeout(Duration::from_secs(10)).expect("A started");
        InstanceA { addr, stop: Some(stop), thread: Some(thread) }
    }

    pub(crate) fn stop(mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            thread.join().expect("A's thread");
        }
    }
}

/// Options with `tap` as the only store.
fn tap_options(tap: Tap) -> impl FnOnce() -> HttpOptions + Send + 'static {
    move || HttpOptions::default().event_store(Arc::new(tap))
}

pub(crate) type Http = HttpClient<HttpConnector, String>;

/// A handshake-era POST of `body` to A, in `session` if given.
async fn post(
    http: &Http,
    addr: std::net::SocketAddr,
    session: Option<&str>,
    body: String,
) -> hyper::Response<Incoming> {
    post_to(http, addr, None, session, body).await
}

/// A handshake-era request to `addr` (pinned to backend `pin` when `addr` is the proxy), in
/// `session` if given.
pub(crate) fn request(
    method: hyper::Method,
    addr: std::net::SocketAddr,
    pin: Option<usize>,
    session: Option<&str>,
) -> hyper::http::request::Builder {
    let mut request = hyper::Request::builder()
        .method(method)
        .uri(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    if let Some(pin) = pin {
        request = request.header(crate::proxy::PIN, pin);
    }
    request
}

/// Sends `request` with `body`; its response, within 10 s.
pub(crate) async fn send(
    http: &Http,
    request: hyper::http::request::Builder,
    body: String,
) -> hyper::Response<Incoming> {
    let request = request.body(body).expect("a request");
    tokio::time::timeout(Duration::from_secs(10), http.request(request))
        .await
        .expect("an answer in time")
        .expect("an answer")
}

/// A handshake-era POST of `body` to `addr` (pinned to backend `pin`, through the proxy).
pub(crate) async fn post_to(
    http: &Http,
    addr: std::net::SocketAddr,
    pin: Option<usize>,
    session: Option<&str>,
    body: String,
) -> hyper::Response<Incoming> {
    send(http, request(hyper::Method::POST, addr, pin, session), body).await
}

async fn open_session(http: &Http, addr: std::net::SocketAddr) -> String {
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let response = post(http, addr, None, initialize.into()).await;
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"].to_str().expect("ascii").to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(http, addr, Some(&session), initialized.into()).await.status(), 202);
    session
}

/// The progress value of a progress notification.
pub(crate) fn progress(message: &Message) -> Option<u64> {
    let Message::Notification(note) = message else { return None };
    let params: serde_json::Value = serde_json::from_str(note.params.as_ref()?.get()).ok()?;
    params["progress"].as_f64().map(|p| p as u64)
}

/// Reads SSE events, one message at a time, from a response body.
pub(crate) struct SseReader {
    body: Incoming,
    text: String,
}

impl SseReader {
    pub(crate) fn new(body: Incoming) -> SseReader {
        SseReader { body, text: String::new() }
    }

    /// The next event carrying a message, with its id; `None` once the body ends.
    pub(crate) async fn next(&mut self) -> Option<(Option<String>, Message)> {
        loop {
            while let Some(end) = self.text.find("\n\n") {
                let event: String = self.text.drain(..end + 2).collect();
                let field = |name: &str| {
                    event.lines().find_map(|line| line.strip_prefix(name)).map(str::trim)
                };
                let Some(data) = field("data:").filter(|data| !data.is_empty()) else { continue };
                let message = Message::decode_str(data).expect("a message");
                return Some((field("id:").map(str::to_owned), message));
            }
            let body = &mut self.body;
            let frame =
                futures_util::future::poll_fn(|cx| std::pin::Pin::new(&mut *body).poll_frame(cx));
            let frame =
                tokio::time::timeout(Duration::from_secs(10), frame).await.expect("in time");
            let data = frame?.expect("a frame").into_data().unwrap_or_default();
            self.text.push_str(std::str::from_utf8(&data).expect("utf-8"));
        }
    }
}

/// The `tools/call` of `count` with request id and progress token `id`.
pub(crate) fn count_call(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"count","arguments":{{}},"_meta":{{"progressToken":{id}}}}}}}"#
    )
}

/// Reads `reader` up to progress 50, then drops the connection (the cut a proxy or a network
/// would make); the id of the last event read.
pub(crate) async fn read_and_cut(mut reader: SseReader) -> String {
    let mut last_id = None;
    for seen in 1..=CUT_AFTER {
        let (id, message) = reader.next().await.expect("more events");
        assert_eq!(progress(&message), Some(seen), "A's stream in order before the cut");
        last_id = id;
    }
    last_id.expect("events carry ids")
}

/// Calls `count` on A and cuts its stream after progress 50; the id of the last event read.
async fn call_and_cut(http: &Http, addr: std::net::SocketAddr, session: &str, id: u64) -> String {
    let body = post(http, addr, Some(session), count_call(id)).await.into_body();
    read_and_cut(SseReader::new(body)).await
}

/// What a resumption from `last` yields, read from `store` (B's handle): the progress values,
/// then whether the answer came.
async fn resume_on(store: &RedisEventStore, session: &str, last: &str) -> (Vec<u64>, bool) {
    let (stream, position) = last.split_once('-').expect("<stream>-<position>");
    let stream: StreamId = stream.parse().expect("a stream id");
    let mut feed = store.follow(session, stream, position).await.expect("B reads").expect("known");
    let mut values = Vec::new();
    loop {
        let next = tokio::time::timeout(Duration::from_secs(10), feed.next()).await;
        let event = next.expect("the next event in time").expect("not ended").expect("read");
        if matches!(event.message, Message::Response(_)) {
            return (values, true);
        }
        values.push(progress(&event.message).expect("only progress before the answer"));
    }
}

/// A cuts its stream after progress 50 and resumes on B while A goes on: 0 events lost, 0
/// duplicated, over 100 calls. A test of the stream-level path (the shared log); the same
/// resumption through B's endpoint (`GET` + `Last-Event-ID` via the proxy) is in `resume.rs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_on_a_resumes_on_b_while_a_still_runs_the_call_losing_nothing() {
    let Some(redis) = RedisServer::start().await else { return };
    let (answered, mut answers) = mpsc::unbounded_channel();
    let tap = Tap { store: redis.deployment("fleet").event_store().expect("A's store"), answered };
    let gate = Arc::new(Notify::new());
    let a = InstanceA::start(counting_server(gate.clone()), tap_options(tap));
    let b = redis.deployment("fleet").event_store().expect("B's store");
    let http: Http = HttpClient::builder(TokioExecutor::new()).build_http();
    let session = open_session(&http, a.addr).await;
    let expected: Vec<u64> = (CUT_AFTER + 1..=PROGRESS).collect();
    let (mut lost, mut duplicated) = (0, 0);
    for call in 1..=100 {
        let last = call_and_cut(&http, a.addr, &session, call).await;
        // A goes on only once B follows, so most events arrive live, appended after the resume.
        let resuming = resume_on(&b, &session, &last);
        tokio::pin!(resuming);
        let released = async {
            tokio::task::yield_now().await;
            gate.notify_one();
            std::future::pending::<()>().await
        };
        let (values, answered) = tokio::select! {
            resumed = &mut resuming => resumed,
            () = released => unreachable!(),
        };
        assert!(answered, "call {call}: the answer arrives");
        answers.recv().await.expect("A stored the answer");
        lost += expected.iter().filter(|n| !values.contains(n)).count();
        duplicated += values.len() - dedup_len(&values);
        assert_eq!(values, expected, "call {call}: 51..=200, once each, in order");
    }
    println!("resumed on B while A ran: 100 calls, {lost} events lost, {duplicated} duplicated");
    a.stop();
}

pub(crate) fn dedup_len(values: &[u64]) -> usize {
    let mut unique = values.to_vec();
    unique.sort_unstable();
    unique.dedup();
    unique.len()
}

/// The variant where A finished the call and was stopped before the client resumes on B.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_on_a_resumes_on_b_after_a_finished_and_stopped() {
    let Some(redis) = RedisServer::start().await else { return };
    let b = redis.deployment("fleet").event_store().expect("B's store");
    let http: Http = HttpClient::builder(TokioExecutor::new()).build_http();
    let expected: Vec<u64> = (CUT_AFTER + 1..=PROGRESS).collect();
    for call in 1..=10 {
        let (answered, mut answers) = mpsc::unbounded_channel();
        let tap = Tap { store: redis.deployment("fleet").event_store().expect("store"), answered };
        let gate = Arc::new(Notify::new());
        let a = InstanceA::start(counting_server(gate.clone()), tap_options(tap));
        let session = open_session(&http, a.addr).await;
        let last = call_and_cut(&http, a.addr, &session, call).await;
        gate.notify_one();
        tokio::time::timeout(Duration::from_secs(10), answers.recv()).await.expect("in time");
        a.stop();
        let (values, answered) = resume_on(&b, &session, &last).await;
        assert!(answered, "call {call}: the answer was kept");
        assert_eq!(values, expected, "call {call}: 51..=200, once each, in order");
    }
}
