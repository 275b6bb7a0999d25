//! `mcp login` end to end: a small authorization server on 127.0.0.1 (metadata, dynamic
//! registration, an authorize endpoint that redirects at once, a token endpoint) and an MCP
//! server protected by it (our own resource server, accepting only the newest access token).
//! The test plays the browser: it reads the authorization URL `mcp login` prints, follows it,
//! and follows the redirect to the loopback listener. Each run of `mcp` gets its own config
//! folder through `XDG_CONFIG_HOME`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use modelcontext::auth::{AuthOptions, Principal, TokenVerifier, VerifyError};
use modelcontext::server::NoArgs;
use modelcontext::server::http::HttpOptions;
use modelcontext::{Context, McpServer, ToolDef};
use serde_json::{Value, json};

/// What the authorization server does and saw.
#[derive(Clone)]
pub struct Issuer {
    url: String,
    /// Answer every authorization with `error=access_denied`.
    deny: bool,
    /// Accept Client ID Metadata Documents (as clients that authenticate with `none`).
    metadata_documents: bool,
    state: Arc<Mutex<IssuerState>>,
}

#[derive(Default)]
struct IssuerState {
    registrations: Vec<Value>,
    /// `grant_type` of each token request, and whether it carried the client's secret.
    grants: Vec<(String, bool)>,
    /// code -> redirect_uri
    codes: HashMap<String, String>,
    issued: usize,
    access_token: Option<String>,
    refresh_token: Option<String>,
    /// The tokens revoked, and whether the client authenticated.
    revoked: Vec<(String, bool)>,
}

impl Issuer {
    fn state(&self) -> std::sync::MutexGuard<'_, IssuerState> {
        self.state.lock().expect("issuer state")
    }
}

const CLIENT_BASIC: &str = "Basic Y2xpLWNsaWVudDpjbGktc2VjcmV0"; // cli-client:cli-secret
/// The Client ID Metadata Document `mcp login --client-metadata-url` names (never fetched).
const METADATA_DOCUMENT: &str = "https://client.example/mcp.json";

async fn metadata(State(issuer): State<Issuer>) -> Response {
    let url = &issuer.url;
    let mut metadata = json!({
        "issuer": url,
        "authorization_endpoint": format!("{url}/authorize"),
        "token_endpoint": format!("{url}/token"),
        "registration_endpoint": format!("{url}/register"),
        "revocation_endpoint": format!("{url}/revoke"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        "scopes_supported": ["mcp", "offline_access"],
        "authorization_response_iss_parameter_supported": true,
    });
    if issuer.metadata_documents {
        metadata["client_id_metadata_document_supported"] = json!(true);
        metadata["token_endpoint_auth_methods_supported"] = json!(["client_secret_basic", "none"]);
    }
    axum::Json(metadata).into_response()
}

async fn register(State(issuer): State<Issuer>, body: String) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap_or_default();
    issuer.state().registrations.push(request);
    let answer = json!({"client_id": "cli-client", "client_secret": "cli-secret"});
    (StatusCode::CREATED, axum::Json(answer)).into_response()
}

async fn authorize(State(issuer): State<Issuer>, uri: Uri) -> Response {
    let params = form(uri.query().unwrap_or(""));
    let (Some(redirect), Some(state)) = (params.get("redirect_uri"), params.get("state")) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let answer = if issuer.deny {
        "error=access_denied".to_owned()
    } else {
        let mut seen = issuer.state();
        let code = format!("code-{}", seen.codes.len() + 1);
        seen.codes.insert(code.clone(), redirect.clone());
        format!("code={code}")
    };
    let location =
        format!("{redirect}?{answer}&state={}&iss={}", encode(state), encode(&issuer.url));
    (StatusCode::FOUND, [("location", location)]).into_response()
}

async fn token(State(issuer): State<Issuer>, headers: HeaderMap, body: String) -> Response {
    let params = form(&body);
    let grant = params.get("grant_type").cloned().unwrap_or_default();
    let authenticated = headers.get("authorization").is_some_and(|v| v == CLIENT_BASIC)
        || (issuer.metadata_documents
            && params.get("client_id").map(String::as_str) == Some(METADATA_DOCUMENT));
    let mut seen = issuer.state();
    seen.grants.push((grant.clone(), authenticated));
    let valid = match grant.as_str() {
        "authorization_code" => {
            params.get("code").and_then(|c| seen.codes.remove(c)).as_ref()
                == params.get("redirect_uri")
        }
        "refresh_token" => params.get("refresh_token") == seen.refresh_token.as_ref(),
        _ => false,
    };
    if !valid || !authenticated {
        let error = json!({"error": "invalid_grant"});
        return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
    }
    seen.issued += 1;
    let (access, refresh) = (format!("access-{}", seen.issued), format!("refresh-{}", seen.issued));
    seen.access_token = Some(access.clone());
    seen.refresh_token = Some(refresh.clone());
    axum::Json(json!({
        "access_token": access, "token_type": "Bearer", "expires_in": 3600,
        "refresh_token": refresh, "scope": "mcp offline_access",
    }))
    .into_response()
}

