//! Faults over real sockets on 127.0.0.1: clients that vanish mid-stream, peers that read
//! slowly or never, handlers that panic under load, and a server restarted under its clients.
//! Each test waits on signals (drop guards, counters, barriers), never on the clock; the
//! timeouts below only turn a hang into a failure.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use modelcontext::server::NoArgs;
use modelcontext::server::http::{
    Appended, EventFeed, EventStore, HttpOptions, MemoryEventStore, StoreError, StoreFuture,
    StreamId,
};
use modelcontext::types::Message;
use modelcontext::{Client, Context, EraMode, HttpTransport, McpServer, ToolDef};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::support::bookshop;

/// Turns a hang into a failure; never a measure of speed.
const HANG: Duration = Duration::from_secs(20);

async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(HANG, future).await.unwrap_or_else(|_| panic!("hung: {what}"))
}

/// Reports on a channel when dropped: a handler holding one was cancelled or finished.
struct Fired(mpsc::UnboundedSender<()>);

impl Drop for Fired {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// Waits for `n` drop guards to fire.
async fn fired(rx: &mut mpsc::UnboundedReceiver<()>, n: usize, what: &str) {
    for _ in 0..n {
        within(what, rx.recv()).await.expect("a guard fired");
    }
}

async fn start(server: McpServer, options: HttpOptions) -> SocketAddr {
    let (addr, serve) = server.http_endpoint_with(options).bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    addr
}

type Http = HyperClient<HttpConnector, Full<Bytes>>;

fn http() -> Http {
    HyperClient::builder(TokioExecutor::new()).build_http()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// The `_meta` of a modern request asking for progress under token `p`.
const MODERN_PROGRESS_META: &str = r#""_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn modern_call(tool: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}",{MODERN_PROGRESS_META}}}}}"#
    )
}

fn modern_headers(tool: &str) -> Vec<(&'static str, String)> {
    vec![
        ("mcp-protocol-version", "2026-07-28".into()),
        ("mcp-method", "tools/call".into()),
        ("mcp-name", tool.into()),
    ]
}

async fn post(
    http: &Http,
    addr: SocketAddr,
    headers: &[(&str, String)],
    body: String,
) -> http::Response<hyper::body::Incoming> {
    let mut request = http::Request::post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, value.as_str());
    }
    let request = request.body(Full::new(Bytes::from(body))).expect("request");
    within("POST", http.request(request)).await.expect("response")
}

