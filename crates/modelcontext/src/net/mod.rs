//! The one HTTP client of the SDK (feature `http`): the client transport, the auth module's
//! key-set and introspection fetches and the OAuth client all send through an [`HttpClient`].
//! It is the one place for TLS (feature `tls`, on by default), the connect timeout, proxies,
//! headers sent with every request, and the redirect policy: redirects are never followed
//! (an MCP endpoint or an authorization server that moves must be configured anew; following
//! one could carry a token elsewhere).
//!
//! ```no_run
//! # async fn run() -> Result<(), modelcontext::Error> {
//! use modelcontext::net::{HttpClient, Proxies};
//! use modelcontext::transport::http::HttpTransport;
//! let client = HttpClient::builder()
//!     .root_certificate(std::fs::read("company-ca.pem")?)?
//!     .proxies(Proxies::all("http://proxy.internal:3128")?.no_proxy(".internal"))
//!     .build();
//! let transport = HttpTransport::new("https://mcp.example.com/mcp")?.http_client(client);
//! let client = modelcontext::Client::connect(transport).await?;
//! # Ok(()) }
//! ```
//!
//! Trust, for `https://`: the system's store (or the bundle `SSL_CERT_FILE` / `SSL_CERT_DIR`
//! name instead, as for curl, OpenSSL and Python), Mozilla's webpki roots when that yields
//! none, plus every [`HttpClientBuilder::root_certificate`]. HTTP/2 is used when the server
//! picks it by ALPN. Anything else (client certificates, a custom resolver, a test double):
//! hand in your own service with [`HttpClient::from_service`].

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue, USER_AGENT};
use http::{Request, Response};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming};
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::rt::TokioExecutor;
use tower::ServiceExt;
use tower::util::BoxCloneSyncService;

use crate::Error;

mod connect;
mod dial;
#[cfg(feature = "otel")]
mod otlp;
mod proxy;
mod resolver;
#[cfg(feature = "tls")]
mod tls;
mod via_proxy;

#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub use otlp::OtlpHttpClient;
pub use proxy::Proxies;

/// Default time allowed to open a connection (TCP, proxy tunnel and TLS handshake together).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// A fetched document (metadata, a key set, a token answer) must arrive whole within this.
#[cfg(any(feature = "auth-client", feature = "auth-server"))]
pub(crate) const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// Metadata documents, key sets and token answers are a few KiB; anything far larger is not one.
#[cfg(any(feature = "auth-client", feature = "auth-server"))]
pub(crate) const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The HTTP client every outgoing connection of the SDK goes through. Cheap to clone: clones
/// share their connection pool.
///
/// [`HttpClient::new`] (and every component that is not handed one) reads the proxy variables
/// of the environment and trusts the system's roots; [`HttpClient::builder`] changes that.
/// Hand one to [`HttpTransport::http_client`](crate::transport::http::HttpTransport::http_client),
/// and, with the `auth-server` and `auth-client` features, to `JwtVerifier`,
/// `IntrospectionVerifier` and `OAuthClient` (each has an `http_client` method).
#[derive(Clone)]
pub struct HttpClient {
    inner: Arc<Inner>,
}

struct Inner {
    backend: Backend,
    /// Sent with every request that does not set the header itself.
    headers: HeaderMap,
}

// One per client, behind its `Arc`: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
enum Backend {
    /// Ours: hyper's pool over our connector. Answers need no boxing.
    Hyper(Hyper<connect::Connector, Full<Bytes>>),
    /// The user's own service.
    Service(BoxCloneSyncService<Request<Full<Bytes>>, Response<ResponseBody>, BoxError>),
}

impl HttpClient {
    /// A client with the defaults: proxies from the environment, the system's roots, a 30 s
    /// connect timeout.
    pub fn new() -> HttpClient {
        HttpClient::builder().build()
    }

    /// A client to configure.
    pub fn builder() -> HttpClientBuilder {
        HttpClientBuilder::default()
    }

