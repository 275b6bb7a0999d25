//! Proxies: which one a request goes through (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`,
//! `NO_PROXY`, read as curl reads them), and the HTTP CONNECT tunnel through it, over TCP or,
//! for an `https://` proxy, over TLS to the proxy. SOCKS4, SOCKS4a and SOCKS5 proxies are
//! spoken to by hyper-util's `SocksV4` and `SocksV5` (see `via_proxy.rs`).
//!
//! Why not hyper-util's `Matcher` and `Tunnel` for the rest: `Matcher::from_env` lets
//! `HTTPS_PROXY` win over `https_proxy` (curl and we read the lowercase one first), drops a
//! malformed proxy URL without a word, and its `NO_PROXY` takes no ports and no spaces between
//! entries; `Tunnel` reports a refused tunnel as "unsuccessful", without the proxy's status
//! line, which is what tells a user whether to fix a password (407) or a rule (403). Our
//! tunnel runs over any stream, so an `https://` proxy needs no second CONNECT: the same code
//! speaks inside the TLS session with the proxy.

use std::fmt;
use std::net::IpAddr;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::Error;

/// Where a request is going: what the proxy rules are matched against.
pub(crate) struct Target<'a> {
    pub https: bool,
    /// Without IPv6 brackets.
    pub host: &'a str,
    pub port: u16,
}

/// Which proxy, if any, each request goes through.
///
/// By default an [`HttpClient`](super::HttpClient) reads the process environment as curl and
/// Python's httpx do ([`Proxies::from_env`]). Build one by hand to decide yourself, or to read
/// the variables from somewhere else ([`Proxies::from_vars`]).
///
/// The proxy URL's scheme says how the proxy is spoken to, with curl's meaning of each:
///
/// - `http://`: an HTTP `CONNECT` tunnel (the default when the URL has no scheme).
/// - `https://` (feature `tls`): the same tunnel inside TLS with the proxy, whose certificate
///   is checked against the roots the client trusts for servers, for the proxy's host name.
/// - `socks5h://` and `socks5://`: SOCKS5; with `socks5h` the proxy resolves the host name,
///   with `socks5` this machine does and the proxy is given an address.
/// - `socks4a://` and `socks4://`: SOCKS4, the same split (`socks4a` the proxy resolves,
///   `socks4` this machine). SOCKS4 carries IPv4 only: an IPv6 target is an error, and a
///   user or password in the URL is refused (SOCKS4 has no password; use SOCKS5).
///
/// Every request (`https://` and `http://` alike) goes through a tunnel (HTTP `CONNECT` or
/// SOCKS), so the proxy sees host names, never content.
///
/// `HTTP_PROXY` in capitals is ignored when `REQUEST_METHOD` is set: in a CGI program it
/// holds the request's `Proxy:` header, which the client chose (as curl and Go do).
///
/// Proxies read from variables never apply to loopback hosts (`localhost`, `127.0.0.0/8`,
/// `::1`), as in Go: a proxy elsewhere cannot reach this machine's loopback, and a local MCP
/// server must keep working in a shell that exports `HTTPS_PROXY`. [`Proxies::all`] applies
/// to every host, loopback included.
#[derive(Clone, Default)]
pub struct Proxies {
    http: Option<ProxyUrl>,
    https: Option<ProxyUrl>,
    bypass: NoProxy,
    loopback_direct: bool,
}

impl Proxies {
    /// No proxy at all: every connection is direct, whatever the environment says.
    pub fn none() -> Proxies {
        Proxies::default()
    }

    /// Every request goes through the proxy at `url` (`http://[user:password@]host[:port]`,
    /// or `https://`, `socks5://`, `socks5h://`, `socks4://`, `socks4a://` with the same
    /// parts; the port defaults to 80 for `http`, 443 for `https` and 1080 for SOCKS, the
    /// scheme to `http`). An `https://` proxy without the `tls` feature is an error here.
    pub fn all(url: &str) -> Result<Proxies, Error> {
        let proxy = ProxyUrl::parse(url).map_err(|e| invalid_input(format!("proxy {e}")))?;
        let bypass = NoProxy::default();
        Ok(Proxies {
            http: Some(proxy.clone()),
            https: Some(proxy),
            bypass,
            loopback_direct: false,
        })
    }

