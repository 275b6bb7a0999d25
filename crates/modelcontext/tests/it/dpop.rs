//! The authorization extensions: DPoP (RFC 9449) on the resource server (proofs checked, replays
//! and foreign keys refused, nonces) and on the OAuth client (a proof per request, nonces, key
//! rotation), and the assertion grants (workload identity federation, enterprise-managed
//! authorization) against the mock authorization server of `auth_client`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{HeaderMap, HeaderValue, Method, StatusCode};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use modelcontext::auth::client::{IdentityProvider, OAuthClient};
use modelcontext::auth::{AuthOptions, DpopKey, DpopPolicy, JwtVerifier, Principal};
use serde_json::{Value, json};
use sha2::Digest;

use crate::auth_client::{
    b64, b64url, b64url_decode, connect, mock_as, oauth, protected_server, protected_server_with,
};

/// The canonical URI of the protected MCP server in the resource-server tests.
const RESOURCE: &str = "http://mcp.test/mcp";

/// A proof's header, claims and the RFC 7638 thumbprint of its key, read without checking
/// the signature (the mock authorization server trusts; the resource server under test
/// checks).
pub(crate) fn read_proof(proof: &str) -> (Value, Value, String) {
    let mut parts = proof.split('.');
    let mut part = || -> Value {
        serde_json::from_slice(&b64url_decode(parts.next().expect("part"))).expect("JSON")
    };
    let (header, claims) = (part(), part());
    let jwk = &header["jwk"];
    let canonical = format!(
        r#"{{"crv":{},"kty":{},"x":{},"y":{}}}"#,
        jwk["crv"], jwk["kty"], jwk["x"], jwk["y"]
    );
    let thumbprint = b64url(&sha2::Sha256::digest(canonical.as_bytes()));
    (header, claims, thumbprint)
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_secs()
}

/// An access token for RESOURCE from `issuer`, signed with the test key `ec-1`, bound to the
/// key with thumbprint `jkt` if given.
fn token(issuer: &str, jkt: Option<&str>) -> String {
    let mut claims = json!({
        "iss": issuer, "aud": RESOURCE, "sub": "alice", "client_id": "client-1",
        "scope": "files:read", "iat": now(), "exp": now() + 600,
    });
    if let Some(jkt) = jkt {
        claims["cnf"] = json!({ "jkt": jkt });
    }
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("ec-1".into());
    let key = EncodingKey::from_ec_der(include_bytes!("keys/ec-1.der"));
    jsonwebtoken::encode(&header, &claims, &key).expect("sign")
}

/// A resource server for RESOURCE trusting the mock authorization server's keys.
async fn resource_server(policy: DpopPolicy) -> (String, AuthOptions) {
    let issuer = mock_as(|_| {}).await;
    let verifier = JwtVerifier::new(&issuer.url, RESOURCE).expect("verifier");
    let options = AuthOptions::new(RESOURCE, &issuer.url, verifier).expect("options").dpop(policy);
    (issuer.url.clone(), options)
}

fn presented(scheme: &str, token: &str, proof: Option<&str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    let authorization = HeaderValue::from_str(&format!("{scheme} {token}")).expect("hv");
    headers.insert("authorization", authorization);
    if let Some(proof) = proof {
        headers.insert("dpop", HeaderValue::from_str(proof).expect("hv"));
    }
    headers
}

async fn post(options: &AuthOptions, headers: &HeaderMap) -> Result<Principal, (u16, String)> {
    options.authorize_request(&Method::POST, "/mcp", headers).await.map_err(|refusal| {
        let challenge = refusal.headers().get_all("www-authenticate").iter();
        let challenge: Vec<&str> = challenge.map(|v| v.to_str().expect("ascii")).collect();
        (refusal.status().as_u16(), challenge.join(" | "))
    })
}

#[track_caller]
fn assert_refused(result: Result<Principal, (u16, String)>, status: u16, needle: &str) {
    let (got, challenge) = result.expect_err("refused");
    assert_eq!(got, status, "{challenge}");
    assert!(challenge.contains(needle), "{needle:?} not in {challenge}");
}

