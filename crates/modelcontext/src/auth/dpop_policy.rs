//! DPoP (RFC 9449) on the resource server: [`DpopPolicy`] checks a request's proof (signature
//! with the key in the proof's header, `typ`, `htm`, `htu`, `iat`, `ath`, an optional server
//! nonce, a bounded replay cache), before
//! [`AuthOptions::authorize`](super::AuthOptions::authorize) compares the key's thumbprint with
//! the token's `cnf.jkt`.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::dpop::{PROOF_TYPE, jwk_thumbprint, token_hash, without_query};
use super::now_seconds;
use crate::base64::{decode_url, encode_url};

/// The proof algorithms a resource server accepts: asymmetric only (RFC 9449 section 4.2).
const PROOF_ALGORITHMS: [Algorithm; 5] =
    [Algorithm::ES256, Algorithm::ES384, Algorithm::RS256, Algorithm::PS256, Algorithm::EdDSA];

/// 4096 bits in base64url.
const MAX_RSA_MODULUS_CHARS: usize = 683;

/// The names of [`PROOF_ALGORITHMS`], for the `algs` challenge parameter.
pub(crate) const PROOF_ALGORITHM_NAMES: &str = "ES256 ES384 RS256 PS256 EdDSA";

/// How a resource server treats DPoP (RFC 9449 section 7). The default accepts DPoP-bound
/// tokens with a valid proof beside plain bearer tokens, allows proofs 60 s of clock
/// difference, remembers up to 65 536 proof ids, and asks for no nonce.
///
/// ```
/// use std::time::Duration;
/// use modelcontext::auth::DpopPolicy;
/// let policy = DpopPolicy::new().required().nonces(Duration::from_secs(300));
/// ```
pub struct DpopPolicy {
    required: bool,
    window: Duration,
    nonce_rotation: Option<Duration>,
    nonces: Mutex<Nonces>,
    replay: Mutex<ReplayCache>,
}

impl Default for DpopPolicy {
    fn default() -> DpopPolicy {
        DpopPolicy {
            required: false,
            window: Duration::from_secs(60),
            nonce_rotation: None,
            nonces: Mutex::new(Nonces::default()),
            replay: Mutex::new(ReplayCache::new(65_536)),
        }
    }
}

impl DpopPolicy {
    /// The default policy.
    pub fn new() -> DpopPolicy {
        DpopPolicy::default()
    }

    /// Refuses bearer tokens: every token must be DPoP-bound and come with a proof.
    pub fn required(mut self) -> DpopPolicy {
        self.required = true;
        self
    }

    /// How far a proof's `iat` may be from this server's clock, either way (default 60 s).
    /// Proof ids are remembered that long: a replay inside the window is caught by the cache,
    /// one outside it by this check.
    pub fn window(mut self, window: Duration) -> DpopPolicy {
        self.window = window;
        self
    }

    /// Requires a server-provided nonce in every proof (RFC 9449 section 9), a new one every
    /// `rotation` (the previous one stays good for one more period). A proof without the
    /// current nonce gets 401 `use_dpop_nonce` with the nonce in `DPoP-Nonce`; this bounds a
    /// stolen proof's life even against a client with a wrong clock.
    pub fn nonces(mut self, rotation: Duration) -> DpopPolicy {
        self.nonce_rotation = Some(rotation);
        self
    }

    /// How many proof ids the replay cache keeps (default 65 536; at least 1). When it is full
    /// the oldest is forgotten: size it for the proofs one [window](DpopPolicy::window) sees.
    pub fn replay_capacity(mut self, capacity: usize) -> DpopPolicy {
        self.replay = Mutex::new(ReplayCache::new(capacity.max(1)));
        self
    }

    pub(crate) fn is_required(&self) -> bool {
        self.required
    }