    /// A client that sends every request through `service`: your own connector (client
    /// certificates, a custom resolver, Unix sockets) or a test double. The builder's
    /// settings (TLS, proxies, connect timeout) are then the service's business; redirects
    /// are still never followed by the SDK, and size limits and read timeouts still apply.
    ///
    /// Requests arrive as `http::Request<http_body_util::Full<bytes::Bytes>>` with an absolute
    /// URI; any `http_body::Body` of `Bytes` may come back. A hyper-util client is such a service:
    /// `HttpClient::from_service(hyper_util::client::legacy::Client::builder(..).build(my_connector))`.
    pub fn from_service<S, B>(service: S) -> HttpClient
    where
        S: tower::Service<Request<Full<Bytes>>, Response = Response<B>>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let service = service
            .map_response(|response: Response<B>| {
                response.map(|body| ResponseBody::Boxed(body.map_err(Into::into).boxed_unsync()))
            })
            .map_err(Into::into);
        let inner = Inner {
            backend: Backend::Service(BoxCloneSyncService::new(service)),
            headers: HeaderMap::new(),
        };
        HttpClient { inner: Arc::new(inner) }
    }

    /// Sends `request` (an absolute URL). An error says what failed, in words (a TLS error
    /// names the host and the reason).
    pub(crate) async fn send(
        &self,
        mut request: Request<Full<Bytes>>,
    ) -> Result<Response<ResponseBody>, String> {
        for (name, value) in &self.inner.headers {
            if !request.headers().contains_key(name) {
                request.headers_mut().insert(name, value.clone());
            }
        }
        match &self.inner.backend {
            Backend::Hyper(client) => match client.request(request).await {
                Ok(response) => Ok(response.map(ResponseBody::Hyper)),
                Err(err) => Err(describe(&err)),
            },
            Backend::Service(service) => {
                service.clone().oneshot(request).await.map_err(|err| describe(&*err))
            }
        }
    }

    /// Sends `request` (an absolute URL) and reads the whole answer, whatever its status, up to
    /// `max_body` bytes: a request of your own through the same pool, proxies and TLS settings
    /// as the SDK's (an OTLP exporter's, say; `examples/otel` wraps it for
    /// `opentelemetry-http`). Redirects are not followed. An error says what failed, in words.
    pub async fn send_buffered(
        &self,
        request: Request<Bytes>,
        max_body: usize,
    ) -> Result<Response<Bytes>, Error> {
        let failed = |message: String| Error::from(std::io::Error::other(message));
        let response = self.send(request.map(Full::new)).await.map_err(failed)?;
        let (parts, body) = response.into_parts();
        let body = http_body_util::Limited::new(body, max_body)
            .collect()
            .await
            .map_err(|e| failed(format!("reading the answer: {e}")))?;
        Ok(Response::from_parts(parts, body.to_bytes()))
    }

    /// Sends a request for a small document (metadata, a key set, a token answer): the whole
    /// exchange within [`FETCH_TIMEOUT`], the body up to [`MAX_DOCUMENT_BYTES`]. Errors start
    /// with the method and URL, and never carry a header or body (they hold secrets).
    #[cfg(any(feature = "auth-client", feature = "auth-server"))]
    pub(crate) async fn fetch(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<(http::StatusCode, http::HeaderMap, Bytes), String> {
        let what = format!("{} {}", request.method(), request.uri());
        let exchange = async {
            let response = self.send(request).await?;
            let (parts, body) = response.into_parts();
            let limited = http_body_util::Limited::new(body, MAX_DOCUMENT_BYTES);
            let body = limited.collect().await.map_err(|e| format!("reading the answer: {e}"))?;
            Ok::<_, String>((parts.status, parts.headers, body.to_bytes()))
        };
        match tokio::time::timeout(FETCH_TIMEOUT, exchange).await {
            Ok(result) => result.map_err(|e| format!("{what}: {e}")),
            Err(_) => Err(format!("{what}: no answer within {FETCH_TIMEOUT:?}")),
        }
    }
}

impl Default for HttpClient {
    fn default() -> HttpClient {
        HttpClient::new()
    }
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let backend = match self.inner.backend {
            Backend::Hyper(_) => "built in",
            Backend::Service(_) => "a user's service",
        };
        f.debug_struct("HttpClient").field("backend", &backend).finish_non_exhaustive()
    }
}

