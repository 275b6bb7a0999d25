//! Every limit of `modelcontext::docs::limits` at limit - 1, limit and limit + 1, with what
//! the peer sees on the wire beyond it, and the server still serving afterwards. HTTP limits
//! go through raw sockets on 127.0.0.1 so the bytes are exact; timeouts run on paused time.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use modelcontext::server::NoArgs;
use modelcontext::server::http::{Appended, EventStore, HttpOptions, MemoryEventStore, StreamId};
use modelcontext::types::{Message, Notification};
use modelcontext::{Context, McpError, McpServer, ResourceDef, ResourceError, ToolDef};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::input::Confirm;
use crate::support::{MODERN_META, Wire, bookshop, modern_meta};

const MS: Duration = Duration::from_millis(1);

async fn serve(server: McpServer, options: HttpOptions) -> SocketAddr {
    let (addr, serve) = server.http_endpoint_with(options).bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    addr
}

/// Lets every task run and every socket event reach its task, without moving paused time.
async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
}

/// A complete 2026-07-28 `tools/list` POST, with `extra` header lines.
fn tools_list(addr: SocketAddr, extra: &[String]) -> String {
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{MODERN_META}}}}}"#);
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/list\r\ncontent-length: {}\r\n",
        body.len()
    );
    for line in extra {
        head.push_str(line);
        head.push_str("\r\n");
    }
    head + "\r\n" + &body
}

/// The same request with one `x-pad` header making its head exactly `len` bytes.
fn tools_list_with_head_of(addr: SocketAddr, len: usize) -> String {
    let bare = tools_list(addr, &[]);
    let bare_head = bare.find("\r\n\r\n").expect("a head") + 4;
    let pad = len - bare_head - "x-pad: \r\n".len();
    let request = tools_list(addr, &[format!("x-pad: {}", "a".repeat(pad))]);
    assert_eq!(request.find("\r\n\r\n").expect("a head") + 4, len);
    request
}

/// One HTTP/1.1 answer: the status line and, with a `content-length`, the body. An SSE
/// answer (chunked) yields its status line and an empty body. `("", "")` when the server
/// closed the connection without answering.
async fn read_answer(tcp: &mut TcpStream) -> (String, String) {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let mut chunk = [0u8; 4096];
        match tcp.read(&mut chunk).await {
            Ok(0) | Err(_) => return (String::new(), String::new()),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let status = head.lines().next().unwrap_or("").to_owned();
    let length = header(&head, "content-length").and_then(|v| v.parse::<usize>().ok());
    let Some(length) = length else { return (status, String::new()) };
    while buf.len() < head_end + length {
        let mut chunk = [0u8; 4096];
        match tcp.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    (status, String::from_utf8_lossy(&buf[head_end..]).into_owned())
}

fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim().to_owned())
    })
}

/// Sends `request` on a new connection and reads the answer.
async fn exchange(addr: SocketAddr, request: &str) -> (String, String) {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.write_all(request.as_bytes()).await.expect("write");
    read_answer(&mut tcp).await
}

