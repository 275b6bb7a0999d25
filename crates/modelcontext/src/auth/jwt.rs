//! [`JwtVerifier`]: JWT access tokens (RFC 9068) checked against the issuer's published keys.
//!
//! The key set (JWKS) is fetched from the issuer's `jwks_uri` (given, or found in its RFC 8414
//! or OpenID metadata) and cached. Keys rotate: a token signed with a key id the cache does not
//! know triggers one refetch, at most once per `min_refetch_interval`, so a stream of tokens
//! with made-up key ids cannot turn the verifier into a load generator for the issuer. A
//! refetch in flight is shared by every request that needs it.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Shared};
use jsonwebtoken::errors::ErrorKind as JwtErrorKind;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::fetch::{Fetcher, check_url};
use super::{Principal, TokenVerifier, VerifyError, same_resource};
use crate::Error;

/// The signature algorithms accepted. Symmetric ones (HS*) never are: a resource server
/// holding the issuer's secret could mint tokens.
const ALGORITHMS: [Algorithm; 3] = [Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA];

/// Verifies JWT access tokens: signature (RS256, ES256 or EdDSA, keys from the issuer's JWKS),
/// `iss`, `aud` (must name this resource, RFC 8707), `exp` and `nbf` (with a small leeway).
///
/// ```no_run
/// # fn f() -> Result<(), modelcontext::Error> {
/// use modelcontext::auth::JwtVerifier;
/// let verifier = JwtVerifier::new("http://127.0.0.1:9000", "http://127.0.0.1:8000/mcp")?
///     .jwks_uri("http://127.0.0.1:9000/jwks")?;
/// # Ok(()) }
/// ```
pub struct JwtVerifier {
    issuer: String,
    audiences: Vec<String>,
    jwks_uri: Option<String>,
    leeway: Duration,
    cache_ttl: Duration,
    min_refetch: Duration,
    fetcher: Fetcher,
    state: Arc<Mutex<State>>,
}

/// The cached keys and the refetch bookkeeping.
#[derive(Default)]
struct State {
    keys: Option<Arc<KeySet>>,
    /// Found through the issuer's metadata, when not given.
    jwks_uri: Option<String>,
    /// When the last fetch was started, successful or not: a failed one is not retried
    /// before `min_refetch` has passed.
    last_fetch: Option<Instant>,
    /// When an unknown key id last caused a fetch: the next such fetch waits `min_refetch`.
    last_unknown_kid: Option<Instant>,
    inflight: Option<Refresh>,
}

type Refresh = Shared<BoxFuture<'static, Result<Arc<KeySet>, VerifyError>>>;

struct KeySet {
    keys: Vec<Key>,
    fetched: Instant,
}

struct Key {
    kid: Option<String>,
    alg: Algorithm,
    key: DecodingKey,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // Poisoning only means a panic elsewhere mid-update; the cache stays usable.
    state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl JwtVerifier {
    /// Tokens from `issuer` (the exact `iss` value) for the resource `audience` (the canonical
    /// URI of this MCP server, the `resource` of its metadata). The key set is found through
    /// the issuer's metadata unless [`JwtVerifier::jwks_uri`] gives it.
    pub fn new(
        issuer: impl Into<String>,
        audience: impl Into<String>,
    ) -> Result<JwtVerifier, Error> {
        let issuer = issuer.into();
        check_url(&issuer, "issuer")?;
        Ok(JwtVerifier {
            issuer,
            audiences: vec![audience.into()],
            jwks_uri: None,
            leeway: Duration::from_secs(30),
            cache_ttl: Duration::from_secs(60 * 60),
            min_refetch: Duration::from_secs(30),
            fetcher: Fetcher::default(),
            state: Arc::default(),
        })
    }

    /// Fetches the key set from `url` instead of discovering it.
    pub fn jwks_uri(mut self, url: impl Into<String>) -> Result<JwtVerifier, Error> {
        let url = url.into();
        check_url(&url, "jwks_uri")?;
        self.jwks_uri = Some(url);
        Ok(self)
    }

    /// Fetches through `client` (a private CA, proxies, your own service) instead of a
    /// default [`HttpClient`](crate::net::HttpClient).
    pub fn http_client(mut self, client: crate::net::HttpClient) -> JwtVerifier {
        self.fetcher = Fetcher::with_client(client);
        self
    }

    /// Also accepts tokens whose `aud` is `audience` (an alias of this resource).
    pub fn audience(mut self, audience: impl Into<String>) -> JwtVerifier {
        self.audiences.push(audience.into());
        self
    }

    /// Clock skew allowed on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> JwtVerifier {
        self.leeway = leeway;
        self
    }

