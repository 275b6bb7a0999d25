//! The bookshop example as a fleet: two processes started with `--redis` and one signing key
//! on one `redis-server` (which `.ci/run` installs; elsewhere the test is skipped, saying so,
//! when the binary is missing). The stores themselves are tested in `modelcontext-redis`;
//! this is the command line the README gives.

use std::process::Stdio;
use std::time::{Duration, Instant};

use http::StatusCode;
use http_body_util::BodyExt;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::http_peer_router::{INITIALIZE, INITIALIZED, post};
use crate::stdio::bookshop_binary;

/// The most a DELETE on one instance may take to end the session on the other.
const DELETE_DEADLINE: Duration = Duration::from_secs(1);

#[tokio::test]
async fn two_bookshop_processes_on_one_redis_serve_one_session() {
    let Some(redis) = RedisServer::start().await else { return };
    let key = "5a".repeat(32);
    let (a, a_url) = start_bookshop(&redis.url(), &key).await;
    let (b, b_url) = start_bookshop(&redis.url(), &key).await;

    let made = post(&a_url, None, INITIALIZE).await;
    assert_eq!(made.status(), StatusCode::OK);
    let session = made.headers()["mcp-session-id"].to_str().expect("ascii").to_owned();
    drop(made.into_body().collect().await);
    let initialized = post(&b_url, Some(&session), INITIALIZED).await;
    assert_eq!(initialized.status(), StatusCode::ACCEPTED, "the session made on A, on B");

    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}}"#;
    let answered = post(&b_url, Some(&session), call).await;
    assert_eq!(answered.status(), StatusCode::OK);
    let body = answered.into_body().collect().await.expect("body").to_bytes();
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains(r#"{"type":"text","text":"Frank Herbert"}"#), "{text}");

    let ended = delete(&a_url, &session).await;
    assert_eq!(ended, StatusCode::OK);
    // B hears of the delete through the store's pub/sub channel, so it may still answer for
    // a moment (`docs::deployment`); then 404, within the bound modelcontext-redis's own
    // handshake test allows.
    let deleted_at = Instant::now();
    let ping = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    loop {
        let status = post(&b_url, Some(&session), ping).await.status();
        if status == StatusCode::NOT_FOUND {
            break;
        }
        assert_eq!(status, StatusCode::OK, "a held session answers until B hears of the delete");
        assert!(deleted_at.elapsed() < DELETE_DEADLINE, "B still serves a deleted session");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    drop((a, b));
}

/// Starts `bookshop --http 127.0.0.1:0 --redis URL --signing-key KEY`; returns the process
/// and its endpoint's URL, which it prints on stderr once it listens.
async fn start_bookshop(redis: &str, key: &str) -> (Child, String) {
    let mut child = Command::new(bookshop_binary())
        .args(["--http", "127.0.0.1:0", "--redis", redis, "--signing-key", key])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the bookshop example is built");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.expect("stderr") {
            if let Some(url) = line.strip_prefix("bookshop on ") {
                return url.to_owned();
            }
        }
        panic!("the bookshop exited before it listened");
    })
    .await
    .expect("the bookshop listens within 20 s");
    // Whatever it logs later is drained, so that a full pipe never blocks it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

async fn delete(url: &str, session: &str) -> StatusCode {
    use hyper_util::client::legacy::Client;
    let client: Client<_, http_body_util::Empty<bytes::Bytes>> =
        Client::builder(hyper_util::rt::TokioExecutor::new()).build_http();
    let request = http::Request::delete(url)
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(http_body_util::Empty::new())
        .expect("request");
    client.request(request).await.expect("an answer").status()
}

/// A `redis-server` of this test's own on a free loopback port, without persistence, stopped
/// when dropped.
struct RedisServer {
    _process: Child,
    port: u16,
    dir: std::path::PathBuf,
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl RedisServer {
    /// `None` (the test is skipped) when `redis-server` is not installed and `CI` is not set;
    /// with `CI` set a missing binary fails the test.
    async fn start() -> Option<RedisServer> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let dir = std::env::temp_dir().join(format!("modelcontext-fleet-{port}"));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let spawned = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args(["--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .kill_on_drop(true)
            .spawn();
        let process = match spawned {
            Ok(process) => process,
            Err(_) if std::env::var("CI").is_ok_and(|ci| !ci.is_empty() && ci != "false") => {
                panic!(
                    "redis-server is not installed and CI is set: apt-get install -y redis-server"
                )
            }
            Err(_) => {
                eprintln!("skipped: redis-server is not installed");
                return None;
            }
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(Instant::now() < deadline, "redis-server listens within 10 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Some(RedisServer { _process: process, port, dir })
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}