    /// Checks `proof` for a request `method` to `url` presenting `token`: the thumbprint of
    /// the proof's key, for the caller to compare with the token's `cnf.jkt`.
    pub(crate) fn check(
        &self,
        proof: &str,
        method: &str,
        url: &str,
        token: &str,
    ) -> Result<String, ProofRefusal> {
        let (claims, jwk) = verify_signature(proof).map_err(ProofRefusal::Invalid)?;
        let text = |name: &str| claims.get(name).and_then(Value::as_str);
        let jti = text("jti").filter(|j| !j.is_empty() && j.len() <= 256);
        let jti = jti.ok_or_else(|| invalid("The DPoP proof has no usable jti"))?;
        if text("htm") != Some(method) {
            return Err(invalid("The DPoP proof is for another HTTP method"));
        }
        let htu = text("htu").ok_or_else(|| invalid("The DPoP proof has no htu"))?;
        if htu.contains(['?', '#']) || !super::same_resource(htu, without_query(url)) {
            return Err(invalid("The DPoP proof is for another URL"));
        }
        let iat = claims.get("iat").and_then(Value::as_u64);
        let iat = iat.ok_or_else(|| invalid("The DPoP proof has no iat"))?;
        if now_seconds().abs_diff(iat) > self.window.as_secs() {
            return Err(invalid("The DPoP proof is too old or from the future"));
        }
        if text("ath") != Some(token_hash(token).as_str()) {
            return Err(invalid("The DPoP proof is not for this access token (ath)"));
        }
        self.check_nonce(text("nonce"))?;
        let thumbprint = jwk_thumbprint(&jwk).ok_or_else(|| invalid("Unsupported DPoP key"))?;
        // Last: only proofs good in every other way take a place in the cache.
        let mut replay = self.replay.lock().unwrap_or_else(|p| p.into_inner());
        let id = Sha256::digest(format!("{thumbprint}.{jti}").as_bytes()).into();
        if !replay.insert(id, self.window * 2) {
            return Err(invalid("The DPoP proof was already used"));
        }
        Ok(thumbprint)
    }

    fn check_nonce(&self, nonce: Option<&str>) -> Result<(), ProofRefusal> {
        let Some(rotation) = self.nonce_rotation else { return Ok(()) };
        let mut nonces = self.nonces.lock().unwrap_or_else(|p| p.into_inner());
        let current = nonces.current(rotation);
        match nonce {
            Some(nonce) if nonces.accepts(nonce) => Ok(()),
            _ => Err(ProofRefusal::UseNonce(current)),
        }
    }
}

impl std::fmt::Debug for DpopPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopPolicy")
            .field("required", &self.required)
            .field("window", &self.window)
            .field("nonce_rotation", &self.nonce_rotation)
            .finish_non_exhaustive()
    }
}

/// Why a proof was refused.
#[derive(Debug)]
pub(crate) enum ProofRefusal {
    /// `invalid_dpop_proof`, with the reason.
    Invalid(String),
    /// `use_dpop_nonce`, with the nonce to use.
    UseNonce(String),
}

fn invalid(reason: &str) -> ProofRefusal {
    ProofRefusal::Invalid(reason.to_owned())
}

/// The proof's claims and public key, once its header is a DPoP one and its signature holds.
fn verify_signature(proof: &str) -> Result<(Map<String, Value>, Value), String> {
    let header = proof.split('.').next().and_then(decode_url);
    let header: Map<String, Value> = header
        .and_then(|h| serde_json::from_slice(&h).ok())
        .ok_or("The DPoP proof is not a JWT")?;
    if header.get("typ").and_then(Value::as_str) != Some(PROOF_TYPE) {
        return Err("The DPoP proof's typ is not dpop+jwt".into());
    }
    let algorithm = header.get("alg").and_then(Value::as_str).unwrap_or("");
    let algorithm = algorithm
        .parse::<Algorithm>()
        .ok()
        .filter(|a| PROOF_ALGORITHMS.contains(a))
        .ok_or("The DPoP proof's alg is not supported")?;
    let jwk = header.get("jwk").filter(|k| k.is_object()).ok_or("The DPoP proof has no jwk")?;
    let private = ["d", "p", "q", "dp", "dq", "qi", "k"];
    if private.iter().any(|member| jwk.get(member).is_some()) {
        return Err("The DPoP proof's jwk holds a private key".into());
    }
    // The client picks the key: an RSA modulus past 4096 bits would make every request
    // expensive to check.
    let modulus = jwk.get("n").and_then(Value::as_str).map_or(0, str::len);
    if modulus > MAX_RSA_MODULUS_CHARS {
        return Err("The DPoP proof's RSA key is too large".into());
    }
    let parsed: Jwk = serde_json::from_value(jwk.clone()).map_err(|_| "Unreadable DPoP jwk")?;
    let key = DecodingKey::from_jwk(&parsed).map_err(|_| "Unusable DPoP jwk")?;
    let mut validation = Validation::new(algorithm);
    validation.required_spec_claims = HashSet::new();
    validation.validate_exp = false;
    validation.validate_aud = false;
    let data = jsonwebtoken::decode::<Map<String, Value>>(proof, &key, &validation)
        .map_err(|_| "The DPoP proof's signature does not verify")?;
    Ok((data.claims, jwk.clone()))
}