// ---------------------------------------------------------------- the resource server

#[tokio::test]
async fn a_valid_proof_is_accepted_once_and_its_replay_refused() {
    let (issuer, options) = resource_server(DpopPolicy::new()).await;
    let key = DpopKey::generate().expect("key");
    let token = token(&issuer, Some(key.thumbprint()));
    // The query is not part of htu.
    let proof = key.proof("POST", "http://mcp.test/mcp?x=1", Some(&token), None).expect("proof");
    let headers = presented("DPoP", &token, Some(&proof));
    let principal = post(&options, &headers).await.expect("accepted");
    assert_eq!(principal.subject.as_deref(), Some("alice"));
    assert_refused(post(&options, &headers).await, 401, "already used");
    // A fresh proof for the same request is fine.
    let fresh = key.proof("POST", RESOURCE, Some(&token), None).expect("proof");
    post(&options, &presented("DPoP", &token, Some(&fresh))).await.expect("fresh proof");
}

#[tokio::test]
async fn a_proof_for_another_url_method_or_token_is_refused() {
    let (issuer, options) = resource_server(DpopPolicy::new()).await;
    let key = DpopKey::generate().expect("key");
    let token = token(&issuer, Some(key.thumbprint()));
    let cases = [
        (key.proof("POST", "http://mcp.test/other", Some(&token), None), "another URL"),
        (key.proof("POST", "http://elsewhere.test/mcp", Some(&token), None), "another URL"),
        (key.proof("GET", RESOURCE, Some(&token), None), "another HTTP method"),
        (key.proof("POST", RESOURCE, Some("another-token"), None), "not for this access token"),
        (key.proof("POST", RESOURCE, None, None), "not for this access token"),
    ];
    for (proof, reason) in cases {
        let proof = proof.expect("proof");
        let refused = post(&options, &presented("DPoP", &token, Some(&proof))).await;
        assert_refused(refused, 401, reason);
    }
    let (_, challenge) =
        post(&options, &presented("DPoP", &token, Some("x.y.z"))).await.expect_err("junk");
    assert!(challenge.starts_with("DPoP error=\"invalid_dpop_proof\""), "{challenge}");
    // The same proof, GET to the same URL, through the request's own method.
    let get = key.proof("GET", RESOURCE, Some(&token), None).expect("proof");
    let headers = presented("DPoP", &token, Some(&get));
    options.authorize_request(&Method::GET, "/mcp", &headers).await.expect("GET proof for GET");
}

#[tokio::test]
async fn a_token_bound_to_another_key_is_refused() {
    let (issuer, options) = resource_server(DpopPolicy::new()).await;
    let (holder, thief) = (DpopKey::generate().expect("key"), DpopKey::generate().expect("key"));
    let token = token(&issuer, Some(holder.thumbprint()));
    let proof = thief.proof("POST", RESOURCE, Some(&token), None).expect("proof");
    let refused = post(&options, &presented("DPoP", &token, Some(&proof))).await;
    assert_refused(refused, 401, "bound to another DPoP key");
    // A bound token is no bearer token.
    assert_refused(post(&options, &presented("Bearer", &token, None)).await, 401, "DPoP-bound");
    // An unbound token needs no proof, and cannot pose as a bound one.
    let unbound = self::token(&issuer, None);
    post(&options, &presented("Bearer", &unbound, None)).await.expect("bearer token");
    let proof = holder.proof("POST", RESOURCE, Some(&unbound), None).expect("proof");
    let refused = post(&options, &presented("DPoP", &unbound, Some(&proof))).await;
    assert_refused(refused, 401, "not DPoP-bound");
    // DPoP without its proof header cannot be read.
    assert_refused(post(&options, &presented("DPoP", &token, None)).await, 400, "proof header");
}

