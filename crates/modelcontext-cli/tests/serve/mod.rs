//! `mcp serve` in front of real server processes: two bookshops under one endpoint, a
//! crashed server restarted, the bearer check and the health check.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use modelcontext::types::ContentBlock;
use modelcontext::{ChildProcess, Client, EraMode, HttpTransport};
use serde_json::json;

use super::{bookshop, example};

#[cfg(feature = "otel")]
mod otel;

/// `mcp serve --http 127.0.0.1:0 ARGS…`, and the URL it printed.
struct Gateway {
    child: Child,
    url: String,
}

impl Gateway {
    fn start(args: &[&str], env: &[(&str, &str)]) -> Gateway {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp"))
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mcp starts");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            let line = lines.next().expect("mcp serve printed its URL").expect("utf-8");
            if let Some(url) = line.strip_prefix("mcp serve: ") {
                break url.to_owned();
            }
        };
        // Keep reading, so that the gateway never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Gateway { child, url }
    }

    async fn client(&self) -> Client {
        let transport = HttpTransport::new(&self.url).expect("url");
        Client::connect(transport).await.expect("connects through the gateway")
    }

    /// The processes `mcp serve` started.
    fn children(&self) -> Vec<u32> {
        let tasks = format!("/proc/{}/task", self.child.id());
        let mut children = Vec::new();
        for task in std::fs::read_dir(tasks).expect("proc").flatten() {
            let listed = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            children.extend(listed.split_whitespace().filter_map(|pid| pid.parse::<u32>().ok()));
        }
        children
    }

    /// `GET /healthz`: the status line and the body.
    fn health(&self) -> (String, String) {
        let authority = self.url.trim_start_matches("http://").trim_end_matches("/mcp");
        let mut stream = TcpStream::connect(authority).expect("connects");
        let request =
            format!("GET /healthz HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).expect("writes");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("reads");
        let status = response.lines().next().unwrap_or_default().to_owned();
        let body = response.split("\r\n\r\n").nth(1).unwrap_or_default().to_owned();
        (status, body)
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn config(dir: &Path, servers: serde_json::Value) -> String {
    let path = dir.join("mcp.json");
    std::fs::write(&path, json!({ "mcpServers": servers }).to_string()).expect("writes");
    path.display().to_string()
}

fn text(result: &modelcontext::CallToolResult) -> String {
    match result.content.first() {
        Some(ContentBlock::Text(text)) => text.text.clone(),
        other => format!("{other:?}"),
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-serve-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

#[tokio::test(flavor = "multi_thread")]
async fn two_servers_with_a_clash_are_namespaced_and_a_denied_tool_is_gone() {
    let dir = scratch("two");
    let shop = bookshop().display().to_string();
    let file = config(&dir, json!({"a": {"command": shop}, "b": {"command": shop}}));
    let gateway = Gateway::start(&["--config", &file, "--deny", "a:get_author_strict"], &[]);
    let client = gateway.client().await;
    let names: Vec<String> =
        client.list_all_tools().await.expect("lists").into_iter().map(|t| t.name).collect();
    assert!(names.contains(&"a_get_author".into()) && names.contains(&"b_get_author".into()));
    assert!(names.contains(&"b_get_author_strict".into()), "{names:?}");
    assert!(!names.contains(&"a_get_author_strict".into()), "{names:?}");
    for name in ["a_get_author", "b_get_author"] {
        let result = client.call_tool(name, json!({"title": "Dune"})).await.expect("calls");
        assert_eq!(text(&result), "Frank Herbert");
    }
    let denied = client.call_tool("a_get_author_strict", json!({"title": "Dune"})).await;
    let error = denied.expect_err("unknown");
    assert_eq!(error.as_mcp_error().map(|e| e.code.0), Some(-32602));
    let _ = std::fs::remove_dir_all(dir);
}

/// `--allow` keeps only the matching tools: for one server (`SERVER:PATTERN`) or for all; a
/// tool left out is neither listed nor callable, and a pattern naming no server is refused.
#[tokio::test(flavor = "multi_thread")]
async fn allow_lists_keep_only_their_tools_per_server() {
    let dir = scratch("allow");
    let shop = bookshop().display().to_string();
    let file = config(&dir, json!({"a": {"command": shop}, "b": {"command": shop}}));
    let args = ["--config", &file, "--allow", "a:get_author*", "--allow", "search_books"];
    let gateway = Gateway::start(&args, &[]);
    let client = gateway.client().await;
    let mut names: Vec<String> =
        client.list_all_tools().await.expect("lists").into_iter().map(|t| t.name).collect();
    names.sort();
    let expected = ["a_get_author", "a_get_author_strict", "a_search_books", "b_search_books"];
    assert_eq!(names, expected);
    let hidden = client.call_tool("b_get_author", json!({"title": "Dune"})).await;
    assert_eq!(hidden.expect_err("unknown").as_mcp_error().map(|e| e.code.0), Some(-32602));
    let run = super::mcp(&["serve", "--http", "127.0.0.1:0", "--config", &file, "--allow", "c:x"]);
    run.code(64).stderr_has("--allow c:x: no server named \"c\"");
    let _ = std::fs::remove_dir_all(dir);
}

/// A server of the config that cannot start stops `mcp serve` before it serves, with the
/// reason and the server named.
#[test]
fn a_server_that_cannot_start_is_named_with_the_reason() {
    let dir = scratch("missing");
    let shop = bookshop().display().to_string();
    let missing = dir.join("no-such-server").display().to_string();
    let file = config(&dir, json!({"a": {"command": shop}, "b": {"command": missing}}));
    let run = super::mcp(&["serve", "--http", "127.0.0.1:0", "--config", &file]);
    let expected = format!(
        "server \"b\" did not start: cannot start the server \"{missing}\": No such file or directory"
    );
    run.code(4).stderr_has(&expected);
    let _ = std::fs::remove_dir_all(dir);
}

/// `--stdio-out`: a remote server handed to a host that only starts commands. A client that
/// starts `mcp serve --stdio-out URL` gets the remote's tools, results and errors, in both
/// eras, as from the remote directly.
#[tokio::test(flavor = "multi_thread")]
async fn a_remote_server_is_served_on_stdio_in_both_eras() {
    let remote = super::HttpBookshop::start();
    for era in [EraMode::Handshake, EraMode::Modern] {
        let gateway = ChildProcess::new(env!("CARGO_BIN_EXE_mcp"))
            .args(["serve", "--stdio-out", &remote.url])
            .spawn()
            .expect("mcp serve starts");
        let client = Client::builder().era(era).connect(gateway).await.expect("connects");
        let direct = HttpTransport::new(&remote.url).expect("url");
        let direct = Client::builder().era(era).connect(direct).await.expect("connects");
        let names = |tools: Vec<modelcontext::types::Tool>| -> Vec<String> {
            tools.into_iter().map(|tool| tool.name).collect()
        };
        assert_eq!(
            names(client.list_all_tools().await.expect("lists")),
            names(direct.list_all_tools().await.expect("lists")),
            "{era:?}"
        );
        let result = client.call_tool("get_author", json!({"title": "Dune"})).await;
        assert_eq!(text(&result.expect("calls")), "Frank Herbert", "{era:?}");
        let failed = client.call_tool("get_author", json!({"title": "Nope"})).await;
        assert_eq!(failed.expect("a tool error is a result").is_error, Some(true), "{era:?}");
        let unknown = client.call_tool("nope", json!({})).await.expect_err("unknown");
        assert_eq!(unknown.as_mcp_error().map(|e| e.code.0), Some(-32602), "{era:?}");
    }
}

/// `--tls-cert`/`--tls-key`: the endpoint is https, and a client that trusts the CA calls
/// through it; one that does not is refused by its TLS check.
#[test]
fn the_endpoint_serves_https_with_the_given_certificate() {
    let dir = scratch("tls");
    let (ca, cert, key) = super::test_ca(&dir);
    let (cert, key) = (cert.display().to_string(), key.display().to_string());
    let shop = bookshop().display().to_string();
    let gateway = Gateway::start(&["--tls-cert", &cert, "--tls-key", &key, "--stdio", &shop], &[]);
    assert!(gateway.url.starts_with("https://127.0.0.1:"), "{}", gateway.url);
    let ca = ca.display().to_string();
    let run = super::mcp(&["--cacert", &ca, "call", "get_author", "title=Dune", &gateway.url]);
    assert_eq!(run.code(0).stdout, "Frank Herbert\n");
    super::mcp(&["tools", &gateway.url]).code(4).stderr_has("unknown issuer");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crashed_server_fails_the_call_in_flight_and_serves_the_next_after_a_restart() {
    let indexer = format!("'{}' --stdio", example("progress").display());
    let gateway = Gateway::start(&["--stdio", &indexer], &[]);
    let client = gateway.client().await;
    let started = client.call_tool("index", json!({"files": 1})).await.expect("first call");
    assert_eq!(text(&started), "indexed 1 documents");
    let children = gateway.children();
    assert_eq!(children.len(), 1, "one upstream process: {children:?}");
    let in_flight = client.call_tool("index", json!({"files": 1000}));
    let kill = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let killed = Command::new("kill").args(["-9", &children[0].to_string()]).status();
        assert!(killed.expect("kill runs").success());
    };
    let (failed, ()) = tokio::join!(in_flight, kill);
    let failed = failed.expect("a tool error, not a protocol error");
    assert_eq!(failed.is_error, Some(true));
    let message = text(&failed);
    assert!(
        message
            .starts_with("Error executing tool index: upstream server 'progress' did not answer"),
        "{message}"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let next = client.call_tool("index", json!({"files": 2})).await.expect("after the restart");
    assert_eq!(text(&next), "indexed 2 documents");
    assert!(Instant::now() < deadline);
    let restarted = gateway.children();
    assert!(restarted.len() == 1 && restarted != children, "{children:?} then {restarted:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_endpoint_wants_the_bearer_token_and_health_needs_none() {
    let shop = format!("'{}'", bookshop().display());
    let gateway = Gateway::start(
        &["--stdio", &shop, "--bearer-env", "GATEWAY_TOKEN"],
        &[("GATEWAY_TOKEN", "s3cret")],
    );
    let refused = Client::connect(HttpTransport::new(&gateway.url).expect("url")).await;
    assert!(refused.is_err(), "no token, no session");
    let transport = HttpTransport::new(&gateway.url)
        .expect("url")
        .header("Authorization", "Bearer s3cret")
        .expect("header");
    let client = Client::connect(transport).await.expect("the token opens it");
    let result = client.call_tool("get_author", json!({"title": "Dune"})).await.expect("calls");
    assert_eq!(text(&result), "Frank Herbert");
    let (status, body) = gateway.health();
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(body, r#"{"healthy":true,"servers":{"bookshop":"up"}}"#);
}

/// A raw HTTP/1.1 exchange with the gateway: the status line, the headers, the body.
#[cfg(feature = "gateway")]
fn exchange(gateway: &Gateway, request: &str) -> (String, String, String) {
    let authority = gateway.url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut stream = TcpStream::connect(authority).expect("connects");
    stream.write_all(request.replace("{host}", authority).as_bytes()).expect("writes");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("reads");
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    (status.to_owned(), headers.to_lowercase(), body.to_owned())
}

#[cfg(feature = "gateway")]
#[test]
fn the_oauth_resource_server_stands_in_front() {
    let shop = format!("'{}'", bookshop().display());
    let gateway = Gateway::start(
        &[
            "--stdio",
            &shop,
            "--issuer",
            "https://issuer.example",
            "--audience",
            "https://mcp.example/mcp",
            "--jwks-url",
            "https://issuer.example/jwks",
        ],
        &[],
    );
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
    let post = format!(
        "POST /mcp HTTP/1.1\r\nHost: {{host}}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let (status, headers, _) = exchange(&gateway, &post);
    assert_eq!(status, "HTTP/1.1 401 Unauthorized");
    assert!(
        headers.contains("www-authenticate: bearer resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource/mcp\""),
        "{headers}"
    );
    let get = "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n";
    let (status, _, body) = exchange(&gateway, get);
    assert_eq!(status, "HTTP/1.1 200 OK");
    let metadata: serde_json::Value = serde_json::from_str(&body).expect("json");
    assert_eq!(metadata["resource"], "https://mcp.example/mcp");
    assert_eq!(metadata["authorization_servers"], json!(["https://issuer.example"]));
}

#[cfg(not(feature = "gateway"))]
#[test]
fn the_gateway_options_name_the_feature_they_need() {
    let shop = format!("'{}'", bookshop().display());
    let output = Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["serve", "--http", "127.0.0.1:0", "--stdio", &shop])
        .args(["--issuer", "https://issuer.example", "--audience", "https://mcp.example/mcp"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(64));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--issuer needs mcp built with the `gateway` feature"), "{stderr}");
}

/// A `redis-server` of the test's own on a free loopback port, without persistence; `None`
/// (after saying why) when it is not installed and `CI` is not set.
#[cfg(feature = "gateway")]
struct Redis {
    child: Child,
    port: u16,
}

#[cfg(feature = "gateway")]
impl Redis {
    fn start() -> Option<Redis> {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
        let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr();
        let port = port.expect("addr").port();
        let spawned = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args(["--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(error) => {
                assert!(!ci, "redis-server cannot start and CI is set: {error}");
                eprintln!("SKIPPED: redis-server cannot start ({error})");
                return None;
            }
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server is not listening after 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Redis { child, port })
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

#[cfg(feature = "gateway")]
impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A handshake-era POST of `body`, in `session` if given.
#[cfg(feature = "gateway")]
fn post(body: &str, session: Option<&str>) -> String {
    let session = session.map(|id| format!("Mcp-Session-Id: {id}\r\n")).unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {{host}}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         {session}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Without `--redis` the second gateway would answer 404: it would not know the session.
#[cfg(feature = "gateway")]
#[test]
fn a_session_begun_on_one_gateway_is_served_by_another_on_the_same_redis() {
    let Some(redis) = Redis::start() else { return };
    let shop = format!("'{}'", bookshop().display());
    let key = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";
    let url = redis.url();
    let args = ["--stdio", &shop, "--redis", &url, "--signing-key", key];
    let (first, second) = (Gateway::start(&args, &[]), Gateway::start(&args, &[]));

    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fleet-test","version":"1"}}}"#;
    let (status, headers, _) = exchange(&first, &post(initialize, None));
    assert_eq!(status, "HTTP/1.1 200 OK");
    let session = headers
        .lines()
        .find_map(|line| line.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .trim()
        .to_owned();

    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, _, _) = exchange(&second, &post(initialized, Some(&session)));
    assert_eq!(status, "HTTP/1.1 202 Accepted");
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#;
    let (status, _, body) = exchange(&second, &post(call, Some(&session)));
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(body.contains(r#"{"type":"text","text":"Frank Herbert"}"#), "{body}");
    // A session nobody began is refused.
    let (status, _, _) = exchange(&second, &post(call, Some("no-such-session")));
    assert_eq!(status, "HTTP/1.1 404 Not Found");
}