#[track_caller]
fn assert_tools_listed((status, body): &(String, String)) {
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    assert!(body.starts_with(r#"{"jsonrpc":"2.0","id":1,"result":{"#), "{body}");
}

#[tokio::test]
async fn the_request_head_is_limited_in_bytes() {
    let limit = 1024;
    let addr = serve(bookshop(), HttpOptions::default().max_header_bytes(limit)).await;
    assert_tools_listed(&exchange(addr, &tools_list_with_head_of(addr, limit - 1)).await);
    assert_tools_listed(&exchange(addr, &tools_list_with_head_of(addr, limit)).await);
    let refused = exchange(addr, &tools_list_with_head_of(addr, limit + 1)).await;
    assert_eq!(refused, ("HTTP/1.1 431 Request Header Fields Too Large".to_owned(), String::new()));
    assert_tools_listed(&exchange(addr, &tools_list(addr, &[])).await);
}

#[tokio::test]
async fn the_request_head_is_limited_in_fields() {
    let limit = 10;
    let addr = serve(bookshop(), HttpOptions::default().max_headers(limit)).await;
    // `tools_list` sends 6 fields of its own.
    let with_fields = |n: usize| {
        let extra: Vec<String> = (6..n).map(|i| format!("x-field-{i}: {i}")).collect();
        tools_list(addr, &extra)
    };
    assert_tools_listed(&exchange(addr, &with_fields(limit - 1)).await);
    assert_tools_listed(&exchange(addr, &with_fields(limit)).await);
    let refused = exchange(addr, &with_fields(limit + 1)).await;
    assert_eq!(refused, ("HTTP/1.1 431 Request Header Fields Too Large".to_owned(), String::new()));
    assert_tools_listed(&exchange(addr, &with_fields(limit)).await);
}

#[tokio::test(start_paused = true)]
async fn the_head_must_arrive_within_the_header_read_timeout() {
    let timeout = Duration::from_secs(10);
    let options = HttpOptions::default().header_read_timeout(timeout);
    let addr = serve(bookshop(), options).await;
    let request = tools_list(addr, &[]);
    let (start, rest) = request.split_at(30);
    for (wait, served) in [(timeout - MS, true), (timeout + MS, false)] {
        let mut tcp = TcpStream::connect(addr).await.expect("connect");
        tcp.write_all(start.as_bytes()).await.expect("write");
        settle().await; // the server has the connection and its clock runs
        tokio::time::sleep(wait).await;
        if served {
            tcp.write_all(rest.as_bytes()).await.expect("write");
            assert_tools_listed(&read_answer(&mut tcp).await);
        } else {
            // Closed without an answer (a slowloris gets nothing back).
            assert_eq!(read_answer(&mut tcp).await, (String::new(), String::new()));
        }
    }
    assert_tools_listed(&exchange(addr, &request).await);
}

#[tokio::test(start_paused = true)]
async fn the_body_must_arrive_within_the_body_read_timeout() {
    let timeout = Duration::from_secs(10);
    let options = HttpOptions::default().body_read_timeout(timeout);
    let addr = serve(bookshop(), options).await;
    let request = tools_list(addr, &[]);
    let (start, rest) = request.split_at(request.len() - 10);
    for (wait, served) in [(timeout - MS, true), (timeout + MS, false)] {
        let mut tcp = TcpStream::connect(addr).await.expect("connect");
        tcp.write_all(start.as_bytes()).await.expect("write");
        settle().await; // the head is in, the body clock runs
        tokio::time::sleep(wait).await;
        if served {
            tcp.write_all(rest.as_bytes()).await.expect("write");
            assert_tools_listed(&read_answer(&mut tcp).await);
        } else {
            let expected = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Request body not received within 10s"}}"#;
            let answer = read_answer(&mut tcp).await;
            assert_eq!(answer, ("HTTP/1.1 408 Request Timeout".to_owned(), expected.to_owned()));
        }
    }
    assert_tools_listed(&exchange(addr, &request).await);
}

#[tokio::test]
async fn a_chunked_body_is_counted_on_the_bytes_read() {
    let limit = 1024;
    let addr = serve(bookshop(), HttpOptions::default().max_body_bytes(limit)).await;
    let chunked = |len: usize| {
        let head = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{MODERN_META},"pad":""#
        );
        let tail = r#""}}"#;
        let body = format!("{head}{}{tail}", "x".repeat(len - head.len() - tail.len()));
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/list\r\ntransfer-encoding: chunked\r\n\r\n"
        );
        // Chunks of 100 bytes: no single one is over the limit, only their sum.
        for piece in body.as_bytes().chunks(100) {
            request.push_str(&format!(
                "{:x}\r\n{}\r\n",
                piece.len(),
                String::from_utf8_lossy(piece)
            ));
        }
        request + "0\r\n\r\n"
    };
    assert_tools_listed(&exchange(addr, &chunked(limit - 1)).await);
    assert_tools_listed(&exchange(addr, &chunked(limit)).await);
    let expected =
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Request body exceeds 1024 bytes"}}"#;
    let refused = exchange(addr, &chunked(limit + 1)).await;
    assert_eq!(refused, ("HTTP/1.1 413 Payload Too Large".to_owned(), expected.to_owned()));
    assert_tools_listed(&exchange(addr, &chunked(limit)).await);
}