#[tokio::test]
async fn a_required_nonce_is_handed_out_then_accepted() {
    let policy = DpopPolicy::new().nonces(Duration::from_secs(300));
    let (issuer, options) = resource_server(policy).await;
    let key = DpopKey::generate().expect("key");
    let token = token(&issuer, Some(key.thumbprint()));
    let proof = key.proof("POST", RESOURCE, Some(&token), None).expect("proof");
    let refusal = options
        .authorize_request(&Method::POST, "/mcp", &presented("DPoP", &token, Some(&proof)))
        .await
        .expect_err("no nonce");
    assert_eq!(refusal.status(), StatusCode::UNAUTHORIZED);
    let challenge = refusal.headers()["www-authenticate"].to_str().expect("ascii");
    assert!(challenge.starts_with("DPoP error=\"use_dpop_nonce\""), "{challenge}");
    let nonce = refusal.headers()["dpop-nonce"].to_str().expect("ascii").to_owned();
    let wrong = key.proof("POST", RESOURCE, Some(&token), Some("made-up")).expect("proof");
    assert_refused(
        post(&options, &presented("DPoP", &token, Some(&wrong))).await,
        401,
        "use_dpop_nonce",
    );
    let proof = key.proof("POST", RESOURCE, Some(&token), Some(&nonce)).expect("proof");
    post(&options, &presented("DPoP", &token, Some(&proof))).await.expect("with the nonce");
}

#[tokio::test]
async fn required_dpop_refuses_bearer_tokens_and_challenges_with_dpop_only() {
    let (issuer, options) = resource_server(DpopPolicy::new().required()).await;
    assert_eq!(options.metadata()["dpop_bound_access_tokens_required"], json!(true));
    let (status, challenge) = post(&options, &HeaderMap::new()).await.expect_err("no token");
    assert_eq!(status, 401);
    assert!(challenge.starts_with("DPoP resource_metadata="), "{challenge}");
    assert!(challenge.contains("algs=\"ES256"), "{challenge}");
    let unbound = token(&issuer, None);
    assert_refused(
        post(&options, &presented("Bearer", &unbound, None)).await,
        401,
        "only accepts DPoP",
    );
    // Without the policy, both schemes are offered, Bearer first.
    let (_, options) = resource_server(DpopPolicy::new()).await;
    let (_, challenge) = post(&options, &HeaderMap::new()).await.expect_err("no token");
    assert!(challenge.starts_with("Bearer resource_metadata="), "{challenge}");
    assert!(challenge.contains(" | DPoP resource_metadata="), "{challenge}");
}

/// A proof made by hand with the test key `ec-1` (its public half in `keys/jwks.json`):
/// `header` and `claims` merged over those of a valid proof for POST to RESOURCE.
fn crafted_proof(token: &str, header: Value, claims: Value) -> String {
    let jwk = json!({"kty": "EC", "crv": "P-256",
        "x": "yXOLqqf25Pld2jWb0IYqP2O-2c8sZ9JRQsxAJUF8VVM",
        "y": "mYjLnasJr3_e6b_lTLkh6_aomlGY_-gwp9ojnPuBqW4"});
    let mut full_header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk});
    let ath = b64url(&sha2::Sha256::digest(token.as_bytes()));
    let mut full_claims = json!({"jti": format!("crafted-{}", now_nanos()), "htm": "POST",
        "htu": RESOURCE, "iat": now(), "ath": ath});
    merge(&mut full_header, header);
    merge(&mut full_claims, claims);
    let input = format!(
        "{}.{}",
        b64url(full_header.to_string().as_bytes()),
        b64url(full_claims.to_string().as_bytes())
    );
    // The JWS signature over our own header and claims.
    let key = EncodingKey::from_ec_der(include_bytes!("keys/ec-1.der"));
    let signature =
        jsonwebtoken::crypto::sign(input.as_bytes(), &key, Algorithm::ES256).expect("sign");
    format!("{input}.{signature}")
}

fn merge(into: &mut Value, changes: Value) {
    for (name, value) in changes.as_object().expect("object") {
        if value.is_null() {
            into.as_object_mut().expect("object").remove(name);
        } else {
            into[name] = value.clone();
        }
    }
}

fn now_nanos() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_nanos()
}

