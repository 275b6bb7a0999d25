//! The connector behind every [`HttpClient`](super::HttpClient): TCP (hyper-util's
//! `HttpConnector`, which races the address families as Happy Eyeballs does, RFC 8305), then
//! a proxy's tunnel when one applies (`via_proxy.rs`), then TLS for `https://` (feature
//! `tls`). Its errors are worded here, with the host they concern, and the whole of it is
//! bounded by the connect timeout.

use std::collections::HashSet;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tower::ServiceExt;

use super::proxy::{Proxies, Target, is_loopback};
use super::resolver::Resolver;
use super::via_proxy;

/// How long the first address family gets before the other one is tried too, as RFC 8305
/// recommends: an IPv6 route that drops packets costs this, not the whole connect timeout.
const HAPPY_EYEBALLS_DELAY: Duration = Duration::from_millis(300);

/// A connection failure, in words that name the host. The client's error walks its sources
/// to find this and shows it as is.
#[derive(Debug)]
pub(crate) struct ConnectError(pub String);

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConnectError {}

/// What every connection of one client shares.
pub(crate) struct ConnectConfig {
    pub timeout: Option<Duration>,
    pub proxies: Proxies,
    pub tcp: HttpConnector<Resolver>,
    #[cfg(feature = "tls")]
    pub tls: super::TlsSetup,
}

#[derive(Clone)]
pub(crate) struct Connector(pub Arc<ConnectConfig>);

impl tower::Service<Uri> for Connector {
    type Response = TokioIo<Stream>;
    type Error = ConnectError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, ConnectError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), ConnectError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let config = self.0.clone();
        Box::pin(async move {
            let work = connect(&config, &uri);
            let stream = match config.timeout {
                Some(limit) => tokio::time::timeout(limit, work).await.map_err(|_| {
                    let authority = uri.authority().map(|a| a.as_str()).unwrap_or("");
                    ConnectError(format!("no connection to {authority} within {limit:?}"))
                })?,
                None => work.await,
            }?;
            Ok(TokioIo::new(stream))
        })
    }
}

async fn connect(config: &ConnectConfig, uri: &Uri) -> Result<Stream, ConnectError> {
    let https = match uri.scheme_str() {
        Some("https") => true,
        Some("http") => false,
        _ => return Err(ConnectError(format!("{uri}: expected an http:// or https:// URL"))),
    };
    let host = uri.host().unwrap_or("").trim_matches(['[', ']']);
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let target = Target { https, host, port };
    let stream = match config.proxies.for_target(&target) {
        Some(proxy) => via_proxy::connect(config, proxy, host, port).await?,
        None => Stream::Plain(tcp_connect(config, host, port).await?),
    };
    if !https {
        warn_plain_http(host);
        return Ok(stream);
    }
    secure(config, stream, host).await
}

/// TLS with `host` over `stream`: TCP to it, or a tunnel through a proxy (itself TLS with an
/// `https://` proxy, so the target's session then runs inside the proxy's).
#[cfg(feature = "tls")]
async fn secure(
    config: &ConnectConfig,
    stream: Stream,
    host: &str,
) -> Result<Stream, ConnectError> {
    let tls = config.tls.config().map_err(ConnectError)?;
    let stream = super::tls::handshake(tls, stream, host).await.map_err(ConnectError)?;
    Ok(Stream::Tls(Box::new(stream)))
}

#[cfg(not(feature = "tls"))]
async fn secure(_: &ConnectConfig, _: Stream, host: &str) -> Result<Stream, ConnectError> {
    Err(ConnectError(format!(
        "https://{host}: this build has no TLS (enable the `tls` feature of modelcontext)"
    )))
}

/// The TCP connector of one client: any scheme (TLS comes after), no delay (messages are
/// small and latency-bound), both address families raced.
pub(crate) fn tcp_connector(resolver: Resolver) -> HttpConnector<Resolver> {
    let mut tcp = HttpConnector::new_with_resolver(resolver);
    tcp.enforce_http(false);
    tcp.set_nodelay(true);
    tcp.set_happy_eyeballs_timeout(Some(HAPPY_EYEBALLS_DELAY));
    tcp
}

pub(super) async fn tcp_connect(
    config: &ConnectConfig,
    host: &str,
    port: u16,
) -> Result<TcpStream, ConnectError> {
    let uri = authority_uri(host, port)?;
    let tcp = config.tcp.clone().oneshot(uri).await.map_err(|e| {
        ConnectError(format!("could not connect to {host}:{port}: {}", innermost(&e)))
    })?;
    Ok(tcp.into_inner())
}

/// `http://host:port/`, the form the connectors take (the scheme only picks a default port,
/// and the port is always given).
pub(super) fn authority_uri(host: &str, port: u16) -> Result<Uri, ConnectError> {
    let host = if host.contains(':') { format!("[{host}]") } else { host.to_owned() };
    format!("http://{host}:{port}/")
        .parse()
        .map_err(|e| ConnectError(format!("invalid host {host:?}: {e}")))
}

/// The root cause of a connector's error (its own text is only "tcp connect error").
fn innermost(err: &(dyn std::error::Error + 'static)) -> String {
    let mut current = err;
    while let Some(source) = current.source() {
        current = source;
    }
    current.to_string()
}

/// An error and its sources in one line.
pub(super) fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![err.to_string()];
    let mut current = err.source();
    while let Some(source) = current {
        parts.push(source.to_string());
        current = source.source();
    }
    parts.join(": ")
}

