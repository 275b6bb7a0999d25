//! The client over TLS, with a CA made per test: our `Client` against our own TLS server, and
//! against our endpoint behind a TLS server made here (a tokio-rustls acceptor and hyper's auto
//! HTTP/1.1 + HTTP/2 server, which lets a test choose the ALPN offer and see what was picked);
//! certificate failures and their words; proxies through a CONNECT proxy made here.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Request;
use axum::response::Response;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use modelcontext::net::{HttpClient, Proxies};
use modelcontext::server::NoArgs;
use modelcontext::server::http::{AllowList, HttpOptions, ServerTls};
use modelcontext::transport::http::HttpTransport;
use modelcontext::types::Era;
use modelcontext::{CallOptions, Client, Context, EraMode, McpServer, ToolDef, Transport};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::test_ca::{Leaf, TestCa};

pub const BOTH: &[&[u8]] = &[b"h2", b"http/1.1"];
pub const HTTP1_ONLY: &[&[u8]] = &[b"http/1.1"];

/// A TLS server on loopback: what each connection's ALPN chose.
pub struct TlsServer {
    pub port: u16,
    alpn: Arc<Mutex<Vec<String>>>,
}

impl TlsServer {
    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.port)
    }

    fn protocols(&self) -> Vec<String> {
        self.alpn.lock().expect("lock").clone()
    }
}