/// The server's current and previous nonce.
#[derive(Default)]
struct Nonces {
    current: Option<(String, Instant)>,
    previous: Option<String>,
}

impl Nonces {
    fn current(&mut self, rotation: Duration) -> String {
        let stale = self.current.as_ref().is_none_or(|(_, at)| at.elapsed() >= rotation);
        if stale {
            let mut bytes = [0u8; 18];
            // Without randomness the old nonce stays: refusing every request would be worse.
            if getrandom::fill(&mut bytes).is_ok() {
                self.previous = self.current.take().map(|(nonce, _)| nonce);
                self.current = Some((encode_url(&bytes), Instant::now()));
            }
        }
        self.current.as_ref().map(|(nonce, _)| nonce.clone()).unwrap_or_default()
    }

    fn accepts(&self, nonce: &str) -> bool {
        !nonce.is_empty()
            && (self.current.as_ref().is_some_and(|(n, _)| n == nonce)
                || self.previous.as_deref() == Some(nonce))
    }
}

/// Proof ids seen recently (a hash of key and `jti`, so each costs the same few bytes),
/// oldest first, at most `capacity`.
struct ReplayCache {
    capacity: usize,
    seen: HashSet<[u8; 32]>,
    order: VecDeque<([u8; 32], Instant)>,
}

impl ReplayCache {
    fn new(capacity: usize) -> ReplayCache {
        ReplayCache { capacity, seen: HashSet::new(), order: VecDeque::new() }
    }

    /// False when `id` was seen within `keep`.
    fn insert(&mut self, id: [u8; 32], keep: Duration) -> bool {
        while let Some((old, at)) = self.order.front() {
            if at.elapsed() < keep && self.order.len() < self.capacity {
                break;
            }
            self.seen.remove(old);
            self.order.pop_front();
        }
        if !self.seen.insert(id) {
            return false;
        }
        self.order.push_back((id, Instant::now()));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Proofs made by the client side's key, checked by this side.
    #[cfg(feature = "auth-client")]
    #[test]
    fn a_proof_verifies_once() {
        let key = crate::auth::DpopKey::generate().expect("key");
        let policy = DpopPolicy::new();
        let url = "https://mcp.example.com/mcp";
        let proof =
            key.proof("POST", "https://mcp.example.com/mcp?x=1", Some("tok"), None).expect("proof");
        assert_eq!(policy.check(&proof, "POST", url, "tok").expect("valid"), key.thumbprint());
        assert!(matches!(policy.check(&proof, "POST", url, "tok"), Err(ProofRefusal::Invalid(_))));
        let other = key.proof("POST", url, Some("tok"), None).expect("proof");
        assert!(policy.check(&other, "GET", url, "tok").is_err());
        assert!(policy.check(&other, "POST", url, "another").is_err());
    }

    #[test]
    fn the_replay_cache_is_bounded() {
        let mut cache = ReplayCache::new(2);
        let keep = Duration::from_secs(60);
        assert!(cache.insert([1; 32], keep));
        assert!(cache.insert([2; 32], keep));
        assert!(cache.insert([3; 32], keep));
        assert_eq!(cache.order.len(), 2);
        assert!(!cache.insert([3; 32], keep));
    }
}