/// Plain HTTP beyond this machine can be read and changed on the way (tokens included): worth
/// one warning per host and process, not one per request.
fn warn_plain_http(host: &str) {
    if should_warn_plain_http(host) {
        tracing::warn!(host, "plain http:// to a host beyond this machine: use https://");
    }
}

/// True the first time a non-loopback `host` is reached over plain HTTP in this process.
fn should_warn_plain_http(host: &str) -> bool {
    static WARNED: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    if is_loopback(host) {
        return false;
    }
    let mut warned = WARNED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    warned.get_or_insert_with(HashSet::new).insert(host.to_ascii_lowercase())
}

/// A connection: plain TCP, or TLS over a connection (TCP, or TLS with an `https://` proxy).
pub(crate) enum Stream {
    Plain(TcpStream),
    #[cfg(feature = "tls")]
    Tls(Box<tokio_rustls::client::TlsStream<Stream>>),
}

impl Connection for Stream {
    fn connected(&self) -> Connected {
        match self {
            Stream::Plain(_) => Connected::new(),
            #[cfg(feature = "tls")]
            Stream::Tls(tls) if super::tls::negotiated_h2(tls) => Connected::new().negotiated_h2(),
            #[cfg(feature = "tls")]
            Stream::Tls(_) => Connected::new(),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            #[cfg(feature = "tls")]
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            #[cfg(feature = "tls")]
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_write_vectored(cx, bufs),
            #[cfg(feature = "tls")]
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(tcp) => tcp.is_write_vectored(),
            #[cfg(feature = "tls")]
            Stream::Tls(tls) => tls.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            #[cfg(feature = "tls")]
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            #[cfg(feature = "tls")]
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
    use std::time::Instant;

    use tokio::net::{TcpListener, TcpSocket};

    use super::*;

    fn config(resolved: Vec<SocketAddr>) -> ConnectConfig {
        ConnectConfig {
            timeout: Some(Duration::from_secs(10)),
            proxies: Proxies::none(),
            tcp: tcp_connector(Resolver::Fixed(Arc::new(resolved))),
            #[cfg(feature = "tls")]
            tls: super::super::TlsSetup::new(Vec::new(), None),
        }
    }

    /// A listener on `[::1]:port` whose accept queue is full: the kernel drops further SYNs,
    /// so a connection to it never answers, as over an IPv6 route that drops packets.
    async fn never_answering_v6(port: u16) -> Option<(tokio::net::TcpListener, TcpStream)> {
        let socket = TcpSocket::new_v6().ok()?;
        socket.bind(SocketAddr::new(Ipv6Addr::LOCALHOST.into(), port)).ok()?;
        let listener = socket.listen(0).ok()?;
        let filler = TcpStream::connect((Ipv6Addr::LOCALHOST, port)).await.ok()?;
        Some((listener, filler))
    }

    #[tokio::test]
    async fn an_address_that_never_answers_gives_way_to_the_other_family() {
        // The same port on both families: the connector puts the URL's port on every address.
        let (ipv4, port, _blackhole) = loop {
            let ipv4 = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.expect("bind");
            let port = ipv4.local_addr().expect("addr").port();
            if let Some(blackhole) = never_answering_v6(port).await {
                break (ipv4, port, blackhole);
            }
        };
        let resolved = vec![
            SocketAddr::new(Ipv6Addr::LOCALHOST.into(), port),
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), port),
        ];
        let uri: Uri = format!("http://dual-stack.test:{port}/").parse().expect("uri");
        let config = config(resolved);
        let started = Instant::now();
        let attempt = tokio::time::timeout(Duration::from_secs(5), connect(&config, &uri));
        let stream = attempt.await.expect("no fallback to IPv4").expect("connected over IPv4");
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
        let (_, from) = ipv4.accept().await.expect("the IPv4 listener was reached");
        assert!(from.is_ipv4());
        drop(stream);
    }

    #[tokio::test]
    async fn a_refused_connection_names_the_host_and_the_reason() {
        let unused = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.expect("bind");
        let port = unused.local_addr().expect("addr").port();
        drop(unused);
        let uri: Uri = format!("http://127.0.0.1:{port}/").parse().expect("uri");
        let Err(ConnectError(message)) = connect(&config(Vec::new()), &uri).await else {
            panic!("nothing listens there");
        };
        assert!(message.starts_with(&format!("could not connect to 127.0.0.1:{port}: ")));
        assert!(message.contains("refused"), "{message}");
    }

    #[test]
    fn plain_http_is_warned_about_once_per_host_and_never_for_loopback() {
        assert!(should_warn_plain_http("plain-http-warning.test"));
        assert!(!should_warn_plain_http("plain-http-warning.test"));
        assert!(!should_warn_plain_http("PLAIN-HTTP-WARNING.test"));
        assert!(should_warn_plain_http("another-plain-http-warning.test"));
        for loopback in ["localhost", "127.0.0.1", "::1", "[::1]"] {
            assert!(!should_warn_plain_http(loopback), "{loopback}");
        }
    }
}
