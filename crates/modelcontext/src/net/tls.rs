//! The client side of TLS (feature `tls`): the trusted roots, the rustls configuration, the
//! handshake, and handshake errors worded for people ("signed by an unknown issuer", not
//! `InvalidCertificate(UnknownIssuer)`).

use std::sync::{Arc, OnceLock};

use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{CertificateError, ClientConfig, RootCertStore};
use rustls_pki_types::pem::PemObject;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// ALPN: HTTP/2 when the server offers it, else HTTP/1.1.
const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// Certificates from PEM (one or many) or one DER certificate.
pub(crate) fn parse_certificates(bytes: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let looks_like_pem = bytes.windows(10).any(|w| w == b"-----BEGIN");
    if !looks_like_pem {
        // DER is one certificate: a SEQUENCE tag. Anything else is neither format.
        if bytes.first() != Some(&0x30) {
            return Err("neither PEM nor a DER certificate".to_owned());
        }
        return Ok(vec![CertificateDer::from(bytes.to_vec())]);
    }
    let certificates = CertificateDer::pem_slice_iter(bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("unreadable PEM: {e}"))?;
    if certificates.is_empty() {
        return Err("the PEM holds no CERTIFICATE block".to_owned());
    }
    Ok(certificates)
}

/// The roots every client trusts: the system's store (or, as in curl, OpenSSL and Python,
/// the bundle named by `SSL_CERT_FILE` / `SSL_CERT_DIR` instead), and Mozilla's webpki roots
/// when that yields none. Read once per process: the system store is hundreds of certificates.
fn system_roots() -> &'static RootCertStore {
    static ROOTS: OnceLock<RootCertStore> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots = RootCertStore::empty();
        let native = rustls_native_certs::load_native_certs();
        for err in &native.errors {
            tracing::debug!(%err, "a trusted root could not be loaded");
        }
        let (added, _ignored) = roots.add_parsable_certificates(native.certs);
        if added == 0 {
            tracing::debug!("no usable system roots: trusting the webpki roots");
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        }
        roots
    })
}

/// The rustls configuration of one client: the system roots plus the client's own.
pub(crate) fn client_config(
    extra_roots: &[CertificateDer<'static>],
) -> Result<ClientConfig, String> {
    let mut roots = system_roots().clone();
    for root in extra_roots {
        roots.add(root.clone()).map_err(|e| format!("a root certificate was refused: {e}"))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
    Ok(config)
}

/// The configuration for TLS with an `https://` proxy: the client's own (the same roots, or
/// the configuration the user gave), offering HTTP/1.1 only, since `CONNECT` is sent as an
/// HTTP/1.1 request.
pub(crate) fn for_proxy(config: &ClientConfig) -> ClientConfig {
    let mut config = config.clone();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}

/// A configuration handed in by the user, with our ALPN if it names none.
pub(crate) fn with_alpn(mut config: ClientConfig) -> ClientConfig {
    if config.alpn_protocols.is_empty() {
        config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
    }
    config
}

/// The TLS handshake with `host` over `io` (TCP, or a tunnel through a proxy).
pub(crate) async fn handshake<IO: AsyncRead + AsyncWrite + Unpin>(
    config: Arc<ClientConfig>,
    io: IO,
    host: &str,
) -> Result<TlsStream<IO>, String> {
    let name = ServerName::try_from(host.to_owned())
        .map_err(|_| format!("TLS: {host:?} is not a valid server name"))?;
    TlsConnector::from(config)
        .connect(name, io)
        .await
        .map_err(|err| format!("TLS handshake with {host} failed: {}", explain(&err)))
}

/// True when the server chose HTTP/2.
pub(crate) fn negotiated_h2<IO>(stream: &TlsStream<IO>) -> bool {
    stream.get_ref().1.alpn_protocol() == Some(b"h2")
}

/// What went wrong, in words: rustls' certificate errors get a sentence and a hint each.
fn explain(err: &std::io::Error) -> String {
    let Some(tls) = err.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) else {
        return err.to_string();
    };
    let rustls::Error::InvalidCertificate(certificate) = tls else {
        return tls.to_string();
    };
    match certificate {
        CertificateError::UnknownIssuer => "its certificate is signed by an unknown issuer (not \
            in the trusted roots; for a private CA use root_certificate(..) or SSL_CERT_FILE)"
            .to_owned(),
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            "its certificate is not valid for this host name (a name mismatch)".to_owned()
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            "its certificate has expired".to_owned()
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            "its certificate is not valid yet (is the clock right?)".to_owned()
        }
        CertificateError::Revoked => "its certificate has been revoked".to_owned(),
        other => format!("its certificate was refused: {other:?}"),
    }
}