/// Serves `app` over TLS with `leaf`, offering `alpn`, on `listener`.
pub fn serve_tls(
    listener: TcpListener,
    app: axum::Router,
    leaf: &Leaf,
    alpn: &[&[u8]],
) -> TlsServer {
    let acceptor = leaf.acceptor(alpn);
    let port = listener.local_addr().expect("addr").port();
    let alpn = Arc::new(Mutex::new(Vec::new()));
    let seen = alpn.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, app, seen) = (acceptor.clone(), app.clone(), seen.clone());
            tokio::spawn(async move {
                // A failed handshake is the client refusing our certificate: nothing to serve.
                let Ok(tls) = acceptor.accept(tcp).await else { return };
                let chosen = tls.get_ref().1.alpn_protocol().unwrap_or(b"none").to_vec();
                seen.lock().expect("lock").push(String::from_utf8_lossy(&chosen).into_owned());
                let service = TowerToHyperService::new(app);
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection_with_upgrades(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    TlsServer { port, alpn }
}

pub async fn loopback() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").await.expect("bind")
}

/// A server whose `count` tool reports two progress steps before its result.
fn counting_server() -> McpServer {
    let count = ToolDef::new("count", |cx: Context, _: NoArgs| async move {
        cx.report_progress(1.0, Some(2.0), Some("one")).await;
        cx.report_progress(2.0, Some(2.0), Some("two")).await;
        "counted"
    });
    crate::support::bookshop().tool(count).expect("count")
}

async fn serve_mcp(leaf: &Leaf, alpn: &[&[u8]]) -> TlsServer {
    serve_tls(loopback().await, counting_server().http_endpoint().router(), leaf, alpn)
}

fn trusting(url: &str, ca: &TestCa) -> HttpTransport {
    HttpTransport::new(url).expect("url").root_certificate(ca.root_pem()).expect("root PEM")
}

#[tokio::test]
async fn our_client_over_https_on_http1_and_http2_in_both_eras_with_sse_progress() {
    let ca = TestCa::new();
    let leaf = ca.leaf(&["localhost", "127.0.0.1"]);
    for (alpn, protocol) in [(BOTH, "h2"), (HTTP1_ONLY, "http/1.1")] {
        let server = serve_mcp(&leaf, alpn).await;
        for (mode, era) in [(EraMode::Modern, Era::Modern), (EraMode::Handshake, Era::Handshake)] {
            let transport = trusting(&server.url("/mcp"), &ca);
            let client = Client::builder().era(mode).connect(transport).await.expect("connects");
            assert_eq!(client.era(), era);
            let author = client.call_tool("get_author", json!({"title": "Dune"})).await;
            let author = serde_json::to_string(&author.expect("get_author")).expect("json");
            assert!(author.contains("Frank Herbert"), "{protocol} {mode:?}: {author}");
            let steps = Arc::new(Mutex::new(Vec::new()));
            let log = steps.clone();
            let options = CallOptions::new()
                .on_progress(move |p| log.lock().expect("lock").push(p.message.clone()));
            let counted = client.call_tool_with("count", json!({}), &options).await;
            assert!(!counted.expect("count").is_error(), "{protocol} {mode:?}");
            let steps = steps.lock().expect("lock").clone();
            assert_eq!(steps, [Some("one".to_owned()), Some("two".to_owned())], "{protocol}");
            client.close().await;
        }
        let protocols = server.protocols();
        assert!(!protocols.is_empty() && protocols.iter().all(|p| p == protocol), "{protocols:?}");
    }
}

/// Our client against our own TLS server (`HttpOptions::tls`): ALPN picks HTTP/2 for both.
#[tokio::test]
async fn our_client_against_our_tls_server_in_both_eras() {
    let ca = TestCa::new();
    let leaf = ca.leaf(&["localhost", "127.0.0.1"]);
    let tls = ServerTls::from_pem(leaf.chain_pem.as_bytes(), leaf.key_pem.as_bytes())
        .expect("a valid chain and key");
    let endpoint = counting_server().http_endpoint_with(HttpOptions::default().tls(tls));
    let (addr, serve) = endpoint.bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    let url = format!("https://localhost:{}/mcp", addr.port());
    for (mode, era) in [(EraMode::Modern, Era::Modern), (EraMode::Handshake, Era::Handshake)] {
        let client =
            Client::builder().era(mode).connect(trusting(&url, &ca)).await.expect("connects");
        assert_eq!(client.era(), era);
        let steps = Arc::new(Mutex::new(Vec::new()));
        let log = steps.clone();
        let options = CallOptions::new()
            .on_progress(move |p| log.lock().expect("lock").push(p.message.clone()));
        let counted = client.call_tool_with("count", json!({}), &options).await;
        assert!(!counted.expect("count").is_error(), "{mode:?}");
        assert_eq!(*steps.lock().expect("lock"), [Some("one".to_owned()), Some("two".to_owned())]);
        client.close().await;
    }
}

#[tokio::test]
async fn a_dropped_sse_stream_resumes_over_https() {
    let ca = TestCa::new();
    let leaf = ca.leaf(&["localhost"]);
    let gets = Arc::new(AtomicUsize::new(0));
    let counter = gets.clone();
    // The POST's stream primes an event id, asks for a 10 ms retry and ends; the GET that
    // resumes from that id gets the response.
    let handler = move |request: Request| {
        let counter = counter.clone();
        async move {
            let event = if request.method() == http::Method::GET {
                assert_eq!(request.headers()["last-event-id"], "ev-1");
                counter.fetch_add(1, Ordering::SeqCst);
                let result = json!({"jsonrpc": "2.0", "id": 5, "result": {"content": []}});
                format!("id: ev-2\ndata: {result}\n\n")
            } else {
                "id: ev-1\nretry: 10\ndata:\n\n".to_owned()
            };
            sse(event)
        }
    };
    let app = axum::Router::new().route("/mcp", axum::routing::any(handler));
    for alpn in [BOTH, HTTP1_ONLY] {
        let server = serve_tls(loopback().await, app.clone(), &leaf, alpn);
        let mut connection = trusting(&server.url("/mcp"), &ca).open();
        let text = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow"}}"#;
        let request = modelcontext::types::Message::decode_str(text).expect("message");
        connection.sender.send(request).await.expect("running");
        let answer = tokio::time::timeout(Duration::from_secs(5), connection.receiver.recv());
        let answer = answer.await.expect("an answer").expect("open").expect("a message");
        assert_eq!(answer.encode(), r#"{"jsonrpc":"2.0","id":5,"result":{"content":[]}}"#);
    }
    assert_eq!(gets.load(Ordering::SeqCst), 2);
}

fn sse(body: String) -> Response {
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(axum::body::Body::from(body))
        .expect("response")
}

/// Connects in the modern era (one request) and returns the error's words.
pub async fn failure(transport: HttpTransport) -> String {
    let connecting = Client::builder().era(EraMode::Modern).connect(transport);
    match tokio::time::timeout(Duration::from_secs(10), connecting).await.expect("in time") {
        Ok(_) => panic!("connected to a server it must not trust"),
        Err(err) => format!("{err:#}"),
    }
}

#[tokio::test]
async fn certificate_failures_say_what_failed_and_for_which_host() {
    let ca = TestCa::new();
    let untrusted = serve_mcp(&ca.leaf(&["localhost"]), BOTH).await;
    let plain = HttpTransport::new(&untrusted.url("/mcp")).expect("url");
    let err = failure(plain).await;
    assert!(err.contains("TLS handshake with localhost failed"), "{err}");
    assert!(err.contains("signed by an unknown issuer"), "{err}");

    let wrong_name = serve_mcp(&ca.leaf(&["elsewhere.test"]), BOTH).await;
    let err = failure(trusting(&wrong_name.url("/mcp"), &ca)).await;
    assert!(err.contains("TLS handshake with localhost failed"), "{err}");
    assert!(err.contains("not valid for this host name"), "{err}");

    let expired = serve_mcp(&ca.expired_leaf(&["localhost"]), BOTH).await;
    let err = failure(trusting(&expired.url("/mcp"), &ca)).await;
    assert!(err.contains("TLS handshake with localhost failed"), "{err}");
    assert!(err.contains("has expired"), "{err}");

    // The same server, once its CA is trusted, works.
    let client = Client::connect(trusting(&untrusted.url("/mcp"), &ca)).await.expect("trusted");
    client.close().await;
}

/// A server that never finishes the handshake is bounded by the connect timeout; one that
/// answers in plain text is a TLS failure, not a hang.
#[tokio::test]
async fn a_stalled_or_plaintext_handshake_fails_in_time() {
    let stalled = loopback().await;
    let stalled_port = stalled.local_addr().expect("addr").port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((tcp, _)) = stalled.accept().await {
            held.push(tcp);
        }
    });
    let url = format!("https://localhost:{stalled_port}/mcp");
    let transport =
        HttpTransport::new(&url).expect("url").connect_timeout(Some(Duration::from_millis(300)));
    let err = failure(transport).await;
    assert!(
        err.contains(&format!("no connection to localhost:{stalled_port} within 300ms")),
        "{err}"
    );

    let plaintext = loopback().await;
    let plaintext_port = plaintext.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = plaintext.accept().await {
            let _ = tcp.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n").await;
        }
    });
    let url = format!("https://localhost:{plaintext_port}/mcp");
    let err = failure(HttpTransport::new(&url).expect("url")).await;
    assert!(err.contains("TLS handshake with localhost failed"), "{err}");
}

