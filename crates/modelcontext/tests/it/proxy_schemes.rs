//! The proxy schemes beyond `http://` and `socks5h://` (those are in `tls_client.rs`): SOCKS4
//! and SOCKS4a proxies, and `https://` proxies (TLS with the proxy, our CONNECT inside it, the
//! target's TLS inside that). Each proxy is written here, on loopback, in front of a real MCP
//! server, and records what it was asked, byte for byte.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelcontext::Client;
use modelcontext::net::HttpClient;
use modelcontext::server::http::{AllowList, HttpOptions};
use modelcontext::transport::http::HttpTransport;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::test_ca::{Leaf, TestCa};
use crate::tls_client::{BOTH, failure, loopback, proxied_server};

/// SOCKS4's reply codes: request granted, request rejected or failed.
const GRANTED: u8 = 90;
const REJECTED: u8 = 91;

/// Our MCP server over plain HTTP on loopback, answering for `mcp.test` too.
async fn plain_mcp_server() -> SocketAddr {
    let listener = loopback().await;
    let addr = listener.local_addr().expect("addr");
    let allow = AllowList::default().allow_host("mcp.test");
    let options = HttpOptions::default().allow(allow);
    let endpoint = crate::support::bookshop().http_endpoint_with(options);
    tokio::spawn(async move { endpoint.serve(listener).await });
    addr
}

/// A client through `proxy`, trusting `ca` when given, bounded so that no test can hang.
fn client_via(proxy: &str, ca: Option<&TestCa>) -> HttpClient {
    let builder = HttpClient::builder()
        .proxy(proxy)
        .expect("proxy URL")
        .connect_timeout(Some(Duration::from_secs(3)));
    match ca {
        Some(ca) => builder.root_certificate(ca.root_pem()).expect("root").build(),
        None => builder.build(),
    }
}

async fn call_through(client: HttpClient, url: &str) {
    let transport = HttpTransport::new(url).expect("url").http_client(client);
    let client = Client::connect(transport).await.expect("through the proxy");
    client.call_tool("get_author", json!({"title": "Dune"})).await.expect("call");
    client.close().await;
}

type Recorded<T> = Arc<Mutex<Vec<T>>>;

/// A SOCKS4 proxy of a few lines: records each request's bytes, answers `reply`, and when it
/// grants the request leads to `upstream`, whatever was asked for.
async fn socks4_proxy(upstream: SocketAddr, reply: u8) -> (SocketAddr, Recorded<Vec<u8>>) {
    let listener = loopback().await;
    let addr = listener.local_addr().expect("addr");
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = asked.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let record = record.clone();
            tokio::spawn(async move { socks4_session(client, upstream, reply, &record).await });
        }
    });
    (addr, asked)
}

async fn socks4_session(
    mut client: TcpStream,
    upstream: SocketAddr,
    reply: u8,
    record: &Mutex<Vec<Vec<u8>>>,
) -> Option<()> {
    // Version, command, port, address; then a user id ending in NUL; then, when the address
    // is 0.0.0.x with x not 0 (SOCKS4a), a host name ending in NUL.
    let mut request = vec![0; 8];
    client.read_exact(&mut request).await.ok()?;
    read_through_nul(&mut client, &mut request).await?;
    if request[4..7] == [0, 0, 0] && request[7] != 0 {
        read_through_nul(&mut client, &mut request).await?;
    }
    record.lock().expect("lock").push(request);
    client.write_all(&[0, reply, 0, 0, 0, 0, 0, 0]).await.ok()?;
    if reply != GRANTED {
        return Some(());
    }
    let mut upstream = TcpStream::connect(upstream).await.ok()?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await.ok()?;
    Some(())
}

async fn read_through_nul(client: &mut TcpStream, into: &mut Vec<u8>) -> Option<()> {
    loop {
        let byte = client.read_u8().await.ok()?;
        into.push(byte);
        if byte == 0 {
            return Some(());
        }
    }
}

fn requests(asked: &Recorded<Vec<u8>>) -> Vec<Vec<u8>> {
    asked.lock().expect("lock").clone()
}

