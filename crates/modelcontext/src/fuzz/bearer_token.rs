//! `bearer_token`: the `Authorization` header and JWT verification of the `auth` feature.
//!
//! A real [`JwtVerifier`] checks the tokens, with its key set served from 127.0.0.1 by a thread
//! of the fuzz process (the fuzz-only keys of `fuzz/keys/`). The oracle for "validly signed"
//! is `jsonwebtoken` asked to check the signature only, against every public key of the token's
//! algorithm; what the property tests is our part: the scheme and token68 parsing, the
//! algorithm allow-list, key selection by `kid`, and the `iss` / `aud` / `exp` / `nbf` checks.

use std::collections::HashSet;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use arbitrary::{Result, Unstructured};
use http::header::{AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde_json::{Map, Value, json};

use crate::auth::{AuthOptions, JwtVerifier, Principal, same_resource};

const RESOURCE: &str = "https://mcp.fuzz.test/mcp";
const LEEWAY: u64 = 30;
const JWKS: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/keys/jwks.json"));
const KIDS: [&str; 3] = ["ed", "ec", "rsa"];

/// The algorithm and private key of `kid`, parsed once (RSA key parsing costs milliseconds).
fn signing_key(kid: &str) -> &'static (Algorithm, EncodingKey) {
    static KEYS: OnceLock<[(Algorithm, EncodingKey); 3]> = OnceLock::new();
    let keys = KEYS.get_or_init(|| KIDS.map(parse_signing_key));
    &keys[KIDS.iter().position(|k| *k == kid).unwrap_or(0)]
}

fn parse_signing_key(kid: &str) -> (Algorithm, EncodingKey) {
    macro_rules! der {
        ($file:literal) => {
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/keys/", $file))
        };
    }
    match kid {
        "ed" => (Algorithm::EdDSA, EncodingKey::from_ed_der(der!("ed.der"))),
        "ec" => (Algorithm::ES256, EncodingKey::from_ec_der(der!("ec.der"))),
        _ => (Algorithm::RS256, EncodingKey::from_rsa_der(der!("rsa.der"))),
    }
}

struct Fixture {
    runtime: tokio::runtime::Runtime,
    issuer: String,
    options: AuthOptions,
    public: Vec<(Algorithm, DecodingKey)>,
}

