//! Issue 14, test 2 end to end: a handshake-era client's SSE stream for a call on instance A,
//! cut after progress 50, resumed with `GET` + `Last-Event-ID` through instance B's endpoint
//! (the round-robin proxy pinned to B), while A still runs the call or after A finished and
//! stopped. A and B share one deployment: session store, event store and peer router.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::{Method, StatusCode};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::rt::TokioExecutor;
use modelcontext::HttpOptions;
use modelcontext::types::Message;
use modelcontext_redis::Deployment;
use tokio::sync::{Notify, mpsc};

use crate::events::{
    CUT_AFTER, Http, InstanceA, PROGRESS, SseReader, Tap, count_call, dedup_len, post_to, progress,
    read_and_cut, request, send,
};
use crate::support::RedisServer;

/// The proxy's indexes of the two instances.
const A: usize = 0;
const B: usize = 1;

/// The options of one instance of `deployment`: its own session store, event store and peer
/// router handles (so its own connections and instance id). `answered`, if given, hears of
/// every answer the instance stores.
fn fleet_options(
    deployment: Deployment,
    answered: Option<mpsc::UnboundedSender<String>>,
) -> impl FnOnce() -> HttpOptions + Send + 'static {
    move || {
        let deployment = deployment.command_timeout(Duration::from_millis(500));
        let events = deployment.event_store().expect("event store");
        let options = HttpOptions::default()
            .session_store(Arc::new(deployment.session_store().expect("session store")))
            .peer_router(Arc::new(deployment.peer_router().expect("peer router")));
        match answered {
            Some(answered) => options.event_store(Arc::new(Tap { store: events, answered })),
            None => options.event_store(Arc::new(events)),
        }
    }
}

/// Instance B, served on the test's runtime.
async fn instance_b(redis: &RedisServer, gate: Arc<Notify>) -> SocketAddr {
    let options = fleet_options(redis.deployment("resume"), None)();
    let endpoint = crate::events::counting_server(gate).http_endpoint_with(options);
    let (addr, serve) = endpoint.bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    addr
}

/// Initializes on A and sends `initialized` to B: the session is shared from the start.
async fn open_session(http: &Http, proxy: SocketAddr) -> String {
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let response = post_to(http, proxy, Some(A), None, initialize.into()).await;
    assert_eq!(response.status(), StatusCode::OK);
    let session = response.headers()["mcp-session-id"].to_str().expect("ascii").to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let response = post_to(http, proxy, Some(B), Some(&session), initialized.into()).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    session
}

/// Calls `count` through the proxy on A and cuts the stream after progress 50.
async fn call_on_a_and_cut(http: &Http, proxy: SocketAddr, session: &str, id: u64) -> String {
    let response = post_to(http, proxy, Some(A), Some(session), count_call(id)).await;
    assert_eq!(response.status(), StatusCode::OK);
    read_and_cut(SseReader::new(response.into_body())).await
}

/// `GET` with `Last-Event-ID: last` through the proxy on B: the stream, once B follows it.
async fn resume_through_b(http: &Http, proxy: SocketAddr, session: &str, last: &str) -> SseReader {
    let get = request(Method::GET, proxy, Some(B), Some(session)).header("last-event-id", last);
    let response = send(http, get, String::new()).await;
    assert_eq!(response.status(), StatusCode::OK, "B resumes A's stream");
    SseReader::new(response.into_body())
}

/// What the resumed stream carries: the progress values, then whether the answer (to call
/// `id`) came, and whether the stream ended right after it.
async fn read_resumed(mut reader: SseReader, id: u64) -> (Vec<u64>, bool) {
    let mut values = Vec::new();
    while let Some((_, message)) = reader.next().await {
        if let Message::Response(response) = &message {
            assert_eq!(serde_json::to_value(&response.id).expect("json"), id, "its own answer");
            assert!(response.result.is_ok(), "call {id}: a result, not an error");
            assert!(reader.next().await.is_none(), "the stream ends with the answer");
            return (values, true);
        }
        values.push(progress(&message).expect("only progress before the answer"));
    }
    (values, false)
}

/// Counts what a resumption lost and duplicated, and checks it is exactly 51..=200.
#[derive(Default)]
struct Tally {
    lost: usize,
    duplicated: usize,
}

impl Tally {
    fn add(&mut self, call: u64, values: &[u64], answered: bool) {
        let expected: Vec<u64> = (CUT_AFTER + 1..=PROGRESS).collect();
        self.lost += expected.iter().filter(|n| !values.contains(n)).count();
        self.duplicated += values.len() - dedup_len(values);
        assert!(answered, "call {call}: the answer arrives");
        assert_eq!(values, expected, "call {call}: 51..=200, once each, in order");
    }
}

/// Issue 14, test 2: A's `count` waits after progress 50 until B follows the stream, so
/// 51..=200 and the answer are written by A while B serves the resumption.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_on_a_resumes_through_b_while_a_still_runs_the_call() {
    let Some(redis) = RedisServer::start().await else { return };
    let gate = Arc::new(Notify::new());
    let options = fleet_options(redis.deployment("resume"), None);
    let a = InstanceA::start(crate::events::counting_server(gate.clone()), options);
    let b = instance_b(&redis, Arc::new(Notify::new())).await;
    let proxy = crate::proxy::round_robin(vec![a.addr, b]).await;
    let http: Http = HttpClient::builder(TokioExecutor::new()).build_http();
    let session = open_session(&http, proxy).await;
    let (started, mut tally) = (Instant::now(), Tally::default());
    for call in 1..=100 {
        let last = call_on_a_and_cut(&http, proxy, &session, call).await;
        // B answered the GET: it follows the stream. Only now does A go past progress 50.
        let resumed = resume_through_b(&http, proxy, &session, &last).await;
        gate.notify_one();
        let (values, answered) = read_resumed(resumed, call).await;
        tally.add(call, &values, answered);
    }
    println!(
        "resumed through B's endpoint while A ran: 100 calls in {:?}, {} events lost, {} duplicated",
        started.elapsed(),
        tally.lost,
        tally.duplicated
    );
    a.stop();
}

/// Issue 14, test 2, the variant: A finished the call and was stopped before the client
/// resumes through B.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_on_a_resumes_through_b_after_a_finished_and_stopped() {
    let Some(redis) = RedisServer::start().await else { return };
    let b = instance_b(&redis, Arc::new(Notify::new())).await;
    let http: Http = HttpClient::builder(TokioExecutor::new()).build_http();
    let (started, mut tally) = (Instant::now(), Tally::default());
    for call in 1..=10 {
        let (answered, mut answers) = mpsc::unbounded_channel();
        let gate = Arc::new(Notify::new());
        let options = fleet_options(redis.deployment("resume"), Some(answered));
        let a = InstanceA::start(crate::events::counting_server(gate.clone()), options);
        let proxy = crate::proxy::round_robin(vec![a.addr, b]).await;
        let session = open_session(&http, proxy).await;
        let last = call_on_a_and_cut(&http, proxy, &session, call).await;
        gate.notify_one();
        tokio::time::timeout(Duration::from_secs(10), answers.recv()).await.expect("in time");
        a.stop();
        let resumed = resume_through_b(&http, proxy, &session, &last).await;
        let (values, answered) = read_resumed(resumed, call).await;
        tally.add(call, &values, answered);
    }
    println!(
        "resumed through B's endpoint after A stopped: 10 calls in {:?}, {} lost, {} duplicated",
        started.elapsed(),
        tally.lost,
        tally.duplicated
    );
}
