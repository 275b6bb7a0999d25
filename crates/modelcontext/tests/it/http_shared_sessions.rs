//! Two HTTP endpoints of one server sharing a `SessionStore` (in memory here; the Redis one
//! has the same tests against a real Redis): a handshake-era session made on one is served by
//! the other, its changes reach both, DELETE ends it on both, and a store that cannot answer
//! gives 503 with `Retry-After`, never 404.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::stream::BoxStream;
use http::{Method, StatusCode};
use modelcontext::server::NoArgs;
use modelcontext::server::http::{
    HttpOptions, MemorySessionStore, SessionChange, SessionEvent, SessionRecord, SessionStore,
    StoreError, StoreFuture,
};
use modelcontext::types::LoggingLevel;
use modelcontext::{Context, McpServer, ToolDef};

use crate::http_server::{Answer, Http, start_with};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"reader","version":"7"}}}"#;

/// A server whose `log` tool logs at debug and at error level, whose `who` tool names the
/// client as `initialize` described it, and whose `agent` tool names the `User-Agent` its
/// handlers see.
fn server() -> McpServer {
    let log = ToolDef::new("log", |cx: Context, _: NoArgs| async move {
        cx.log(LoggingLevel::Debug, "a debug line").await;
        cx.log(LoggingLevel::Error, "an error line").await;
        "logged"
    });
    let who = ToolDef::new("who", |cx: Context, _: NoArgs| async move {
        cx.client_info().map(|info| format!("{} {}", info.name, info.version)).unwrap_or_default()
    });
    let agent = ToolDef::new("agent", |cx: Context, _: NoArgs| async move {
        let headers = cx.http_headers();
        let agent = headers.and_then(|h| h.get("user-agent")).and_then(|v| v.to_str().ok());
        agent.unwrap_or("none").to_owned()
    });
    McpServer::new("shared").tools([log, who, agent]).expect("tools")
}

/// Endpoints A and B of `server()`, both on `store`.
async fn pair(store: Arc<dyn SessionStore>) -> (Http, Http) {
    let options = || HttpOptions::default().session_store(store.clone());
    (start_with(server(), options()).await, start_with(server(), options()).await)
}

fn call(id: u32, tool: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
    )
}

async fn initialize(http: &Http) -> String {
    let answer = http.post(&[], INITIALIZE).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    answer.header("mcp-session-id").expect("a session id").to_owned()
}

async fn post_in(http: &Http, session: &str, body: &str) -> Answer {
    http.post(&[("mcp-session-id", session), ("mcp-protocol-version", "2025-11-25")], body).await
}

/// The store's events reach the other endpoint in the background: wait for `done` there.
async fn eventually(what: &str, mut done: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    while !done().await {
        assert!(tokio::time::Instant::now() < deadline, "{what}: not within 1 s");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn a_session_made_on_a_is_served_by_b_and_its_changes_reach_both() {
    let store: Arc<dyn SessionStore> = Arc::new(MemorySessionStore::default());
    let (a, b) = pair(store.clone()).await;
    let session = initialize(&a).await;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post_in(&b, &session, initialized).await.status, StatusCode::ACCEPTED);

    // B rebuilt the session from its record: the client is the one `initialize` described.
    let who = post_in(&b, &session, &call(2, "who")).await.checked_json("2025-11-25");
    assert_eq!(who["result"]["content"][0]["text"], "reader 7");
    let record = store.load(&session).await.expect("load").expect("the record");
    assert!(record.initialized, "notifications/initialized on B is in the record");

    // The level set on B applies to the log tool run on A.
    let set_level =
        r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"error"}}"#;
    let set = post_in(&b, &session, set_level).await.checked_json("2025-11-25");
    assert_eq!(set["result"], serde_json::json!({}));
    eventually("the level reaches A", async || {
        let logged = post_in(&a, &session, &call(4, "log")).await;
        assert_eq!(logged.status, StatusCode::OK, "{}", logged.body);
        assert!(logged.body.contains("an error line"), "{}", logged.body);
        !logged.body.contains("a debug line")
    })
    .await;

    // DELETE on A ends the session on B too.
    let delete = a.send(Method::DELETE, &[("mcp-session-id", &session)], "").await;
    assert_eq!(delete.status, StatusCode::OK, "{}", delete.body);
    eventually("the delete reaches B", async || {
        post_in(&b, &session, &call(5, "who")).await.status == StatusCode::NOT_FOUND
    })
    .await;
    assert_eq!(store.load(&session).await.expect("load"), None);
}

