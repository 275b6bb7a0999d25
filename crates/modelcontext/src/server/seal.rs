//! Tamper-proof tokens the client must hand back unchanged: pagination cursors and MRTR
//! `requestState`.
//!
//! A token is `base64url(payload) "." base64url(HMAC-SHA256(key, domain NUL payload))`. The
//! payload is not secret (the client could read it); it cannot be forged or altered without the
//! key, and the domain keeps a token of one kind from passing as another. Keys come from a
//! ring: the first seals, every key opens, so keys can rotate and several instances behind a
//! load balancer can share them ([`McpServer::key_ring`](super::McpServer::key_ring)). A ring
//! may name its deployment (its audience): the name enters every tag, so a token sealed for
//! one deployment does not open in another that happens to hold the same key.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::Error;

type HmacSha256 = Hmac<Sha256>;

/// The shortest key accepted: 256 bits, the HMAC-SHA256 block strength.
const MIN_KEY_BYTES: usize = 32;

/// The keys that seal pagination cursors and MRTR `requestState`
/// ([`McpServer::key_ring`](super::McpServer::key_ring)): the first key seals, every key
/// opens. Give every instance of one deployment the same ring; to rotate, put the new key
/// first on every instance, and drop the old one once its tokens have expired.
///
/// ```
/// use modelcontext::server::KeyRing;
///
/// let old = "11".repeat(32);
/// let new = "22".repeat(32);
/// let ring = KeyRing::from_hex([new.as_str(), old.as_str()])?.audience("bookshop-prod");
/// # Ok::<(), modelcontext::Error>(())
/// ```
#[derive(Clone)]
pub struct KeyRing {
    keys: Vec<Vec<u8>>,
    /// The deployment the tokens are for; empty when the ring names none.
    audience: String,
}

impl std::fmt::Debug for KeyRing {
    // Never the keys themselves: a ring ends up in logs through the server's `Debug`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyRing({} keys, audience {:?})", self.keys.len(), self.audience)
    }
}

impl KeyRing {
    /// One fresh key from the OS CSPRNG: tokens are only valid for this process.
    pub(crate) fn random() -> KeyRing {
        let mut key = vec![0u8; MIN_KEY_BYTES];
        // Without an OS random source no server could run safely; there is no fallback.
        #[allow(clippy::expect_used)]
        getrandom::fill(&mut key).expect("the OS random number generator is available");
        KeyRing { keys: vec![key], audience: String::new() }
    }

    /// A ring from configured keys, each at least 32 bytes (256 bits); the first one seals.
    /// Fails when there is no key or one is too short.
    pub fn new(keys: Vec<Vec<u8>>) -> Result<KeyRing, Error> {
        if keys.is_empty() || keys.iter().any(|k| k.len() < MIN_KEY_BYTES) {
            return Err(Error::registration(format!(
                "signing keys: give at least one key, each at least {MIN_KEY_BYTES} bytes"
            )));
        }
        Ok(KeyRing { keys, audience: String::new() })
    }

