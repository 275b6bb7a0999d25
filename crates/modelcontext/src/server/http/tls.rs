//! HTTPS for [`HttpEndpoint::serve`](super::HttpEndpoint::serve) (feature `tls`): the
//! certificate the server presents ([`ServerTls`]) and the handshake of each connection, after
//! which ALPN decides between HTTP/1.1 and HTTP/2 (RFC 9113 §3.2: over TLS, `h2` is only ever
//! negotiated, never guessed from the first bytes).

use std::fmt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use crate::Error;

/// The ALPN names we offer, most preferred first.
const ALPN_H2: &[u8] = b"h2";
const ALPN_HTTP11: &[u8] = b"http/1.1";

/// The certificate chain and private key an HTTPS endpoint presents, ready for rustls.
///
/// Set it with [`HttpOptions::tls`](super::HttpOptions::tls) or pass it to
/// [`McpServer::serve_https`](crate::McpServer::serve_https). Every constructor checks the key
/// against the certificate, so a wrong pair fails here, at startup, not at the first client.
///
/// ```no_run
/// # async fn run(server: modelcontext::McpServer) -> Result<(), modelcontext::Error> {
/// use modelcontext::server::http::ServerTls;
///
/// let tls = ServerTls::from_pem_files("cert.pem", "key.pem")?;
/// server.serve_https("0.0.0.0:8443", tls).await?; // https://<host>:8443/mcp
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ServerTls {
    config: Arc<ServerConfig>,
    /// Makes the TLS side of a listener ([`Secure`]). A function pointer set by the
    /// constructors, never named by the accept loop: the handshake, rustls' server state
    /// machine, `ring`'s ciphers and HTTP/2 are then only linked into binaries that build a
    /// `ServerTls`. A server that serves plain HTTP (or only stdio) carries none of them,
    /// which keeps its binary, the pages it maps at start and its relocations smaller
    /// (`BENCHMARKS.md`, "What each change bought").
    listener: fn(&ServerTls, &super::HttpOptions) -> Box<dyn TlsListener>,
}

impl fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerTls").field("alpn", &self.alpn_names()).finish_non_exhaustive()
    }
}

impl ServerTls {
    /// Reads a PEM certificate chain (the server's certificate first, then the intermediates)
    /// and a PEM private key (PKCS#8 `PRIVATE KEY`, PKCS#1 `RSA PRIVATE KEY` or SEC1
    /// `EC PRIVATE KEY`) from two files. The errors name the file and what was wrong with it.
    pub fn from_pem_files(
        cert_chain: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<Self, Error> {
        let (cert_path, key_path) = (cert_chain.as_ref(), key.as_ref());
        let chain = read_file(cert_path, "certificate chain")?;
        let key = read_file(key_path, "private key")?;
        let chain = parse_chain(&chain, &cert_path.display().to_string())?;
        let key = parse_key(&key, &key_path.display().to_string())?;
        ServerTls::from_der_parts(chain, key)
    }

    /// Like [`from_pem_files`](Self::from_pem_files), from PEM text already in memory.
    pub fn from_pem(cert_chain: &[u8], key: &[u8]) -> Result<Self, Error> {
        let chain = parse_chain(cert_chain, "the PEM certificate chain")?;
        let key = parse_key(key, "the PEM private key")?;
        ServerTls::from_der_parts(chain, key)
    }

    /// From DER: each certificate of the chain (the server's first) and the private key,
    /// whose format (PKCS#8, PKCS#1, SEC1) is recognised from its structure.
    pub fn from_der(cert_chain: Vec<Vec<u8>>, key: Vec<u8>) -> Result<Self, Error> {
        let chain = cert_chain.into_iter().map(CertificateDer::from).collect();
        let key = PrivateKeyDer::try_from(key)
            .map_err(|err| invalid(format!("the DER private key: {err}")))?;
        ServerTls::from_der_parts(chain, key)
    }

    /// Your own rustls configuration: client certificates, a certificate resolver per
    /// server name (SNI), other protocol versions or cipher suites. When its ALPN list is
    /// empty it gets ours, `h2` then `http/1.1`; a list of your own is kept as it is (leave
    /// `h2` out to serve HTTP/1.1 only).
    pub fn from_rustls(mut config: ServerConfig) -> Self {
        if config.alpn_protocols.is_empty() {
            config.alpn_protocols = vec![ALPN_H2.to_vec(), ALPN_HTTP11.to_vec()];
        }
        ServerTls { config: Arc::new(config), listener: Secure::boxed }
    }

    fn from_der_parts(
        chain: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
    ) -> Result<Self, Error> {
        if chain.is_empty() {
            return Err(invalid("the certificate chain is empty".to_owned()));
        }
        // The ring provider, named: no process-wide default to install, and no surprise if
        // another crate in the build enables a second provider.
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|err| invalid(format!("TLS protocol versions: {err}")))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|err| invalid(format!("the certificate and key do not fit: {err}")))?;
        Ok(ServerTls::from_rustls(config))
    }

    fn alpn_names(&self) -> Vec<String> {
        self.config.alpn_protocols.iter().map(|p| String::from_utf8_lossy(p).into_owned()).collect()
    }

    pub(super) fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(self.config.clone())
    }

    /// The TLS side of a listener serving with `options`.
    pub(super) fn listener(&self, options: &super::HttpOptions) -> Box<dyn TlsListener> {
        (self.listener)(self, options)
    }
}

