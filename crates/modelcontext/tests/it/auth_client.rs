//! The OAuth client (`auth::client`) end to end: a tiny authorization server on 127.0.0.1
//! (metadata, dynamic registration, an authorize endpoint that redirects at once, a token
//! endpoint issuing JWTs signed with the test key `keys/ec-1.der`, a JWKS) and a protected MCP
//! server (our own resource server) in front of it. The client finds everything from the 401.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use http::{HeaderMap, StatusCode, Uri};
use http_body_util::Full;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::rt::TokioExecutor;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use modelcontext::auth::client::{ClientAuth, OAuthClient};
use modelcontext::auth::{AuthOptions, DpopPolicy, JwtVerifier};
use modelcontext::server::http::HttpOptions;
use modelcontext::transport::http::HttpTransport;
use modelcontext::{Client, McpServer, ToolDef};
use serde_json::{Value, json};

pub(crate) type Params = HashMap<String, String>;

/// What the authorization server is told to do, and what it saw.
#[derive(Clone)]
pub(crate) struct MockAs {
    pub(crate) url: String,
    /// Advertise PKCE S256.
    pub(crate) pkce: bool,
    /// The `iss` put in the redirect: `None` omits it.
    pub(crate) redirect_iss: Option<String>,
    /// `expires_in` of issued tokens (the JWTs themselves stay valid for ten minutes).
    pub(crate) expires_in: u64,
    /// A DPoP nonce every token request's proof must carry (RFC 9449 section 8).
    pub(crate) dpop_nonce: Option<String>,
    pub(crate) seen: Arc<Mutex<Seen>>,
}

#[derive(Default)]
pub(crate) struct Seen {
    pub(crate) registrations: Vec<Value>,
    pub(crate) authorizations: Vec<Params>,
    pub(crate) tokens: Vec<(Params, Option<String>)>,
    /// The claims of each token request's DPoP proof, in order (refused ones too).
    pub(crate) proofs: Vec<Value>,
    /// The thumbprints of those proofs' keys.
    pub(crate) proof_keys: Vec<String>,
    /// The IdP's token exchange requests.
    pub(crate) exchanges: Vec<Params>,
    /// code -> (code_challenge, scope)
    pub(crate) codes: HashMap<String, (String, String)>,
}

impl MockAs {
    pub(crate) fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().expect("lock")
    }
}

pub(crate) async fn mock_as(configure: impl FnOnce(&mut MockAs)) -> MockAs {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let mut mock = new_mock_as(format!("http://{}", listener.local_addr().expect("addr")));
    configure(&mut mock);
    let app = mock_as_app(&mock);
    tokio::spawn(async move { axum::serve(listener, app).await });
    mock
}

fn new_mock_as(url: String) -> MockAs {
    MockAs {
        redirect_iss: Some(url.clone()),
        url,
        pkce: true,
        expires_in: 600,
        dpop_nonce: None,
        seen: Arc::default(),
    }
}

fn mock_as_app(mock: &MockAs) -> axum::Router {
    axum::Router::new()
        .route("/.well-known/oauth-authorization-server", get(as_metadata))
        .route("/jwks", get(jwks))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route("/idp/token", post(idp_token))
        .with_state(mock.clone())
}

/// The authorization server over TLS, at `https://localhost:<port>`, certified by `ca`.
#[cfg(feature = "tls")]
async fn mock_as_over_tls(ca: &crate::test_ca::TestCa) -> MockAs {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let mock = new_mock_as(format!("https://localhost:{port}"));
    let leaf = ca.leaf(&["localhost"]);
    crate::tls_client::serve_tls(listener, mock_as_app(&mock), &leaf, crate::tls_client::BOTH);
    mock
}

