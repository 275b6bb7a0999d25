//! The endpoint served over TLS on 127.0.0.1 (`HttpOptions::tls`), driven by a raw hyper
//! client on rustls that trusts the test CA: HTTP/1.1 and HTTP/2 as ALPN chose them, both eras,
//! SSE; peers that send garbage, stall the handshake or open too many streams; PEM errors.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use modelcontext::server::http::{HttpOptions, ServerTls};
use modelcontext::{Context, McpServer, ToolDef};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use crate::support::{MODERN_META, bookshop};
use crate::test_ca::TestCa;

const H1: &[&str] = &["http/1.1"];
const H2: &[&str] = &["h2", "http/1.1"];

/// Every test's bound on a wait that should end at once.
const PROMPTLY: Duration = Duration::from_secs(10);

/// A TLS endpoint on a free port, and the CA its certificate chains to.
struct Server {
    addr: SocketAddr,
    ca: TestCa,
}

async fn start(server: McpServer, options: HttpOptions) -> Server {
    let ca = TestCa::new();
    let leaf = ca.leaf(&["localhost", "127.0.0.1"]);
    let tls = ServerTls::from_pem(leaf.chain_pem.as_bytes(), leaf.key_pem.as_bytes())
        .expect("a valid chain and key");
    let endpoint = server.http_endpoint_with(options.tls(tls));
    let (addr, serve) = endpoint.bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    Server { addr, ca }
}

impl Server {
    /// A TLS connection offering `alpn`, trusting only the test CA.
    async fn tls(&self, alpn: &[&str]) -> TlsStream<TcpStream> {
        let mut roots = rustls::RootCertStore::empty();
        let root = CertificateDer::from_pem_slice(self.ca.root_pem().as_bytes()).expect("root");
        roots.add(root).expect("a usable root");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
        let tcp = TcpStream::connect(self.addr).await.expect("connect");
        let name = ServerName::try_from("localhost").expect("a name");
        TlsConnector::from(Arc::new(config)).connect(name, tcp).await.expect("TLS handshake")
    }

    /// An HTTP connection over TLS in the protocol ALPN picks from `alpn`.
    async fn connect(&self, alpn: &[&str]) -> Link {
        let tls = self.tls(alpn).await;
        let protocol =
            tls.get_ref().1.alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned());
        let io = TokioIo::new(tls);
        let (sender, connection) = if protocol.as_deref() == Some("h2") {
            let (sender, conn) = http2::handshake(TokioExecutor::new(), io).await.expect("h2");
            (Sender::H2(sender), tokio::spawn(async move { conn.await.map_err(|e| e.to_string()) }))
        } else {
            let (sender, conn) = http1::handshake(io).await.expect("http/1.1");
            (Sender::H1(sender), tokio::spawn(async move { conn.await.map_err(|e| e.to_string()) }))
        };
        Link { sender, protocol, authority: format!("localhost:{}", self.addr.port()), connection }
    }
}

enum Sender {
    H1(http1::SendRequest<Full<Bytes>>),
    H2(http2::SendRequest<Full<Bytes>>),
}

/// One client connection.
struct Link {
    sender: Sender,
    /// What ALPN agreed on.
    protocol: Option<String>,
    authority: String,
    /// Ends when the server closes the connection.
    connection: JoinHandle<Result<(), String>>,
}

/// What came back, body read to the end.
struct Answer {
    status: StatusCode,
    headers: http::HeaderMap,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

impl Link {
    /// Sends a request to `/mcp`; the answer's body is left to the caller (an SSE stream).
    async fn open(
        &mut self,
        method: Method,
        headers: &[(&str, &str)],
        body: &str,
    ) -> http::Response<Incoming> {
        let mut request = http::Request::builder().method(method);
        // HTTP/2 names the host in `:authority` (from the URI), HTTP/1.1 in `Host`.
        request = match self.sender {
            Sender::H2(_) => request.uri(format!("https://{}/mcp", self.authority)),
            Sender::H1(_) => request.uri("/mcp").header("host", self.authority.as_str()),
        };
        request = request.header("accept", "application/json, text/event-stream");
        if !body.is_empty() {
            request = request.header("content-type", "application/json");
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(Full::new(Bytes::from(body.to_owned()))).expect("request");
        let sent = match &mut self.sender {
            Sender::H1(sender) => {
                sender.ready().await.expect("connection ready");
                sender.send_request(request).await
            }
            Sender::H2(sender) => {
                sender.ready().await.expect("connection ready");
                sender.send_request(request).await
            }
        };
        sent.expect("a response")
    }

    async fn send(&mut self, method: Method, headers: &[(&str, &str)], body: &str) -> Answer {
        let response = self.open(method, headers, body).await;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.into_body().collect().await.expect("body").to_bytes();
        Answer { status, headers, body: String::from_utf8_lossy(&body).into_owned() }
    }

    /// A 2026-07-28 `tools/call` with the usual `_meta`.
    async fn call_modern(&mut self, name: &str, arguments: &str) -> Answer {
        self.call_modern_with(name, arguments, MODERN_META).await
    }

    /// A 2026-07-28 `tools/call` with `meta` (`"_meta":{..}`).
    async fn call_modern_with(&mut self, name: &str, arguments: &str, meta: &str) -> Answer {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}","arguments":{arguments},{meta}}}}}"#
        );
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", name),
        ];
        self.send(Method::POST, &headers, &body).await
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

const DUNE_MODERN: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"Frank Herbert"}]}}"#;