#[tokio::test]
async fn stale_future_or_malformed_proofs_are_refused() {
    let (issuer, options) = resource_server(DpopPolicy::new()).await;
    let jkt = read_proof(&crafted_proof("t", json!({}), json!({}))).2;
    let token = token(&issuer, Some(&jkt));
    let good = crafted_proof(&token, json!({}), json!({}));
    post(&options, &presented("DPoP", &token, Some(&good))).await.expect("a crafted valid proof");
    let cases = [
        (json!({}), json!({"iat": now() - 600}), "too old or from the future"),
        (json!({}), json!({"iat": now() + 600}), "too old or from the future"),
        (json!({}), json!({"iat": null}), "no iat"),
        (json!({}), json!({"jti": null}), "no usable jti"),
        (json!({}), json!({"htu": format!("{RESOURCE}?q=1")}), "another URL"),
        (json!({"typ": "JWT"}), json!({}), "typ is not dpop+jwt"),
        (json!({"alg": "HS256"}), json!({}), "alg is not supported"),
        (json!({"jwk": null}), json!({}), "no jwk"),
        (
            json!({"jwk": {"kty": "EC", "crv": "P-256", "x": "a", "y": "b", "d": "c"}}),
            json!({}),
            "private key",
        ),
    ];
    for (header, claims, reason) in cases {
        let proof = crafted_proof(&token, header, claims);
        assert_refused(post(&options, &presented("DPoP", &token, Some(&proof))).await, 401, reason);
    }
    // A signature by another key than the proof's jwk.
    let other = DpopKey::generate().expect("key");
    let forged = crafted_proof(&token, json!({"jwk": other.public_jwk()}), json!({}));
    assert_refused(
        post(&options, &presented("DPoP", &token, Some(&forged))).await,
        401,
        "signature",
    );
}

// ---------------------------------------------------------------- the client

/// `auth_client`'s protected server, checking DPoP with `policy`.
async fn dpop_server(issuer: &str, policy: DpopPolicy) -> String {
    protected_server_with(issuer, modelcontext::net::HttpClient::new(), policy).await
}

#[tokio::test]
async fn the_client_binds_its_tokens_and_proves_each_request_with_the_servers_nonces() {
    let issuer = mock_as(|mock| mock.dpop_nonce = Some("as-nonce".into())).await;
    let policy = DpopPolicy::new().required().nonces(Duration::from_secs(300));
    let url = dpop_server(&issuer.url, policy).await;
    let key = DpopKey::generate().expect("key");
    let thumbprint = key.thumbprint().to_owned();
    let client = connect(&url, oauth().dpop(key)).await.expect("connect");
    // Every request is accepted by a server that refuses a replayed proof and wants its nonce.
    for _ in 0..3 {
        let answer = client.call_tool("whoami", json!({})).await.expect("whoami");
        assert!(serde_json::to_string(&answer).expect("json").contains("alice"), "{answer:?}");
    }
    client.close().await;
    let seen = issuer.seen();
    let token_endpoint = format!("{}/token", issuer.url);
    // The token request: refused once for want of the nonce, then sent again with it.
    assert_eq!(seen.proofs.len(), 2, "{:?}", seen.proofs);
    assert_eq!(seen.proofs[0].get("nonce"), None);
    assert_eq!(seen.proofs[1]["nonce"], "as-nonce");
    for proof in &seen.proofs {
        assert_eq!(
            (proof["htm"].as_str(), proof["htu"].as_str()),
            (Some("POST"), Some(token_endpoint.as_str()))
        );
        assert_eq!(proof.get("ath"), None);
    }
    assert_ne!(seen.proofs[0]["jti"], seen.proofs[1]["jti"]);
    assert_eq!(seen.tokens.len(), 1);
    assert_eq!(seen.tokens[0].0["grant_type"], "authorization_code");
    assert!(seen.proof_keys.iter().all(|k| *k == thumbprint), "the token is bound to our key");
}