/// RFC 7009: a revoked token is no longer the newest.
async fn revoke(State(issuer): State<Issuer>, headers: HeaderMap, body: String) -> Response {
    let params = form(&body);
    let authenticated = headers.get("authorization").is_some_and(|v| v == CLIENT_BASIC);
    let token = params.get("token").cloned().unwrap_or_default();
    let mut guard = issuer.state();
    let seen = &mut *guard;
    for held in [&mut seen.access_token, &mut seen.refresh_token] {
        if held.as_ref() == Some(&token) {
            *held = None;
        }
    }
    seen.revoked.push((token, authenticated));
    StatusCode::OK.into_response()
}

/// The resource server's check: only the newest access token the issuer gave out is good.
struct NewestToken(Issuer);

impl TokenVerifier for NewestToken {
    fn verify<'a>(
        &'a self,
        token: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Principal, VerifyError>> + Send + 'a>> {
        let newest = self.0.state().access_token.as_deref() == Some(token);
        Box::pin(async move {
            match newest {
                true => Ok(Principal { subject: Some("alice".into()), ..Principal::default() }),
                false => Err(VerifyError::invalid("not the newest token")),
            }
        })
    }
}

/// The two servers, on a runtime of their own, and a private config folder for `mcp`.
pub struct Servers {
    _runtime: tokio::runtime::Runtime,
    issuer: Issuer,
    pub url: String,
    pub config: PathBuf,
}

impl Servers {
    pub fn start(configure: impl FnOnce(&mut Issuer)) -> Servers {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let (issuer, url) = runtime.block_on(async {
            let as_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let mut issuer = Issuer {
                url: format!("http://{}", as_listener.local_addr().expect("addr")),
                deny: false,
                metadata_documents: false,
                state: Arc::default(),
            };
            configure(&mut issuer);
            let app = axum::Router::new()
                .route("/.well-known/oauth-authorization-server", get(metadata))
                .route("/register", post(register))
                .route("/authorize", get(authorize))
                .route("/token", post(token))
                .route("/revoke", post(revoke))
                .with_state(issuer.clone());
            tokio::spawn(async move { axum::serve(as_listener, app).await });

            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
            let whoami = ToolDef::new("whoami", |cx: Context, _: NoArgs| async move {
                cx.principal().and_then(|p| p.subject.clone()).unwrap_or_default()
            });
            let server = McpServer::new("protected").tool(whoami).expect("whoami");
            let auth = AuthOptions::new(&url, &issuer.url, NewestToken(issuer.clone()))
                .expect("auth options");
            let endpoint = server.http_endpoint_with(HttpOptions::default().auth(auth));
            tokio::spawn(async move { endpoint.serve(listener).await });
            (issuer, url)
        });
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_nanos();
        let config = std::env::temp_dir().join(format!("mcp-login-{}-{nanos}", std::process::id()));
        Servers { _runtime: runtime, issuer, url, config }
    }

    fn token_file(&self) -> PathBuf {
        self.config.join("mcp").join("tokens.json")
    }

    pub fn tokens(&self) -> Value {
        let text = std::fs::read(self.token_file()).expect("the token file");
        serde_json::from_slice(&text).expect("the token file is JSON")
    }

    /// `mcp` with this test's config folder, never starting a browser.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp"));
        command
            .args(args)
            .env("XDG_CONFIG_HOME", &self.config)
            .env("MCP_NO_BROWSER", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let output = self.command(args).output().expect("mcp runs");
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        (output.status.code().expect("exit code"), text(&output.stdout), text(&output.stderr))
    }