/// One listener's TLS side as the accept loop sees it (see [`ServerTls`]'s `listener`).
pub(super) trait TlsListener: Send + Sync {
    /// Serves one accepted connection: the handshake, then the protocol ALPN chose.
    fn serve<'a>(
        &'a self,
        io: super::http1::WriteTimeout,
        peer: SocketAddr,
        http1: &'a hyper::server::conn::http1::Builder,
        served: super::served::Served,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;
}

fn read_file(path: &Path, what: &str) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|err| {
        let message = format!("cannot read the TLS {what} {}: {err}", path.display());
        Error::from(io::Error::new(err.kind(), message))
    })
}

/// Every `CERTIFICATE` block of `pem`, in order; other blocks (a key in the same file) are
/// skipped, as nginx and curl do.
fn parse_chain(pem: &[u8], source: &str) -> Result<Vec<CertificateDer<'static>>, Error> {
    let chain = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| invalid(format!("{source}: not valid PEM: {err}")))?;
    if chain.is_empty() {
        return Err(invalid(format!("{source}: no `BEGIN CERTIFICATE` block found")));
    }
    Ok(chain)
}

/// The first private key of `pem`, whichever of the three formats it is in.
fn parse_key(pem: &[u8], source: &str) -> Result<PrivateKeyDer<'static>, Error> {
    PrivateKeyDer::from_pem_slice(pem).map_err(|err| match err {
        rustls_pki_types::pem::Error::NoItemsFound => invalid(format!(
            "{source}: no `BEGIN PRIVATE KEY`, `BEGIN RSA PRIVATE KEY` or `BEGIN EC PRIVATE KEY` block found"
        )),
        err => invalid(format!("{source}: not valid PEM: {err}")),
    })
}

fn invalid(message: String) -> Error {
    Error::from(io::Error::new(io::ErrorKind::InvalidData, format!("TLS setup: {message}")))
}

/// The protocol a finished handshake agreed on.
pub(super) fn negotiated_h2<IO>(tls: &TlsStream<IO>) -> bool {
    tls.get_ref().1.alpn_protocol() == Some(ALPN_H2)
}

/// Runs the server side of the handshake, giving up after `limit`: a peer that connects and
/// says nothing, or stops half-way, holds a socket for that long at most.
pub(super) async fn handshake<IO>(
    acceptor: &TlsAcceptor,
    io: IO,
    limit: Duration,
) -> io::Result<TlsStream<IO>>
where
    IO: AsyncRead + AsyncWrite + Unpin,
{
    match tokio::time::timeout(limit, acceptor.accept(io)).await {
        Ok(done) => done,
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("the TLS handshake did not finish within {limit:?}"),
        )),
    }
}

/// The TLS side of one listener: the acceptor, the handshake limit and the HTTP/2 settings.
pub(super) struct Secure {
    acceptor: TlsAcceptor,
    handshake_timeout: Duration,
    http2: hyper::server::conn::http2::Builder<hyper_util::rt::TokioExecutor>,
    max_headers: usize,
    idle: Duration,
}

impl Secure {
    fn boxed(tls: &ServerTls, options: &super::HttpOptions) -> Box<dyn TlsListener> {
        Box::new(Secure::new(tls, options))
    }

    fn new(tls: &ServerTls, options: &super::HttpOptions) -> Secure {
        Secure {
            acceptor: tls.acceptor(),
            handshake_timeout: options.tls.handshake_timeout,
            http2: super::http2::builder(options),
            max_headers: options.limits.max_headers,
            idle: options.limits.header_read_timeout,
        }
    }

    /// Shakes hands, then serves the protocol ALPN chose. A failed handshake (garbage, a
    /// plain-HTTP request, an untrusted-certificate alert from the client, a timeout) is the
    /// peer's problem: a debug line, and the listener serves on.
    async fn serve(
        &self,
        io: super::http1::WriteTimeout,
        peer: SocketAddr,
        http1: &hyper::server::conn::http1::Builder,
        served: super::served::Served,
    ) {
        let tls = match handshake(&self.acceptor, io, self.handshake_timeout).await {
            Ok(tls) => tls,
            Err(err) => return tracing::debug!(%err, %peer, "TLS handshake failed"),
        };
        if !negotiated_h2(&tls) {
            return super::http1::serve_http1(http1, tls, served, peer).await;
        }
        let io = hyper_util::rt::TokioIo::new(tls);
        let streams = super::http2::serve(&self.http2, io, served, self.max_headers, self.idle);
        if let Err(err) = streams.await {
            tracing::debug!(%err, %peer, "HTTP/2 connection ended");
        }
    }
}

impl TlsListener for Secure {
    fn serve<'a>(
        &'a self,
        io: super::http1::WriteTimeout,
        peer: SocketAddr,
        http1: &'a hyper::server::conn::http1::Builder,
        served: super::served::Served,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(Secure::serve(self, io, peer, http1, served))
    }
}