/// Sets `dropped` when the future holding it is dropped (the handler was cancelled).
struct OnDrop(Arc<AtomicBool>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn a_client_that_stops_reading_loses_its_stream_after_the_write_timeout() {
    let timeout = Duration::from_secs(10);
    let (sent, dropped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
    let (sent_by_tool, dropped_by_tool) = (sent.clone(), dropped.clone());
    // 64 progress notifications of 256 KiB (far more than the socket buffers hold), then the
    // handler waits for ever: only the stream's end can drop it.
    let flood = ToolDef::new("flood", move |cx: Context, _: NoArgs| {
        let (sent, guard) = (sent_by_tool.clone(), OnDrop(dropped_by_tool.clone()));
        async move {
            let _guard = guard;
            let big = "x".repeat(256 * 1024);
            for step in 1..=64u32 {
                cx.report_progress(f64::from(step), None, Some(&big)).await;
                sent.fetch_add(1, Ordering::SeqCst);
            }
            std::future::pending::<&'static str>().await
        }
    });
    let server = McpServer::new("flood").tool(flood).expect("registers");
    let addr = serve(server, HttpOptions::default().write_timeout(timeout)).await;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"flood",{}}}}}"#,
        modern_meta("{}", r#""progressToken":1"#)
    );
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: flood\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    // A small receive window, so the server's writes block soon.
    let socket = TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("rcvbuf");
    let mut tcp = socket.connect(addr).await.expect("connect");
    tcp.write_all(request.as_bytes()).await.expect("write");
    // Until the handler has sent everything and the server's writes are blocked.
    for _ in 0..1000 {
        if sent.load(Ordering::SeqCst) == 64 {
            break;
        }
        settle().await;
    }
    assert_eq!(sent.load(Ordering::SeqCst), 64);
    for _ in 0..20 {
        settle().await;
    }
    tokio::time::sleep(timeout - MS).await;
    settle().await;
    assert!(!dropped.load(Ordering::SeqCst), "still connected just before the timeout");
    tokio::time::sleep(2 * MS).await;
    settle().await;
    assert!(dropped.load(Ordering::SeqCst), "dropped after it: the handler was cancelled");
    drop(tcp);
    assert_tools_listed(&exchange(addr, &tools_list(addr, &[])).await);
}

/// A handshake-era session on `addr`; returns its id.
async fn open_session(addr: SocketAddr) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.write_all(request.as_bytes()).await.expect("write");
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        head.push(tcp.read_u8().await.expect("a head"));
    }
    let session = header(&String::from_utf8_lossy(&head), "mcp-session-id").expect("a session id");
    let body = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-session-id: {session}\r\nmcp-protocol-version: 2025-11-25\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    assert_eq!(exchange(addr, &request).await.0, "HTTP/1.1 202 Accepted");
    session
}

/// A GET stream of `session` (resuming `last_event_id` if given), held open: its status line,
/// its body when refused, and the connection.
async fn get_stream(
    addr: SocketAddr,
    session: &str,
    last_event_id: Option<&str>,
) -> (String, String, TcpStream) {
    let resume = last_event_id.map(|id| format!("last-event-id: {id}\r\n")).unwrap_or_default();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nhost: {addr}\r\naccept: text/event-stream\r\nmcp-session-id: {session}\r\nmcp-protocol-version: 2025-11-25\r\n{resume}\r\n"
    );
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.write_all(request.as_bytes()).await.expect("write");
    let (status, body) = read_answer(&mut tcp).await;
    (status, body, tcp)
}

async fn session_ping(addr: SocketAddr, session: &str) -> (String, String) {
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-session-id: {session}\r\nmcp-protocol-version: 2025-11-25\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    exchange(addr, &request).await
}

