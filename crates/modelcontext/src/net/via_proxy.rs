//! A connection to a target through a proxy, one function per way of speaking to one: our HTTP
//! `CONNECT` tunnel (`proxy.rs`) over TCP, or over TLS with an `https://` proxy; SOCKS5 and
//! SOCKS4/4a through hyper-util's `SocksV5` and `SocksV4`. The TCP connection to the proxy is
//! opened first, by the client's connector, so an unreachable proxy is reported as any host
//! is (its address, and why), not as a SOCKS error without a cause.

use std::io;
use std::net::{IpAddr, SocketAddr};

use http::Uri;
use hyper_util::client::legacy::connect::proxy::{SocksV4, SocksV5};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tower::ServiceExt;

use super::dial::{ConnectConfig, ConnectError, Stream, authority_uri, chain, tcp_connect};
use super::proxy::{ProxyKind, ProxyUrl, tunnel};

/// A connection to `host:port` through `proxy`: the tunnel, ready for the target's own TLS
/// (if any) or its plain HTTP.
pub(super) async fn connect(
    config: &ConnectConfig,
    proxy: &ProxyUrl,
    host: &str,
    port: u16,
) -> Result<Stream, ConnectError> {
    let to_proxy = || tcp_connect(config, &proxy.host, proxy.port);
    match proxy.kind {
        ProxyKind::Http => http_tunnel(Stream::Plain(to_proxy().await?), proxy, host, port).await,
        #[cfg(feature = "tls")]
        ProxyKind::Https => {
            let tls = tls_to_proxy(config, to_proxy().await?, proxy).await?;
            http_tunnel(tls, proxy, host, port).await
        }
        ProxyKind::Socks5 { remote_dns } => {
            let destination = if remote_dns {
                host.to_owned()
            } else {
                resolve(host, port).await?.ip().to_string()
            };
            let target = SocksTarget { host, port, destination };
            socks5(to_proxy().await?, proxy, &target).await.map(Stream::Plain)
        }
        ProxyKind::Socks4 { remote_dns } => {
            let destination = socks4_destination(host, port, remote_dns).await.map_err(|e| {
                let via = naming("SOCKS4", proxy);
                ConnectError(format!("{via} cannot reach {}: {e}", at(host, port)))
            })?;
            let target = SocksTarget { host, port, destination };
            socks4(to_proxy().await?, proxy, &target).await.map(Stream::Plain)
        }
    }
}

async fn http_tunnel(
    mut stream: Stream,
    proxy: &ProxyUrl,
    host: &str,
    port: u16,
) -> Result<Stream, ConnectError> {
    tunnel(&mut stream, proxy, host, port).await.map_err(ConnectError)?;
    Ok(stream)
}

/// TLS with an `https://` proxy: verified as a server would be (the client's roots, the
/// proxy's host name), before the `CONNECT` and its credentials are sent.
#[cfg(feature = "tls")]
async fn tls_to_proxy(
    config: &ConnectConfig,
    tcp: TcpStream,
    proxy: &ProxyUrl,
) -> Result<Stream, ConnectError> {
    let tls = config.tls.proxy_config().map_err(ConnectError)?;
    let stream = super::tls::handshake(tls, Stream::Plain(tcp), &proxy.host)
        .await
        .map_err(|e| ConnectError(format!("proxy {}:{}: {e}", proxy.host, proxy.port)))?;
    Ok(Stream::Tls(Box::new(stream)))
}

/// Where a SOCKS tunnel leads: the target as the client names it (in errors), and what the
/// proxy is asked for (an address resolved here, or the host name for the proxy to resolve).
struct SocksTarget<'a> {
    host: &'a str,
    port: u16,
    destination: String,
}