    /// Runs `mcp login` and plays the browser. Returns the exit code, everything `mcp`
    /// printed on stderr, and the page the loopback listener showed.
    fn login(&self, options: &[&str]) -> (i32, String, String) {
        let args = [&["login", self.url.as_str(), "--wait", "30s"], options].concat();
        let mut child = self.command(&args).spawn().expect("mcp");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut printed = String::new();
        let auth_url = loop {
            let mut line = String::new();
            let read = stderr.read_line(&mut line).expect("read stderr");
            assert!(read > 0, "mcp login printed no authorization URL:\n{printed}");
            printed.push_str(&line);
            if line.trim().starts_with("http://") {
                break line.trim().to_owned();
            }
        };
        assert!(auth_url.starts_with(&format!("{}/authorize?", self.issuer.url)), "{auth_url}");
        let (status, headers, _) = http_get(&auth_url);
        assert_eq!(status, 302, "the authorize endpoint redirects");
        let location = header(&headers, "location").expect("a location");
        assert!(location.starts_with("http://127.0.0.1:"), "{location}");
        let (_, _, page) = http_get(&location);
        stderr.read_to_string(&mut printed).expect("read stderr");
        let status = child.wait().expect("mcp exits");
        (status.code().expect("exit code"), printed, page)
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.config);
    }
}