#[tokio::test]
async fn a_rotated_key_binds_the_next_tokens() {
    // Tokens expire at once, so every request refreshes (with a proof of the current key).
    let issuer = mock_as(|mock| mock.expires_in = 0).await;
    let url = dpop_server(&issuer.url, DpopPolicy::new().required()).await;
    let first = DpopKey::generate().expect("key");
    let first_print = first.thumbprint().to_owned();
    let oauth = Arc::new(oauth().dpop(first));
    let transport = modelcontext::transport::http::HttpTransport::new(&url).expect("transport");
    let client = modelcontext::Client::connect(transport.auth_provider(oauth.clone()))
        .await
        .expect("connect");
    client.call_tool("whoami", json!({})).await.expect("whoami");
    let second = DpopKey::generate().expect("key");
    let second_print = second.thumbprint().to_owned();
    oauth.rotate_dpop_key(second);
    assert_eq!(oauth.dpop_thumbprint().as_deref(), Some(second_print.as_str()));
    client.call_tool("whoami", json!({})).await.expect("whoami after the rotation");
    client.close().await;
    let seen = issuer.seen();
    let last = seen.proof_keys.last().expect("a token request after the rotation");
    assert_eq!(last, &second_print);
    assert_eq!(seen.proof_keys.first(), Some(&first_print));
}

// ---------------------------------------------------------------- assertion grants

#[tokio::test]
async fn workload_identity_federation_presents_a_fresh_platform_jwt() {
    let issuer = mock_as(|_| {}).await;
    let url = protected_server(&issuer.url).await;
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let oauth = OAuthClient::jwt_bearer("workload-7", move || {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        async move { Ok(format!("platform-jwt-{n}")) }
    });
    let client = connect(&url, oauth).await.expect("connect");
    client.call_tool("whoami", json!({})).await.expect("whoami");
    client.close().await;
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    let seen = issuer.seen();
    assert!(seen.authorizations.is_empty() && seen.registrations.is_empty());
    let (form, authorization) = &seen.tokens[0];
    assert_eq!(form["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
    assert_eq!(form["assertion"], "platform-jwt-0");
    assert_eq!(form["client_id"], "workload-7");
    assert_eq!(form["resource"], url);
    assert_eq!(form["scope"], "files:read");
    assert_eq!(authorization, &None);
}

#[tokio::test]
async fn a_failing_platform_assertion_is_reported() {
    let issuer = mock_as(|_| {}).await;
    let url = protected_server(&issuer.url).await;
    let oauth = OAuthClient::jwt_bearer("workload-7", || async { Err("no token file".to_owned()) });
    let error = connect(&url, oauth).await.expect_err("no assertion, no token");
    assert!(format!("{error:#}").contains("no workload assertion: no token file"), "{error:#}");
    assert!(issuer.seen().tokens.is_empty());
}

#[tokio::test]
async fn enterprise_managed_authorization_exchanges_the_id_token_for_an_id_jag() {
    let issuer = mock_as(|_| {}).await;
    let url = protected_server(&issuer.url).await;
    let idp = IdentityProvider::new(format!("{}/idp/token", issuer.url), "idp-client");
    let oauth =
        OAuthClient::enterprise_managed(idp, "ent-client", Some("ent-secret".into()), || async {
            Ok("the-users-id-token".to_owned())
        });
    let client = connect(&url, oauth).await.expect("connect");
    client.call_tool("whoami", json!({})).await.expect("whoami");
    client.close().await;
    let seen = issuer.seen();
    let exchange = &seen.exchanges[0];
    assert_eq!(exchange["grant_type"], "urn:ietf:params:oauth:grant-type:token-exchange");
    assert_eq!(exchange["requested_token_type"], "urn:ietf:params:oauth:token-type:id-jag");
    assert_eq!(exchange["audience"], issuer.url);
    assert_eq!(exchange["resource"], url);
    assert_eq!(exchange["subject_token"], "the-users-id-token");
    assert_eq!(exchange["subject_token_type"], "urn:ietf:params:oauth:token-type:id_token");
    assert_eq!(exchange["client_id"], "idp-client");
    assert_eq!(exchange["scope"], "files:read");
    let (form, authorization) = &seen.tokens[0];
    assert_eq!(form["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
    assert_eq!(form["assertion"], format!("id-jag-for-{url}"));
    let basic = format!("Basic {}", b64(b"ent-client:ent-secret"));
    assert_eq!(authorization.as_deref(), Some(basic.as_str()));
}
