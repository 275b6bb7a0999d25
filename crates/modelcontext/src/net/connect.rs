//! The connector behind every [`HttpClient`](super::HttpClient): TCP (`dial.rs`), or a
//! proxy's tunnel when one applies (`via_proxy.rs`), then TLS for `https://` (feature `tls`).
//! The whole of it is bounded by the connect timeout.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use http::Uri;
use hyper_util::rt::TokioIo;

use super::dial::{ConnectConfig, ConnectError, Stream, tcp_connect};
use super::proxy::{Target, is_loopback};
use super::via_proxy;

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

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
    use std::time::Instant;

    use std::time::Duration;

    use tokio::net::{TcpListener, TcpSocket, TcpStream};

    use super::super::dial::tcp_connector;
    use super::super::proxy::Proxies;
    use super::super::resolver::Resolver;
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