async fn as_metadata(State(mock): State<MockAs>) -> Response {
    let url = &mock.url;
    let mut metadata = json!({
        "issuer": url,
        "authorization_endpoint": format!("{url}/authorize"),
        "token_endpoint": format!("{url}/token"),
        "registration_endpoint": format!("{url}/register"),
        "jwks_uri": format!("{url}/jwks"),
        "response_types_supported": ["code"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
        "scopes_supported": ["files:read", "files:write", "offline_access"],
        "authorization_response_iss_parameter_supported": true,
    });
    if mock.pkce {
        metadata["code_challenge_methods_supported"] = json!(["S256"]);
    }
    json_body(metadata).into_response()
}

async fn jwks() -> Response {
    let all: Value = serde_json::from_str(include_str!("keys/jwks.json")).expect("jwks.json");
    let keys: Vec<&Value> =
        all["keys"].as_array().expect("keys").iter().filter(|k| k["kid"] == "ec-1").collect();
    json_body(json!({ "keys": keys })).into_response()
}

async fn register(State(mock): State<MockAs>, body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).expect("registration JSON");
    mock.seen().registrations.push(request);
    let answer = json!({"client_id": "dyn-client", "client_secret": "dyn-secret"});
    (StatusCode::CREATED, json_body(answer)).into_response()
}

async fn authorize(State(mock): State<MockAs>, uri: Uri) -> Response {
    let params = parse_form(uri.query().unwrap_or(""));
    let code = format!("code-{}", mock.seen().authorizations.len());
    let challenge = params.get("code_challenge").cloned().unwrap_or_default();
    let scope = params.get("scope").cloned().unwrap_or_default();
    let mut location = format!(
        "{}?code={code}&state={}",
        params["redirect_uri"],
        encode(params.get("state").map(String::as_str).unwrap_or(""))
    );
    if let Some(iss) = &mock.redirect_iss {
        location.push_str(&format!("&iss={}", encode(iss)));
    }
    let mut seen = mock.seen();
    seen.codes.insert(code, (challenge, scope));
    seen.authorizations.push(params);
    (StatusCode::FOUND, [("location", location)]).into_response()
}

/// The enterprise identity provider's token endpoint: an ID-JAG for any token exchange.
async fn idp_token(State(mock): State<MockAs>, body: Bytes) -> Response {
    let form = parse_form(std::str::from_utf8(&body).expect("utf-8"));
    mock.seen().exchanges.push(form.clone());
    json_body(json!({
        "access_token": format!("id-jag-for-{}", form["resource"]),
        "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "token_type": "N_A",
    }))
    .into_response()
}

async fn token(State(mock): State<MockAs>, headers: HeaderMap, body: Bytes) -> Response {
    let form = parse_form(std::str::from_utf8(&body).expect("utf-8"));
    let basic = headers.get("authorization").map(|v| v.to_str().expect("ascii").to_owned());
    let proof = headers.get("dpop").map(|v| crate::dpop::read_proof(v.to_str().expect("ascii")));
    let mut seen = mock.seen();
    if let Some((_, claims, thumbprint)) = &proof {
        seen.proofs.push(claims.clone());
        seen.proof_keys.push(thumbprint.clone());
        if let Some(nonce) = mock.dpop_nonce.clone().filter(|n| claims["nonce"] != *n) {
            let refusal = json_body(json!({"error": "use_dpop_nonce"}));
            return (StatusCode::BAD_REQUEST, [("dpop-nonce", nonce)], refusal).into_response();
        }
    }
    seen.tokens.push((form.clone(), basic));
    let scope = match form["grant_type"].as_str() {
        "authorization_code" => {
            let Some((challenge, scope)) = seen.codes.remove(&form["code"]) else {
                return (StatusCode::BAD_REQUEST, json_body(json!({"error": "invalid_grant"})))
                    .into_response();
            };
            use sha2::Digest;
            let computed = b64url(&sha2::Sha256::digest(form["code_verifier"].as_bytes()));
            if computed != challenge {
                return (StatusCode::BAD_REQUEST, json_body(json!({"error": "invalid_grant"})))
                    .into_response();
            }
            scope
        }
        "refresh_token" => "files:read".to_owned(),
        _ => form.get("scope").cloned().unwrap_or_default(),
    };
    let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_secs();
    let mut claims = json!({
        "iss": mock.url, "aud": form["resource"], "sub": "alice", "client_id": "dyn-client",
        "scope": scope, "iat": now, "exp": now + 600,
    });
    // A proof binds the token to its key (RFC 9449 section 6).
    let token_type = match &proof {
        Some((_, _, thumbprint)) => {
            claims["cnf"] = json!({ "jkt": thumbprint });
            "DPoP"
        }
        None => "Bearer",
    };
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("ec-1".into());
    let key = EncodingKey::from_ec_der(include_bytes!("keys/ec-1.der"));
    let access = jsonwebtoken::encode(&header, &claims, &key).expect("sign");
    let refresh = format!("refresh-{}", seen.tokens.len());
    json_body(json!({
        "access_token": access, "token_type": token_type, "expires_in": mock.expires_in,
        "refresh_token": refresh, "scope": scope,
    }))
    .into_response()
}