/// The key set server, the verifier and the public keys, made once per process.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = super::runtime();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
                tx.send(listener.local_addr().expect("address")).expect("send");
                let jwks = || async { ([(CONTENT_TYPE, "application/json")], JWKS) };
                let app = axum::Router::new().route("/jwks", axum::routing::get(jwks));
                let _ = axum::serve(listener, app).await;
            });
        });
        let issuer = format!("http://{}", rx.recv().expect("the key set server starts"));
        let verifier = JwtVerifier::new(&issuer, RESOURCE)
            .and_then(|v| v.jwks_uri(format!("{issuer}/jwks")))
            .expect("verifier");
        let options = AuthOptions::new(RESOURCE, &issuer, verifier).expect("options");
        let set: jsonwebtoken::jwk::JwkSet = serde_json::from_str(JWKS).expect("jwks.json");
        let public = KIDS
            .iter()
            .zip(&set.keys)
            .map(|(kid, jwk)| (signing_key(kid).0, DecodingKey::from_jwk(jwk).expect("jwk")))
            .collect();
        Fixture { runtime: super::runtime(), issuer, options, public }
    })
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl Fixture {
    /// Claims the verifier accepts: this issuer, this resource, valid for ten minutes.
    fn good_claims(&self) -> Map<String, Value> {
        let now = now();
        let claims = json!({"iss": self.issuer, "aud": RESOURCE, "sub": "fuzz", "nbf": now - 5, "exp": now + 600});
        claims.as_object().cloned().unwrap_or_default()
    }

    /// The verifier's verdict, checked: a token it accepts is genuine.
    fn verify(&self, token: &str) -> bool {
        let verdict = self.runtime.block_on(self.options.verifier.verify(token));
        if let Ok(principal) = &verdict {
            self.assert_genuine(token, principal);
        }
        verdict.is_ok()
    }

    /// Signed by one of our keys with an accepted algorithm, from our issuer, for our
    /// resource, within its validity (with the leeway); the principal carries its claims.
    fn assert_genuine(&self, token: &str, principal: &Principal) {
        let header = jsonwebtoken::decode_header(token).expect("an accepted token has a header");
        let mut validation = Validation::new(header.alg);
        validation.validate_exp = false;
        validation.validate_aud = false;
        validation.required_spec_claims = HashSet::new();
        let claims = self
            .public
            .iter()
            .filter(|(alg, _)| *alg == header.alg)
            .find_map(|(_, key)| {
                jsonwebtoken::decode::<Map<String, Value>>(token, key, &validation).ok()
            })
            .unwrap_or_else(|| panic!("accepted without a valid signature: {token}"))
            .claims;
        assert_eq!(claims.get("iss"), Some(&Value::from(self.issuer.clone())), "issuer: {token}");
        let now = now();
        let exp = claims.get("exp").and_then(Value::as_u64).expect("an accepted token has exp");
        assert!(exp + LEEWAY + 5 >= now, "accepted after it expired: {token}");
        let nbf = claims.get("nbf").and_then(Value::as_u64).unwrap_or(0);
        assert!(nbf <= now + LEEWAY + 5, "accepted before it is valid: {token}");
        assert!(
            principal.audience.iter().any(|aud| same_resource(aud, RESOURCE)),
            "accepted for another audience: {token}"
        );
        assert_eq!(principal.claims, claims, "the principal's claims are the token's");
    }

    /// The `Authorization` header path: refusals are 400 or 401 with a JSON-RPC body.
    fn authorize(&self, value: HeaderValue) {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, value.clone());
        let verdict = self.runtime.block_on(self.options.authorize(&headers));
        match verdict {
            Ok(principal) => {
                let text = value.to_str().expect("an accepted header is visible ASCII").trim();
                let token = text.split_once(' ').map_or("", |(_, t)| t.trim_start_matches(' '));
                self.assert_genuine(token, &principal);
            }
            Err(response) => {
                let status = response.status().as_u16();
                assert!(matches!(status, 400 | 401), "refused with {status}");
                let body =
                    self.runtime.block_on(axum::body::to_bytes(response.into_body(), 1 << 16));
                let body = body.expect("a refusal body");
                let decoded = modelcontext_types::Message::decode(&body);
                assert!(decoded.is_ok(), "refusal body is not JSON-RPC: {body:?}");
            }
        }
    }
}

fn b64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 3);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
        }
    }
    out
}

/// A claim value near the interesting ones: times around now, our issuer and resource with
/// small changes, or anything.
fn claim(f: &Fixture, u: &mut Unstructured<'_>) -> Result<Value> {
    let now = now() as i64;
    Ok(match u.int_in_range(0..=6)? {
        0 => Value::from(now + i64::from(u.arbitrary::<i16>()?)),
        1 => Value::from(u.arbitrary::<i64>()?),
        2 => Value::from(format!("{}{}", f.issuer, u.arbitrary::<&str>()?)),
        3 => Value::from(format!("{RESOURCE}{}", u.arbitrary::<&str>()?)),
        4 => json!([RESOURCE.to_uppercase(), u.arbitrary::<&str>()?]),
        5 => Value::Null,
        _ => Value::from(u.arbitrary::<&str>()?),
    })
}

/// A validly signed token whose claims, header and bytes the input then changes.
fn signed(f: &Fixture, u: &mut Unstructured<'_>) -> Result<String> {
    let kid = *u.choose(&KIDS)?;
    let mut claims = f.good_claims();
    let pristine = u.ratio(1, 4)?;
    if !pristine {
        for _ in 0..u.int_in_range(0..=3)? {
            let name = *u.choose(&["iss", "aud", "exp", "nbf", "sub", "scope", "iat", "x"])?;
            match claim(f, u)? {
                Value::Null => claims.remove(name),
                value => claims.insert(name.to_owned(), value),
            };
        }
    }
    let (alg, key) = signing_key(kid);
    let mut header = Header::new(*alg);
    header.kid = match u.int_in_range(0..=5)? {
        0 => None,
        1 => Some(u.choose(&KIDS)?.to_string()),
        2 => Some(u.arbitrary::<&str>()?.to_owned()),
        _ => Some(kid.to_owned()),
    };
    let kid_ok = header.kid.as_deref().is_none_or(|k| k == kid);
    let token = jsonwebtoken::encode(&header, &claims, key).expect("signing works");
    if pristine && kid_ok && u.is_empty() {
        assert!(f.verify(&token), "a genuine token is refused: {token}");
    }
    mutate(u, token)
}