    /// The proxies the process environment names: `https_proxy` / `HTTPS_PROXY` for
    /// `https://` URLs, `http_proxy` / `HTTP_PROXY` for `http://` ones, `all_proxy` /
    /// `ALL_PROXY` for either when the specific one is unset, and `no_proxy` / `NO_PROXY` for
    /// the hosts that go direct (the lowercase form wins when both are set).
    pub fn from_env() -> Proxies {
        Proxies::from_vars(|name| std::env::var(name).ok())
    }

    /// [`Proxies::from_env`] with the variables looked up by `lookup` instead of the process
    /// environment (tests, or settings read from a file). A value that is not a proxy URL is
    /// logged and ignored: that scheme goes direct.
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Proxies {
        let cgi = lookup("REQUEST_METHOD").is_some();
        let var = |name: &str| {
            let upper = name.to_ascii_uppercase();
            let trusted_upper = !(cgi && upper == "HTTP_PROXY");
            let value = lookup(name).or_else(|| trusted_upper.then(|| lookup(&upper)).flatten())?;
            let value = value.trim().to_owned();
            (!value.is_empty()).then_some(value)
        };
        let proxy = |name: &str| {
            let value = var(name).or_else(|| var("all_proxy"))?;
            ProxyUrl::parse(&value)
                .inspect_err(|err| tracing::warn!("{name} is ignored: proxy {err}"))
                .ok()
        };
        Proxies {
            http: proxy("http_proxy"),
            https: proxy("https_proxy"),
            bypass: var("no_proxy").map(|list| NoProxy::parse(&list)).unwrap_or_default(),
            loopback_direct: true,
        }
    }

    /// Adds hosts that go direct, written as `NO_PROXY` is: a comma-separated list of host
    /// names (each matches itself and its subdomains; a leading `.` changes nothing), IP
    /// addresses or CIDR ranges, each optionally with `:port`, or `*` for every host.
    pub fn no_proxy(mut self, list: &str) -> Proxies {
        self.bypass.rules.extend(NoProxy::parse(list).rules);
        self
    }

    /// The proxy for `target`, or `None` to connect directly.
    pub(crate) fn for_target(&self, target: &Target<'_>) -> Option<&ProxyUrl> {
        let proxy = if target.https { self.https.as_ref() } else { self.http.as_ref() }?;
        let direct = (self.loopback_direct && is_loopback(target.host))
            || self.bypass.matches(target.host, target.port);
        (!direct).then_some(proxy)
    }
}

/// Proxy passwords stay out of logs.
impl fmt::Debug for Proxies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Proxies")
            .field("http", &self.http)
            .field("https", &self.https)
            .field("no_proxy", &self.bypass.rules.len())
            .finish()
    }
}

/// `localhost` (and its subdomains, which resolve to loopback by RFC 6761) or a loopback
/// address, with or without IPv6 brackets.
pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_matches(['[', ']']).trim_end_matches('.').to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// How a proxy is spoken to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ProxyKind {
    /// HTTP `CONNECT`.
    Http,
    /// HTTP `CONNECT` inside TLS with the proxy.
    #[cfg(feature = "tls")]
    Https,
    /// SOCKS5; `remote_dns` when the proxy resolves the host name (`socks5h://`).
    Socks5 { remote_dns: bool },
    /// SOCKS4; `remote_dns` when the proxy resolves the host name (`socks4a://`).
    Socks4 { remote_dns: bool },
}

impl ProxyKind {
    fn scheme(self) -> &'static str {
        match self {
            ProxyKind::Http => "http",
            #[cfg(feature = "tls")]
            ProxyKind::Https => "https",
            ProxyKind::Socks5 { remote_dns: true } => "socks5h",
            ProxyKind::Socks5 { remote_dns: false } => "socks5",
            ProxyKind::Socks4 { remote_dns: true } => "socks4a",
            ProxyKind::Socks4 { remote_dns: false } => "socks4",
        }
    }

    fn default_port(self) -> u16 {
        match self {
            ProxyKind::Http => 80,
            #[cfg(feature = "tls")]
            ProxyKind::Https => 443,
            ProxyKind::Socks5 { .. } | ProxyKind::Socks4 { .. } => 1080,
        }
    }
}

