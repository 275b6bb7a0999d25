//! A certificate authority made afresh in each TLS test: a root, and leaf certificates it signs
//! (good, expired, for another name). Nothing is stored in the repository, so nothing expires
//! under CI.

use std::sync::Arc;

use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose,
    date_time_ymd,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A root CA that signs leaf certificates.
pub struct TestCa {
    cert: Certificate,
    key: KeyPair,
}

/// A leaf certificate with its private key, both PEM.
pub struct Leaf {
    /// The leaf first, then the root that signed it.
    pub chain_pem: String,
    /// PKCS#8.
    pub key_pem: String,
}

impl TestCa {
    pub fn new() -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("no names");
        params.distinguished_name.push(DnType::CommonName, "modelcontext test CA");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("a key");
        let cert = params.self_signed(&key).expect("a self-signed root");
        TestCa { cert, key }
    }

    /// The root, PEM: what a client is told to trust.
    pub fn root_pem(&self) -> String {
        self.cert.pem()
    }

    /// A certificate for `names` (DNS names or IP addresses), valid now.
    pub fn leaf(&self, names: &[&str]) -> Leaf {
        self.sign(names, false)
    }

    /// A certificate for `names` that expired in 2020.
    pub fn expired_leaf(&self, names: &[&str]) -> Leaf {
        self.sign(names, true)
    }

    fn sign(&self, names: &[&str], expired: bool) -> Leaf {
        let names: Vec<String> = names.iter().map(|name| name.to_string()).collect();
        let mut params = CertificateParams::new(names).expect("valid subject names");
        params.distinguished_name.push(DnType::CommonName, "modelcontext test server");
        if expired {
            params.not_before = date_time_ymd(2019, 1, 1);
            params.not_after = date_time_ymd(2020, 1, 1);
        }
        let key = KeyPair::generate().expect("a key");
        let cert = params.signed_by(&key, &self.cert, &self.key).expect("signed by the root");
        Leaf {
            chain_pem: format!("{}{}", cert.pem(), self.cert.pem()),
            key_pem: key.serialize_pem(),
        }
    }
}

impl Leaf {
    /// A TLS acceptor that presents this certificate and offers `alpn`, for the servers and
    /// proxies the tests write.
    pub fn acceptor(&self, alpn: &[&[u8]]) -> tokio_rustls::TlsAcceptor {
        let chain = CertificateDer::pem_slice_iter(self.chain_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .expect("chain PEM");
        let key = PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes()).expect("key PEM");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("certificate and key");
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        tokio_rustls::TlsAcceptor::from(Arc::new(config))
    }
}

#[test]
fn the_root_signs_leaves_that_carry_their_chain() {
    let ca = TestCa::new();
    let leaf = ca.leaf(&["localhost", "127.0.0.1"]);
    assert_eq!(leaf.chain_pem.matches("BEGIN CERTIFICATE").count(), 2);
    assert!(leaf.chain_pem.ends_with(&ca.root_pem()));
    assert!(leaf.key_pem.contains("BEGIN PRIVATE KEY"));
    assert_ne!(ca.expired_leaf(&["localhost"]).chain_pem, leaf.chain_pem);
}