#[test]
fn login_stores_private_tokens_that_later_commands_use_and_refresh() {
    let servers = Servers::start(|_| {});
    let (code, stderr, page) = servers.login(&[]);
    assert_eq!(code, 0, "mcp login failed:\n{stderr}");
    assert!(stderr.contains("logged in to"), "{stderr}");
    assert!(page.contains("You can close this tab"), "{page}");
    {
        let seen = servers.issuer.state();
        assert_eq!(seen.registrations.len(), 1);
        let redirect = seen.registrations[0]["redirect_uris"][0].as_str().unwrap_or_default();
        assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"));
        assert_eq!(seen.grants, [("authorization_code".to_owned(), true)]);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(servers.token_file()).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the token file is private");
    }
    let stored = servers.tokens();
    assert_eq!(stored["servers"][&servers.url]["access_token"], "access-1");
    assert_eq!(stored["servers"][&servers.url]["issuer"], servers.issuer.url.as_str());
    assert_eq!(stored["clients"][&servers.issuer.url]["client_id"], "cli-client");

    // The next command uses the stored token, without asking the issuer for anything.
    let (code, stdout, stderr) = servers.run(&[&servers.url, "tools"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("whoami"), "{stdout}");
    assert_eq!(servers.issuer.state().grants.len(), 1);

    // The token expires: the next command refreshes it, with the stored registration, and
    // stores the new tokens.
    let mut expired = stored.clone();
    expired["servers"][&servers.url]["expires_at"] = json!(1);
    std::fs::write(servers.token_file(), expired.to_string()).expect("expire the token");
    let (code, stdout, stderr) = servers.run(&[&servers.url, "call", "whoami"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("alice"), "{stdout}");
    {
        let seen = servers.issuer.state();
        assert_eq!(seen.grants.last(), Some(&("refresh_token".to_owned(), true)));
        assert_eq!(seen.grants.len(), 2);
        assert_eq!(seen.registrations.len(), 1, "no new registration to refresh");
    }
    let refreshed = servers.tokens();
    let entry = &refreshed["servers"][&servers.url];
    assert_eq!(entry["access_token"], "access-2");
    assert_eq!(entry["refresh_token"], "refresh-2");
    let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_secs();
    assert!(entry["expires_at"].as_u64().is_some_and(|at| at > now + 3000), "{entry}");

    // --token-env: the token from the environment, not from the file or the command line.
    let mut command = servers.command(&["--token-env", "MCP_TEST_TOKEN", &servers.url, "tools"]);
    let output = command.env("MCP_TEST_TOKEN", "access-2").output().expect("mcp runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let (code, _, stderr) = servers.run(&["--token-env", "MCP_UNSET_TOKEN", &servers.url, "tools"]);
    assert_eq!(code, 64, "{stderr}");
    assert!(stderr.contains("MCP_UNSET_TOKEN"), "{stderr}");

    // Logged out: the tokens are revoked and forgotten, and the server refuses again.
    let (code, _, stderr) = servers.run(&["logout", &servers.url]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("revoked"), "{stderr}");
    let revoked = servers.issuer.state().revoked.clone();
    let expected = [("refresh-2".to_owned(), true), ("access-2".to_owned(), true)];
    assert_eq!(revoked, expected);
    assert!(servers.tokens()["servers"].get(&servers.url).is_none());
    let (code, _, stderr) = servers.run(&[&servers.url, "tools"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("mcp login"), "the refusal says how to log in: {stderr}");
}

/// `mcp serve` in front of a server behind OAuth connects with the login `mcp login` stored:
/// a client of the gateway (here `mcp` itself, starting `mcp serve --stdio-out URL`) calls
/// through it as the logged-in user.
#[test]
fn serve_connects_upstream_with_the_stored_login() {
    let servers = Servers::start(|_| {});
    let (code, stderr, _) = servers.login(&[]);
    assert_eq!(code, 0, "mcp login failed:\n{stderr}");
    let gateway = format!("'{}' serve --stdio-out {}", env!("CARGO_BIN_EXE_mcp"), servers.url);
    let (code, stdout, stderr) = servers.run(&["--stdio", &gateway, "call", "whoami"]);
    assert_eq!((code, stdout.as_str()), (0, "alice\n"), "{stderr}");
    assert_eq!(servers.issuer.state().grants.len(), 1, "no second authorization");
}

#[test]
fn install_with_login_writes_the_stored_token_for_a_host() {
    let servers = Servers::start(|_| {});
    let file = servers.config.join("hosts").join("mcp.json");
    let file = file.to_str().expect("utf-8");
    let install = ["install", "file", "--config-file", file, "--name", "shop", "--with-login"];
    let (code, _, stderr) = servers.run(&[&install[..], &[&servers.url]].concat());
    assert_eq!(code, 64, "{stderr}");
    assert!(stderr.contains(&format!("no stored login for {}", servers.url)), "{stderr}");
    let (code, stderr, _) = servers.login(&[]);
    assert_eq!(code, 0, "mcp login failed:\n{stderr}");
    let (code, _, stderr) = servers.run(&[&install[..], &[&servers.url]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("the stored access token expires"), "{stderr}");
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(file).expect("written")).expect("JSON");
    let entry = json!({"type": "http", "url": servers.url, "headers": {"Authorization": "Bearer access-1"}});
    assert_eq!(written, json!({"mcpServers": {"shop": entry}}));
    // The entry works as it is, with no stored login in the way: the header carries it.
    std::fs::remove_file(servers.token_file()).expect("forget the login");
    let (code, stdout, stderr) = servers.run(&["--config", file, "call", "whoami"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("alice"), "{stdout}");
}

#[test]
fn a_refused_authorization_is_a_clear_error() {
    let servers = Servers::start(|issuer| issuer.deny = true);
    let (code, stderr, page) = servers.login(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("access_denied"), "{stderr}");
    assert!(page.contains("refused the login (access_denied)"), "{page}");
    assert!(stderr.contains("login failed"), "{stderr}");
    // The registration is kept (a later login registers afresh anyway); no tokens are.
    let stored = servers.tokens();
    assert!(stored["servers"].as_object().is_some_and(|s| s.is_empty()), "{stored}");
}

#[test]
fn a_client_metadata_document_stands_in_for_registration_and_refreshes_later() {
    let servers = Servers::start(|issuer| issuer.metadata_documents = true);
    let (code, stderr, _) = servers.login(&["--client-metadata-url", METADATA_DOCUMENT]);
    assert_eq!(code, 0, "mcp login failed:\n{stderr}");
    assert!(servers.issuer.state().registrations.is_empty(), "no dynamic registration");
    let stored = servers.tokens();
    assert_eq!(stored["clients"][&servers.issuer.url]["client_id"], METADATA_DOCUMENT);

    // A later command, not told the document's URL, refreshes as the same client.
    let mut expired = stored.clone();
    expired["servers"][&servers.url]["expires_at"] = json!(1);
    std::fs::write(servers.token_file(), expired.to_string()).expect("expire the token");
    let (code, _, stderr) = servers.run(&[&servers.url, "tools"]);
    assert_eq!(code, 0, "{stderr}");
    let seen = servers.issuer.state();
    assert_eq!(seen.grants.last(), Some(&("refresh_token".to_owned(), true)));
    assert!(seen.registrations.is_empty());
}

/// A blocking HTTP/1.1 GET: the status, the headers, the body.
fn http_get(url: &str) -> (u16, Vec<(String, String)>, String) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (authority, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    let request =
        format!("GET {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head");
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok());
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    (status.expect("a status"), headers, body.to_owned())
}

fn header(headers: &[(String, String)], name: &str) -> Option<String> {
    headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

/// `application/x-www-form-urlencoded`, decoded.
fn form(text: &str) -> HashMap<String, String> {
    text.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
