//! The resource server side of authorization: real JWTs signed with the test-only keys of
//! `keys/` (RS256, ES256, EdDSA), a local issuer on 127.0.0.1 serving its metadata, its JWKS
//! and an introspection endpoint, and the exact 401 / 403 / 400 answers.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use bytes::Bytes;
use expect_test::{Expect, expect};
use http::{HeaderMap, HeaderValue, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::rt::TokioExecutor;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use modelcontext::auth::{
    AuthOptions, IntrospectionVerifier, JwtVerifier, Principal, ScopeHierarchy, TokenVerifier,
    VerifyErrorKind, metadata_router, missing_scopes,
};
use serde_json::{Value, json};

/// The canonical URI of the protected MCP server in these tests.
const RESOURCE: &str = "http://mcp.test/mcp";

// ---------------------------------------------------------------- the issuer

/// A local authorization server: RFC 8414 metadata, a JWKS publishing the keys named in
/// `published`, and an RFC 7662 introspection endpoint answering from `introspection`.
#[derive(Clone)]
struct Issuer {
    url: String,
    published: Arc<Mutex<Vec<&'static str>>>,
    jwks_fetches: Arc<AtomicUsize>,
    introspection: Arc<Mutex<Vec<(String, Value)>>>,
}

async fn issuer(published: &[&'static str]) -> Issuer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr: SocketAddr = listener.local_addr().expect("addr");
    let issuer = new_issuer(format!("http://{addr}"), published);
    let app = issuer_app(&issuer);
    tokio::spawn(async move { axum::serve(listener, app).await });
    issuer
}

fn new_issuer(url: String, published: &[&'static str]) -> Issuer {
    Issuer {
        url,
        published: Arc::new(Mutex::new(published.to_vec())),
        jwks_fetches: Arc::default(),
        introspection: Arc::default(),
    }
}

fn issuer_app(issuer: &Issuer) -> axum::Router {
    axum::Router::new()
        .route("/.well-known/oauth-authorization-server", get(as_metadata))
        .route("/jwks", get(jwks))
        .route("/introspect", post(introspect))
        .with_state(issuer.clone())
}

/// The issuer over TLS, at `https://localhost:<port>`, with a certificate from `ca`.
#[cfg(feature = "tls")]
async fn issuer_over_tls(ca: &crate::test_ca::TestCa, published: &[&'static str]) -> Issuer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let issuer = new_issuer(format!("https://localhost:{port}"), published);
    let leaf = ca.leaf(&["localhost"]);
    crate::tls_client::serve_tls(listener, issuer_app(&issuer), &leaf, crate::tls_client::BOTH);
    issuer
}

async fn as_metadata(State(issuer): State<Issuer>) -> axum::response::Response {
    let url = &issuer.url;
    json_response(json!({"issuer": url, "jwks_uri": format!("{url}/jwks")}))
}

async fn jwks(State(issuer): State<Issuer>) -> axum::response::Response {
    issuer.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    let all: Value = serde_json::from_str(include_str!("keys/jwks.json")).expect("jwks.json");
    let published = issuer.published.lock().expect("lock").clone();
    let keys: Vec<&Value> = all["keys"]
        .as_array()
        .expect("keys")
        .iter()
        .filter(|k| published.contains(&k["kid"].as_str().expect("kid")))
        .collect();
    json_response(json!({ "keys": keys }))
}

/// Answers as the introspection endpoint: 401 without this resource server's credentials
/// (`mcp-server` / `s3cret`), else the registered answer for the token, else inactive.
async fn introspect(
    State(issuer): State<Issuer>,
    headers: HeaderMap,
    body: String,
) -> axum::response::Response {
    // base64("mcp-server:s3cret")
    if headers.get("authorization").and_then(|v| v.to_str().ok())
        != Some("Basic bWNwLXNlcnZlcjpzM2NyZXQ=")
    {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let token =
        body.split('&').find_map(|pair| pair.strip_prefix("token=")).unwrap_or_default().to_owned();
    let table = issuer.introspection.lock().expect("lock").clone();
    let answer = table.into_iter().find(|(t, _)| *t == token).map(|(_, a)| a);
    json_response(answer.unwrap_or(json!({"active": false})))
}

fn json_response(value: Value) -> axum::response::Response {
    ([("content-type", "application/json")], value.to_string()).into_response()
}

impl Issuer {
    fn fetches(&self) -> usize {
        self.jwks_fetches.load(Ordering::SeqCst)
    }

    fn publish(&self, kids: &[&'static str]) {
        *self.published.lock().expect("lock") = kids.to_vec();
    }

    /// A verifier for this issuer that finds its JWKS through the issuer's metadata.
    fn verifier(&self) -> JwtVerifier {
        JwtVerifier::new(&self.url, RESOURCE).expect("verifier")
    }

    /// Standard claims: for RESOURCE, from this issuer, valid for ten minutes.
    fn claims(&self) -> Value {
        let now = now();
        json!({
            "iss": self.url, "aud": RESOURCE, "sub": "alice", "client_id": "client-1",
            "scope": "files:read tools:call", "iat": now, "nbf": now - 5, "exp": now + 600,
        })
    }

    /// `claims()` with `changes` merged over it (a `null` removes the claim).
    fn claims_with(&self, changes: Value) -> Value {
        let mut claims = self.claims();
        for (name, value) in changes.as_object().expect("object") {
            if value.is_null() {
                claims.as_object_mut().expect("object").remove(name);
            } else {
                claims[name] = value.clone();
            }
        }
        claims
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_secs()
}

/// A JWT signed with the test key `kid` (`keys/<kid>.der`).
fn sign(kid: &str, claims: &Value) -> String {
    let (alg, key) = match kid {
        "rsa-1" => (Algorithm::RS256, EncodingKey::from_rsa_der(include_bytes!("keys/rsa-1.der"))),
        "rsa-2" => (Algorithm::RS256, EncodingKey::from_rsa_der(include_bytes!("keys/rsa-2.der"))),
        "ec-1" => (Algorithm::ES256, EncodingKey::from_ec_der(include_bytes!("keys/ec-1.der"))),
        "ed-1" => (Algorithm::EdDSA, EncodingKey::from_ed_der(include_bytes!("keys/ed-1.der"))),
        other => panic!("no test key {other}"),
    };
    let mut header = Header::new(alg);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(&header, claims, &key).expect("sign")
}

/// Signed with `kid`'s key but labelled `label` in the header.
fn sign_as(kid: &str, label: &str, claims: &Value) -> String {
    let token = sign(kid, claims);
    let mut parts = token.splitn(2, '.');
    let (_, rest) = (parts.next(), parts.next().expect("payload"));
    let header = json!({"typ": "JWT", "alg": "RS256", "kid": label}).to_string();
    format!("{}.{rest}", b64url(header.as_bytes()))
}

fn b64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
        }
    }
    out
}

// ---------------------------------------------------------------- checking answers

fn options(verifier: impl TokenVerifier) -> AuthOptions {
    AuthOptions::new(RESOURCE, "http://as.test", verifier).expect("options").scopes_supported([
        "files:read",
        "files:write",
        "offline_access",
    ])
}

fn bearer(token: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("authorization", HeaderValue::from_str(&format!("Bearer {token}")).expect("hv"));
    headers
}

/// The status, the `WWW-Authenticate` header and the body of a refusal.
async fn render(response: axum::response::Response) -> String {
    let status = response.status();
    let challenge = response.headers().get("www-authenticate").cloned();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20).await.expect("body");
    let challenge = challenge.map(|v| v.to_str().expect("ascii").to_owned());
    format!(
        "{}\n{}\n{}",
        status.as_u16(),
        challenge.unwrap_or_else(|| "(no challenge)".into()),
        String::from_utf8_lossy(&body)
    )
}

#[track_caller]
fn check_refusal(result: Result<Principal, axum::response::Response>, expect: Expect) {
    let response = match result {
        Ok(principal) => panic!("accepted: {principal:?}"),
        Err(response) => response,
    };
    let rendered = futures_block(render(response));
    expect.assert_eq(&rendered);
}

/// `render` is async only for the body, which is already in memory.
fn futures_block<F: std::future::Future>(future: F) -> F::Output {
    futures_util::FutureExt::now_or_never(Box::pin(future)).expect("body in memory")
}

// ---------------------------------------------------------------- JWTs

#[tokio::test]
async fn valid_tokens_of_every_algorithm_are_accepted() {
    let issuer = issuer(&["rsa-1", "ec-1", "ed-1"]).await;
    let options = options(issuer.verifier());
    for kid in ["rsa-1", "ec-1", "ed-1"] {
        // One set of claims: `exp` is computed from the clock, which may tick between calls.
        let claims = issuer.claims();
        let token = sign(kid, &claims);
        let principal = options.authorize(&bearer(&token)).await.expect(kid);
        assert_eq!(principal.subject.as_deref(), Some("alice"), "{kid}");
        assert_eq!(principal.client_id.as_deref(), Some("client-1"));
        assert_eq!(principal.scopes, ["files:read", "tools:call"]);
        assert_eq!(principal.audience, [RESOURCE]);
        let exp = principal.expires_at.expect("exp").duration_since(UNIX_EPOCH).expect("t");
        assert_eq!(Some(exp.as_secs()), claims["exp"].as_u64());
        assert_eq!(principal.claims["iss"], json!(issuer.url));
    }
    // Discovery and one key set fetch served all three.
    assert_eq!(issuer.fetches(), 1);
}

#[tokio::test]
async fn audience_may_be_a_list_and_differ_in_case_or_trailing_slash() {
    let issuer = issuer(&["rsa-1"]).await;
    let options = options(issuer.verifier());
    for aud in [json!(["other", RESOURCE]), json!("HTTP://MCP.TEST/mcp")] {
        let token = sign("rsa-1", &issuer.claims_with(json!({ "aud": aud })));
        options.authorize(&bearer(&token)).await.expect("accepted");
    }
    let token = sign("rsa-1", &issuer.claims_with(json!({"aud": "http://mcp.test/"})));
    let root = JwtVerifier::new(&issuer.url, "http://mcp.test").expect("verifier");
    root.verify(&token).await.expect("trailing slash ignored");
}

#[tokio::test]
async fn expired_token_is_401() {
    let issuer = issuer(&["rsa-1"]).await;
    let options = options(issuer.verifier());
    let token = sign("rsa-1", &issuer.claims_with(json!({"exp": now() - 120})));
    check_refusal(
        options.authorize(&bearer(&token)).await,
        expect![[r#"
            401
            Bearer error="invalid_token", error_description="The access token expired", resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp", scope="files:read files:write"
            {"jsonrpc":"2.0","error":{"code":-32600,"message":"Unauthorized: The access token expired"}}"#]],
    );
    // Within the leeway (30 s by default) it still counts.
    let token = sign("rsa-1", &issuer.claims_with(json!({"exp": now() - 10})));
    options.authorize(&bearer(&token)).await.expect("within leeway");
}

#[tokio::test]
async fn not_yet_valid_token_is_401() {
    let issuer = issuer(&["ec-1"]).await;
    let options = options(issuer.verifier());
    let token = sign("ec-1", &issuer.claims_with(json!({"nbf": now() + 300})));
    check_refusal(
        options.authorize(&bearer(&token)).await,
        expect![[r#"
            401
            Bearer error="invalid_token", error_description="The access token is not valid yet", resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp", scope="files:read files:write"
            {"jsonrpc":"2.0","error":{"code":-32600,"message":"Unauthorized: The access token is not valid yet"}}"#]],
    );
}

#[tokio::test]
async fn token_for_another_resource_is_401() {
    let issuer = issuer(&["ed-1"]).await;
    let options = options(issuer.verifier());
    let token = sign("ed-1", &issuer.claims_with(json!({"aud": "http://other.test/mcp"})));
    check_refusal(
        options.authorize(&bearer(&token)).await,
        expect![[r#"
            401
            Bearer error="invalid_token", error_description="The access token is not for this resource", resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp", scope="files:read files:write"
            {"jsonrpc":"2.0","error":{"code":-32600,"message":"Unauthorized: The access token is not for this resource"}}"#]],
    );
    let token = sign("ed-1", &issuer.claims_with(json!({"aud": null})));
    let error = issuer.verifier().verify(&token).await.expect_err("no audience");
    assert_eq!(error.kind(), VerifyErrorKind::WrongAudience);
}

#[tokio::test]
async fn token_from_another_issuer_is_401() {
    let issuer = issuer(&["rsa-1"]).await;
    let verifier = issuer.verifier();
    for iss in [json!("http://evil.test"), Value::Null] {
        let token = sign("rsa-1", &issuer.claims_with(json!({ "iss": iss })));
        let error = verifier.verify(&token).await.expect_err("refused");
        assert_eq!(error.kind(), VerifyErrorKind::Invalid);
    }
    let token = sign("rsa-1", &issuer.claims_with(json!({"iss": "http://evil.test"})));
    check_refusal(
        options(issuer.verifier()).authorize(&bearer(&token)).await,
        expect![[r#"
            401
            Bearer error="invalid_token", error_description="The access token is from another issuer", resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp", scope="files:read files:write"
            {"jsonrpc":"2.0","error":{"code":-32600,"message":"Unauthorized: The access token is from another issuer"}}"#]],
    );
}

#[tokio::test]
async fn forged_and_unacceptable_tokens_are_401() {
    let issuer = issuer(&["rsa-1", "rsa-2"]).await;
    let verifier = issuer.verifier();
    let claims = issuer.claims();
    // Signed by rsa-2, labelled rsa-1.
    let forged = sign_as("rsa-2", "rsa-1", &claims);
    // A symmetric algorithm (HS256: whoever verifies could mint tokens) and `none`.
    let hmac = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(b"secret"),
    )
    .expect("hs256");
    let none =
        format!("{}.{}.", b64url(br#"{"alg":"none"}"#), b64url(claims.to_string().as_bytes()));
    for token in [forged, hmac, none, "not-a-jwt".to_owned()] {
        let error = verifier.verify(&token).await.expect_err("refused");
        assert_eq!(error.kind(), VerifyErrorKind::Invalid, "{token}: {error}");
    }
    let no_exp = sign("rsa-1", &issuer.claims_with(json!({"exp": null})));
    assert_eq!(
        verifier.verify(&no_exp).await.expect_err("no exp").kind(),
        VerifyErrorKind::Invalid
    );
}

#[tokio::test]
async fn missing_scope_is_403_naming_every_needed_scope() {
    let issuer = issuer(&["rsa-1"]).await;
    let options = options(issuer.verifier()).required_scopes(["files:read", "files:write"]);
    let token = sign("rsa-1", &issuer.claims());
    check_refusal(
        options.authorize(&bearer(&token)).await,
        expect![[r#"
            403
            Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp"
            {"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: the access token lacks a required scope (files:read files:write)"}}"#]],
    );
    // A 401 then challenges for the required scopes, not the advertised ones.
    check_refusal(
        options.authorize(&HeaderMap::new()).await,
        expect![[r#"
            401
            Bearer resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp", scope="files:read files:write"
            {"jsonrpc":"2.0","error":{"code":-32600,"message":"Unauthorized: a bearer token is required"}}"#]],
    );
    let token = sign("rsa-1", &issuer.claims_with(json!({"scope": "files:write files:read"})));
    options.authorize(&bearer(&token)).await.expect("both scopes");
}

#[tokio::test]
async fn scope_hierarchy_and_missing_scopes() {
    let issuer = issuer(&["rsa-1"]).await;
    let hierarchy = ScopeHierarchy::new().implies("files", ["files:read", "files:write"]);
    let options =
        options(issuer.verifier()).required_scopes(["files:write"]).scope_hierarchy(hierarchy);
    let token = sign("rsa-1", &issuer.claims_with(json!({"scope": "files"})));
    let principal = options.authorize(&bearer(&token)).await.expect("files implies files:write");
    let needed = ["files:read".to_owned(), "admin".to_owned()];
    assert_eq!(options.missing_scopes(&principal, &needed), ["admin"]);
    assert_eq!(missing_scopes(&principal, &needed), ["files:read", "admin"]);
    check_refusal(
        Err(options.insufficient_scope(&needed)),
        expect![[r#"
            403
            Bearer error="insufficient_scope", scope="files:read admin", resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp"
            {"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: the access token lacks a required scope (files:read admin)"}}"#]],
    );
    // `scp` as an array is read too.
    let token = sign("rsa-1", &issuer.claims_with(json!({"scope": null, "scp": ["a", "b"]})));
    let principal = issuer.verifier().verify(&token).await.expect("valid");
    assert_eq!(principal.scopes, ["a", "b"]);
}

// ---------------------------------------------------------------- the Authorization header

#[tokio::test]
async fn no_token_is_401_pointing_at_the_metadata() {
    let issuer = issuer(&["rsa-1"]).await;
    let options = options(issuer.verifier());
    check_refusal(
        options.authorize(&HeaderMap::new()).await,
        expect![[r#"
            401
            Bearer resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp", scope="files:read files:write"
            {"jsonrpc":"2.0","error":{"code":-32600,"message":"Unauthorized: a bearer token is required"}}"#]],
    );
    // Another scheme is no bearer token either.
    let mut basic = HeaderMap::new();
    basic.insert("authorization", HeaderValue::from_static("Basic YWxpY2U6cHc="));
    let refused = options.authorize(&basic).await.expect_err("basic");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    // The scheme name is case-insensitive.
    let token = sign("rsa-1", &issuer.claims());
    let mut lower = HeaderMap::new();
    lower.insert("authorization", HeaderValue::from_str(&format!("bearer  {token}")).expect("hv"));
    options.authorize(&lower).await.expect("lowercase scheme");
    assert_eq!(issuer.fetches(), 1);
}

#[tokio::test]
async fn malformed_authorization_header_is_400() {
    let issuer = issuer(&["rsa-1"]).await;
    let options = options(issuer.verifier());
    let mut headers = HeaderMap::new();
    headers.insert("authorization", HeaderValue::from_static("Bearer"));
    check_refusal(
        options.authorize(&headers).await,
        expect![[r#"
            400
            Bearer error="invalid_request", error_description="The Authorization header has no bearer token", resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp"
            {"jsonrpc":"2.0","error":{"code":-32600,"message":"The Authorization header has no bearer token"}}"#]],
    );
    for value in ["Bearer a b", "Bearer a,b", "Bearer ===", "Bearer \u{7f}"] {
        let mut headers = HeaderMap::new();
        let Ok(value) = HeaderValue::from_str(value) else { continue };
        headers.insert("authorization", value);
        let refused = options.authorize(&headers).await.expect_err("malformed");
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    }
    let mut two = bearer("a");
    two.append("authorization", HeaderValue::from_static("Bearer b"));
    let refused = options.authorize(&two).await.expect_err("two headers");
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    // None of this reached the issuer.
    assert_eq!(issuer.fetches(), 0);
}

// ---------------------------------------------------------------- key rotation

#[tokio::test]
async fn rotated_key_is_fetched_once_and_unknown_keys_do_not_hammer_the_issuer() {
    let issuer = issuer(&["rsa-1"]).await;
    let verifier = issuer.verifier().jwks_uri(format!("{}/jwks", issuer.url)).expect("uri");
    verifier.verify(&sign("rsa-1", &issuer.claims())).await.expect("rsa-1");
    assert_eq!(issuer.fetches(), 1);
    // The issuer rotates to rsa-2: the first token with the new key id refetches once.
    issuer.publish(&["rsa-1", "rsa-2"]);
    verifier.verify(&sign("rsa-2", &issuer.claims())).await.expect("rsa-2");
    assert_eq!(issuer.fetches(), 2);
    verifier.verify(&sign("rsa-2", &issuer.claims())).await.expect("rsa-2 cached");
    assert_eq!(issuer.fetches(), 2);
    // A key id the issuer never published, right after that refetch: refused, no fetch.
    issuer.publish(&["rsa-1", "rsa-2", "ec-1"]);
    for _ in 0..20 {
        let error = verifier.verify(&sign_as("rsa-1", "made-up", &issuer.claims())).await;
        assert_eq!(error.expect_err("unknown kid").kind(), VerifyErrorKind::Invalid);
    }
    assert_eq!(issuer.fetches(), 2);
    // Even a real new key waits for the refetch interval (30 s by default).
    let error = verifier.verify(&sign("ec-1", &issuer.claims())).await.expect_err("too soon");
    assert_eq!(error.message(), "The access token's signing key is unknown");
    assert_eq!(issuer.fetches(), 2);
}

#[tokio::test]
async fn concurrent_unknown_keys_share_one_refetch() {
    let issuer = issuer(&["rsa-1"]).await;
    let verifier = Arc::new(issuer.verifier().min_refetch_interval(Duration::ZERO));
    verifier.verify(&sign("rsa-1", &issuer.claims())).await.expect("rsa-1");
    issuer.publish(&["rsa-1", "ec-1"]);
    let token = sign("ec-1", &issuer.claims());
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (verifier, token) = (verifier.clone(), token.clone());
            tokio::spawn(async move { verifier.verify(&token).await.map(|p| p.subject) })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.expect("task").expect("ec-1"), Some("alice".into()));
    }
    // One for the start, one shared by the eight requests (even with no refetch interval).
    assert_eq!(issuer.fetches(), 2);
}

#[tokio::test]
async fn unreachable_key_set_is_503() {
    // The signer's own server first: bound after the dead port is dropped, it could be given
    // that very port, and the keys would then be found.
    let issuer = issuer(&[]).await;
    // A port nothing listens on: bind, note it, drop the listener.
    let dead = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", dead.local_addr().expect("addr"));
    drop(dead);
    let options = options(JwtVerifier::new(&url, RESOURCE).expect("verifier"));
    check_refusal(
        options.authorize(&bearer("a.b.c")).await,
        expect![[r#"
            401
            Bearer error="invalid_token", error_description="The access token is not a well-formed JWT", resource_metadata="http://mcp.test/.well-known/oauth-protected-resource/mcp", scope="files:read files:write"
            {"jsonrpc":"2.0","error":{"code":-32600,"message":"Unauthorized: The access token is not a well-formed JWT"}}"#]],
    );
    let token = sign("rsa-1", &issuer.claims());
    check_refusal(
        options.authorize(&bearer(&token)).await,
        expect![[r#"
            503
            (no challenge)
            {"jsonrpc":"2.0","error":{"code":-32603,"message":"Service unavailable: The issuer's signing keys cannot be fetched"}}"#]],
    );
}

// ---------------------------------------------------------------- introspection

#[tokio::test]
async fn introspection_verifier() {
    let issuer = issuer(&[]).await;
    let endpoint = format!("{}/introspect", issuer.url);
    let verifier =
        IntrospectionVerifier::new(&endpoint, "mcp-server", "s3cret", RESOURCE).expect("verifier");
    let now = now();
    let active = |aud: &str, exp: u64| {
        json!({"active": true, "sub": "bob", "client_id": "c", "scope": "files:read",
               "aud": aud, "exp": exp, "iss": "http://as.test"})
    };
    // The token arrives form-encoded ('/' and '+' escaped).
    *issuer.introspection.lock().expect("lock") = vec![
        ("good%2Ftoken%2B1".into(), active(RESOURCE, now + 60)),
        ("expired".into(), active(RESOURCE, now - 600)),
        ("foreign".into(), active("http://other.test", now + 60)),
    ];
    let principal = verifier.verify("good/token+1").await.expect("active");
    assert_eq!(principal.subject.as_deref(), Some("bob"));
    assert_eq!(principal.scopes, ["files:read"]);
    let kind =
        |r: Result<Principal, modelcontext::auth::VerifyError>| r.expect_err("refused").kind();
    assert_eq!(kind(verifier.verify("expired").await), VerifyErrorKind::Expired);
    assert_eq!(kind(verifier.verify("foreign").await), VerifyErrorKind::WrongAudience);
    assert_eq!(kind(verifier.verify("unknown").await), VerifyErrorKind::Invalid);
    let wrong_issuer = IntrospectionVerifier::new(&endpoint, "mcp-server", "s3cret", RESOURCE)
        .expect("verifier")
        .issuer("http://elsewhere.test");
    assert_eq!(kind(wrong_issuer.verify("good/token+1").await), VerifyErrorKind::Invalid);
    // Bad credentials of our own are not the client's fault: 503, not 401.
    let bad = IntrospectionVerifier::new(&endpoint, "mcp-server", "wrong", RESOURCE).expect("v");
    assert_eq!(kind(bad.verify("good/token+1").await), VerifyErrorKind::Unavailable);
}

#[tokio::test]
async fn introspected_dpop_bound_tokens_need_a_proof_of_their_key() {
    let issuer = issuer(&[]).await;
    let endpoint = format!("{}/introspect", issuer.url);
    let verifier =
        IntrospectionVerifier::new(&endpoint, "mcp-server", "s3cret", RESOURCE).expect("verifier");
    let options = options(verifier);
    let key = modelcontext::auth::DpopKey::generate().expect("key");
    *issuer.introspection.lock().expect("lock") = vec![(
        "opaque-bound".into(),
        json!({"active": true, "sub": "bob", "aud": RESOURCE, "exp": now() + 60,
               "cnf": {"jkt": key.thumbprint()}}),
    )];
    let proof = key.proof("POST", RESOURCE, Some("opaque-bound"), None).expect("proof");
    let mut headers = HeaderMap::new();
    headers.insert("authorization", HeaderValue::from_static("DPoP opaque-bound"));
    headers.insert("dpop", HeaderValue::from_str(&proof).expect("hv"));
    let principal = options.authorize(&headers).await.expect("bound token with its proof");
    assert_eq!(principal.subject.as_deref(), Some("bob"));
    let refused = options.authorize(&bearer("opaque-bound")).await.expect_err("as a bearer");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
}

/// Keys and introspection answers fetched over https, from an issuer whose certificate only a
/// private CA vouches for: trusted once the verifier's client is given the CA.
#[cfg(feature = "tls")]
#[tokio::test]
async fn keys_and_introspection_over_https_with_a_private_ca() {
    let ca = crate::test_ca::TestCa::new();
    let issuer = issuer_over_tls(&ca, &["ec-1"]).await;
    let client = modelcontext::net::HttpClient::builder()
        .root_certificate(ca.root_pem())
        .expect("root")
        .build();
    let token = sign("ec-1", &issuer.claims());

    let untrusting = options(issuer.verifier());
    let refusal = untrusting.authorize(&bearer(&token)).await.expect_err("unknown issuer");
    assert_ne!(refusal.status(), StatusCode::OK);
    assert_eq!(issuer.fetches(), 0, "the key set must not be read from an untrusted server");

    let trusting = options(issuer.verifier().http_client(client.clone()));
    let principal = trusting.authorize(&bearer(&token)).await.expect("verified over https");
    assert_eq!(principal.subject.as_deref(), Some("alice"));
    assert_eq!(issuer.fetches(), 1);

    let endpoint = format!("{}/introspect", issuer.url);
    *issuer.introspection.lock().expect("lock") =
        vec![("opaque".into(), json!({"active": true, "sub": "bob", "aud": RESOURCE}))];
    let introspection = IntrospectionVerifier::new(&endpoint, "mcp-server", "s3cret", RESOURCE)
        .expect("verifier")
        .http_client(client);
    let principal = introspection.verify("opaque").await.expect("active");
    assert_eq!(principal.subject.as_deref(), Some("bob"));
}

// ---------------------------------------------------------------- metadata and routing

#[tokio::test]
async fn metadata_documents_and_query_tokens_over_http() {
    let issuer = issuer(&["rsa-1"]).await;
    let options = Arc::new(options(issuer.verifier()));
    let protected = {
        let options = options.clone();
        move |headers: HeaderMap| async move {
            match options.authorize(&headers).await {
                Ok(principal) => principal.subject.unwrap_or_default().into_response(),
                Err(refusal) => refusal,
            }
        }
    };
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(protected))
        .merge(metadata_router(&options, "/mcp"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });

    let expected = expect![[r#"
        200 application/json *
        {"resource":"http://mcp.test/mcp","authorization_servers":["http://as.test"],"scopes_supported":["files:read","files:write"],"bearer_methods_supported":["header"],"dpop_signing_alg_values_supported":["ES256","ES384","RS256","PS256","EdDSA"]}"#]];
    for path in
        ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]
    {
        let (status, headers, body) = fetch("GET", &format!("{base}{path}"), None).await;
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("-");
        let seen = format!(
            "{} {} {}\n{body}",
            status.as_u16(),
            header("content-type"),
            header("access-control-allow-origin")
        );
        expected.assert_eq(&seen);
    }
    assert_eq!(options.metadata()["bearer_methods_supported"], json!(["header"]));

    let token = sign("rsa-1", &issuer.claims());
    let (status, _, body) = fetch("POST", &format!("{base}/mcp"), Some(&token)).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "alice"));
    // A token in the query string is never read.
    for query in [format!("access_token={token}"), format!("token={token}")] {
        let (status, headers, _) = fetch("POST", &format!("{base}/mcp?{query}"), None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(headers.contains_key("www-authenticate"));
    }
}

#[test]
fn resource_metadata_urls_and_resource_checks() {
    let verifier = || JwtVerifier::new("http://127.0.0.1:1", RESOURCE).expect("verifier");
    let url = |resource: &str| {
        AuthOptions::new(resource, "http://as.test", verifier())
            .expect(resource)
            .resource_metadata_url()
    };
    assert_eq!(
        url("https://mcp.example.com"),
        "https://mcp.example.com/.well-known/oauth-protected-resource"
    );
    assert_eq!(
        url("https://mcp.example.com/"),
        "https://mcp.example.com/.well-known/oauth-protected-resource"
    );
    assert_eq!(
        url("https://mcp.example.com:8443/server/mcp"),
        "https://mcp.example.com:8443/.well-known/oauth-protected-resource/server/mcp"
    );
    for bad in ["mcp.example.com", "https://mcp.example.com#frag", "ftp://x/y", "/mcp"] {
        assert!(AuthOptions::new(bad, "http://as.test", verifier()).is_err(), "{bad}");
    }
    // Keys are fetched over TLS with the `tls` feature (on by default); only a URL that is
    // neither http:// nor https:// is refused.
    assert_eq!(JwtVerifier::new("https://as.example.com", RESOURCE).is_ok(), cfg!(feature = "tls"));
    assert!(JwtVerifier::new("ftp://as.example.com", RESOURCE).is_err());
}

async fn fetch(method: &str, url: &str, token: Option<&str>) -> (StatusCode, HeaderMap, String) {
    let client = HyperClient::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let mut request = http::Request::builder().method(method).uri(url);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response =
        client.request(request.body(Full::default()).expect("request")).await.expect("response");
    let (status, headers) = (response.status(), response.headers().clone());
    let body = response.into_body().collect().await.expect("body").to_bytes();
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

/// POSTs `body` to a protected endpoint with `token` (and optional extra headers).
async fn post_mcp(
    addr: SocketAddr,
    token: Option<&str>,
    extra: &[(&str, &str)],
    body: &str,
) -> (StatusCode, HeaderMap, String) {
    let client = HyperClient::builder(TokioExecutor::new()).build_http();
    let mut request = http::Request::post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    let response = client
        .request(request.body(Full::new(Bytes::from(body.to_owned()))).expect("request"))
        .await
        .expect("response");
    let (status, headers) = (response.status(), response.headers().clone());
    let body = response.into_body().collect().await.expect("body").to_bytes();
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

/// A protected server: `whoami` (any valid token) and `delete_file` (needs `files:write`).
async fn protected_server(issuer: &Issuer) -> SocketAddr {
    use modelcontext::server::http::HttpOptions;
    use modelcontext::{Context, McpServer, ToolDef};
    let whoami =
        ToolDef::new("whoami", |cx: Context, _: modelcontext::server::NoArgs| async move {
            let principal = cx.principal().expect("a verified principal");
            format!(
                "{} via {}",
                principal.subject.as_deref().unwrap_or("?"),
                principal.client_id.as_deref().unwrap_or("?")
            )
        });
    let delete =
        ToolDef::new("delete_file", || async { "deleted" }).required_scopes(["files:write"]);
    let server =
        McpServer::new("protected").tool(whoami).expect("whoami").tool(delete).expect("delete");
    let auth = options(issuer.verifier()).required_scopes(["files:read"]);
    let options = HttpOptions::default().auth(auth);
    let (addr, serve) = server.http_endpoint_with(options).bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    addr
}

const MODERN: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn modern_call(tool: &str) -> (String, [(&'static str, String); 3]) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}",{MODERN}}}}}"#
    );
    let headers = [
        ("mcp-protocol-version", "2026-07-28".to_owned()),
        ("mcp-method", "tools/call".to_owned()),
        ("mcp-name", tool.to_owned()),
    ];
    (body, headers)
}

#[tokio::test]
async fn the_http_endpoint_demands_a_token_and_hands_the_principal_to_handlers() {
    let issuer = issuer(&["rsa-1"]).await;
    let addr = protected_server(&issuer).await;
    let (body, headers) = modern_call("whoami");
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();

    let (status, answer_headers, _) = post_mcp(addr, None, &headers, &body).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let challenge = answer_headers["www-authenticate"].to_str().expect("ascii");
    assert!(
        challenge.contains("resource_metadata=") && challenge.contains(r#"scope="files:read""#),
        "{challenge}"
    );

    let token = sign("rsa-1", &issuer.claims());
    let (status, _, answer) = post_mcp(addr, Some(&token), &headers, &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(answer.contains("alice via client-1"), "{answer}");

    let (delete_body, delete_headers) = modern_call("delete_file");
    let delete_headers: Vec<(&str, &str)> =
        delete_headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, answer_headers, _) =
        post_mcp(addr, Some(&token), &delete_headers, &delete_body).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let challenge = answer_headers["www-authenticate"].to_str().expect("ascii");
    assert!(
        challenge.contains(r#"error="insufficient_scope""#)
            && challenge.contains(r#"scope="files:read files:write""#),
        "{challenge}"
    );
    let writer = sign("rsa-1", &issuer.claims_with(json!({"scope": "files:read files:write"})));
    let (status, _, answer) = post_mcp(addr, Some(&writer), &delete_headers, &delete_body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");

    let (status, _, metadata) =
        fetch("GET", &format!("http://{addr}/.well-known/oauth-protected-resource/mcp"), None)
            .await;
    assert_eq!(status, StatusCode::OK);
    assert!(metadata.contains(RESOURCE), "{metadata}");
}

#[tokio::test]
async fn a_session_answers_only_the_principal_that_opened_it() {
    let issuer = issuer(&["rsa-1"]).await;
    let addr = protected_server(&issuer).await;
    let alice = sign("rsa-1", &issuer.claims());
    let mallory = sign("rsa-1", &issuer.claims_with(json!({"sub": "mallory"})));
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let (status, headers, _) = post_mcp(addr, Some(&alice), &[], init).await;
    assert_eq!(status, StatusCode::OK);
    let session = headers["mcp-session-id"].to_str().expect("ascii").to_owned();
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let with_session = [("mcp-session-id", session.as_str())];
    assert_eq!(post_mcp(addr, Some(&alice), &with_session, ping).await.0, StatusCode::OK);
    assert_eq!(
        post_mcp(addr, Some(&mallory), &with_session, ping).await.0,
        StatusCode::NOT_FOUND,
        "a stolen session id is useless"
    );
    let delete =
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete_file"}}"#;
    assert_eq!(
        post_mcp(addr, Some(&alice), &with_session, delete).await.0,
        StatusCode::FORBIDDEN,
        "scopes are checked per request in sessions too"
    );
}

/// A mounted tool that needs a scope (`Transform::require_scopes`) is in the tool list only
/// for a caller whose token grants it, as only such a caller may call it.
#[tokio::test]
async fn a_mounted_tool_needing_a_scope_is_listed_only_for_callers_holding_it() {
    use modelcontext::server::compose::Transform;
    use modelcontext::server::http::HttpOptions;
    use modelcontext::{McpServer, ToolDef};
    let issuer = issuer(&["rsa-1"]).await;
    let files = McpServer::new("files")
        .tool(ToolDef::new("read_file", || async { "read" }))
        .expect("read")
        .tool(ToolDef::new("delete_file", || async { "deleted" }))
        .expect("delete");
    let transform = Transform::new().require_scopes("delete_file", ["files:write"]);
    let gateway = McpServer::new("gateway").mount_server(&files, transform).await.expect("mounts");
    let options = HttpOptions::default().auth(options(issuer.verifier()));
    let (addr, serve) =
        gateway.http_endpoint_with(options).bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    let list = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{MODERN}}}}}"#);
    let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")];
    let names = |answer: &str| -> Vec<String> {
        let answer: Value = serde_json::from_str(answer).expect("json");
        let tools = answer["result"]["tools"].as_array().cloned().unwrap_or_default();
        tools.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect()
    };
    let reader = sign("rsa-1", &issuer.claims());
    let (status, _, answer) = post_mcp(addr, Some(&reader), &headers, &list).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(names(&answer), ["read_file"]);
    let writer = sign("rsa-1", &issuer.claims_with(json!({"scope": "files:read files:write"})));
    let (_, _, answer) = post_mcp(addr, Some(&writer), &headers, &list).await;
    assert_eq!(names(&answer), ["read_file", "delete_file"]);
    let (body, call_headers) = modern_call("delete_file");
    let call_headers: Vec<(&str, &str)> =
        call_headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, _, _) = post_mcp(addr, Some(&reader), &call_headers, &body).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _, answer) = post_mcp(addr, Some(&writer), &call_headers, &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
}