/// The protected MCP server: `whoami` needs `files:read` (every request does),
/// `delete_file` also `files:write`. Returns its endpoint URL.
pub(crate) async fn protected_server(issuer: &str) -> String {
    protected_server_fetching_with(issuer, modelcontext::net::HttpClient::new()).await
}

/// [`protected_server`] whose verifier fetches the issuer's keys through `client`.
async fn protected_server_fetching_with(
    issuer: &str,
    client: modelcontext::net::HttpClient,
) -> String {
    protected_server_with(issuer, client, DpopPolicy::new()).await
}

/// [`protected_server_fetching_with`] checking DPoP with `dpop`.
pub(crate) async fn protected_server_with(
    issuer: &str,
    client: modelcontext::net::HttpClient,
    dpop: DpopPolicy,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let resource = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let whoami = ToolDef::new(
        "whoami",
        |cx: modelcontext::Context, _: modelcontext::server::NoArgs| async move {
            cx.principal().and_then(|p| p.subject.clone()).unwrap_or_default()
        },
    );
    let delete =
        ToolDef::new("delete_file", || async { "deleted" }).required_scopes(["files:write"]);
    let server =
        McpServer::new("protected").tool(whoami).expect("whoami").tool(delete).expect("delete");
    let verifier = JwtVerifier::new(issuer, &resource).expect("verifier").http_client(client);
    let auth = AuthOptions::new(&resource, issuer, verifier)
        .expect("options")
        .scopes_supported(["files:read", "files:write"])
        .required_scopes(["files:read"])
        .dpop(dpop);
    let options = HttpOptions::default().auth(auth);
    let endpoint = server.http_endpoint_with(options);
    tokio::spawn(async move { endpoint.serve(listener).await });
    resource
}

/// The browser: GET the authorization URL, return where it redirects.
pub(crate) async fn follow(url: String) -> Result<String, String> {
    let http = HyperClient::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let answer = http.get(url.parse().map_err(|_| "bad URL")?).await.map_err(|e| e.to_string())?;
    let location = answer.headers().get("location").ok_or("no redirect")?;
    Ok(location.to_str().map_err(|e| e.to_string())?.to_owned())
}

/// The browser of [`follow`], for an https authorization server certified by `root_pem`.
#[cfg(feature = "tls")]
async fn follow_over_tls(root_pem: String, url: String) -> Result<String, String> {
    use rustls::pki_types::pem::PemObject;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let uri: Uri = url.parse().map_err(|_| "bad URL")?;
    let (host, port) = (uri.host().ok_or("no host")?.to_owned(), uri.port_u16().unwrap_or(443));
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(
        rustls::pki_types::CertificateDer::pem_slice_iter(root_pem.as_bytes()).flatten(),
    );
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(host.clone()).map_err(|e| e.to_string())?;
    let tcp =
        tokio::net::TcpStream::connect((host.as_str(), port)).await.map_err(|e| e.to_string())?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let mut tls = connector.connect(name, tcp).await.map_err(|e| e.to_string())?;
    let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let head = format!("GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n");
    tls.write_all(head.as_bytes()).await.map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    // A peer that closes without close_notify still delivered its answer.
    let _ = tls.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let location = answer.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("location").then(|| value.trim().to_owned())
    });
    location.ok_or_else(|| "no redirect".to_owned())
}

pub(crate) fn oauth() -> OAuthClient {
    OAuthClient::authorization_code("it-client", "http://127.0.0.1:9/callback", follow)
}