const DUNE_HANDSHAKE: &str =
    r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Frank Herbert"}]}}"#;

/// Both eras over one connection in the protocol `alpn` picks, with a handshake-era GET stream
/// open while the session's requests are answered.
async fn serves_both_eras(alpn: &[&str], want: &str) {
    let server = start(bookshop(), HttpOptions::default()).await;
    let mut link = server.connect(alpn).await;
    assert_eq!(link.protocol.as_deref(), Some(want));

    let modern = link.call_modern("get_author", r#"{"title":"Dune"}"#).await;
    assert_eq!((modern.status, modern.body.as_str()), (StatusCode::OK, DUNE_MODERN));

    let init = link.send(Method::POST, &[], INITIALIZE).await;
    assert_eq!(init.status, StatusCode::OK, "{}", init.body);
    let session = init.header("mcp-session-id").expect("a session id").to_owned();
    let in_session = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        link.send(Method::POST, &in_session, initialized).await.status,
        StatusCode::ACCEPTED
    );

    // HTTP/1.1 carries one exchange at a time, so its GET stream gets a connection of its own.
    let mut get_link = if want == "h2" { None } else { Some(server.connect(alpn).await) };
    let stream = get_link.as_mut().unwrap_or(&mut link).open(Method::GET, &in_session, "").await;
    assert_eq!(stream.status(), StatusCode::OK);
    assert_eq!(stream.headers()["content-type"], "text/event-stream");

    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#;
    let answer = link.send(Method::POST, &in_session, call).await;
    assert_eq!((answer.status, answer.body.as_str()), (StatusCode::OK, DUNE_HANDSHAKE));
    drop(stream);
    let deleted = link.send(Method::DELETE, &in_session, "").await;
    assert_eq!(deleted.status, StatusCode::OK);
}

#[tokio::test]
async fn http1_over_tls_serves_both_eras() {
    serves_both_eras(H1, "http/1.1").await;
}

#[tokio::test]
async fn http2_over_tls_serves_both_eras_and_a_get_stream_beside_requests() {
    serves_both_eras(H2, "h2").await;
}

/// A tool that reports progress before its result, which turns the answer into SSE.
fn progress_server() -> McpServer {
    let slow = ToolDef::new("slow", |cx: Context, _: modelcontext::server::NoArgs| async move {
        cx.report_progress(1.0, Some(2.0), Some("half")).await;
        "done"
    });
    McpServer::new("progress").tool(slow).expect("registers")
}

#[tokio::test]
async fn progress_arrives_as_sse_over_http2_in_both_eras() {
    let server = start(progress_server(), HttpOptions::default()).await;
    let mut link = server.connect(H2).await;
    let meta = r#""_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let answer = link.call_modern_with("slow", "{}", meta).await;
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    let events: Vec<&str> = answer.body.split("\n\n").filter(|e| !e.is_empty()).collect();
    assert_eq!(
        events,
        [
            r#"event: message
data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":2,"message":"half"}}"#,
            r#"event: message
data: {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"progress","version":"0.1.0"}},"resultType":"complete","content":[{"type":"text","text":"done"}]}}"#,
        ]
    );

    let init = link.send(Method::POST, &[], INITIALIZE).await;
    let session = init.header("mcp-session-id").expect("a session id").to_owned();
    let in_session = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"q"}}}"#;
    let answer = link.send(Method::POST, &in_session, call).await;
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    let data: Vec<&str> = answer
        .body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|d| !d.is_empty())
        .collect();
    assert_eq!(
        data,
        [
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"q","progress":1,"total":2,"message":"half"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}"#,
        ]
    );
}

