//! Tamper-proof tokens the client must hand back unchanged: pagination cursors and MRTR
//! `requestState`.
//!
//! A token is `base64url(payload) "." base64url(HMAC-SHA256(key, domain NUL payload))`. The
//! payload is not secret (the client could read it); it cannot be forged or altered without the
//! key, and the domain keeps a token of one kind from passing as another. Keys come from a
//! ring: the first seals, every key opens, so keys can rotate and several instances behind a
//! load balancer can share them ([`McpServer::signing_keys`](super::McpServer::signing_keys)).

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::Error;

type HmacSha256 = Hmac<Sha256>;

/// The shortest key accepted: 256 bits, the HMAC-SHA256 block strength.
const MIN_KEY_BYTES: usize = 32;

/// The server's signing keys.
#[derive(Clone)]
pub(crate) struct KeyRing {
    keys: Vec<Vec<u8>>,
}

impl std::fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyRing({} keys)", self.keys.len())
    }
}

impl KeyRing {
    /// One fresh key from the OS CSPRNG: tokens are only valid for this process.
    pub(crate) fn random() -> KeyRing {
        let mut key = vec![0u8; MIN_KEY_BYTES];
        // Without an OS random source no server could run safely; there is no fallback.
        #[allow(clippy::expect_used)]
        getrandom::fill(&mut key).expect("the OS random number generator is available");
        KeyRing { keys: vec![key] }
    }

    /// A ring from configured keys, each at least 32 bytes; the first one seals.
    pub(crate) fn new(keys: Vec<Vec<u8>>) -> Result<KeyRing, Error> {
        if keys.is_empty() || keys.iter().any(|k| k.len() < MIN_KEY_BYTES) {
            return Err(Error::registration(format!(
                "signing keys: give at least one key, each at least {MIN_KEY_BYTES} bytes"
            )));
        }
        Ok(KeyRing { keys })
    }

    /// Seals `payload` for `domain`.
    pub(crate) fn seal(&self, domain: &str, payload: &[u8]) -> String {
        let tag = mac(&self.keys[0], domain, payload);
        format!("{}.{}", encode(payload), encode(&tag))
    }

    /// The payload of `token` if some key sealed it for `domain`; `None` if it is malformed,
    /// altered, or sealed by someone else.
    pub(crate) fn open(&self, domain: &str, token: &str) -> Option<Vec<u8>> {
        let (payload, tag) = token.split_once('.')?;
        let (payload, tag) = (decode(payload)?, decode(tag)?);
        self.keys.iter().any(|key| verify(key, domain, &payload, &tag)).then_some(payload)
    }
}

fn hmac_for(key: &[u8], domain: &str, payload: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length, so `new_from_slice` cannot fail.
    #[allow(clippy::expect_used)]
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC accepts any key length");
    mac.update(domain.as_bytes());
    mac.update(&[0]);
    mac.update(payload);
    mac
}

fn mac(key: &[u8], domain: &str, payload: &[u8]) -> Vec<u8> {
    hmac_for(key, domain, payload).finalize().into_bytes().to_vec()
}

/// Constant-time comparison (the `hmac` crate's `verify_slice`).
fn verify(key: &[u8], domain: &str, payload: &[u8], tag: &[u8]) -> bool {
    hmac_for(key, domain, payload).verify_slice(tag).is_ok()
}

/// Base64url without padding (RFC 4648 §5): tokens travel in JSON and HTTP headers.
fn encode(bytes: &[u8]) -> String {
    crate::base64::encode(bytes)
        .trim_end_matches('=')
        .chars()
        .map(|c| match c {
            '+' => '-',
            '/' => '_',
            c => c,
        })
        .collect()
}

fn decode(text: &str) -> Option<Vec<u8>> {
    if text.contains(['+', '/', '=']) {
        return None;
    }
    let mut standard: String = text
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    // The standard decoder wants its padding back.
    while standard.len() % 4 != 0 {
        standard.push('=');
    }
    crate::base64::decode(&standard)
}

#[cfg(test)]
mod tests {
    use super::KeyRing;

    #[test]
    fn a_token_opens_only_unchanged_for_its_domain_and_ring() {
        let ring = KeyRing::random();
        let token = ring.seal("cursor/tools", b"100");
        assert_eq!(ring.open("cursor/tools", &token).as_deref(), Some(&b"100"[..]));
        assert_eq!(ring.open("cursor/prompts", &token), None);
        assert_eq!(KeyRing::random().open("cursor/tools", &token), None);
        let forged = format!("{}{}", super::encode(b"101"), &token[token.find('.').unwrap_or(0)..]);
        assert_eq!(ring.open("cursor/tools", &forged), None);
        assert_eq!(ring.open("cursor/tools", "garbage"), None);
    }

    #[test]
    fn every_key_of_a_ring_opens_the_first_seals() {
        let old = KeyRing::new(vec![vec![1; 32]]).expect("ring");
        let rotated = KeyRing::new(vec![vec![2; 32], vec![1; 32]]).expect("ring");
        let token = old.seal("d", b"x");
        assert_eq!(rotated.open("d", &token).as_deref(), Some(&b"x"[..]));
        assert_eq!(old.open("d", &rotated.seal("d", b"x")), None);
        assert!(KeyRing::new(vec![vec![0; 16]]).is_err());
    }
}