pub(crate) async fn connect(url: &str, oauth: OAuthClient) -> Result<Client, modelcontext::Error> {
    Client::connect(HttpTransport::new(url)?.auth(oauth)).await
}

#[tokio::test]
async fn authorization_code_with_registration_pkce_resource_and_step_up() {
    let issuer = mock_as(|_| {}).await;
    let url = protected_server(&issuer.url).await;
    let client = connect(&url, oauth()).await.expect("connect");
    let result = client.call_tool("whoami", json!({})).await.expect("whoami");
    assert!(!result.is_error(), "{result:?}");
    assert!(serde_json::to_string(&result).expect("json").contains("alice"));
    {
        let seen = issuer.seen();
        assert_eq!(seen.registrations.len(), 1);
        assert_eq!(seen.registrations[0]["application_type"], "native");
        assert_eq!(seen.authorizations.len(), 1);
        let first = &seen.authorizations[0];
        assert_eq!(first["code_challenge_method"], "S256");
        assert_eq!(first["resource"], url);
        assert_eq!(first["client_id"], "dyn-client");
        // The challenge's scope, plus offline_access since the server offers it.
        assert_eq!(first["scope"], "files:read offline_access");
        let (form, basic) = &seen.tokens[0];
        assert_eq!(form["resource"], url);
        assert!(basic.as_deref().is_some_and(|b| b.starts_with("Basic ")), "{basic:?}");
    }

    // 403 insufficient_scope: a second authorization asks for the union.
    let result = client.call_tool("delete_file", json!({})).await.expect("delete_file");
    assert!(!result.is_error(), "{result:?}");
    client.close().await;
    let seen = issuer.seen();
    assert_eq!(seen.registrations.len(), 1, "the registration is reused");
    assert_eq!(seen.authorizations.len(), 2);
    let scope = &seen.authorizations[1]["scope"];
    for needed in ["files:read", "files:write", "offline_access"] {
        assert!(scope.split(' ').any(|s| s == needed), "{scope}");
    }
}

#[tokio::test]
async fn an_expired_token_is_refreshed_not_reauthorized() {
    let issuer = mock_as(|m| m.expires_in = 1).await;
    let url = protected_server(&issuer.url).await;
    let client = connect(&url, oauth()).await.expect("connect");
    client.call_tool("whoami", json!({})).await.expect("first call");
    client.call_tool("whoami", json!({})).await.expect("second call");
    client.close().await;
    let seen = issuer.seen();
    assert_eq!(seen.authorizations.len(), 1);
    let grants: Vec<&str> = seen.tokens.iter().map(|(f, _)| f["grant_type"].as_str()).collect();
    assert!(grants.contains(&"refresh_token"), "{grants:?}");
    assert!(seen.tokens.iter().all(|(f, _)| f.get("resource") == Some(&url)));
}

#[tokio::test]
async fn no_pkce_support_means_no_authorization() {
    let issuer = mock_as(|m| m.pkce = false).await;
    let url = protected_server(&issuer.url).await;
    let outcome = match connect(&url, oauth()).await {
        Ok(client) => client.call_tool("whoami", json!({})).await.map(|_| ()),
        Err(err) => Err(err),
    };
    let error = outcome.expect_err("no token without PKCE").to_string();
    assert!(error.contains("authorization failed") && error.contains("PKCE S256"), "{error}");
    assert!(issuer.seen().authorizations.is_empty());
}

#[tokio::test]
async fn a_wrong_or_missing_iss_stops_before_the_token_request() {
    for iss in [Some("http://evil.example".to_owned()), None] {
        let issuer = mock_as(|m| m.redirect_iss = iss.clone()).await;
        let url = protected_server(&issuer.url).await;
        let outcome = match connect(&url, oauth()).await {
            Ok(client) => client.call_tool("whoami", json!({})).await.map(|_| ()),
            Err(err) => Err(err),
        };
        assert!(outcome.is_err(), "{iss:?}");
        let seen = issuer.seen();
        assert!(!seen.authorizations.is_empty(), "{iss:?}");
        assert!(seen.tokens.is_empty(), "{iss:?}: the code must not be redeemed");
    }
}