/// A session rebuilt on B gives its handlers the headers of the request that found it there.
#[tokio::test]
async fn a_session_rebuilt_elsewhere_sees_the_headers_of_the_request_that_found_it() {
    let store: Arc<dyn SessionStore> = Arc::new(MemorySessionStore::default());
    let (a, b) = pair(store).await;
    let session = initialize(&a).await;
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
        ("user-agent", "found-on-b/1.0"),
    ];
    let agent = b.post(&headers, &call(2, "agent")).await.checked_json("2025-11-25");
    assert_eq!(agent["result"]["content"][0]["text"], "found-on-b/1.0");
}

/// A middleware that waits hands `logging/setLevel` over to the session's engine: the level
/// still reaches the record before the answer does.
#[tokio::test]
async fn a_change_answered_after_a_middleware_waited_is_in_the_record() {
    use modelcontext::server::middleware::{Next, Request, from_fn};
    let store: Arc<dyn SessionStore> = Arc::new(MemorySessionStore::default());
    let waits = from_fn(|request: Request, next: Next| async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        next.run(request).await
    });
    let options = HttpOptions::default().session_store(store.clone());
    let a = start_with(server().middleware(waits), options).await;
    let session = initialize(&a).await;
    let set_level =
        r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"error"}}"#;
    let set = post_in(&a, &session, set_level).await;
    assert_eq!(set.body, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
    let record = store.load(&session).await.expect("load").expect("the record");
    assert_eq!(record.log_level.as_deref(), Some("error"));
}

/// A store that can be switched off: every call fails, as a Redis that is away would.
#[derive(Default)]
struct Flaky {
    inner: MemorySessionStore,
    down: AtomicBool,
}

impl Flaky {
    fn check(&self) -> Result<(), StoreError> {
        if self.down.load(Ordering::Relaxed) {
            return Err(StoreError::unavailable("switched off by the test"));
        }
        Ok(())
    }
}

impl SessionStore for Flaky {
    fn create(&self, record: SessionRecord, idle: Duration) -> StoreFuture<'_, bool> {
        match self.check() {
            Ok(()) => self.inner.create(record, idle),
            Err(error) => Box::pin(std::future::ready(Err(error))),
        }
    }
    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<SessionRecord>> {
        match self.check() {
            Ok(()) => self.inner.load(id),
            Err(error) => Box::pin(std::future::ready(Err(error))),
        }
    }
    fn update<'a>(&'a self, id: &'a str, change: SessionChange) -> StoreFuture<'a, bool> {
        match self.check() {
            Ok(()) => self.inner.update(id, change),
            Err(error) => Box::pin(std::future::ready(Err(error))),
        }
    }
    fn touch<'a>(&'a self, id: &'a str, idle: Duration) -> StoreFuture<'a, bool> {
        match self.check() {
            Ok(()) => self.inner.touch(id, idle),
            Err(error) => Box::pin(std::future::ready(Err(error))),
        }
    }
    fn delete<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        match self.check() {
            Ok(()) => self.inner.delete(id),
            Err(error) => Box::pin(std::future::ready(Err(error))),
        }
    }
    fn events(&self) -> BoxStream<'static, SessionEvent> {
        self.inner.events()
    }
}

fn assert_retry_later(answer: &Answer, what: &str) {
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE, "{what}: {}", answer.body);
    assert_eq!(answer.header("retry-after"), Some("1"), "{what}");
    answer.json();
}

#[tokio::test]
async fn a_store_that_cannot_answer_means_503_with_retry_after_never_404() {
    let store = Arc::new(Flaky::default());
    let (a, b) = pair(store.clone()).await;
    let session = initialize(&a).await;
    store.down.store(true, Ordering::Relaxed);

    // A holds the session: served without the store.
    let held = post_in(&a, &session, &call(2, "who")).await;
    assert_eq!(held.status, StatusCode::OK, "{}", held.body);
    // B would have to load it: 503, so the client keeps its session and retries.
    assert_retry_later(&post_in(&b, &session, &call(3, "who")).await, "a POST on B");
    let get = b.send(Method::GET, &[("mcp-session-id", &session)], "").await;
    assert_retry_later(&get, "a GET on B");
    let set_level =
        r#"{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"error"}}"#;
    assert_retry_later(&post_in(&a, &session, set_level).await, "a change the store can't keep");
    assert_retry_later(&a.post(&[], INITIALIZE).await, "a new session");
    let delete = a.send(Method::DELETE, &[("mcp-session-id", &session)], "").await;
    assert_retry_later(&delete, "a DELETE the store can't keep");

    store.down.store(false, Ordering::Relaxed);
    let recovered = post_in(&b, &session, &call(5, "who")).await.checked_json("2025-11-25");
    assert_eq!(recovered["result"]["content"][0]["text"], "reader 7");
    let unknown = post_in(&b, "no-such-session", &call(6, "who")).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}