#[test]
fn bad_root_certificates_are_refused_with_a_reason() {
    let transport = HttpTransport::new("https://localhost/mcp").expect("url");
    let err = transport.clone().root_certificate("not a certificate").expect_err("junk");
    let err = format!("{err:#}");
    assert!(err.contains("root certificate: neither PEM nor a DER certificate"), "{err}");
    let err = transport.root_certificate("-----BEGIN CERTIFICATE-----\n!!\n").expect_err("bad");
    assert!(format!("{err:#}").contains("root certificate: "), "{err:#}");
}

/// An HTTP CONNECT proxy: counts tunnels and records each target and `Proxy-Authorization`.
/// Every tunnel leads to `upstream`, whatever it was asked for: names like `mcp.test` need no
/// DNS, so a connection that did not go through the proxy fails.
struct ConnectProxy {
    url: String,
    tunnels: Arc<AtomicUsize>,
    asked: Arc<Mutex<Vec<Asked>>>,
}

/// One CONNECT: its target and its `Proxy-Authorization`.
type Asked = (String, Option<String>);

impl ConnectProxy {
    fn tunnels(&self) -> usize {
        self.tunnels.load(Ordering::SeqCst)
    }
}

async fn connect_proxy(upstream: std::net::SocketAddr) -> ConnectProxy {
    let listener = loopback().await;
    let url = format!("http://user:pa%20ss@{}", listener.local_addr().expect("addr"));
    let tunnels = Arc::new(AtomicUsize::new(0));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let (count, record) = (tunnels.clone(), asked.clone());
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let (count, record) = (count.clone(), record.clone());
            tokio::spawn(async move { tunnel(client, upstream, &count, &record).await });
        }
    });
    ConnectProxy { url, tunnels, asked }
}