const OK: &str = "HTTP/1.1 200 OK";
const PONG: &str = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;

/// A POST of a handler that reports progress, then runs for ever, on `session`: its SSE
/// stream stays resumable. The connection, and the id of the stream's first event.
async fn post_hanging_call(addr: SocketAddr, session: &str, id: u32) -> (TcpStream, String) {
    let progress = format!(r#","_meta":{{"progressToken":{id}}}"#);
    let mut tcp = post_tool_call(addr, session, id, "hang", &progress).await;
    let mut seen = String::new();
    let event_id = loop {
        let first_id = seen.split("\nid: ").nth(1).and_then(|rest| rest.split_once('\n'));
        if let Some((event_id, _)) = first_id.filter(|_| seen.contains("\r\n\r\n")) {
            break event_id.trim().to_owned();
        }
        let mut chunk = [0u8; 4096];
        let n = tcp.read(&mut chunk).await.expect("the SSE answer");
        assert!(n > 0, "the SSE answer ended early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&chunk[..n]));
    };
    assert!(seen.starts_with(OK), "an SSE answer: {seen}");
    (tcp, event_id)
}

/// A POST calling `tool` on `session`, with `extra` members spliced into its params; returns
/// the connection, its answer unread.
async fn post_tool_call(
    addr: SocketAddr,
    session: &str,
    id: u32,
    tool: &str,
    extra: &str,
) -> TcpStream {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}"{extra}}}}}"#
    );
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-session-id: {session}\r\nmcp-protocol-version: 2025-11-25\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.write_all(request.as_bytes()).await.expect("write");
    tcp
}

#[tokio::test]
async fn sse_streams_are_limited_per_session() {
    let hang = ToolDef::new("hang", |cx: Context, _: NoArgs| async move {
        cx.report_progress(1.0, None, Some("started")).await;
        std::future::pending::<&'static str>().await
    });
    let server = McpServer::new("hang").tool(hang).expect("registers");
    let options = HttpOptions::default().max_sse_streams_per_session(2);
    let addr = serve(server, options).await;
    let session = open_session(addr).await;
    let (first, _, _standalone) = get_stream(addr, &session, None).await; // limit - 1
    assert_eq!(first, OK);
    let (_call_1, first_event) = post_hanging_call(addr, &session, 1).await;
    let (second, _, _resumed) = get_stream(addr, &session, Some(&first_event)).await; // limit
    assert_eq!(second, OK);
    let (_call_2, first_event) = post_hanging_call(addr, &session, 2).await;
    let (status, body, _) = get_stream(addr, &session, Some(&first_event)).await; // limit + 1
    assert_eq!(status, "HTTP/1.1 429 Too Many Requests");
    assert_eq!(
        body,
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Too many SSE streams for this session (limit 2)"}}"#
    );
    // The session serves on, and another session has its own allowance.
    assert_eq!(session_ping(addr, &session).await, (OK.to_owned(), PONG.to_owned()));
    let other = open_session(addr).await;
    assert_eq!(get_stream(addr, &other, None).await.0, OK);
}