/// Changes a token the way an attacker would: a byte, a part, the header relabelled.
fn mutate(u: &mut Unstructured<'_>, token: String) -> Result<String> {
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    Ok(match u.int_in_range(0..=5)? {
        0 => token,
        1 => {
            let mut bytes = token.into_bytes();
            let i = u.choose_index(bytes.len())?;
            bytes[i] ^= u.int_in_range(1..=255)?;
            String::from_utf8_lossy(&bytes).into_owned()
        }
        2 => token[..u.choose_index(token.len())?].to_owned(),
        3 => {
            let alg = *u.choose(&["HS256", "none", "RS256", "ES256", "EdDSA", "PS256", "ES384"])?;
            let kid = u.choose(&KIDS)?;
            parts[0] = b64url(json!({"alg": alg, "kid": kid, "typ": "JWT"}).to_string().as_bytes());
            parts.join(".")
        }
        4 => {
            let i = u.choose_index(parts.len())?;
            parts[i] = b64url(u.arbitrary::<&[u8]>()?);
            parts.join(".")
        }
        _ => format!("{token}{}", u.arbitrary::<&str>()?),
    })
}

/// Algorithm confusion: good claims under an HMAC keyed with public key material (or no
/// signature at all), labelled with any algorithm and key id.
fn forged(f: &Fixture, u: &mut Unstructured<'_>) -> Result<String> {
    let secret: &[u8] = match u.int_in_range(0..=2)? {
        0 => JWKS.as_bytes(),
        1 => u.arbitrary()?,
        _ => b"",
    };
    let alg = *u.choose(&[Algorithm::HS256, Algorithm::HS384, Algorithm::HS512])?;
    let token = jsonwebtoken::encode(
        &Header::new(alg),
        &f.good_claims(),
        &EncodingKey::from_secret(secret),
    )
    .expect("HMAC signing works");
    let mut parts: Vec<&str> = token.split('.').collect();
    let label = *u.choose(&["HS256", "none", "RS256", "ES256", "EdDSA", "None", "NONE"])?;
    let header = json!({"alg": label, "kid": u.choose(&KIDS)?, "typ": "JWT"}).to_string();
    let header = b64url(header.as_bytes());
    parts[0] = &header;
    if u.ratio(1, 3)? {
        parts[2] = "";
    }
    Ok(parts.join("."))
}

/// Input: `[mode]` then the mode's bytes. Mode 0: the bytes are an `Authorization` header
/// value; 1: a token string; 2: a token we sign (fuzz-chosen claims and `kid`), then
/// mutated; 3: an algorithm-confusion forgery. Nothing panics; a token or header the verifier
/// accepts is genuine (see `Fixture::assert_genuine`); a header refused gets 400 or 401 with
/// a JSON-RPC body; a pristine signed token is accepted.
pub fn check_bearer_token(data: &[u8]) {
    let [mode, rest @ ..] = data else { return };
    let f = fixture();
    let mut u = Unstructured::new(rest);
    match mode % 4 {
        0 => {
            if let Ok(value) = HeaderValue::from_bytes(rest) {
                f.authorize(value);
            }
        }
        1 => drop(f.verify(&String::from_utf8_lossy(rest))),
        2 => {
            if let Ok(token) = signed(f, &mut u) {
                f.verify(&token);
            }
        }
        _ => {
            if let Ok(token) = forged(f, &mut u) {
                assert!(!f.verify(&token), "a forgery is accepted: {token}");
            }
        }
    }
}