#[tokio::test]
async fn pre_registered_credentials_skip_registration() {
    let issuer = mock_as(|_| {}).await;
    let url = protected_server(&issuer.url).await;
    let oauth = oauth().pre_registered("pre-client", Some("pre-secret".into()), None);
    let client = connect(&url, oauth).await.expect("connect");
    client.call_tool("whoami", json!({})).await.expect("whoami");
    client.close().await;
    let seen = issuer.seen();
    assert!(seen.registrations.is_empty());
    assert_eq!(seen.authorizations[0]["client_id"], "pre-client");
    let expected = format!("Basic {}", b64(b"pre-client:pre-secret"));
    assert_eq!(seen.tokens[0].1.as_deref(), Some(expected.as_str()));
}

#[tokio::test]
async fn client_credentials_with_a_jwt_assertion() {
    let issuer = mock_as(|_| {}).await;
    let url = protected_server(&issuer.url).await;
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        b64(include_bytes!("keys/ec-1.der"))
    );
    let auth = ClientAuth::PrivateKeyJwt { private_key_pem: pem, algorithm: "ES256".into() };
    let client =
        connect(&url, OAuthClient::client_credentials("machine", auth)).await.expect("connect");
    client.call_tool("whoami", json!({})).await.expect("whoami");
    client.close().await;
    let seen = issuer.seen();
    assert!(seen.authorizations.is_empty());
    let (form, _) = &seen.tokens[0];
    assert_eq!(form["grant_type"], "client_credentials");
    assert_eq!(
        form["client_assertion_type"],
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    );
    assert_eq!(form["scope"], "files:read");
    let payload = form["client_assertion"].split('.').nth(1).expect("payload");
    let claims: Value = serde_json::from_slice(&b64url_decode(payload)).expect("claims");
    assert_eq!(
        (claims["iss"].as_str(), claims["sub"].as_str()),
        (Some("machine"), Some("machine"))
    );
    assert_eq!(claims["aud"], issuer.url);
    // The assertion is a JWT any library verifies: ES256 under the key's public half.
    let all: Value = serde_json::from_str(include_str!("keys/jwks.json")).expect("jwks.json");
    let public = all["keys"].as_array().expect("keys").iter().find(|k| k["kid"] == "ec-1");
    let public: jsonwebtoken::jwk::Jwk =
        serde_json::from_value(public.expect("ec-1").clone()).expect("jwk");
    let key = jsonwebtoken::DecodingKey::from_jwk(&public).expect("decoding key");
    let mut validation = jsonwebtoken::Validation::new(Algorithm::ES256);
    validation.set_audience(&[issuer.url.as_str()]);
    let header = jsonwebtoken::decode_header(&form["client_assertion"]).expect("header");
    assert_eq!((header.alg, header.typ.as_deref()), (Algorithm::ES256, Some("JWT")));
    jsonwebtoken::decode::<Value>(&form["client_assertion"], &key, &validation)
        .expect("the assertion verifies");
}

// ---------------------------------------------------------------- helpers

pub(crate) fn json_body(value: Value) -> Response {
    ([("content-type", "application/json")], value.to_string()).into_response()
}