/// An error and its sources in one line; a connection error is ours, already worded.
fn describe(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = Vec::new();
    let mut current = Some(err);
    while let Some(err) = current {
        if let Some(ours) = err.downcast_ref::<dial::ConnectError>() {
            return ours.0.clone();
        }
        parts.push(err.to_string());
        current = err.source();
    }
    parts.join(": ")
}

/// Settings of an [`HttpClient`].
#[derive(Clone)]
pub struct HttpClientBuilder {
    connect_timeout: Option<Duration>,
    /// `None`: read the environment when the client is built.
    proxies: Option<Proxies>,
    headers: HeaderMap,
    #[cfg(feature = "tls")]
    roots: Vec<rustls_pki_types::CertificateDer<'static>>,
    #[cfg(feature = "tls")]
    tls_config: Option<Arc<rustls::ClientConfig>>,
}

impl Default for HttpClientBuilder {
    fn default() -> HttpClientBuilder {
        HttpClientBuilder {
            connect_timeout: Some(DEFAULT_CONNECT_TIMEOUT),
            proxies: None,
            headers: HeaderMap::new(),
            #[cfg(feature = "tls")]
            roots: Vec::new(),
            #[cfg(feature = "tls")]
            tls_config: None,
        }
    }
}

impl HttpClientBuilder {
    /// Sets the time allowed to open a connection: TCP, the proxy's tunnel and the TLS
    /// handshake together (default 30 s); `None` waits forever.
    pub fn connect_timeout(mut self, timeout: Option<Duration>) -> HttpClientBuilder {
        self.connect_timeout = timeout;
        self
    }

    /// Sets which proxies to use, instead of the environment's (see [`Proxies`]).
    pub fn proxies(mut self, proxies: Proxies) -> HttpClientBuilder {
        self.proxies = Some(proxies);
        self
    }

    /// Sends every request through the proxy at `url` (`http://[user:password@]host:port`, or
    /// `https://`, `socks5://`, `socks5h://`, `socks4://`, `socks4a://`: see [`Proxies`]),
    /// whatever the environment says.
    pub fn proxy(self, url: &str) -> Result<HttpClientBuilder, Error> {
        Ok(self.proxies(Proxies::all(url)?))
    }

    /// Connects directly, ignoring `HTTPS_PROXY` and the other proxy variables.
    pub fn no_proxy(self) -> HttpClientBuilder {
        self.proxies(Proxies::none())
    }

    /// Adds a header to every request that does not set it itself (e.g. `User-Agent`, or a
    /// gateway's key).
    pub fn header(mut self, name: &str, value: &str) -> Result<HttpClientBuilder, Error> {
        let (name, value) = parse_header(name, value)?;
        self.headers.append(name, value);
        Ok(self)
    }

    /// Trusts the certificates in `certificate` (PEM, one or many, or one DER certificate) as
    /// roots, besides the system's: a private CA.
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub fn root_certificate(
        mut self,
        certificate: impl AsRef<[u8]>,
    ) -> Result<HttpClientBuilder, Error> {
        let parsed = tls::parse_certificates(certificate.as_ref())
            .map_err(|e| invalid_input(format!("root certificate: {e}")))?;
        self.roots.extend(parsed);
        Ok(self)
    }

    /// Uses `config` for every TLS connection instead of the one built from the roots (client
    /// certificates for mutual TLS, other roots, other protocol versions). Its ALPN list is
    /// set to `h2`, `http/1.1` when it names none. Ties your code to rustls 0.23.
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub fn tls_config(mut self, config: rustls::ClientConfig) -> HttpClientBuilder {
        self.tls_config = Some(Arc::new(tls::with_alpn(config)));
        self
    }