async fn tunnel(
    mut client: TcpStream,
    upstream: std::net::SocketAddr,
    count: &AtomicUsize,
    record: &Mutex<Vec<Asked>>,
) {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let Ok(byte) = client.read_u8().await else { return };
        head.push(byte);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let target = head.split_whitespace().nth(1).unwrap_or("").to_owned();
    let credentials =
        head.lines().find_map(|line| line.strip_prefix("Proxy-Authorization: ")).map(str::to_owned);
    record.lock().expect("lock").push((target, credentials));
    count.fetch_add(1, Ordering::SeqCst);
    let Ok(mut upstream) = TcpStream::connect(upstream).await else { return };
    if client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await.is_err() {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

fn vars(pairs: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
    move |name| pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| value.clone())
}

/// Our MCP server over TLS for `mcp.test` (a name only the proxy knows) and `localhost`.
pub async fn proxied_server(ca: &TestCa) -> (std::net::SocketAddr, TlsServer) {
    let listener = loopback().await;
    let addr = listener.local_addr().expect("addr");
    let allow = AllowList::default().allow_host("mcp.test");
    let endpoint = counting_server().http_endpoint_with(HttpOptions::default().allow(allow));
    let leaf = ca.leaf(&["mcp.test", "localhost"]);
    (addr, serve_tls(listener, endpoint.router(), &leaf, BOTH))
}

#[tokio::test]
async fn https_proxy_from_the_environment_tunnels_with_credentials_and_no_proxy_bypasses_it() {
    let ca = TestCa::new();
    let (addr, server) = proxied_server(&ca).await;
    let proxy = connect_proxy(addr).await;
    let transport = |proxies: Proxies, url: &str| {
        // Bounded: a resolver that does not answer for `mcp.test` must not stall the test.
        let client = HttpClient::builder()
            .proxies(proxies)
            .connect_timeout(Some(Duration::from_secs(3)))
            .root_certificate(ca.root_pem())
            .expect("root")
            .build();
        HttpTransport::new(url).expect("url").http_client(client)
    };
    let env = |extra: Vec<(&'static str, String)>| {
        let mut pairs = vec![("HTTPS_PROXY", proxy.url.clone())];
        pairs.extend(extra);
        Proxies::from_vars(vars(pairs))
    };
    let client = Client::connect(transport(env(vec![]), "https://mcp.test/mcp"))
        .await
        .expect("through the proxy");
    client.call_tool("get_author", json!({"title": "Dune"})).await.expect("call");
    client.close().await;
    let tunnels = proxy.tunnels();
    assert!(tunnels >= 1, "no tunnel");
    // Basic base64("user:pa ss"): the URL's user info, percent-decoded.
    for (target, credentials) in proxy.asked.lock().expect("lock").iter() {
        assert_eq!(target, "mcp.test:443");
        assert_eq!(credentials.as_deref(), Some("Basic dXNlcjpwYSBzcw=="));
    }

    // NO_PROXY: mcp.test is reached directly, which fails (no such host), past the proxy.
    let bypassing = env(vec![("NO_PROXY", "example.com,.mcp.test".to_owned())]);
    let err = failure(transport(bypassing, "https://mcp.test/mcp")).await;
    assert!(err.contains("mcp.test:443") && !err.contains("proxy"), "{err}");
    // Loopback is never sent to a proxy named by the environment.
    let client =
        Client::connect(transport(env(vec![]), &server.url("/mcp"))).await.expect("direct");
    client.close().await;
    assert_eq!(proxy.tunnels(), tunnels, "went through the proxy");

    // An explicit proxy applies to every host: an http:// target is tunnelled too.
    let plain_listener = loopback().await;
    let plain_addr = plain_listener.local_addr().expect("addr");
    let endpoint = counting_server().http_endpoint();
    tokio::spawn(async move { endpoint.serve(plain_listener).await });
    let plain_proxy = connect_proxy(plain_addr).await;
    let plain = format!("http://{plain_addr}/mcp");
    let client = HttpClient::builder().proxy(&plain_proxy.url).expect("proxy URL").build();
    let transport = HttpTransport::new(&plain).expect("url").http_client(client);
    Client::connect(transport).await.expect("through the proxy").close().await;
    assert!(plain_proxy.tunnels() >= 1);
}

/// A SOCKS5 proxy of a few lines: user/password authentication (RFC 1929) as
/// `user`/`pa ss`, then one CONNECT by name, recorded, which leads to `upstream` whatever it
/// names.
async fn socks5_proxy(upstream: std::net::SocketAddr) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = loopback().await;
    let url = format!("socks5h://user:pa%20ss@{}", listener.local_addr().expect("addr"));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = asked.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let record = record.clone();
            tokio::spawn(async move { socks5_session(client, upstream, &record).await });
        }
    });
    (url, asked)
}

