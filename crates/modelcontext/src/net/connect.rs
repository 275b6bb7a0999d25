//! The connector behind every [`HttpClient`](super::HttpClient): TCP, then a proxy's CONNECT
//! tunnel when one applies, then TLS for `https://` (feature `tls`). Its errors are worded
//! here, with the host they concern, and the whole of it is bounded by the connect timeout.

use std::collections::HashSet;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::proxy::{Proxies, Target, is_loopback, tunnel};

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
    let tcp = match config.proxies.for_target(&target) {
        Some(proxy) => {
            let mut tcp = tcp_connect(&proxy.host, proxy.port).await?;
            tunnel(&mut tcp, proxy, host, port).await.map_err(ConnectError)?;
            tcp
        }
        None => tcp_connect(host, port).await?,
    };
    if !https {
        warn_plain_http(host);
        return Ok(Stream::Plain(tcp));
    }
    secure(config, tcp, host).await
}

#[cfg(feature = "tls")]
async fn secure(
    config: &ConnectConfig,
    tcp: TcpStream,
    host: &str,
) -> Result<Stream, ConnectError> {
    let tls = config.tls.config().map_err(ConnectError)?;
    let stream = super::tls::handshake(tls, tcp, host).await.map_err(ConnectError)?;
    Ok(Stream::Tls(Box::new(stream)))
}

#[cfg(not(feature = "tls"))]
async fn secure(_: &ConnectConfig, _: TcpStream, host: &str) -> Result<Stream, ConnectError> {
    Err(ConnectError(format!(
        "https://{host}: this build has no TLS (enable the `tls` feature of modelcontext)"
    )))
}

async fn tcp_connect(host: &str, port: u16) -> Result<TcpStream, ConnectError> {
    let tcp = TcpStream::connect((host, port))
        .await
        .map_err(|e| ConnectError(format!("could not connect to {host}:{port}: {e}")))?;
    // Messages are small and latency-bound.
    let _ = tcp.set_nodelay(true);
    Ok(tcp)
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

/// A connection: plain TCP or TLS over it.
pub(crate) enum Stream {
    Plain(TcpStream),
    #[cfg(feature = "tls")]
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
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
    use super::*;

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
