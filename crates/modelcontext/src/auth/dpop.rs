//! DPoP (RFC 9449): access tokens bound to a key the client holds, proven on every request
//! with a fresh signed JWT (the *proof*) in the `DPoP` header.
//!
//! What both sides share lives here: the proof's media type, the RFC 7638 key thumbprint and
//! the `ath` token hash. [`DpopKey`] (feature `auth-client`) makes the client's proofs (ES256);
//! the resource server's checks are in `dpop_policy` (feature `auth-server`).

use serde_json::Value;
#[cfg(feature = "auth-client")]
use serde_json::json;
use sha2::{Digest, Sha256};

#[cfg(feature = "auth-client")]
use p256::ecdsa::signature::Signer;
#[cfg(feature = "auth-client")]
use p256::ecdsa::{Signature, SigningKey};

#[cfg(feature = "auth-client")]
use super::now_seconds;
#[cfg(feature = "auth-client")]
use crate::auth::client::AuthError;
use crate::base64::encode_url;

/// The proof's media type (RFC 9449 section 4.2).
pub(crate) const PROOF_TYPE: &str = "dpop+jwt";

/// A client's DPoP key: a P-256 key pair that signs ES256 proofs. Tokens issued while it is
/// the client's key are bound to its [thumbprint](DpopKey::thumbprint).
#[cfg(feature = "auth-client")]
pub struct DpopKey {
    signing: SigningKey,
    /// The public key as a JWK (`kty`, `crv`, `x`, `y`), as it goes in every proof's header.
    jwk: Value,
    thumbprint: String,
}

#[cfg(feature = "auth-client")]
impl DpopKey {
    /// A new random key.
    pub fn generate() -> Result<DpopKey, AuthError> {
        // Almost every 32-byte string is a valid scalar; the loop only guards the rest.
        for _ in 0..8 {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes)
                .map_err(|e| AuthError::new(format!("no randomness: {e}")))?;
            if let Ok(signing) = SigningKey::from_slice(&bytes) {
                return Ok(DpopKey::from_signing_key(signing));
            }
        }
        Err(AuthError::new("could not generate a P-256 key"))
    }

    /// A key from a PKCS#8 PEM P-256 private key (`-----BEGIN PRIVATE KEY-----`), e.g. one kept
    /// in a secret store so tokens survive a restart.
    pub fn from_pkcs8_pem(pem: &str) -> Result<DpopKey, AuthError> {
        Ok(DpopKey::from_signing_key(p256_key_from_pem(pem, "the DPoP key")?))
    }

    fn from_signing_key(signing: SigningKey) -> DpopKey {
        let point = signing.verifying_key().to_encoded_point(false);
        let coordinate =
            |c: Option<&p256::FieldBytes>| c.map(|c| encode_url(c)).unwrap_or_default();
        let jwk = json!({
            "kty": "EC",
            "crv": "P-256",
            "x": coordinate(point.x()),
            "y": coordinate(point.y()),
        });
        let thumbprint = jwk_thumbprint(&jwk).unwrap_or_default();
        DpopKey { signing, jwk, thumbprint }
    }

    /// The RFC 7638 SHA-256 thumbprint of the public key: what a bound token's `cnf.jkt` holds.
    pub fn thumbprint(&self) -> &str {
        &self.thumbprint
    }

    /// The public key as a JWK.
    pub fn public_jwk(&self) -> &Value {
        &self.jwk
    }

    /// A fresh proof for one request: `method` (`htm`) to `url` (`htu`, without its query and
    /// fragment), with `ath` when presenting `access_token` and the server's `nonce` if it gave
    /// one. Each proof has its own `jti`: never send one twice.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, AuthError> {
        let mut jti = [0u8; 16];
        getrandom::fill(&mut jti).map_err(|e| AuthError::new(format!("no randomness: {e}")))?;
        let header = json!({ "typ": PROOF_TYPE, "alg": "ES256", "jwk": self.jwk });
        let mut claims = json!({
            "jti": encode_url(&jti),
            "htm": method,
            "htu": without_query(url),
            "iat": now_seconds(),
        });
        if let Some(token) = access_token {
            claims["ath"] = Value::String(token_hash(token));
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = Value::String(nonce.to_owned());
        }
        Ok(sign_es256(&self.signing, &header, &claims))
    }
}