/// A SOCKS5 tunnel: for `socks5://` to an address resolved here, for `socks5h://` to the host
/// name, for the proxy to resolve.
async fn socks5(
    tcp: TcpStream,
    proxy: &ProxyUrl,
    target: &SocksTarget<'_>,
) -> Result<TcpStream, ConnectError> {
    let mut socks = SocksV5::new(authority_uri(&proxy.host, proxy.port)?, opened(tcp));
    if let Some((user, password)) = &proxy.credentials {
        socks = socks.with_auth(user.clone(), password.clone());
    }
    socks_tunnel(socks.local_dns(false), &naming("SOCKS", proxy), target).await
}

/// A SOCKS4 tunnel (see [`socks4_destination`]).
async fn socks4(
    tcp: TcpStream,
    proxy: &ProxyUrl,
    target: &SocksTarget<'_>,
) -> Result<TcpStream, ConnectError> {
    let socks = SocksV4::new(authority_uri(&proxy.host, proxy.port)?, opened(tcp));
    socks_tunnel(socks.local_dns(false), &naming("SOCKS4", proxy), target).await
}

/// The tunnel the SOCKS handshake `socks` opens to `target`; `via` names the proxy in an error.
async fn socks_tunnel<S>(
    socks: S,
    via: &str,
    target: &SocksTarget<'_>,
) -> Result<TcpStream, ConnectError>
where
    S: tower::Service<Uri, Response = TokioIo<TcpStream>>,
    S::Error: std::error::Error + 'static,
{
    let destination = authority_uri(&target.destination, target.port)?;
    let tunnel = socks.oneshot(destination).await.map_err(|e| {
        let to = at(target.host, target.port);
        ConnectError(format!("{via}: no tunnel to {to}: {}", chain(&e)))
    })?;
    Ok(tunnel.into_inner())
}

/// `kind proxy host:port`, as errors name a proxy.
fn naming(kind: &str, proxy: &ProxyUrl) -> String {
    format!("{kind} proxy {}:{}", proxy.host, proxy.port)
}

/// What a SOCKS4 proxy is asked for, with curl's meaning of the two schemes: for `socks4://`
/// an IPv4 address (a name is resolved here), for `socks4a://` the host name, for the proxy
/// to resolve. SOCKS4 has no room for an IPv6 address, so one is an error here rather than at the proxy.
async fn socks4_destination(host: &str, port: u16, remote_dns: bool) -> Result<String, String> {
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V6(_)) => {
            return Err("SOCKS4 carries IPv4 addresses only (use a socks5:// proxy)".to_owned());
        }
        Ok(IpAddr::V4(ip)) => return Ok(ip.to_string()),
        Err(_) if remote_dns => return Ok(host.to_owned()),
        Err(_) => {}
    }
    let addrs = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| format!("could not resolve {host}: {e}"))?;
    let mut ipv4 = addrs.filter(SocketAddr::is_ipv4);
    ipv4.next().map(|addr| addr.ip().to_string()).ok_or_else(|| {
        format!("{host} has no IPv4 address, the only kind SOCKS4 carries (try socks4a://)")
    })
}

/// The first address of `host` (off the runtime's threads, as the connector resolves).
async fn resolve(host: &str, port: u16) -> Result<SocketAddr, ConnectError> {
    let failed = |reason: String| ConnectError(format!("could not resolve {host}: {reason}"));
    let mut addrs =
        tokio::net::lookup_host((host, port)).await.map_err(|e| failed(e.to_string()))?;
    addrs.next().ok_or_else(|| failed("no address".to_owned()))
}

/// `host:port`, an IPv6 address in brackets.
fn at(host: &str, port: u16) -> String {
    if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") }
}

/// The connector a SOCKS handshake is given: it hands over the connection to the proxy that
/// is already open (once; the handshake asks only once).
fn opened(
    tcp: TcpStream,
) -> impl tower::Service<
    Uri,
    Response = TokioIo<TcpStream>,
    Error = io::Error,
    Future = std::future::Ready<io::Result<TokioIo<TcpStream>>>,
> {
    let mut tcp = Some(tcp);
    tower::service_fn(move |_: Uri| {
        let taken = tcp.take().map(TokioIo::new);
        std::future::ready(taken.ok_or_else(|| io::Error::other("the proxy connection is in use")))
    })
}