/// Asserts that the server still serves a well-behaved client.
async fn assert_serving(server: &Server) {
    let mut link = server.connect(H2).await;
    let answer = link.call_modern("get_author", r#"{"title":"Dune"}"#).await;
    assert_eq!(answer.body, DUNE_MODERN);
}

/// Reads until the server closes the connection.
async fn until_closed(tcp: &mut TcpStream) {
    let mut sink = Vec::new();
    let read = tokio::time::timeout(PROMPTLY, tcp.read_to_end(&mut sink)).await;
    assert!(read.is_ok(), "the server kept the connection open");
}

#[tokio::test]
async fn garbage_instead_of_a_client_hello_is_dropped_and_others_are_served() {
    let server = start(bookshop(), HttpOptions::default()).await;
    for garbage in [
        &b"GET /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n"[..],
        &[0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5],
        &[0xff; 64],
    ] {
        let mut tcp = TcpStream::connect(server.addr).await.expect("connect");
        tcp.write_all(garbage).await.expect("write");
        until_closed(&mut tcp).await;
    }
    assert_serving(&server).await;
}

#[tokio::test]
async fn a_handshake_that_never_finishes_is_dropped_after_the_timeout() {
    let limit = Duration::from_millis(300);
    let server = start(bookshop(), HttpOptions::default().tls_handshake_timeout(limit)).await;
    // One connection says nothing; the other starts a ClientHello record and stalls in it.
    let connected = Instant::now();
    let mut silent = TcpStream::connect(server.addr).await.expect("connect");
    let mut stalled = TcpStream::connect(server.addr).await.expect("connect");
    stalled.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01]).await.expect("write");
    assert_serving(&server).await; // while both wait
    for tcp in [&mut silent, &mut stalled] {
        until_closed(tcp).await;
        let waited = connected.elapsed();
        assert!(waited >= limit, "closed before the limit: {waited:?}");
    }
    assert_serving(&server).await;
}

/// HTTP/2 frames written by hand: a well-behaved client never exceeds the server's stream
/// limit, so the test needs a client that does.
mod frames {
    pub const HEADERS: u8 = 0x1;
    pub const RST_STREAM: u8 = 0x3;
    pub const SETTINGS: u8 = 0x4;
    pub const PING: u8 = 0x6;
    pub const GOAWAY: u8 = 0x7;
    pub const WINDOW_UPDATE: u8 = 0x8;
    pub const END_HEADERS: u8 = 0x4;
    pub const ACK: u8 = 0x1;
    pub const REFUSED_STREAM: u32 = 0x7;
    pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

    pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = u32::try_from(payload.len()).expect("a small frame").to_be_bytes();
        let mut out = vec![len[1], len[2], len[3], kind, flags];
        out.extend_from_slice(&stream.to_be_bytes());
        out.extend_from_slice(payload);
        out
    }

    /// A POST to /mcp whose body never comes: the stream stays open. HPACK literals without
    /// indexing or Huffman coding (RFC 7541 §6.2.2).
    pub fn open_post(stream: u32, authority: &str) -> Vec<u8> {
        let mut block = Vec::new();
        for (name, value) in [
            (":method", "POST"),
            (":scheme", "https"),
            (":path", "/mcp"),
            (":authority", authority),
            ("content-type", "application/json"),
        ] {
            block.push(0);
            for text in [name, value] {
                block.push(u8::try_from(text.len()).expect("short"));
                block.extend_from_slice(text.as_bytes());
            }
        }
        frame(HEADERS, END_HEADERS, stream, &block)
    }
}

/// Reads frames until one satisfies `wanted`: (type, flags, stream, payload).
async fn read_frame_until(
    tls: &mut TlsStream<TcpStream>,
    wanted: impl Fn(u8, u8, u32, &[u8]) -> bool,
) -> (u8, u32, Vec<u8>) {
    tokio::time::timeout(PROMPTLY, async {
        loop {
            let mut head = [0u8; 9];
            tls.read_exact(&mut head).await.expect("a frame header");
            let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
            let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
            let mut payload = vec![0; len];
            tls.read_exact(&mut payload).await.expect("a frame payload");
            assert_ne!(head[3], frames::GOAWAY, "the server closed the connection: {payload:?}");
            if wanted(head[3], head[4], stream, &payload) {
                return (head[3], stream, payload);
            }
        }
    })
    .await
    .expect("the frame came")
}