/// A proxy, with its credentials decoded (and, for HTTP, its `Proxy-Authorization` made) once.
#[derive(Clone, PartialEq)]
pub(crate) struct ProxyUrl {
    pub kind: ProxyKind,
    pub host: String,
    pub port: u16,
    /// The URL's user info, percent-decoded.
    pub credentials: Option<(String, String)>,
    /// `Basic <base64(user:password)>`, from the URL's user info.
    pub authorization: Option<String>,
}

impl fmt::Debug for ProxyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = self.kind.scheme();
        let auth = if self.credentials.is_some() { "<credentials>@" } else { "" };
        write!(f, "{scheme}://{auth}{}:{}", self.host, self.port)
    }
}

impl ProxyUrl {
    /// `[scheme://][user[:password]@]host[:port][/]`, the scheme one of [`proxy_kind`]'s.
    /// Errors say what is wrong, never the password.
    fn parse(url: &str) -> Result<ProxyUrl, String> {
        let (kind, rest) = match url.split_once("://") {
            Some((scheme, rest)) => (proxy_kind(scheme)?, rest),
            None => (ProxyKind::Http, url),
        };
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        if authority.contains(['/', '?', '#']) {
            return Err("URL must be http://host:port, without a path".to_owned());
        }
        let (userinfo, host_port) = match authority.rsplit_once('@') {
            Some((userinfo, host_port)) => (Some(userinfo), host_port),
            None => (None, authority),
        };
        let (host, port) = split_host_port(host_port)
            .ok_or_else(|| format!("URL has an invalid host or port: {host_port:?}"))?;
        let credentials = match userinfo {
            Some(info) => {
                let (user, password) = info.split_once(':').unwrap_or((info, ""));
                let decode = |part: &str| {
                    modelcontext_types::percent::decode(part.as_bytes())
                        .map_err(|e| format!("URL's user or password: {e}"))
                };
                Some((decode(user)?, decode(password)?))
            }
            None => None,
        };
        if matches!(kind, ProxyKind::Socks4 { .. }) && credentials.is_some() {
            return Err(format!(
                "{}:// cannot carry a user or password (SOCKS4 has none): use socks5://",
                kind.scheme()
            ));
        }
        let authorization = credentials.as_ref().map(|(user, password)| {
            format!("Basic {}", crate::base64::encode(format!("{user}:{password}").as_bytes()))
        });
        let port = port.unwrap_or(kind.default_port());
        Ok(ProxyUrl { kind, host: host.to_owned(), port, credentials, authorization })
    }
}