pub(crate) fn parse_form(text: &str) -> Params {
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).expect("hex"));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).expect("utf-8")
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub(crate) fn b64(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

pub(crate) fn b64url(bytes: &[u8]) -> String {
    b64(bytes).trim_end_matches('=').replace('+', "-").replace('/', "_")
}

pub(crate) fn b64url_decode(text: &str) -> Vec<u8> {
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for c in text.bytes() {
        let value = match c {
            b'-' => 62,
            b'_' => 63,
            c => ALPHABET.iter().position(|&a| a == c).expect("base64url") as u32,
        };
        bits = (bits << 6) | value;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    out
}

/// Discovery, registration, the authorization and the token requests against an https
/// authorization server certified by a private CA; without the CA, the failure says why.
#[cfg(feature = "tls")]
#[tokio::test]
async fn authorization_code_against_an_https_authorization_server() {
    let ca = crate::test_ca::TestCa::new();
    let issuer = mock_as_over_tls(&ca).await;
    let trusted = modelcontext::net::HttpClient::builder()
        .root_certificate(ca.root_pem())
        .expect("root")
        .build();
    let url = protected_server_fetching_with(&issuer.url, trusted.clone()).await;
    let browser = |root: String| move |url: String| follow_over_tls(root.clone(), url);
    let untrusting = OAuthClient::authorization_code(
        "it-client",
        "http://127.0.0.1:9/callback",
        browser(ca.root_pem()),
    );
    let err = connect(&url, untrusting).await.expect_err("an untrusted authorization server");
    let err = format!("{err:#}");
    assert!(err.contains("signed by an unknown issuer"), "{err}");

    let oauth = OAuthClient::authorization_code(
        "it-client",
        "http://127.0.0.1:9/callback",
        browser(ca.root_pem()),
    )
    .http_client(trusted);
    let client = connect(&url, oauth).await.expect("connect");
    let result = client.call_tool("whoami", json!({})).await.expect("whoami");
    assert!(serde_json::to_string(&result).expect("json").contains("alice"), "{result:?}");
    client.close().await;
    let seen = issuer.seen();
    assert_eq!((seen.registrations.len(), seen.authorizations.len()), (1, 1));
    assert_eq!(seen.tokens.len(), 1);
}

/// A server of the 2025-03-26 revision that publishes no metadata at all: its MCP endpoint
/// wants `Bearer legacy-token`, and `/register`, `/authorize` and `/token` sit at its origin.
/// Records the path of every OAuth request it gets.
async fn legacy_server_without_metadata() -> (String, Arc<Mutex<Vec<String>>>) {
    use axum::middleware::{Next, from_fn};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let server = McpServer::new("legacy").tool(ToolDef::new("ping", || async { "pong" }));
    let mcp = server.expect("tool").http_endpoint().router().layer(from_fn(
        |request: axum::extract::Request, next: Next| async move {
            let authorized = request.headers().get("authorization")
                == Some(&http::HeaderValue::from_static("Bearer legacy-token"));
            if !authorized {
                return (StatusCode::UNAUTHORIZED, [("www-authenticate", "Bearer")])
                    .into_response();
            }
            next.run(request).await
        },
    ));
    let record = |seen: &Arc<Mutex<Vec<String>>>, uri: &Uri| {
        seen.lock().expect("lock").push(uri.path().to_owned());
    };
    let (register_seen, authorize_seen, token_seen) = (seen.clone(), seen.clone(), seen.clone());
    let oauth = axum::Router::new()
        .route(
            "/register",
            post(move |uri: Uri| async move {
                record(&register_seen, &uri);
                (StatusCode::CREATED, json_body(json!({"client_id": "legacy-client"})))
            }),
        )
        .route(
            "/authorize",
            get(move |uri: Uri| async move {
                record(&authorize_seen, &uri);
                let params = parse_form(uri.query().unwrap_or_default());
                assert_eq!(params["code_challenge_method"], "S256");
                assert_eq!(params["client_id"], "legacy-client");
                let back = format!("{}?code=c1&state={}", params["redirect_uri"], params["state"]);
                (StatusCode::FOUND, [("location", back)]).into_response()
            }),
        )
        .route(
            "/token",
            post(move |uri: Uri, body: Bytes| async move {
                record(&token_seen, &uri);
                let form = parse_form(std::str::from_utf8(&body).expect("utf-8"));
                assert_eq!(form["grant_type"], "authorization_code");
                assert!(form.contains_key("code_verifier"), "{form:?}");
                json_body(json!({"access_token": "legacy-token", "token_type": "Bearer"}))
            }),
        );
    tokio::spawn(async move { axum::serve(listener, oauth.merge(mcp)).await });
    (url, seen)
}

#[tokio::test]
async fn a_server_without_metadata_is_authorized_at_its_default_endpoints() {
    let (url, seen) = legacy_server_without_metadata().await;
    let client = connect(&url, oauth()).await.expect("connect");
    let result = client.call_tool("ping", json!({})).await.expect("ping");
    assert!(!result.is_error(), "{result:?}");
    client.close().await;
    assert_eq!(*seen.lock().expect("lock"), ["/register", "/authorize", "/token"]);
}