#[tokio::test]
async fn a_socks4a_proxy_is_given_the_host_name() {
    let server = plain_mcp_server().await;
    let (proxy, asked) = socks4_proxy(server, GRANTED).await;
    call_through(client_via(&format!("socks4a://{proxy}"), None), "http://mcp.test/mcp").await;
    // CONNECT to port 80 at 0.0.0.255 (a name follows), an empty user id, the name.
    let expected = [&[4, 1, 0, 80, 0, 0, 0, 255, 0][..], b"mcp.test\0"].concat();
    let asked = requests(&asked);
    assert!(!asked.is_empty() && asked.iter().all(|request| *request == expected), "{asked:?}");
}

#[tokio::test]
async fn a_socks4_proxy_is_given_an_address_resolved_here() {
    let server = plain_mcp_server().await;
    let (proxy, asked) = socks4_proxy(server, GRANTED).await;
    let url = format!("http://localhost:{}/mcp", server.port());
    call_through(client_via(&format!("socks4://{proxy}"), None), &url).await;
    let [high, low] = server.port().to_be_bytes();
    let expected = vec![4, 1, high, low, 127, 0, 0, 1, 0];
    let asked = requests(&asked);
    assert!(!asked.is_empty() && asked.iter().all(|request| *request == expected), "{asked:?}");
}

#[tokio::test]
async fn a_socks4_proxy_refuses_ipv6_targets_here_and_its_refusals_name_it() {
    let server = plain_mcp_server().await;
    let (refusing, asked) = socks4_proxy(server, REJECTED).await;
    let client = client_via(&format!("socks4a://{refusing}"), None);
    let transport = HttpTransport::new("http://mcp.test/mcp").expect("url").http_client(client);
    let err = failure(transport).await;
    let expected = format!(
        "SOCKS4 proxy {refusing}: no tunnel to mcp.test:80: SOCKS error: server failed to \
         execute command"
    );
    assert!(err.contains(&expected), "{err}");
    assert_eq!(requests(&asked).len(), 1);

    let (proxy, asked) = socks4_proxy(server, GRANTED).await;
    let client = client_via(&format!("socks4a://{proxy}"), None);
    let transport = HttpTransport::new("http://[::1]:9/mcp").expect("url").http_client(client);
    let err = failure(transport).await;
    let expected = format!(
        "SOCKS4 proxy {proxy} cannot reach [::1]:9: SOCKS4 carries IPv4 addresses only (use a \
         socks5:// proxy)"
    );
    assert!(err.contains(&expected), "{err}");
    assert!(requests(&asked).is_empty(), "the proxy was asked");
}

/// What an `https://` proxy saw of one connection: the server name and ALPN protocol the
/// client's TLS sent, and the head of its CONNECT.
#[derive(Debug)]
struct Seen {
    server_name: Option<String>,
    alpn: Option<String>,
    head: String,
}

/// An `https://` CONNECT proxy: TLS with `leaf` (offering HTTP/2 and HTTP/1.1, so the client's
/// offer decides), then one CONNECT, recorded, answered with `answer`; a 200 leads to
/// `upstream`, whatever was asked for.
async fn https_proxy(
    leaf: &Leaf,
    upstream: SocketAddr,
    answer: &'static str,
) -> (u16, Recorded<Seen>) {
    let listener = loopback().await;
    let port = listener.local_addr().expect("addr").port();
    let acceptor = leaf.acceptor(BOTH);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, record) = (acceptor.clone(), record.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else { return };
                https_proxy_session(tls, upstream, answer, &record).await;
            });
        }
    });
    (port, seen)
}