async fn socks5_session(
    mut client: TcpStream,
    upstream: std::net::SocketAddr,
    record: &Mutex<Vec<String>>,
) -> Option<()> {
    // Greeting: version 5 and the methods offered; 2 is user/password.
    let mut head = [0; 2];
    client.read_exact(&mut head).await.ok()?;
    let mut methods = vec![0; usize::from(head[1])];
    client.read_exact(&mut methods).await.ok()?;
    assert_eq!(head[0], 5);
    assert!(methods.contains(&2), "user/password offered: {methods:?}");
    client.write_all(&[5, 2]).await.ok()?;
    assert_eq!(client.read_u8().await.ok()?, 1, "RFC 1929 version");
    let user = read_field(&mut client).await?;
    let password = read_field(&mut client).await?;
    assert_eq!((user.as_str(), password.as_str()), ("user", "pa ss"));
    client.write_all(&[1, 0]).await.ok()?;
    // CONNECT (1) to a domain name (address type 3): the proxy resolves it.
    let mut request = [0; 4];
    client.read_exact(&mut request).await.ok()?;
    assert_eq!(request, [5, 1, 0, 3], "CONNECT by name");
    let name = read_field(&mut client).await?;
    let port = client.read_u16().await.ok()?;
    record.lock().expect("lock").push(format!("{name}:{port}"));
    let mut upstream = TcpStream::connect(upstream).await.ok()?;
    client.write_all(&[5, 0, 0, 1, 127, 0, 0, 1, 0, 0]).await.ok()?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await.ok()?;
    Some(())
}

/// A field of the SOCKS5 handshake: one byte of length, then the text.
async fn read_field(client: &mut TcpStream) -> Option<String> {
    let length = client.read_u8().await.ok()?;
    let mut field = vec![0; usize::from(length)];
    client.read_exact(&mut field).await.ok()?;
    String::from_utf8(field).ok()
}