#[tokio::test]
async fn sse_streams_are_limited_per_endpoint() {
    // Frequent keep-alives, so the server soon writes to (and notices) a closed stream.
    let keep_alive = Duration::from_millis(50);
    let options = HttpOptions::default().max_sse_streams(2).keep_alive(keep_alive);
    let addr = serve(bookshop(), options).await;
    let sessions = [open_session(addr).await, open_session(addr).await, open_session(addr).await];
    let (first, _, _one) = get_stream(addr, &sessions[0], None).await; // limit - 1
    assert_eq!(first, OK);
    let (second, _, two) = get_stream(addr, &sessions[1], None).await; // limit
    assert_eq!(second, OK);
    let (status, body, _) = get_stream(addr, &sessions[2], None).await; // limit + 1
    assert_eq!(status, "HTTP/1.1 503 Service Unavailable");
    assert_eq!(
        body,
        r#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"Too many SSE streams (limit 2); try again later"}}"#
    );
    assert_eq!(session_ping(addr, &sessions[2]).await, (OK.to_owned(), PONG.to_owned()));
    // A closed stream frees its slot once the server notices (its next write fails).
    drop(two);
    let mut attempts = 0;
    loop {
        let (status, _, _stream) = get_stream(addr, &sessions[2], None).await;
        if status == OK {
            break;
        }
        attempts += 1;
        assert!(attempts < 100, "the slot of a closed stream was never freed: {status}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn note(n: u64) -> Message {
    Message::Notification(Notification { method: format!("n/{n}"), params: None })
}

fn stream(number: u64) -> StreamId {
    StreamId { instance: 1, number }
}

fn kept(store: &MemoryEventStore, number: u64) -> Option<usize> {
    store.events_after("s", stream(number), 0).map(|events| events.len())
}

/// Stores `note(n)` on stream `number` of session `s`.
fn append(store: &MemoryEventStore, number: u64, n: u64) {
    assert!(matches!(store.append("s", stream(number), &note(n)), Appended::Ready(Ok(_))));
}

#[test]
fn the_event_store_is_bounded_per_stream_in_streams_and_in_events() {
    // Per stream: 3 events; the oldest goes first.
    let store = MemoryEventStore::new(3, 100);
    for n in 1..=2 {
        append(&store, 1, n);
    }
    assert_eq!(kept(&store, 1), Some(2));
    append(&store, 1, 3);
    assert_eq!(kept(&store, 1), Some(3));
    append(&store, 1, 4);
    assert_eq!(kept(&store, 1), Some(3));
    assert_eq!(
        store.events_after("s", stream(1), 0).expect("kept")[0].0,
        2,
        "the oldest event went"
    );
    // Streams: 2; the one used longest ago goes first.
    let store = MemoryEventStore::new(10, 2);
    append(&store, 1, 1);
    assert_eq!((kept(&store, 1), kept(&store, 2)), (Some(1), None));
    append(&store, 2, 2);
    assert_eq!((kept(&store, 1), kept(&store, 2)), (Some(1), Some(1)));
    append(&store, 3, 3);
    assert_eq!((kept(&store, 1), kept(&store, 2), kept(&store, 3)), (None, Some(1), Some(1)));
    // Events overall: 4, across streams.
    let store = MemoryEventStore::new(10, 10).max_events(4);
    append(&store, 1, 1);
    append(&store, 1, 2);
    append(&store, 2, 3);
    assert_eq!((kept(&store, 1), kept(&store, 2)), (Some(2), Some(1)));
    append(&store, 2, 4);
    assert_eq!((kept(&store, 1), kept(&store, 2)), (Some(2), Some(2)));
    append(&store, 2, 5);
    assert_eq!((kept(&store, 1), kept(&store, 2)), (None, Some(3)));
}

/// How many times a [`Counted`] was deserialized: a tool's arguments are, when its handler is
/// built. Only `a_call_refused_as_busy_never_reaches_its_handler` reads it.
static ARGUMENTS_BUILT: AtomicUsize = AtomicUsize::new(0);

/// Tool arguments that count their own deserialization.
#[derive(modelcontext::schemars::JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
struct Counted {}

impl<'de> serde::Deserialize<'de> for Counted {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        ARGUMENTS_BUILT.fetch_add(1, Ordering::SeqCst);
        serde::de::IgnoredAny::deserialize(deserializer)?;
        Ok(Counted {})
    }
}

/// A server allowing one handler at a time, with `hold` (reports progress when asked, then
/// runs until `release` is notified) and `count` (answers at once, from [`Counted`] args).
fn one_at_a_time(release: Arc<tokio::sync::Notify>) -> McpServer {
    let hold = ToolDef::new("hold", move |cx: Context, _: NoArgs| {
        let release = release.clone();
        async move {
            cx.report_progress(1.0, None, Some("holding")).await;
            release.notified().await;
            "released"
        }
    });
    let count = ToolDef::new("count", |_: Counted| async { "counted" });
    McpServer::new("one")
        .tool(hold)
        .expect("registers")
        .tool(count)
        .expect("registers")
        .max_in_flight(1)
}

fn busy_answer(id: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"Server busy: 1 requests already in flight; retry later"}}}}"#
    )
}