    /// The client. The trusted roots are read at the first `https://` connection, once per
    /// process.
    pub fn build(self) -> HttpClient {
        let config = dial::ConnectConfig {
            timeout: self.connect_timeout,
            proxies: self.proxies.unwrap_or_else(Proxies::from_env),
            tcp: dial::tcp_connector(resolver::Resolver::system()),
            #[cfg(feature = "tls")]
            tls: TlsSetup::new(self.roots, self.tls_config),
        };
        let connector = connect::Connector(Arc::new(config));
        let client = Hyper::builder(TokioExecutor::new()).build(connector);
        let mut headers = self.headers;
        if !headers.contains_key(USER_AGENT) {
            let agent = concat!("modelcontext/", env!("CARGO_PKG_VERSION"));
            headers.insert(USER_AGENT, HeaderValue::from_static(agent));
        }
        HttpClient { inner: Arc::new(Inner { backend: Backend::Hyper(client), headers }) }
    }
}

/// Header values stay out of logs: they are often credentials.
impl fmt::Debug for HttpClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClientBuilder")
            .field("connect_timeout", &self.connect_timeout)
            .field("proxies", &self.proxies)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The TLS configuration of one client, built at its first `https://` connection.
#[cfg(feature = "tls")]
pub(crate) struct TlsSetup {
    roots: Vec<rustls_pki_types::CertificateDer<'static>>,
    ready: std::sync::OnceLock<Result<Arc<rustls::ClientConfig>, String>>,
    for_proxy: std::sync::OnceLock<Result<Arc<rustls::ClientConfig>, String>>,
}

#[cfg(feature = "tls")]
impl TlsSetup {
    fn new(
        roots: Vec<rustls_pki_types::CertificateDer<'static>>,
        given: Option<Arc<rustls::ClientConfig>>,
    ) -> TlsSetup {
        let ready = std::sync::OnceLock::new();
        if let Some(config) = given {
            let _ = ready.set(Ok(config));
        }
        TlsSetup { roots, ready, for_proxy: std::sync::OnceLock::new() }
    }

    pub(crate) fn config(&self) -> Result<Arc<rustls::ClientConfig>, String> {
        self.ready.get_or_init(|| tls::client_config(&self.roots).map(Arc::new)).clone()
    }

    /// The configuration for TLS with an `https://` proxy (see [`tls::for_proxy`]).
    pub(crate) fn proxy_config(&self) -> Result<Arc<rustls::ClientConfig>, String> {
        let made = || self.config().map(|config| Arc::new(tls::for_proxy(&config)));
        self.for_proxy.get_or_init(made).clone()
    }
}

pub(crate) fn parse_header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), Error> {
    let name = HeaderName::from_bytes(name.as_bytes())
        .map_err(|e| invalid_input(format!("invalid header name {name:?}: {e}")))?;
    let value = HeaderValue::from_str(value)
        .map_err(|e| invalid_input(format!("invalid value for header {name}: {e}")))?;
    Ok((name, value))
}

/// Checks that `url` is one the client can send to: absolute `http://` or `https://` with a
/// host (`https://` only with the `tls` feature).
pub(crate) fn check_url(url: &str) -> Result<http::Uri, String> {
    let parsed: http::Uri = url.parse().map_err(|e| format!("invalid URL {url:?}: {e}"))?;
    let has_host = parsed.host().is_some_and(|host| !host.is_empty());
    match parsed.scheme_str() {
        Some("http") if has_host => Ok(parsed),
        Some("https") if has_host && cfg!(feature = "tls") => Ok(parsed),
        Some("https") if has_host => {
            Err(format!("{url}: https:// needs the `tls` feature of modelcontext"))
        }
        _ => Err(format!("{url}: expected an http:// or https:// URL with a host")),
    }
}

pub(crate) fn invalid_input(message: String) -> Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, message).into()
}

/// An answer's body: hyper's own for the built-in client (no boxing on the hot path), boxed
/// for a user's service.
pub(crate) enum ResponseBody {
    Hyper(Incoming),
    Boxed(UnsyncBoxBody<Bytes, BoxError>),
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.get_mut() {
            ResponseBody::Hyper(body) => Pin::new(body).poll_frame(cx).map_err(Into::into),
            ResponseBody::Boxed(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Hyper(body) => body.is_end_stream(),
            ResponseBody::Boxed(body) => body.is_end_stream(),
        }
    }
}