/// The schemes curl gives these meanings; `https` only with TLS, so that a proxy meant to be
/// reached over TLS is never spoken to in plain text.
fn proxy_kind(scheme: &str) -> Result<ProxyKind, String> {
    match scheme.to_ascii_lowercase().as_str() {
        "http" => Ok(ProxyKind::Http),
        #[cfg(feature = "tls")]
        "https" => Ok(ProxyKind::Https),
        #[cfg(not(feature = "tls"))]
        "https" => Err("https:// proxies need the `tls` feature of modelcontext".to_owned()),
        "socks5" => Ok(ProxyKind::Socks5 { remote_dns: false }),
        "socks5h" => Ok(ProxyKind::Socks5 { remote_dns: true }),
        "socks4" => Ok(ProxyKind::Socks4 { remote_dns: false }),
        "socks4a" => Ok(ProxyKind::Socks4 { remote_dns: true }),
        _ => Err(format!(
            "{scheme}:// is not supported: only http://, https://, socks4://, socks4a://, \
             socks5:// and socks5h:// proxies are"
        )),
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`; the host without brackets. `None` when the host
/// is empty or the port is not a number.
fn split_host_port(text: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else if text.parse::<IpAddr>().is_ok() {
        (text, None)
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    let port = match port {
        // Digits only: `parse` would also take a sign.
        Some(port) if !port.bytes().all(|b| b.is_ascii_digit()) => return None,
        Some(port) => Some(port.parse::<u16>().ok()?),
        None => None,
    };
    (!host.is_empty()).then_some((host, port))
}

/// The `NO_PROXY` rules.
#[derive(Clone, Default, Debug)]
struct NoProxy {
    rules: Vec<Bypass>,
}

#[derive(Clone, Debug, PartialEq)]
enum Bypass {
    Everything,
    /// A host name (lowercase, no leading dot) and its subdomains.
    Domain(String, Option<u16>),
    /// An address range: the network and its prefix length (a lone address is a full prefix).
    Network(IpAddr, u8, Option<u16>),
}

impl NoProxy {
    fn parse(list: &str) -> NoProxy {
        let rules = list
            .split([',', ' '])
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .filter_map(Bypass::parse)
            .collect();
        NoProxy { rules }
    }

    fn matches(&self, host: &str, port: u16) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let ip = host.parse::<IpAddr>().ok();
        self.rules.iter().any(|rule| rule.matches(&host, ip, port))
    }
}

impl Bypass {
    fn parse(entry: &str) -> Option<Bypass> {
        if entry == "*" {
            return Some(Bypass::Everything);
        }
        if let Some((network, bits)) = entry.split_once('/') {
            let network: IpAddr = network.trim_matches(['[', ']']).parse().ok()?;
            let max = if network.is_ipv4() { 32 } else { 128 };
            let bits = bits.parse::<u8>().ok().filter(|bits| *bits <= max)?;
            return Some(Bypass::Network(network, bits, None));
        }
        let (host, port) = split_host_port(entry)?;
        if let Ok(ip) = host.parse::<IpAddr>() {
            let bits = if ip.is_ipv4() { 32 } else { 128 };
            return Some(Bypass::Network(ip, bits, port));
        }
        let domain = host.trim_start_matches('.').trim_end_matches('.').to_ascii_lowercase();
        (!domain.is_empty()).then_some(Bypass::Domain(domain, port))
    }

    fn matches(&self, host: &str, ip: Option<IpAddr>, port: u16) -> bool {
        match self {
            Bypass::Everything => true,
            Bypass::Domain(domain, rule_port) => {
                let same = host == domain
                    || host.strip_suffix(domain.as_str()).is_some_and(|head| head.ends_with('.'));
                same && rule_port.is_none_or(|p| p == port)
            }
            Bypass::Network(network, bits, rule_port) => {
                ip.is_some_and(|ip| in_network(ip, *network, *bits))
                    && rule_port.is_none_or(|p| p == port)
            }
        }
    }
}

fn in_network(ip: IpAddr, network: IpAddr, bits: u8) -> bool {
    let (ip, network, width) = match (ip, network) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => (u32::from(ip).into(), u32::from(net).into(), 32),
        (IpAddr::V6(ip), IpAddr::V6(net)) => (u128::from(ip), u128::from(net), 128),
        _ => return false,
    };
    let shift = width - u32::from(bits);
    let mask = if bits == 0 { 0 } else { u128::MAX << shift };
    // An IPv4 value fills the low 32 bits: its mask is cut to those bits.
    let mask = if width == 32 { mask & u128::from(u32::MAX) } else { mask };
    ip & mask == network & mask
}

/// The longest proxy answer head read before giving up on it.
const MAX_PROXY_HEAD: usize = 8 * 1024;

/// Asks the proxy on `stream` (TCP, or TLS with an `https://` proxy) for a tunnel to
/// `host:port`; on success the stream is the tunnel.
pub(crate) async fn tunnel(
    stream: &mut (impl AsyncRead + AsyncWrite + Unpin),
    proxy: &ProxyUrl,
    host: &str,
    port: u16,
) -> Result<(), String> {
    let authority =
        if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
    let mut head = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
    if let Some(authorization) = &proxy.authorization {
        head.push_str(&format!("Proxy-Authorization: {authorization}\r\n"));
    }
    head.push_str("\r\n");
    let via = format!("proxy {}:{}", proxy.host, proxy.port);
    // Flushed: over TLS with the proxy, written bytes may wait in the session otherwise.
    let asked = async {
        stream.write_all(head.as_bytes()).await?;
        stream.flush().await
    };
    asked.await.map_err(|e| format!("{via}: could not ask for a tunnel to {authority}: {e}"))?;
    let answer = read_head(stream).await.map_err(|e| format!("{via}: {e}"))?;
    let status_line = answer.lines().next().unwrap_or("");
    let status = status_line.split_whitespace().nth(1).unwrap_or("");
    if status == "200" {
        return Ok(());
    }
    let hint = if status == "407" { " (check the user and password in the proxy URL)" } else { "" };
    Err(format!("{via} refused the tunnel to {authority}: {status_line:?}{hint}"))
}

/// Reads the proxy's answer head byte by byte, so nothing of the tunnel after it is consumed.
async fn read_head(stream: &mut (impl AsyncRead + Unpin)) -> Result<String, String> {
    let mut head = Vec::with_capacity(128);
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= MAX_PROXY_HEAD {
            return Err(format!("its answer head exceeds {MAX_PROXY_HEAD} bytes"));
        }
        match stream.read_u8().await {
            Ok(byte) => head.push(byte),
            Err(e) => return Err(format!("the connection closed before the tunnel opened ({e})")),
        }
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

fn invalid_input(message: String) -> Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, message).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_proxy(list: &str, host: &str, port: u16) -> bool {
        NoProxy::parse(list).matches(host, port)
    }

    #[test]
    fn no_proxy_matches_hosts_and_their_subdomains() {
        assert!(no_proxy("example.com", "example.com", 443));
        assert!(no_proxy("example.com", "api.example.com", 443));
        assert!(no_proxy(".example.com", "example.com", 443));
        assert!(no_proxy(".example.com", "API.Example.com.", 443));
        assert!(!no_proxy("example.com", "badexample.com", 443));
        assert!(!no_proxy("api.example.com", "example.com", 443));
        assert!(no_proxy("other.org, example.com", "example.com", 80));
        assert!(no_proxy("other.org example.com", "example.com", 80));
        assert!(!no_proxy("", "example.com", 80));
    }

    #[test]
    fn no_proxy_star_ports_ips_and_ranges() {
        assert!(no_proxy("*", "anything.test", 1));
        assert!(no_proxy("example.com:8443", "example.com", 8443));
        assert!(!no_proxy("example.com:8443", "example.com", 443));
        assert!(no_proxy("127.0.0.1", "127.0.0.1", 9));
        assert!(!no_proxy("127.0.0.1", "127.0.0.2", 9));
        assert!(no_proxy("10.0.0.0/8", "10.20.30.40", 9));
        assert!(!no_proxy("10.0.0.0/8", "11.0.0.1", 9));
        assert!(no_proxy("0.0.0.0/0", "192.0.2.1", 9));
        assert!(no_proxy("::1", "::1", 9));
        assert!(no_proxy("[::1]:8080", "::1", 8080));
        assert!(!no_proxy("[::1]:8080", "::1", 8081));
        assert!(no_proxy("fd00::/8", "fd12::1", 9));
        assert!(!no_proxy("10.0.0.0/8", "ten.example", 9));
        // Rules that cannot be read are skipped, the rest still apply.
        assert!(no_proxy("10.0.0.0/99, example.com", "example.com", 9));
    }

    #[test]
    fn proxy_urls_parse_with_credentials_and_defaults() {
        let proxy = ProxyUrl::parse("http://user:p%40ss@proxy.local:3128/").expect("parsed");
        assert_eq!((proxy.host.as_str(), proxy.port), ("proxy.local", 3128));
        let expected = format!("Basic {}", crate::base64::encode(b"user:p@ss"));
        assert_eq!(proxy.authorization.as_deref(), Some(expected.as_str()));
        assert!(!format!("{proxy:?}").contains("p%40ss"));
        let bare = ProxyUrl::parse("proxy.local").expect("parsed");
        assert_eq!((bare.host.as_str(), bare.port, bare.authorization), ("proxy.local", 80, None));
        let v6 = ProxyUrl::parse("http://[::1]:8080").expect("parsed");
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 8080));
        let socks = ProxyUrl::parse("SOCKS5h://u:p%3A@socks.local").expect("parsed");
        assert_eq!((socks.kind, socks.port), (ProxyKind::Socks5 { remote_dns: true }, 1080));
        assert_eq!(socks.credentials, Some(("u".to_owned(), "p:".to_owned())));
        assert_eq!(format!("{socks:?}"), "socks5h://<credentials>@socks.local:1080");
        let local = ProxyUrl::parse("socks5://127.0.0.1:9050").expect("parsed");
        assert_eq!(local.kind, ProxyKind::Socks5 { remote_dns: false });
        let socks4 = ProxyUrl::parse("socks4://proxy").expect("parsed");
        assert_eq!((socks4.kind, socks4.port), (ProxyKind::Socks4 { remote_dns: false }, 1080));
        let socks4a = ProxyUrl::parse("SOCKS4A://proxy:9").expect("parsed");
        assert_eq!(format!("{socks4a:?}"), "socks4a://proxy:9");
    }

    #[cfg(feature = "tls")]
    #[test]
    fn https_proxies_default_to_port_443() {
        let proxy = ProxyUrl::parse("https://u:p@proxy.local").expect("parsed");
        assert_eq!((proxy.kind, proxy.port), (ProxyKind::Https, 443));
        assert_eq!(format!("{proxy:?}"), "https://<credentials>@proxy.local:443");
    }

    #[test]
    fn bad_proxy_urls_say_what_is_wrong() {
        let ftp = ProxyUrl::parse("ftp://proxy:21").expect_err("refused");
        assert_eq!(
            ftp,
            "ftp:// is not supported: only http://, https://, socks4://, socks4a://, socks5:// \
             and socks5h:// proxies are"
        );
        assert_eq!(
            ProxyUrl::parse("socks4a://user:pw@proxy").expect_err("refused"),
            "socks4a:// cannot carry a user or password (SOCKS4 has none): use socks5://"
        );
        #[cfg(not(feature = "tls"))]
        assert_eq!(
            ProxyUrl::parse("https://proxy").expect_err("refused"),
            "https:// proxies need the `tls` feature of modelcontext"
        );
        assert!(
            ProxyUrl::parse("http://proxy:port")
                .expect_err("refused")
                .contains("invalid host or port")
        );
        assert!(ProxyUrl::parse("http://:8080").is_err());
        assert!(
            ProxyUrl::parse("http://proxy:8080/path")
                .expect_err("refused")
                .contains("without a path")
        );
        assert_eq!(
            ProxyUrl::parse("http://user:%+1@proxy:8080").expect_err("refused"),
            r#"URL's user or password: malformed percent-escape "%+1""#
        );
        assert!(ProxyUrl::parse("http://proxy:+8080").is_err(), "a port is digits only");
    }

    #[test]
    fn the_environment_is_read_as_curl_reads_it() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        };
        let target = |https, host| Target { https, host, port: 443 };
        let proxies = Proxies::from_vars(vars(&[
            ("HTTPS_PROXY", "http://upper:1"),
            ("https_proxy", "http://lower:2"),
            ("HTTP_PROXY", "http://plain:3"),
            ("NO_PROXY", "internal.test"),
        ]));
        assert_eq!(proxies.for_target(&target(true, "a.test")).expect("parsed").host, "lower");
        assert_eq!(proxies.for_target(&target(false, "a.test")).expect("parsed").host, "plain");
        assert!(proxies.for_target(&target(true, "x.internal.test")).is_none());
        let all = Proxies::from_vars(vars(&[("ALL_PROXY", "http://all:4")]));
        assert_eq!(all.for_target(&target(true, "a.test")).expect("parsed").port, 4);
        let broken = Proxies::from_vars(vars(&[("HTTPS_PROXY", "ftp://x:1")]));
        assert!(broken.for_target(&target(true, "a.test")).is_none());
        assert!(Proxies::none().for_target(&target(true, "a.test")).is_none());
        let bypassed = Proxies::all("http://p:5").expect("parsed").no_proxy("*");
        assert!(bypassed.for_target(&target(true, "a.test")).is_none());
        // Loopback goes direct when the proxy comes from variables, not when it is explicit.
        for host in ["localhost", "api.localhost", "127.0.0.1", "127.9.9.9", "::1"] {
            assert!(proxies.for_target(&target(true, host)).is_none(), "{host}");
        }
        let explicit = Proxies::all("http://p:5").expect("parsed");
        assert!(explicit.for_target(&target(true, "localhost")).is_some());
        // In a CGI program, HTTP_PROXY is the request's `Proxy:` header: not ours to follow.
        let cgi = Proxies::from_vars(vars(&[
            ("REQUEST_METHOD", "GET"),
            ("HTTP_PROXY", "http://attacker:1"),
            ("HTTPS_PROXY", "http://corporate:2"),
        ]));
        assert!(cgi.for_target(&target(false, "a.test")).is_none());
        assert_eq!(cgi.for_target(&target(true, "a.test")).expect("parsed").host, "corporate");
        let lower = Proxies::from_vars(vars(&[("REQUEST_METHOD", "GET"), ("http_proxy", "p:3")]));
        assert_eq!(lower.for_target(&target(false, "a.test")).expect("parsed").port, 3);
    }
}