#[tokio::test]
async fn a_call_refused_as_busy_never_reaches_its_handler() {
    let built = || ARGUMENTS_BUILT.load(Ordering::SeqCst);
    let release = Arc::new(tokio::sync::Notify::new());
    let call = |id: u32, tool: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}",{MODERN_META}}}}}"#
        )
    };
    // The engine loop (stdio): the limit is taken, so `count` is refused before its
    // arguments are parsed, while a list, which runs no handler, still passes.
    let mut wire = Wire::start(one_at_a_time(release.clone()), "2026-07-28");
    wire.send(&call(1, "hold")).await;
    assert_eq!(wire.call(&call(2, "count")).await, busy_answer(2));
    assert_eq!(built(), 0, "the refused call's arguments were never built");
    wire.assert_alive().await;
    // Once `hold` has answered, `count` runs: the counter does see a handler being built.
    release.notify_one();
    assert!(wire.recv().await.contains("released"));
    assert!(wire.call(&call(3, "count")).await.contains("counted"));
    assert_eq!(built(), 1);

    // An HTTP session's POSTs, which dispatch in their own task: the same admission. `hold`
    // counts once the session's engine has taken it over, which its SSE answer does not
    // wait for: until then `count` may still run, and must then build its arguments once.
    let addr = serve(one_at_a_time(release), HttpOptions::default()).await;
    let session = open_session(addr).await;
    let mut holding =
        post_tool_call(addr, &session, 1, "hold", r#","_meta":{"progressToken":1}"#).await;
    assert_eq!(read_answer(&mut holding).await.0, OK, "an SSE answer");
    let mut counted = 0;
    for id in 2..100 {
        let mut tcp = post_tool_call(addr, &session, id, "count", "").await;
        let (status, body) = read_answer(&mut tcp).await;
        assert_eq!(status, OK, "{body}");
        if body == busy_answer(id) {
            break;
        }
        assert!(body.contains("counted"), "{body}");
        counted += 1;
        tokio::time::sleep(MS).await;
    }
    assert!(counted < 98, "the session never counted `hold` as in flight");
    assert_eq!(built(), 1 + counted, "the refused POST's arguments were never built");
    assert_eq!(session_ping(addr, &session).await, (OK.to_owned(), PONG.to_owned()));
}

#[derive(serde::Deserialize, modelcontext::schemars::JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
struct Title {
    title: String,
}

#[tokio::test]
async fn resource_uris_are_limited_in_length() {
    let echo = ResourceDef::new("echo://{title}", |Title { title }: Title| async move {
        Ok::<_, ResourceError>(title)
    });
    let server = McpServer::new("echo").resource(echo).expect("registers").max_uri_bytes(20);
    let mut wire = Wire::start(server, "2025-11-25");
    wire.initialize().await;
    let read = |id: u32, uri: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"{uri}"}}}}"#
        )
    };
    for (id, len) in [(1, 19), (2, 20)] {
        let uri = format!("echo://{}", "a".repeat(len - "echo://".len()));
        let answer = wire.call(&read(id, &uri)).await;
        assert_eq!(
            answer,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"contents":[{{"uri":"{uri}","mimeType":"text/plain","text":"{}"}}]}}}}"#,
                &uri["echo://".len()..]
            )
        );
    }
    let long = format!("echo://{}", "a".repeat(14));
    assert_eq!(
        wire.call(&read(3, &long)).await,
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"error":{{"code":-32602,"message":"Unknown resource: {long}","data":{{"uri":"{long}"}}}}}}"#
        )
    );
    wire.assert_alive().await;
}

#[derive(serde::Deserialize, modelcontext::schemars::JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
struct Times {
    n: u32,
}