async fn https_proxy_session(
    mut tls: tokio_rustls::server::TlsStream<TcpStream>,
    upstream: SocketAddr,
    answer: &str,
    record: &Mutex<Vec<Seen>>,
) -> Option<()> {
    let session = tls.get_ref().1;
    let server_name = session.server_name().map(str::to_owned);
    let alpn = session.alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned());
    let head = read_head(&mut tls).await?;
    record.lock().expect("lock").push(Seen { server_name, alpn, head });
    tls.write_all(answer.as_bytes()).await.ok()?;
    tls.flush().await.ok()?;
    if !answer.starts_with("HTTP/1.1 200 ") {
        return tls.shutdown().await.ok();
    }
    let mut upstream = TcpStream::connect(upstream).await.ok()?;
    tokio::io::copy_bidirectional(&mut tls, &mut upstream).await.ok()?;
    Some(())
}

async fn read_head(stream: &mut (impl AsyncRead + AsyncWrite + Unpin)) -> Option<String> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        head.push(stream.read_u8().await.ok()?);
    }
    String::from_utf8(head).ok()
}

const ESTABLISHED: &str = "HTTP/1.1 200 Connection established\r\n\r\n";

#[tokio::test]
async fn an_https_proxy_carries_https_and_http_inside_its_own_tls() {
    let ca = TestCa::new();
    let proxy_leaf = ca.leaf(&["localhost"]);
    // https:// target: the MCP server's TLS inside the proxy's.
    let (server, _tls) = proxied_server(&ca).await;
    let (port, seen) = https_proxy(&proxy_leaf, server, ESTABLISHED).await;
    let proxy = format!("https://user:pa%20ss@localhost:{port}");
    call_through(client_via(&proxy, Some(&ca)), "https://mcp.test/mcp").await;
    check_seen(&seen, "mcp.test:443");
    // http:// target: plain HTTP inside the proxy's TLS.
    let server = plain_mcp_server().await;
    let (port, seen) = https_proxy(&proxy_leaf, server, ESTABLISHED).await;
    let proxy = format!("https://user:pa%20ss@localhost:{port}");
    call_through(client_via(&proxy, Some(&ca)), "http://mcp.test/mcp").await;
    check_seen(&seen, "mcp.test:80");
}

/// Every connection named the proxy in its TLS, offered HTTP/1.1 only, and asked for `target`
/// with the URL's credentials (base64 of `user:pa ss`).
#[track_caller]
fn check_seen(seen: &Recorded<Seen>, target: &str) {
    let seen = seen.lock().expect("lock");
    assert!(!seen.is_empty(), "no tunnel");
    for one in seen.iter() {
        assert_eq!(one.server_name.as_deref(), Some("localhost"), "{one:?}");
        assert_eq!(one.alpn.as_deref(), Some("http/1.1"), "{one:?}");
        let expected = format!(
            "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\
             Proxy-Authorization: Basic dXNlcjpwYSBzcw==\r\n\r\n"
        );
        assert_eq!(one.head, expected);
    }
}

#[tokio::test]
async fn an_https_proxy_is_verified_and_its_refusals_keep_their_status_line() {
    let ca = TestCa::new();
    let unreachable: SocketAddr = "127.0.0.1:9".parse().expect("addr");
    let refused = "HTTP/1.1 407 Proxy Authentication Required\r\n\r\n";
    let (port, seen) = https_proxy(&ca.leaf(&["localhost"]), unreachable, refused).await;
    let proxy = format!("https://localhost:{port}");
    let transport =
        |client| HttpTransport::new("https://mcp.test/mcp").expect("url").http_client(client);
    let err = failure(transport(client_via(&proxy, Some(&ca)))).await;
    let expected = format!(
        "proxy localhost:{port} refused the tunnel to mcp.test:443: \"HTTP/1.1 407 Proxy \
         Authentication Required\" (check the user and password in the proxy URL)"
    );
    assert!(err.contains(&expected), "{err}");
    assert_eq!(seen.lock().expect("lock").len(), 1);

    // A proxy whose certificate is not trusted is told nothing: no CONNECT, no credentials.
    let err = failure(transport(client_via(&proxy, None))).await;
    let expected = format!(
        "proxy localhost:{port}: TLS handshake with localhost failed: its certificate is \
         signed by an unknown issuer"
    );
    assert!(err.contains(&expected), "{err}");
    assert_eq!(seen.lock().expect("lock").len(), 1, "a CONNECT was sent");
}