/// Opens an HTTP/2 connection by hand and returns the server's first SETTINGS payload.
async fn raw_http2(server: &Server) -> (TlsStream<TcpStream>, Vec<u8>) {
    let mut tls = server.tls(H2).await;
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let mut hello = frames::PREFACE.to_vec();
    hello.extend(frames::frame(frames::SETTINGS, 0, 0, &[]));
    tls.write_all(&hello).await.expect("preface");
    let (_, _, settings) = read_frame_until(&mut tls, |kind, flags, _, _| {
        kind == frames::SETTINGS && flags & frames::ACK == 0
    })
    .await;
    tls.write_all(&frames::frame(frames::SETTINGS, frames::ACK, 0, &[])).await.expect("ack");
    (tls, settings)
}

/// The value of setting `id` in a SETTINGS payload.
fn setting(settings: &[u8], id: u16) -> Option<u32> {
    settings
        .chunks(6)
        .find(|s| s[..2] == id.to_be_bytes())
        .map(|s| u32::from_be_bytes([s[2], s[3], s[4], s[5]]))
}

#[tokio::test]
async fn http2_settings_advertise_the_options() {
    let options = HttpOptions::default()
        .http2_max_concurrent_streams(7)
        .http2_initial_stream_window_size(100_000)
        .http2_initial_connection_window_size(300_000)
        .http2_max_frame_size(32_768)
        .max_header_bytes(20_000);
    let server = start(bookshop(), options).await;
    let (mut tls, settings) = raw_http2(&server).await;
    // RFC 9113 §6.5.2: 3 MAX_CONCURRENT_STREAMS, 4 INITIAL_WINDOW_SIZE, 5 MAX_FRAME_SIZE,
    // 6 MAX_HEADER_LIST_SIZE.
    let advertised: Vec<Option<u32>> = [3, 4, 5, 6].map(|id| setting(&settings, id)).to_vec();
    assert_eq!(advertised, [Some(7), Some(100_000), Some(32_768), Some(20_000)]);
    // The connection window grows from the protocol's 65 535 by a WINDOW_UPDATE on stream 0.
    let (_, _, increment) = read_frame_until(&mut tls, |kind, _, stream, _| {
        kind == frames::WINDOW_UPDATE && stream == 0
    })
    .await;
    assert_eq!(increment, (300_000u32 - 65_535).to_be_bytes());
}

#[tokio::test]
async fn http2_streams_beyond_the_limit_are_refused_and_the_connection_serves_on() {
    let options = HttpOptions::default().http2_max_concurrent_streams(2);
    let server = start(bookshop(), options).await;
    let (mut tls, settings) = raw_http2(&server).await;
    assert_eq!(setting(&settings, 3), Some(2), "MAX_CONCURRENT_STREAMS");
    let authority = format!("localhost:{}", server.addr.port());

    for stream in [1, 3, 5] {
        tls.write_all(&frames::open_post(stream, &authority)).await.expect("headers");
    }
    let (_, stream, code) =
        read_frame_until(&mut tls, |kind, _, _, _| kind == frames::RST_STREAM).await;
    assert_eq!((stream, code), (5, frames::REFUSED_STREAM.to_be_bytes().to_vec()));

    // The connection itself is fine: it answers a PING.
    tls.write_all(&frames::frame(frames::PING, 0, 0, b"stillup?")).await.expect("ping");
    let (_, _, pong) = read_frame_until(&mut tls, |kind, flags, _, _| {
        kind == frames::PING && flags & frames::ACK != 0
    })
    .await;
    assert_eq!(pong, b"stillup?");
    assert_serving(&server).await;
}