/// Calls `ask` (a tool asking `n` questions one after another) and answers every round;
/// returns the last line and the rounds it took.
async fn ask(wire: &mut Wire, n: u32) -> (String, u32) {
    let meta = modern_meta(r#"{"elicitation":{"form":{}}}"#, "");
    let mut extra = String::new();
    let mut id = 0;
    loop {
        id += 1;
        let line = wire
            .call(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"ask","arguments":{{"n":{n}}}{extra},{meta}}}}}"#
            ))
            .await;
        let value: Value = serde_json::from_str(&line).expect("json");
        if value["result"]["resultType"] != "input_required" {
            return (line, id - 1);
        }
        let requests = value["result"]["inputRequests"].as_object().expect("requests");
        let key = requests.keys().next().expect("one question");
        let state = value["result"]["requestState"].as_str().expect("state");
        extra = format!(
            r#","inputResponses":{{"{key}":{{"action":"accept","content":{{"ok":true}}}}}},"requestState":"{state}""#
        );
    }
}

#[tokio::test]
async fn mrtr_rounds_are_limited_per_request() {
    let tool = ToolDef::new("ask", |cx: Context, Times { n }: Times| async move {
        for i in 0..n {
            cx.elicit::<Confirm>(format!("Question {i}?")).await?;
        }
        Ok::<_, McpError>(format!("asked {n}"))
    });
    let server = McpServer::new("asker").tool(tool).expect("registers").max_input_rounds(2);
    let mut wire = Wire::start(server, "2026-07-28");
    for n in [1, 2] {
        let (line, rounds) = ask(&mut wire, n).await;
        assert_eq!(rounds, n);
        assert!(line.contains(&format!(r#""text":"asked {n}""#)), "{line}");
    }
    let (line, rounds) = ask(&mut wire, 3).await;
    assert_eq!(rounds, 2);
    assert_eq!(
        line,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"'ask' asked for input more than 2 times"}}"#
    );
    wire.assert_alive().await;
}

#[tokio::test(start_paused = true)]
async fn the_client_request_timeout_is_on_by_default_and_configurable() {
    let wait = ToolDef::new("wait", |_: NoArgs| async move {
        tokio::time::sleep(Duration::from_secs(10)).await;
        "waited"
    });
    let server = McpServer::new("slow").tool(wait).expect("registers");
    for (timeout, answered) in
        [(Duration::from_secs(10) + MS, true), (Duration::from_secs(10) - MS, false)]
    {
        let client = modelcontext::Client::builder()
            .timeout(Some(timeout))
            .connect(server.in_memory())
            .await
            .expect("connect");
        let outcome = client.call_tool("wait", serde_json::json!({})).await;
        match answered {
            true => assert!(outcome.is_ok(), "{outcome:?}"),
            false => {
                let err = outcome.expect_err("timed out");
                assert_eq!(err.kind(), modelcontext::ErrorKind::Timeout, "{err}");
            }
        }
    }
    // The default is on (60 s): a call that never ends is given up.
    let never = ToolDef::new("never", std::future::pending::<&'static str>);
    let server = McpServer::new("never").tool(never).expect("registers");
    let client = modelcontext::Client::connect(server.in_memory()).await.expect("connect");
    let err = client.call_tool("never", serde_json::json!({})).await.expect_err("timed out");
    assert_eq!(err.kind(), modelcontext::ErrorKind::Timeout, "{err}");
}

/// A fake HTTP server answering each POST with what `answer` makes of the request's id.
async fn fake_server(answer: fn(u64) -> (&'static str, String)) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    let mut chunk = [0u8; 4096];
                    match tcp.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                    let text = String::from_utf8_lossy(&buf).into_owned();
                    let Some(end) = text.find("\r\n\r\n") else { continue };
                    let length = header(&text[..end], "content-length")
                        .and_then(|v| v.parse::<usize>().ok())
                        .unwrap_or(0);
                    if buf.len() < end + 4 + length {
                        continue;
                    }
                    let body: Value = serde_json::from_slice(&buf[end + 4..end + 4 + length])
                        .expect("a JSON body");
                    buf.drain(..end + 4 + length);
                    let (content_type, body) = answer(body["id"].as_u64().expect("an id"));
                    let response = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if tcp.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// A response to `id` of exactly `len` bytes.
fn response_of(id: u64, len: usize) -> String {
    let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"pad":""#);
    let tail = r#""}}"#;
    format!("{head}{}{tail}", "x".repeat(len - head.len() - tail.len()))
}

#[tokio::test]
async fn the_http_client_limits_answers_and_sse_events() {
    use modelcontext::Transport;
    const LIMIT: usize = 200;
    // Ids 1-3: JSON answers of LIMIT - 1, LIMIT, LIMIT + 1 bytes. Ids 4-6: one SSE event each
    // that long (its line, `data: ` and the message, with its line end).
    let addr = fake_server(|id| {
        let len = LIMIT - 1 + (id as usize - 1) % 3;
        if id <= 3 {
            ("application/json", response_of(id, len))
        } else {
            ("text/event-stream", format!("data: {}\n\n", response_of(id, len - "data: \n".len())))
        }
    })
    .await;
    let url = format!("http://{addr}/mcp");
    let transport = modelcontext::HttpTransport::new(&url).expect("url").max_message_bytes(LIMIT);
    let mut connection = transport.open();
    let mut answers = Vec::new();
    for id in 1..=6 {
        let text =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{{MODERN_META}}}}}"#);
        let request = Message::decode_str(&text).expect("a request");
        connection.sender.send(request).await.expect("transport running");
        let answer = tokio::time::timeout(Duration::from_secs(5), connection.receiver.recv()).await;
        match answer.expect("an answer within 5 s") {
            Some(Ok(message)) => answers.push(message.encode()),
            other => panic!("expected a message, got {other:?}"),
        }
    }
    for (i, id) in [1, 2, 4, 5].into_iter().enumerate() {
        let len = LIMIT - 1 + i % 2;
        let expected = if id <= 3 { response_of(id, len) } else { response_of(id, len - 7) };
        assert_eq!(answers[id as usize - 1], expected, "{id}: within the limit");
    }
    assert_eq!(
        answers[2],
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"the answer exceeds the limit of 200 bytes"}}"#
    );
    assert_eq!(
        answers[5],
        r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"no response to request 6 on its SSE stream: an SSE event exceeds the limit of 200 bytes"}}"#
    );
}