async fn get(
    http: &Http,
    addr: SocketAddr,
    headers: &[(&str, &str)],
) -> http::Response<hyper::body::Incoming> {
    let mut request =
        http::Request::get(format!("http://{addr}/mcp")).header("accept", "text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(Bytes::new())).expect("request");
    within("GET", http.request(request)).await.expect("response")
}

/// Reads SSE frames until `needle` has arrived; returns everything read.
async fn read_until(body: &mut hyper::body::Incoming, needle: &str) -> String {
    let mut seen = String::new();
    while !seen.contains(needle) {
        let frame = within(needle, body.frame()).await.expect("stream open").expect("frame");
        if let Some(data) = frame.data_ref() {
            seen.push_str(&String::from_utf8_lossy(data));
        }
    }
    seen
}

/// A handshake-era session: its id.
async fn open_session(http: &Http, addr: SocketAddr) -> String {
    let init = post(http, addr, &[], INITIALIZE.into()).await;
    let id = init.headers()["mcp-session-id"].to_str().expect("ascii").to_owned();
    init.into_body().collect().await.expect("body");
    id
}

/// `add(i, 1)` answered `i + 1`.
async fn check_add(client: &Client, i: i64) {
    let result = within("add", client.call_tool("add", json!({"a": i, "b": 1})))
        .await
        .unwrap_or_else(|e| panic!("add({i}, 1) failed: {e}"));
    assert_eq!(result.structured_content, Some(json!({"result": i + 1})), "add({i}, 1)");
}

// ---------------------------------------------------------------------------------------
// A client that disconnects mid-stream
// ---------------------------------------------------------------------------------------

/// A tool that reports progress once (so its answer becomes an SSE stream) and then waits
/// forever, silently; its guard fires when the handler is dropped.
fn hanging_tool(guards: mpsc::UnboundedSender<()>) -> ToolDef {
    ToolDef::new("hang", move |cx: Context, _: NoArgs| {
        let guard = Fired(guards.clone());
        async move {
            let _guard = guard;
            cx.report_progress(1.0, None, Some("started")).await;
            std::future::pending::<()>().await;
            "never"
        }
    })
}

/// The bookshop with [`hanging_tool`], served; the receiver hears the handlers' guards.
async fn serve_hanging() -> (SocketAddr, Http, mpsc::UnboundedReceiver<()>) {
    let (tx, guards) = mpsc::unbounded_channel();
    let server = bookshop().tool(hanging_tool(tx)).expect("registers");
    (start(server, HttpOptions::default()).await, http(), guards)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_client_that_disconnects_mid_stream_cancels_its_handler() {
    let (addr, http, mut guards) = serve_hanging().await;
    const CALLS: usize = 20;
    let mut bodies = Vec::new();
    for _ in 0..CALLS {
        let response = post(&http, addr, &modern_headers("hang"), modern_call("hang")).await;
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let mut body = response.into_body();
        read_until(&mut body, "\"started\"").await;
        bodies.push(body);
    }
    assert!(guards.try_recv().is_err(), "no handler ends while its client is connected");
    drop(bodies); // 2026-07-28: closing the stream is the cancellation
    fired(&mut guards, CALLS, "every handler is dropped once its client is gone").await;

    let client = Client::builder().era(EraMode::Modern);
    let client = client.connect(HttpTransport::new(&format!("http://{addr}/mcp")).expect("url"));
    check_add(&within("connect", client).await.expect("connects"), 41).await;
}

/// A new handshake-era session calling `hang` as request 2: the session's id, and the POST's
/// stream once the handler has started.
async fn hanging_call(http: &Http, addr: SocketAddr) -> (String, hyper::body::Incoming) {
    let session = open_session(http, addr).await;
    let headers = [("mcp-session-id", session.clone())];
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hang","_meta":{"progressToken":"p"}}}"#;
    let mut body = post(http, addr, &headers, call.into()).await.into_body();
    read_until(&mut body, "\"started\"").await;
    (session, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_disconnect_cancels_nothing_but_delete_releases_the_handler() {
    let (addr, http, mut guards) = serve_hanging().await;
    let (session, body) = hanging_call(&http, addr).await;
    let headers = [("mcp-session-id", session.clone())];
    drop(body);
    // Spec 2025-11-25: a disconnect is not a cancellation. The session still answers, and the
    // handler is still there: a ping on the same session goes through the same engine.
    let ping = post(&http, addr, &headers, r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#.into());
    let ping = ping.await.into_body().collect().await.expect("body").to_bytes();
    assert_eq!(&ping[..], br#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
    assert!(guards.try_recv().is_err(), "the handler outlives the disconnect");

    let delete = http::Request::delete(format!("http://{addr}/mcp"))
        .header("mcp-session-id", session.as_str())
        .body(Full::new(Bytes::new()))
        .expect("request");
    assert_eq!(http.request(delete).await.expect("response").status(), 200);
    fired(&mut guards, 1, "DELETE ends the session and drops its running handler").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_cancellation_posted_later_stops_the_handler_its_post_handed_over() {
    let (addr, http, mut guards) = serve_hanging().await;
    let (session, body) = hanging_call(&http, addr).await;
    let headers = [("mcp-session-id", session.clone())];
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
    assert_eq!(post(&http, addr, &headers, cancel.into()).await.status(), 202);
    fired(&mut guards, 1, "the cancellation reaches the running handler").await;
    // A cancelled request gets no answer: its stream ends without one.
    let rest = within("the stream's end", body.collect()).await.expect("body").to_bytes();
    assert!(!String::from_utf8_lossy(&rest).contains(r#""id":2"#), "{rest:?}");
}

/// Opens a session on a fresh connection, initializes it and lists its tools, then lets the
/// connection close.
async fn use_session_once(addr: SocketAddr) {
    let http = HyperClient::builder(TokioExecutor::new()).pool_max_idle_per_host(0).build_http();
    let session = open_session(&http, addr).await;
    let headers = [("mcp-session-id", session)];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(&http, addr, &headers, initialized.into()).await.status(), 202);
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let listed = post(&http, addr, &headers, list.into()).await;
    assert_eq!(listed.headers()["content-type"], "application/json");
    listed.into_body().collect().await.expect("body");
}

#[tokio::test]
async fn an_idle_handshake_session_keeps_no_task_of_its_own() {
    let addr = start(bookshop(), HttpOptions::default()).await;
    // The first session starts what the endpoint starts once (the sweeper, the task that
    // hears the server's changes for every session).
    use_session_once(addr).await;
    let tasks = || tokio::runtime::Handle::current().metrics().num_alive_tasks();
    let alive_before = tasks();
    for _ in 0..20 {
        use_session_once(addr).await;
    }
    // The connections' tasks end once their sockets close; a session's would stay.
    within("the connections' tasks to end", async {
        while tasks() > alive_before {
            tokio::task::yield_now().await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sessions_hear_from_the_shared_forwarder_what_each_wants() {
    let server = bookshop();
    let addr = start(server.clone(), HttpOptions::default()).await;
    let http = http();
    let (subscriber, other) = (open_session(&http, addr).await, open_session(&http, addr).await);
    let subscribe = r#"{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"books://Dune"}}"#;
    let headers = [("mcp-session-id", subscriber.clone())];
    let subscribed = post(&http, addr, &headers, subscribe.into()).await;
    let subscribed = subscribed.into_body().collect().await.expect("body").to_bytes();
    assert_eq!(&subscribed[..], br#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
    let mut streams = Vec::new();
    for session in [&subscriber, &other] {
        let stream = get(&http, addr, &[("mcp-session-id", session.as_str())]).await;
        assert_eq!(stream.status(), 200);
        streams.push(stream.into_body());
    }
    server.notify_resource_updated("books://Dune");
    server.notify_tools_changed();
    let mut heard = Vec::new();
    for mut body in streams {
        heard.push(read_until(&mut body, "tools/list_changed").await);
    }
    let updated = r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"books://Dune"}}"#;
    let at = |needle: &str| heard[0].find(needle).unwrap_or_else(|| panic!("{}", heard[0]));
    assert!(at(updated) < at("tools/list_changed"), "{}", heard[0]);
    assert!(!heard[1].contains("resources/updated"), "{}", heard[1]);
}

// ---------------------------------------------------------------------------------------
// Slow consumers and peers that never read
// ---------------------------------------------------------------------------------------

/// More progress than any buffer between the handler and the socket can hold.
const FLOOD: u64 = 1_000_000;

/// Reports progress `FLOOD` times, counting in `sent`.
fn flood_tool(sent: Arc<AtomicU64>, guards: mpsc::UnboundedSender<()>) -> ToolDef {
    ToolDef::new("flood", move |cx: Context, _: NoArgs| {
        let (sent, guard) = (sent.clone(), Fired(guards.clone()));
        async move {
            let _guard = guard;
            for i in 1..=FLOOD {
                cx.report_progress(i as f64, None, None).await;
                sent.store(i, Ordering::SeqCst);
            }
            "flooded"
        }
    })
}

/// Writes a modern `tools/call flood` as raw HTTP/1.1 on a socket with a small receive
/// buffer, and returns the socket unread.
async fn never_reading_peer(addr: SocketAddr) -> tokio::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("rcvbuf");
    let mut stream = within("connect", socket.connect(addr)).await.expect("connect");
    let body = modern_call("flood");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: flood\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(format!("{head}{body}").as_bytes()).await.expect("write");
    stream
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_never_reads_is_held_back_and_others_are_served() {
    let sent = Arc::new(AtomicU64::new(0));
    let (tx, mut guards) = mpsc::unbounded_channel();
    let server = bookshop().tool(flood_tool(sent.clone(), tx)).expect("registers");
    let addr = start(server, HttpOptions::default()).await;
    let peer = never_reading_peer(addr).await;
    let url = format!("http://{addr}/mcp");
    let other =
        Client::builder().era(EraMode::Modern).connect(HttpTransport::new(&url).expect("url"));
    let other = within("connect", other).await.expect("connects");

    // Serve others in rounds until the flood has stood still for three whole rounds: with
    // backpressure it stops once the socket and the channels are full; without, it runs on
    // to FLOOD (and the assertion below fails).
    let (mut last, mut still, mut round) = (u64::MAX, 0, 0);
    while still < 3 && round < 2_000 {
        for i in 0..10 {
            check_add(&other, round * 10 + i).await;
        }
        let now = sent.load(Ordering::SeqCst);
        (still, last, round) =
            if now == last && now > 0 { (still + 1, now, round + 1) } else { (0, now, round + 1) };
    }
    assert_eq!(still, 3, "the flood never stood still ({last} progress notifications sent)");
    assert!(last < FLOOD, "the handler ran to the end: nothing held it back");
    eprintln!("a never-reading peer held the handler at {last} progress notifications");

    drop(peer);
    fired(&mut guards, 1, "the peer's handler is dropped when its socket closes").await;
    check_add(&other, -1).await;
}

/// Reads raw bytes until `needle` has arrived.
async fn read_raw_until(stream: &mut tokio::net::TcpStream, needle: &str) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 512];
    while !String::from_utf8_lossy(&seen).contains(needle) {
        let n = within(needle, stream.read(&mut buf)).await.expect("read");
        assert!(n > 0, "closed before {needle}");
        seen.extend_from_slice(&buf[..n]);
    }
}

/// Removes HTTP/1.1 chunked framing.
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = raw.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&raw[..end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok());
        let Some(size) = size.filter(|s| *s > 0 && raw.len() >= end + 2 + *s) else { break };
        out.extend_from_slice(&raw[end + 2..end + 2 + size]);
        raw = raw.get(end + 4 + size..).unwrap_or_default();
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_gets_every_progress_notification_in_order() {
    const STEPS: u64 = 5_000;
    let steps = ToolDef::new("steps", |cx: Context, _: NoArgs| async move {
        for i in 1..=STEPS {
            cx.report_progress(i as f64, Some(STEPS as f64), None).await;
        }
        "all steps"
    });
    let addr = start(bookshop().tool(steps).expect("registers"), HttpOptions::default()).await;
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("rcvbuf");
    let mut stream = socket.connect(addr).await.expect("connect");
    let body = modern_call("steps");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: steps\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(format!("{head}{body}").as_bytes()).await.expect("write");
    // The slow part: 256 bytes at a time, yielding between reads, until the server closes.
    let mut raw = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        let n = within("read", stream.read(&mut buf)).await.expect("read");
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
        tokio::task::yield_now().await;
    }
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
    let text = String::from_utf8(dechunk(&raw[split..])).expect("utf-8");
    let progress: Vec<u64> = text
        .match_indices("\"progress\":")
        .filter_map(|(at, key)| {
            let rest = &text[at + key.len()..];
            rest[..rest.find(',')?].parse().ok()
        })
        .collect();
    assert_eq!(progress, (1..=STEPS).collect::<Vec<_>>(), "every step once, in order");
    let result = text.find(r#""text":"all steps""#).expect("the result");
    assert!(result > text.rfind("\"progress\":").expect("progress"), "the result comes last");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn change_notifications_to_a_session_that_never_reads_never_block_the_server() {
    let server = bookshop();
    let addr = start(server.clone(), HttpOptions::default()).await;
    // A session whose GET stream is opened and then never read.
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("rcvbuf");
    let mut stuck = socket.connect(addr).await.expect("connect");
    let http = http();
    let session = open_session(&http, addr).await;
    let get = format!(
        "GET /mcp HTTP/1.1\r\nhost: {addr}\r\naccept: text/event-stream\r\nmcp-session-id: {session}\r\n\r\n"
    );
    stuck.write_all(get.as_bytes()).await.expect("write");
    read_raw_until(&mut stuck, "id: 0.0-0").await; // the stream is open; from here on, unread
    // Publishing never waits for a connection (the bus drops what a laggard cannot take).
    for _ in 0..100_000 {
        server.notify_tools_changed();
    }
    let url = format!("http://{addr}/mcp");
    for era in [EraMode::Handshake, EraMode::Modern] {
        let client = Client::builder().era(era).connect(HttpTransport::new(&url).expect("url"));
        let client = within("connect", client).await.expect("connects");
        for i in 0..20 {
            check_add(&client, i).await;
        }
    }
    drop(stuck);
}

/// Opens the GET stream of `session` on a socket with a small receive buffer, reads up to its
/// priming event, and returns the socket: from then on nobody reads it.
async fn unread_get_stream(addr: SocketAddr, session: &str) -> tokio::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("rcvbuf");
    let mut stuck = socket.connect(addr).await.expect("connect");
    let get = format!(
        "GET /mcp HTTP/1.1\r\nhost: {addr}\r\naccept: text/event-stream\r\nmcp-session-id: {session}\r\n\r\n"
    );
    stuck.write_all(get.as_bytes()).await.expect("write");
    read_raw_until(&mut stuck, "id: 0.0-0").await;
    stuck
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_get_stream_does_not_hold_up_its_own_sessions_answers() {
    let server = bookshop();
    let addr = start(server.clone(), HttpOptions::default()).await;
    let http = http();
    let session = open_session(&http, addr).await;
    let stuck = unread_get_stream(addr, &session).await;
    // Far more than the socket, hyper and the stream's channel can hold, published slowly
    // enough that the session forwards them all to its GET stream.
    for _ in 0..200 {
        for _ in 0..1_000 {
            server.notify_tools_changed();
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // The same session's next call is answered at once, not after the write timeout that
    // would end the unread stream (30 s; `within` gives up at 20 s).
    let headers = [("mcp-session-id", session.clone())];
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#;
    let answer = within("the call on the same session", post(&http, addr, &headers, call.into()));
    let body = answer.await.into_body().collect().await.expect("body").to_bytes();
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains(r#""structuredContent":{"result":3}"#), "{text}");
    drop(stuck);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_client_that_vanishes_has_its_handler_cancelled_within_the_idle_timeout() {
    let (tx, mut guards) = mpsc::unbounded_channel();
    let server = bookshop().tool(hanging_tool(tx)).expect("registers");
    let options = HttpOptions::default().session_idle_timeout(Duration::from_millis(300));
    let addr = start(server, options).await;
    let http = http();
    let session = open_session(&http, addr).await;
    let headers = [("mcp-session-id", session.clone())];
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hang","_meta":{"progressToken":"p"}}}"#;
    let mut body = post(&http, addr, &headers, call.into()).await.into_body();
    read_until(&mut body, "\"started\"").await;
    let vanished = std::time::Instant::now();
    drop((body, http)); // no DELETE, no further request: the client is simply gone
    fired(&mut guards, 1, "the idle session is ended and its handler dropped").await;
    // Within the timeout plus one sweep period (a quarter of it), with room for a busy machine.
    let waited = vanished.elapsed();
    assert!(waited < Duration::from_secs(5), "the handler ran on for {waited:?}");
    let fresh = self::http();
    let ping = post(&fresh, addr, &headers, r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#.into());
    assert_eq!(ping.await.status(), 404, "the swept session is gone");
}

// ---------------------------------------------------------------------------------------
// A panicking handler under load
// ---------------------------------------------------------------------------------------

/// Half the calls panic, the others must all be answered right: `n` concurrent calls.
async fn mixed_load(client: Arc<Client>, n: i64) {
    let calls = (0..n).map(|i| {
        let client = client.clone();
        tokio::spawn(async move {
            if i % 2 == 0 {
                let result =
                    within("boom", client.call_tool("boom", json!({}))).await.expect("a result");
                assert_eq!(result.is_error, Some(true));
                let text = serde_json::to_string(&result.content).expect("json");
                assert!(text.contains("Error executing tool boom"), "{text}");
                assert!(!text.contains("secret"), "a panic's message never leaks: {text}");
            } else {
                check_add(&client, i).await;
            }
        })
    });
    for call in calls.collect::<Vec<_>>() {
        call.await.expect("the call task succeeded");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_handlers_under_load_fail_only_their_own_calls() {
    let server = bookshop();
    let addr = start(server.clone(), HttpOptions::default()).await;
    let url = format!("http://{addr}/mcp");
    let mut clients = vec![Client::connect(server.in_memory()).await.expect("in memory")];
    for era in [EraMode::Handshake, EraMode::Modern] {
        let client = Client::builder().era(era).connect(HttpTransport::new(&url).expect("url"));
        clients.push(within("connect", client).await.expect("connects"));
    }
    let loads = clients.into_iter().map(|client| tokio::spawn(mixed_load(Arc::new(client), 200)));
    for load in loads.collect::<Vec<_>>() {
        load.await.expect("every call answered right");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panics_do_not_use_up_the_in_flight_limit() {
    const LIMIT: usize = 4;
    let barrier = Arc::new(tokio::sync::Barrier::new(LIMIT));
    let together = ToolDef::new("together", move |_: NoArgs| {
        let barrier = barrier.clone();
        async move {
            barrier.wait().await;
            "met"
        }
    });
    let server = bookshop().tool(together).expect("registers").max_in_flight(LIMIT);
    let client = Arc::new(Client::connect(server.in_memory()).await.expect("in memory"));
    for _ in 0..50 {
        mixed_load(client.clone(), LIMIT as i64).await;
    }
    // LIMIT handlers that only finish together: each must still get a place.
    let calls: Vec<_> = (0..LIMIT)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.call_tool("together", json!({})).await })
        })
        .collect();
    for call in calls {
        let result = within("together", call).await.expect("task").expect("not refused as busy");
        assert!(serde_json::to_string(&result.content).expect("json").contains("met"));
    }
}

// ---------------------------------------------------------------------------------------
// Resumption and restarts
// ---------------------------------------------------------------------------------------

/// A tool that reports `before` progress steps, waits for `gate`, reports `after` more, and
/// answers: the test disconnects while it waits.
fn gated_tool(before: u64, after: u64, gate: Arc<tokio::sync::Notify>) -> ToolDef {
    ToolDef::new("gated", move |cx: Context, _: NoArgs| {
        let gate = gate.clone();
        async move {
            for i in 1..=before {
                cx.report_progress(i as f64, None, None).await;
            }
            gate.notified().await;
            for i in before + 1..=before + after {
                cx.report_progress(i as f64, None, None).await;
            }
            "done"
        }
    })
}

/// `(event id, progress)` of each progress event in `text`, and whether the result came.
fn progress_events(text: &str) -> (Vec<(String, u64)>, bool) {
    let mut events = Vec::new();
    for event in text.split("\n\n") {
        let id = event.lines().find_map(|l| l.strip_prefix("id: ")).unwrap_or_default();
        if let Some(at) = event.find("\"progress\":") {
            let rest = &event[at + 11..];
            let value = rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())]
                .parse()
                .expect("a number");
            events.push((id.to_owned(), value));
        }
    }
    (events, text.contains("\"text\":\"done\""))
}

/// Starts the gated call on a session, reads `read` progress events, and drops the stream;
/// returns the id of event `read`.
async fn call_then_drop(http: &Http, addr: SocketAddr, session: &str, read: u64) -> String {
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gated","_meta":{"progressToken":"p"}}}"#;
    let headers = [("mcp-session-id", session.to_owned())];
    let mut body = post(http, addr, &headers, call.into()).await.into_body();
    let seen = read_until(&mut body, &format!("\"progress\":{read}}}")).await;
    let (events, _) = progress_events(&seen);
    events.into_iter().find(|(_, value)| *value == read).expect("the event read").0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_resumes_without_loss_inside_the_window_and_visibly_outside_it() {
    // The call reports progress 1..=23 on one stream (sequence numbers 1..=23, the answer 24);
    // the client reads up to 2, drops, and resumes once the answer is stored.
    for (per_stream, expected) in [(1024, (3..=23).collect::<Vec<u64>>()), (5, (20..=23).collect())]
    {
        let gate = Arc::new(tokio::sync::Notify::new());
        let server = bookshop().tool(gated_tool(3, 20, gate.clone())).expect("registers");
        let (store, mut tap) = Tap::new(MemoryEventStore::new(per_stream, 100));
        let addr = start(server, HttpOptions::default().event_store(Arc::new(store))).await;
        let http = http();
        let session = open_session(&http, addr).await;
        let last = call_then_drop(&http, addr, &session, 2).await;
        let (stream, seq) = last.split_once('-').expect("stream-seq");
        assert_eq!(seq, "2");
        gate.notify_one();
        answer_stored(&mut tap, &session, stream.parse().expect("a stream id")).await;

        let headers = [("mcp-session-id", session.as_str()), ("last-event-id", last.as_str())];
        let resumed = get(&http, addr, &headers).await;
        if per_stream == 5 && resumed.status() == 404 {
            // A store may refuse a resumption from an event it no longer holds: the client
            // is told, never handed a stream with a silent hole.
            continue;
        }
        assert_eq!(resumed.status(), 200);
        let resumed = resumed.into_body().collect().await.expect("body").to_bytes();
        let text = String::from_utf8(resumed.to_vec()).expect("utf-8");
        let (events, answered) = progress_events(&text);
        let values: Vec<u64> = events.iter().map(|(_, v)| *v).collect();
        assert!(answered, "the answer is replayed: {text}");
        assert_eq!(values, expected, "window {per_stream}: {text}");
        // Outside the window the jump from 2 to the first replayed sequence number shows
        // the client exactly what it lost.
        assert_eq!(events[0].0, format!("{stream}-{}", expected[0]));
    }
}

/// An HTTP server in its own runtime on its own thread, so a restart ends every task of the
/// old one (connections, sessions, handlers) as a process exit would.
struct Instance {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Instance {
    fn start(server: McpServer, options: HttpOptions, addr: &str) -> (SocketAddr, Instance) {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let addr = addr.to_owned();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let endpoint = server.http_endpoint_with(options);
                let (bound, serve) = endpoint.bind(&addr).await.expect("bind");
                ready_tx.send(bound).expect("ready");
                tokio::select! {
                    _ = serve => {}
                    _ = stopped => {}
                }
            });
            runtime.shutdown_timeout(Duration::from_secs(5));
        });
        let bound = ready_rx.recv_timeout(HANG).expect("the server started");
        (bound, Instance { stop: Some(stop), thread: Some(thread) })
    }

    /// Ends the instance and every task it ran.
    fn kill(mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            thread.join().expect("server thread");
        }
    }
}

/// An in-memory store that reports every event it keeps as `(session, stream, id, is a
/// response)`, and can be shared by two server instances as a database would be.
#[derive(Clone)]
struct Tap {
    store: MemoryEventStore,
    appended: mpsc::UnboundedSender<(String, StreamId, String, bool)>,
}

type Tapped = mpsc::UnboundedReceiver<(String, StreamId, String, bool)>;

impl Tap {
    fn new(store: MemoryEventStore) -> (Tap, Tapped) {
        let (appended, rx) = mpsc::unbounded_channel();
        (Tap { store, appended }, rx)
    }
}

impl EventStore for Tap {
    fn append(&self, session: &str, stream: StreamId, message: &Message) -> Appended {
        let Appended::Ready(Ok(id)) = self.store.append(session, stream, message) else {
            unreachable!("the in-memory store stores at once")
        };
        let answer = matches!(message, Message::Response(_));
        let _ = self.appended.send((session.to_owned(), stream, id.clone(), answer));
        Appended::Ready(Ok(id))
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

/// Waits until the store kept the answer on `stream` of `session`.
async fn answer_stored(tap: &mut Tapped, session: &str, stream: StreamId) {
    loop {
        let (s, n, _, answer) = within("the answer is stored", tap.recv()).await.expect("open");
        if answer && s == session && n == stream {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_sessions_are_gone_but_clients_of_both_eras_carry_on() {
    let (store, _tap) = Tap::new(MemoryEventStore::default());
    let gate = Arc::new(tokio::sync::Notify::new());
    let server = || bookshop().tool(gated_tool(3, 1, gate.clone())).expect("registers");
    let options = || HttpOptions::default().event_store(Arc::new(store.clone()));
    let (addr, first) = Instance::start(server(), options(), "127.0.0.1:0");
    let url = format!("http://{addr}/mcp");
    let mut clients = Vec::new();
    for era in [EraMode::Handshake, EraMode::Modern] {
        let client = Client::builder().era(era).connect(HttpTransport::new(&url).expect("url"));
        clients.push(within("connect", client).await.expect("connects"));
    }
    let http = http();
    let session = open_session(&http, addr).await;
    let last = call_then_drop(&http, addr, &session, 3).await;

    first.kill();
    let (_, second) = Instance::start(server(), options(), &addr.to_string());

    // What holds: the events outlived the process in the shared store...
    let (stream, seq) = last.split_once('-').expect("stream-seq");
    let stream = stream.parse().expect("a stream id");
    let kept = store.store.events_after(&session, stream, 0).expect("kept");
    assert!(kept.len() as u64 >= seq.parse::<u64>().expect("n"), "{kept:?}");
    // ...but the session did not: its engine and routes lived in the old process, so the new
    // one answers 404 and the client must initialize again (spec 2025-11-25). The stored
    // events cannot be replayed; the call that was running is lost with its handler.
    let headers = [("mcp-session-id", session.as_str()), ("last-event-id", last.as_str())];
    assert_eq!(get(&http, addr, &headers).await.status(), 404);
    // Our client does that by itself (handshake: a new session; modern: nothing to renew).
    for (i, client) in clients.iter().enumerate() {
        check_add(client, i as i64).await;
    }
    second.kill();
}

/// A store that keeps nothing: every append and every resumption fails, as a network store
/// that is down would.
struct Broken;

impl EventStore for Broken {
    fn append(&self, _: &str, _: StreamId, _: &Message) -> Appended {
        Appended::Ready(Err(StoreError::unavailable("down")))
    }

    fn follow(&self, _: &str, _: StreamId, _: &str) -> StoreFuture<'static, Option<EventFeed>> {
        Box::pin(std::future::ready(Err(StoreError::unavailable("down"))))
    }

    fn end_session(&self, _: &str) -> StoreFuture<'static, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_the_store_cannot_keep_go_out_without_ids_unless_durable_events_end_the_stream() {
    for durable in [false, true] {
        let gate = Arc::new(tokio::sync::Notify::new());
        gate.notify_one(); // the call runs straight through: progress 1..=3, then "done"
        let server = bookshop().tool(gated_tool(3, 0, gate)).expect("registers");
        let options = HttpOptions::default().event_store(Arc::new(Broken)).durable_events(durable);
        let addr = start(server, options).await;
        let http = http();
        let session = open_session(&http, addr).await;
        let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gated","_meta":{"progressToken":"p"}}}"#;
        let headers = [("mcp-session-id", session.clone())];
        let answer = post(&http, addr, &headers, call.into()).await;
        let body = within("the answer", answer.into_body().collect()).await.expect("body");
        let text = String::from_utf8_lossy(&body.to_bytes()).into_owned();
        if durable {
            // The stream fails at its first event: nothing reaches the client without an id.
            assert!(!text.contains("\"progress\":") && !text.contains("done"), "{text}");
        } else {
            // Every event arrives; none carries an id, so none can be resumed from.
            assert_eq!(text.matches("event: message").count(), 4, "{text}");
            assert!(text.contains("done"), "{text}");
            let ids = text.lines().filter(|line| line.starts_with("id: ")).count();
            assert_eq!(ids, 1, "only the priming event has an id: {text}");
        }
        // A resumption the store cannot answer is 503 with Retry-After, never 404.
        let resume = [("mcp-session-id", session.as_str()), ("last-event-id", "1.2-3")];
        let refused = get(&http, addr, &resume).await;
        assert_eq!(refused.status(), 503);
        assert_eq!(refused.headers()["retry-after"], "1");
    }
}