    /// How long a fetched key set is used before it is fetched again (default 1 h).
    pub fn cache_ttl(mut self, ttl: Duration) -> JwtVerifier {
        self.cache_ttl = ttl;
        self
    }

    /// The shortest time between two fetches of the key set (default 30 s): an unknown key id
    /// within it fails without a fetch.
    pub fn min_refetch_interval(mut self, interval: Duration) -> JwtVerifier {
        self.min_refetch = interval;
        self
    }

    async fn check(&self, token: &str) -> Result<Principal, VerifyError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| VerifyError::invalid("The access token is not a well-formed JWT"))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(VerifyError::invalid("The access token's algorithm is not accepted"));
        }
        let keys = self.keys().await?;
        let kid = header.kid.as_deref();
        let known = candidates(&keys, kid, header.alg).next().is_some();
        let keys =
            if !known && self.may_refetch_for_unknown_key() { self.refresh().await? } else { keys };
        let mut found = candidates(&keys, kid, header.alg).peekable();
        if found.peek().is_none() {
            return Err(VerifyError::invalid("The access token's signing key is unknown"));
        }
        let mut last = VerifyError::invalid("The access token's signature is invalid");
        for key in found {
            match self.decode(token, key) {
                Ok(claims) => return self.principal(claims),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    fn decode(&self, token: &str, key: &Key) -> Result<Map<String, Value>, VerifyError> {
        let mut validation = Validation::new(key.alg);
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        // The audience is checked below, with RFC 8707's normalization of the resource URI.
        validation.validate_aud = false;
        validation.set_issuer(&[&self.issuer]);
        validation.set_required_spec_claims(&["exp", "iss"]);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &validation);
        data.map(|d| d.claims).map_err(|e| match e.kind() {
            JwtErrorKind::ExpiredSignature => VerifyError::expired(),
            JwtErrorKind::ImmatureSignature => {
                VerifyError::invalid("The access token is not valid yet")
            }
            JwtErrorKind::InvalidIssuer => {
                VerifyError::invalid("The access token is from another issuer")
            }
            JwtErrorKind::MissingRequiredClaim(claim) => {
                VerifyError::invalid(format!("The access token has no '{claim}' claim"))
            }
            _ => VerifyError::invalid("The access token's signature or claims are invalid"),
        })
    }

    fn principal(&self, claims: Map<String, Value>) -> Result<Principal, VerifyError> {
        let principal = Principal::from_claims(claims);
        let ours = principal
            .audience
            .iter()
            .any(|aud| self.audiences.iter().any(|mine| same_resource(aud, mine)));
        if ours { Ok(principal) } else { Err(VerifyError::wrong_audience()) }
    }

    /// The cached key set, fetched first when there is none or it is older than the TTL. A
    /// failed periodic refetch keeps the old keys in use.
    async fn keys(&self) -> Result<Arc<KeySet>, VerifyError> {
        let (cached, recently_tried) = {
            let state = lock(&self.state);
            let recent = state.last_fetch.is_some_and(|at| at.elapsed() < self.min_refetch);
            (state.keys.clone(), recent && state.inflight.is_none())
        };
        match cached {
            Some(keys) if keys.fetched.elapsed() < self.cache_ttl || recently_tried => Ok(keys),
            Some(keys) => Ok(self.refresh().await.unwrap_or(keys)),
            None if recently_tried => Err(unavailable()),
            None => self.refresh().await,
        }
    }

    /// An unknown key id may mean the issuer rotated its keys: refetch, unless an unknown key
    /// id already did within `min_refetch` (a fetch in flight is joined, never repeated).
    fn may_refetch_for_unknown_key(&self) -> bool {
        let mut state = lock(&self.state);
        if state.inflight.is_some() {
            return true;
        }
        let allowed = state.last_unknown_kid.is_none_or(|at| at.elapsed() >= self.min_refetch);
        if allowed {
            state.last_unknown_kid = Some(Instant::now());
        }
        allowed
    }

    /// Joins the fetch in flight, or starts one.
    async fn refresh(&self) -> Result<Arc<KeySet>, VerifyError> {
        let refresh = {
            let mut state = lock(&self.state);
            match &state.inflight {
                Some(refresh) => refresh.clone(),
                None => {
                    state.last_fetch = Some(Instant::now());
                    let refresh = self.fetch(state.jwks_uri.clone()).boxed().shared();
                    state.inflight = Some(refresh.clone());
                    refresh
                }
            }
        };
        refresh.await
    }

    /// One fetch of the key set (after finding its URL if needed), stored when it succeeds.
    fn fetch(
        &self,
        discovered: Option<String>,
    ) -> impl Future<Output = Result<Arc<KeySet>, VerifyError>> + Send + 'static {
        let (fetcher, state) = (self.fetcher.clone(), self.state.clone());
        let (issuer, given) = (self.issuer.clone(), self.jwks_uri.clone());
        async move {
            let result = async {
                let uri = match given.or(discovered) {
                    Some(uri) => uri,
                    None => discover(&fetcher, &issuer).await?,
                };
                let document = fetcher.get_json(&uri).await?;
                Ok::<_, String>((uri, parse_key_set(&document)))
            }
            .await;
            let mut state = lock(&state);
            state.inflight = None;
            match result {
                Ok((uri, keys)) => {
                    let keys = Arc::new(keys);
                    state.jwks_uri = Some(uri);
                    state.keys = Some(keys.clone());
                    Ok(keys)
                }
                Err(reason) => {
                    tracing::warn!(%reason, "fetching the issuer's key set failed");
                    Err(unavailable())
                }
            }
        }
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, VerifyError>> {
        Box::pin(self.check(token))
    }
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("audiences", &self.audiences)
            .field("jwks_uri", &self.jwks_uri)
            .field("leeway", &self.leeway)
            .finish_non_exhaustive()
    }
}