    /// A ring from keys written in hexadecimal (e.g. `--signing-key` flags or an environment
    /// variable): each an even number of hex digits, at least 64 (32 bytes). The error names
    /// the position of a bad key, never its digits.
    pub fn from_hex<I>(keys: I) -> Result<KeyRing, Error>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let keys = keys
            .into_iter()
            .enumerate()
            .map(|(index, key)| {
                decode_hex(key.as_ref().trim()).ok_or_else(|| {
                    Error::registration(format!(
                        "signing key {}: not hexadecimal (give {} hex digits or more)",
                        index + 1,
                        MIN_KEY_BYTES * 2
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        KeyRing::new(keys)
    }

    /// Binds every token to `deployment`: the name of the service the instances form together
    /// (e.g. `bookshop-prod`), never one instance's name, so any instance of the deployment
    /// opens what another sealed, and a ring with the same keys but another audience does not.
    pub fn audience(mut self, deployment: impl Into<String>) -> KeyRing {
        self.audience = deployment.into();
        self
    }

    /// Seals `payload` for `domain`.
    pub(crate) fn seal(&self, domain: &str, payload: &[u8]) -> String {
        let tag = mac(&self.keys[0], &self.audience, domain, payload);
        format!("{}.{}", encode(payload), encode(&tag))
    }

    /// The payload of `token` if some key sealed it for `domain`; `None` if it is malformed,
    /// altered, or sealed by someone else.
    pub(crate) fn open(&self, domain: &str, token: &str) -> Option<Vec<u8>> {
        let (payload, tag) = token.split_once('.')?;
        let (payload, tag) = (decode(payload)?, decode(tag)?);
        let audience = &self.audience;
        self.keys.iter().any(|key| verify(key, audience, domain, &payload, &tag)).then_some(payload)
    }
}

fn hmac_for(key: &[u8], audience: &str, domain: &str, payload: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length, so `new_from_slice` cannot fail.
    #[allow(clippy::expect_used)]
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC accepts any key length");
    // The audience is length-prefixed: it is the user's text and may hold any byte, so a NUL
    // separator could be forged by moving bytes between it and the domain.
    mac.update(&(audience.len() as u64).to_be_bytes());
    mac.update(audience.as_bytes());
    mac.update(domain.as_bytes());
    mac.update(&[0]);
    mac.update(payload);
    mac
}

fn mac(key: &[u8], audience: &str, domain: &str, payload: &[u8]) -> Vec<u8> {
    hmac_for(key, audience, domain, payload).finalize().into_bytes().to_vec()
}

/// Constant-time comparison (the `hmac` crate's `verify_slice`).
fn verify(key: &[u8], audience: &str, domain: &str, payload: &[u8], tag: &[u8]) -> bool {
    hmac_for(key, audience, domain, payload).verify_slice(tag).is_ok()
}

/// `text` as bytes, two hex digits each (either case); `None` for anything else.
fn decode_hex(text: &str) -> Option<Vec<u8>> {
    // Hex digits only: `from_str_radix` would also take a sign (`+1` as 0x01).
    if text.len() % 2 != 0 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len()).step_by(2).map(|at| u8::from_str_radix(&text[at..at + 2], 16).ok()).collect()
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

    #[test]
    fn the_audience_enters_the_tag() {
        let prod = KeyRing::new(vec![vec![1; 32]]).expect("ring").audience("prod");
        let token = prod.seal("d", b"x");
        assert_eq!(prod.clone().open("d", &token).as_deref(), Some(&b"x"[..]));
        let staging = KeyRing::new(vec![vec![1; 32]]).expect("ring").audience("staging");
        assert_eq!(staging.open("d", &token), None);
        assert_eq!(KeyRing::new(vec![vec![1; 32]]).expect("ring").open("d", &token), None);
    }

    #[test]
    fn hex_keys_parse_and_bad_ones_are_named_by_position() {
        let hex = "0aF1".repeat(16);
        let ring = KeyRing::from_hex([hex.as_str()]).expect("64 hex digits");
        let bytes = KeyRing::new(vec![[0x0a, 0xf1].repeat(16)]).expect("ring");
        assert_eq!(bytes.open("d", &ring.seal("d", b"x")).as_deref(), Some(&b"x"[..]));
        for bad in ["0a".repeat(31), "0".repeat(65), "zz".repeat(32), "é".repeat(32)] {
            let error = KeyRing::from_hex([hex.as_str(), bad.as_str()]).expect_err(&bad);
            assert!(!error.to_string().contains(&bad), "{error}");
        }
        let error = KeyRing::from_hex([hex.as_str(), "zz"]).expect_err("not hex").to_string();
        assert!(error.contains("signing key 2"), "{error}");
        assert!(KeyRing::from_hex(Vec::<String>::new()).is_err());
    }
}
