//! What every way of connecting shares: the client's connection settings, the TCP dial
//! (hyper-util's `HttpConnector`, which races the address families as Happy Eyeballs does,
//! RFC 8305), the stream a connection ends up as (plain TCP, or TLS over a connection), and
//! errors worded with the host they concern. `connect.rs` and `via_proxy.rs` build on it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tower::ServiceExt;

use super::proxy::Proxies;
use super::resolver::Resolver;

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