/// A `ping` whose params nest arrays and objects exactly `depth` deep, envelope included.
fn ping_nested(id: usize, depth: usize) -> String {
    let inner = depth - 3;
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"_meta":{{"k":{}0{}}}}}}}"#,
        "[".repeat(inner),
        "]".repeat(inner)
    )
}

#[tokio::test]
async fn stdio_messages_nest_at_most_max_json_depth() {
    let mut wire = Wire::start_with(bookshop(), "2025-11-25", |stdio| stdio.max_json_depth(4));
    wire.initialize().await;
    for depth in [3, 4] {
        let answer = wire.call(&ping_nested(depth, depth)).await;
        assert_eq!(answer, format!(r#"{{"jsonrpc":"2.0","id":{depth},"result":{{}}}}"#));
    }
    wire.send(&ping_nested(5, 5)).await;
    assert_eq!(
        wire.recv().await,
        r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: arrays and objects nested more than 4 deep"}}"#
    );
    wire.assert_alive().await;
}

#[tokio::test]
async fn http_bodies_nest_at_most_max_json_depth() {
    let addr = serve(bookshop().max_json_depth(4), HttpOptions::default()).await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"k":[[0]]}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let (status, answer) = exchange(addr, &request).await;
    assert_eq!(status, "HTTP/1.1 400 Bad Request");
    assert_eq!(
        answer,
        r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: arrays and objects nested more than 4 deep"}}"#
    );
    // The modern envelope is exactly 4 deep: at the limit, it passes.
    assert_tools_listed(&exchange(addr, &tools_list(addr, &[])).await);
}