/// A P-256 private key from PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`); `what` names it in
/// the errors.
#[cfg(feature = "auth-client")]
pub(crate) fn p256_key_from_pem(pem: &str, what: &str) -> Result<SigningKey, AuthError> {
    use p256::pkcs8::DecodePrivateKey;
    use rustls_pki_types::PrivatePkcs8KeyDer;
    use rustls_pki_types::pem::PemObject;
    let der = PrivatePkcs8KeyDer::from_pem_slice(pem.as_bytes())
        .map_err(|_| AuthError::new(format!("{what} is not PEM")))?;
    SigningKey::from_pkcs8_der(der.secret_pkcs8_der())
        .map_err(|_| AuthError::new(format!("{what} is not a PKCS#8 P-256 private key")))
}

/// A compact JWS (RFC 7515) of `claims` under `header`, signed ES256 with `key`.
#[cfg(feature = "auth-client")]
pub(crate) fn sign_es256(key: &SigningKey, header: &Value, claims: &Value) -> String {
    let input = format!(
        "{}.{}",
        encode_url(header.to_string().as_bytes()),
        encode_url(claims.to_string().as_bytes())
    );
    let signature: Signature = key.sign(input.as_bytes());
    format!("{input}.{}", encode_url(&signature.to_bytes()))
}

#[cfg(feature = "auth-client")]
impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey").field("thumbprint", &self.thumbprint).finish_non_exhaustive()
    }
}

/// `ath`: base64url(SHA-256(access token)).
pub(crate) fn token_hash(token: &str) -> String {
    encode_url(&Sha256::digest(token.as_bytes()))
}

/// RFC 7638: SHA-256 over the key's required members, in lexicographic order, no whitespace.
pub(crate) fn jwk_thumbprint(jwk: &Value) -> Option<String> {
    let members: &[&str] = match jwk.get("kty")?.as_str()? {
        "EC" => &["crv", "kty", "x", "y"],
        "RSA" => &["e", "kty", "n"],
        "OKP" => &["crv", "kty", "x"],
        _ => return None,
    };
    // Built by hand: the members in the order listed (lexicographic), however a JSON map
    // would order them.
    let mut fields = Vec::with_capacity(members.len());
    for member in members {
        let value = jwk.get(*member)?.as_str()?;
        fields.push(format!("\"{member}\":{}", Value::String(value.to_owned())));
    }
    let canonical = format!("{{{}}}", fields.join(","));
    Some(encode_url(&Sha256::digest(canonical.as_bytes())))
}

/// `htu` compares without query and fragment (RFC 9449 section 4.3).
pub(crate) fn without_query(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn thumbprint_matches_rfc7638_example() {
        let jwk = json!({
            "kty": "RSA",
            "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
            "e": "AQAB",
            "alg": "RS256",
            "kid": "2011-04-29",
        });
        assert_eq!(
            jwk_thumbprint(&jwk).as_deref(),
            Some("NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
        );
    }

    #[cfg(feature = "auth-client")]
    #[test]
    fn a_pkcs8_pem_key_is_read_and_anything_else_is_named() {
        let p256 = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("p256");
        let key = DpopKey::from_pkcs8_pem(&p256.serialize_pem()).expect("a P-256 key");
        assert_eq!(key.public_jwk()["crv"], "P-256");
        let error = |pem: &str| DpopKey::from_pkcs8_pem(pem).expect_err("refused").to_string();
        assert_eq!(error("not a key"), "the DPoP key is not PEM");
        let ed25519 = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).expect("ed25519");
        assert_eq!(
            error(&ed25519.serialize_pem()),
            "the DPoP key is not a PKCS#8 P-256 private key"
        );
    }
}