#[tokio::test]
async fn http2_requests_with_too_many_header_fields_get_431_and_the_connection_serves_on() {
    let server = start(bookshop(), HttpOptions::default().max_headers(8)).await;
    let mut link = server.connect(H2).await;
    let many: Vec<(String, String)> =
        (0..8).map(|i| (format!("x-extra-{i}"), "1".to_owned())).collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    let refused = link.send(Method::POST, &many, INITIALIZE).await;
    assert_eq!(
        (refused.status, refused.body.as_str()),
        (StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, "")
    );
    let answer = link.call_modern("get_author", r#"{"title":"Dune"}"#).await;
    assert_eq!(answer.body, DUNE_MODERN);
}

#[tokio::test]
async fn an_idle_http2_connection_is_closed_after_the_header_read_timeout() {
    let idle = Duration::from_millis(300);
    let server = start(bookshop(), HttpOptions::default().header_read_timeout(idle)).await;
    let mut link = server.connect(H2).await;
    let started = Instant::now();
    assert_eq!(link.call_modern("get_author", r#"{"title":"Dune"}"#).await.body, DUNE_MODERN);
    let ended = tokio::time::timeout(PROMPTLY, link.connection).await.expect("closed in time");
    assert_eq!(ended.expect("the connection task"), Ok(()), "a clean GOAWAY");
    assert!(started.elapsed() >= idle);
}

#[tokio::test]
async fn an_open_get_stream_keeps_its_http2_connection_past_the_idle_timeout() {
    let idle = Duration::from_millis(200);
    let options =
        HttpOptions::default().header_read_timeout(idle).keep_alive(Duration::from_millis(50));
    let server = start(bookshop(), options).await;
    let mut link = server.connect(H2).await;
    let init = link.send(Method::POST, &[], INITIALIZE).await;
    let session = init.header("mcp-session-id").expect("a session id").to_owned();
    let in_session = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let mut stream = link.open(Method::GET, &in_session, "").await.into_body();
    // Keep-alive comments for three idle timeouts: the clock, without a sleep.
    let started = Instant::now();
    while started.elapsed() < 3 * idle {
        let frame = tokio::time::timeout(PROMPTLY, stream.frame()).await.expect("a comment");
        assert!(frame.expect("the stream is open").is_ok());
    }
    let answer = link.call_modern("get_author", r#"{"title":"Dune"}"#).await;
    assert_eq!(answer.body, DUNE_MODERN);
    assert!(!link.connection.is_finished());
}

#[tokio::test]
async fn pem_errors_say_what_is_wrong_with_which_input() {
    let ca = TestCa::new();
    let leaf = ca.leaf(&["localhost"]);
    let other = ca.leaf(&["localhost"]);
    let error = |result: Result<ServerTls, modelcontext::Error>| {
        format!("{:#}", result.expect_err("refused"))
    };
    assert_eq!(
        error(ServerTls::from_pem(b"not pem", leaf.key_pem.as_bytes())),
        "I/O error: TLS setup: the PEM certificate chain: no `BEGIN CERTIFICATE` block found"
    );
    assert_eq!(
        error(ServerTls::from_pem(leaf.chain_pem.as_bytes(), leaf.chain_pem.as_bytes())),
        "I/O error: TLS setup: the PEM private key: no `BEGIN PRIVATE KEY`, `BEGIN RSA PRIVATE KEY` or `BEGIN EC PRIVATE KEY` block found"
    );
    let truncated = &leaf.chain_pem[..leaf.chain_pem.len() / 2];
    assert!(
        error(ServerTls::from_pem(truncated.as_bytes(), leaf.key_pem.as_bytes()))
            .starts_with("I/O error: TLS setup: the PEM certificate chain: not valid PEM: "),
    );
    assert!(
        error(ServerTls::from_pem(leaf.chain_pem.as_bytes(), other.key_pem.as_bytes()))
            .starts_with("I/O error: TLS setup: the certificate and key do not fit: "),
    );
    let dir = std::env::temp_dir().join(format!("modelcontext-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, &leaf.chain_pem).expect("write");
    let missing = error(ServerTls::from_pem_files(&cert, &key));
    assert_eq!(
        missing,
        format!(
            "I/O error: cannot read the TLS private key {}: No such file or directory (os error 2)",
            key.display()
        )
    );
    std::fs::write(&key, &leaf.key_pem).expect("write");
    assert!(ServerTls::from_pem_files(&cert, &key).is_ok());
    std::fs::remove_dir_all(&dir).expect("clean up");

    let chain = CertificateDer::pem_slice_iter(leaf.chain_pem.as_bytes())
        .map(|der| der.expect("a certificate").to_vec())
        .collect();
    let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes())
        .expect("a key")
        .secret_der()
        .to_vec();
    assert!(ServerTls::from_der(chain, key).is_ok(), "PKCS#8 DER");
    assert_eq!(
        error(ServerTls::from_der(vec![], vec![1, 2, 3])),
        "I/O error: TLS setup: the DER private key: unknown or invalid key format"
    );
}