fn unavailable() -> VerifyError {
    VerifyError::unavailable("The issuer's signing keys cannot be fetched")
}

/// The keys that may have signed a token with key id `kid` and algorithm `alg`. A token
/// without `kid` may have been signed by any key of its algorithm.
fn candidates<'a>(
    keys: &'a KeySet,
    kid: Option<&'a str>,
    alg: Algorithm,
) -> impl Iterator<Item = &'a Key> + 'a {
    let matches = move |k: &&Key| k.alg == alg && (kid.is_none() || k.kid.as_deref() == kid);
    keys.keys.iter().filter(matches)
}

/// The signing keys of a JWKS document that we can use; others (encryption keys, unknown key
/// types or curves, unaccepted algorithms) are skipped one by one.
fn parse_key_set(document: &Map<String, Value>) -> KeySet {
    let entries = document.get("keys").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let keys = entries.iter().filter_map(|entry| {
        let jwk: Jwk = serde_json::from_value(entry.clone()).ok()?;
        if matches!(jwk.common.public_key_use, Some(ref u) if *u != PublicKeyUse::Signature) {
            return None;
        }
        let alg = algorithm_of(&jwk)?;
        let key = DecodingKey::from_jwk(&jwk).ok()?;
        Some(Key { kid: jwk.common.key_id.clone(), alg, key })
    });
    KeySet { keys: keys.collect(), fetched: Instant::now() }
}

/// The algorithm a key is for: its `alg` when given, else the one its type and curve imply.
fn algorithm_of(jwk: &Jwk) -> Option<Algorithm> {
    let implied = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::EllipticCurve(p) if p.curve == EllipticCurve::P256 => Algorithm::ES256,
        AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
            Algorithm::EdDSA
        }
        _ => return None,
    };
    let declared = match jwk.common.key_algorithm {
        None => implied,
        Some(KeyAlgorithm::RS256) => Algorithm::RS256,
        Some(KeyAlgorithm::ES256) => Algorithm::ES256,
        Some(KeyAlgorithm::EdDSA) => Algorithm::EdDSA,
        Some(_) => return None,
    };
    (declared == implied).then_some(implied)
}

/// The issuer's `jwks_uri`, from its RFC 8414 metadata, else its OpenID configuration. The
/// document must name the same issuer (RFC 8414 section 3.3).
async fn discover(fetcher: &Fetcher, issuer: &str) -> Result<String, String> {
    let mut last = String::new();
    for url in metadata_urls(issuer) {
        match fetcher.get_json(&url).await {
            Ok(document) => {
                if document.get("issuer").and_then(Value::as_str) != Some(issuer) {
                    return Err(format!("{url} names another issuer"));
                }
                let uri = document.get("jwks_uri").and_then(Value::as_str);
                let uri = uri.ok_or_else(|| format!("{url} has no jwks_uri"))?;
                check_url(uri, "jwks_uri").map_err(|e| e.to_string())?;
                return Ok(uri.to_owned());
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// RFC 8414 inserts the well-known segment before the issuer's path; OpenID Connect
/// Discovery appends it.
fn metadata_urls(issuer: &str) -> [String; 2] {
    let issuer = issuer.trim_end_matches('/');
    let split = issuer.find("://").map_or(0, |i| i + 3);
    let path_at = issuer[split..].find('/').map_or(issuer.len(), |i| split + i);
    let (origin, path) = issuer.split_at(path_at);
    [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{issuer}/.well-known/openid-configuration"),
    ]
}