#[tokio::test]
async fn a_socks5_proxy_carries_https_to_a_name_only_it_knows() {
    let ca = TestCa::new();
    let (addr, _server) = proxied_server(&ca).await;
    let (proxy, asked) = socks5_proxy(addr).await;
    let client = HttpClient::builder()
        .proxy(&proxy)
        .expect("proxy URL")
        .connect_timeout(Some(Duration::from_secs(3)))
        .root_certificate(ca.root_pem())
        .expect("root")
        .build();
    let transport = HttpTransport::new("https://mcp.test/mcp").expect("url").http_client(client);
    let client = Client::connect(transport).await.expect("through the SOCKS proxy");
    client.call_tool("get_author", json!({"title": "Dune"})).await.expect("call");
    client.close().await;
    let asked = asked.lock().expect("lock").clone();
    assert!(!asked.is_empty() && asked.iter().all(|target| target == "mcp.test:443"), "{asked:?}");
}

#[tokio::test]
async fn a_refused_tunnel_names_the_proxy_and_the_status() {
    let listener = loopback().await;
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let mut buffer = [0; 1024];
            let _ = client.read(&mut buffer).await;
            let _ = client.write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n").await;
        }
    });
    let client = HttpClient::builder().proxy(&format!("http://{addr}")).expect("proxy").build();
    let transport = HttpTransport::new("https://localhost:9/mcp").expect("url").http_client(client);
    let err = failure(transport).await;
    assert!(err.contains(&format!("proxy {addr} refused the tunnel to localhost:9")), "{err}");
    assert!(err.contains("407"), "{err}");
}

/// A user's own service carries every request: here a hyper-util client of the user's,
/// wrapped to count what it sends, against our server.
#[tokio::test]
async fn a_users_service_carries_every_request() {
    let listener = loopback().await;
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let endpoint = counting_server().http_endpoint();
    tokio::spawn(async move { endpoint.serve(listener).await });
    let hyper = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .build_http::<http_body_util::Full<bytes::Bytes>>();
    let sent = Arc::new(AtomicUsize::new(0));
    let counter = sent.clone();
    let service = tower::service_fn(move |request| {
        counter.fetch_add(1, Ordering::SeqCst);
        hyper.request(request)
    });
    let transport =
        HttpTransport::new(&url).expect("url").http_client(HttpClient::from_service(service));
    let client = Client::connect(transport).await.expect("connects through the service");
    let author = client.call_tool("get_author", json!({"title": "Dune"})).await.expect("call");
    assert!(serde_json::to_string(&author).expect("json").contains("Frank Herbert"));
    client.close().await;
    assert!(sent.load(Ordering::SeqCst) >= 2, "discovery and the call");
}

/// `SSL_CERT_FILE` names a bundle to trust, as for curl, OpenSSL and Python. The roots are read
/// once per process from its environment, so a child test process is given the variable and
/// this one's environment stays untouched.
#[tokio::test]
async fn ssl_cert_file_names_a_bundle_to_trust() {
    let ca = TestCa::new();
    let server = serve_mcp(&ca.leaf(&["localhost"]), BOTH).await;
    let name = format!("modelcontext-test-ca-{}-{}.pem", std::process::id(), server.port);
    let bundle = std::env::temp_dir().join(name);
    std::fs::write(&bundle, ca.root_pem()).expect("write the bundle");
    let child = tokio::process::Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", "tls_client::connects_with_the_default_trust", "--ignored"])
        .env("SSL_CERT_FILE", &bundle)
        .env("MODELCONTEXT_TEST_URL", server.url("/mcp"))
        .output();
    let output = tokio::time::timeout(Duration::from_secs(60), child).await;
    let _ = std::fs::remove_file(&bundle);
    let output = output.expect("the child finishes").expect("the child runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success() && stdout.contains("1 passed"), "{stdout}");
}

#[tokio::test]
#[ignore = "run by ssl_cert_file_names_a_bundle_to_trust, in a child process"]
async fn connects_with_the_default_trust() {
    let url = std::env::var("MODELCONTEXT_TEST_URL").expect("set by the parent test");
    let client = Client::connect_http(&url).await.expect("trusted through SSL_CERT_FILE");
    client.close().await;
}
