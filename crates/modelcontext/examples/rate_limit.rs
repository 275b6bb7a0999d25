//! A middleware that rate-limits `tools/call` per principal: each caller gets `BURST`
//! calls, refilled at `PER_SECOND`; a caller over its budget is answered with a JSON-RPC
//! error of our choosing (-32029) and the tool never runs.
//!
//! `cargo run --example rate_limit` then point an MCP client at http://127.0.0.1:8000/mcp.
//! Without authentication there is no principal, so the HTTP session (or, for a stateless
//! 2026-07-28 request, one shared "anonymous" bucket) is the caller; behind
//! `HttpOptions::auth` the verified principal is.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use modelcontext::server::middleware::{Next, Request, Response, from_fn};
use modelcontext::types::{ErrorCode, McpError};
use modelcontext::{McpServer, tool};

const BURST: f64 = 5.0;
const PER_SECOND: f64 = 1.0;

/// The error code of a refusal: in the JSON-RPC range left to applications.
const RATE_LIMITED: ErrorCode = ErrorCode(-32029);

/// Tokens left per caller, and when they were last topped up.
#[derive(Default)]
struct RateLimit {
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl RateLimit {
    /// Who is calling: the principal, else the session, else everyone at once.
    fn caller(request: &Request) -> String {
        match (request.principal(), request.session_id()) {
            (Some(principal), _) => principal.0.clone(),
            (None, Some(session)) => format!("session {session}"),
            (None, None) => "anonymous".to_owned(),
        }
    }

    /// Takes one token from `caller`'s bucket, if there is one.
    fn take(&self, caller: String) -> bool {
        let mut buckets = self.buckets.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = Instant::now();
        let (tokens, since) = buckets.entry(caller).or_insert((BURST, now));
        let refilled = now.duration_since(*since).as_secs_f64() * PER_SECOND;
        *tokens = (*tokens + refilled).min(BURST);
        *since = now;
        if *tokens < 1.0 {
            return false;
        }
        *tokens -= 1.0;
        true
    }
}

/// Lets a call through while its caller has tokens; answers it with -32029 otherwise.
async fn limit(limits: Arc<RateLimit>, request: Request, next: Next) -> Response {
    // Only tool calls cost a token; listing and reading stay free.
    if request.tool_name().is_none() || limits.take(RateLimit::caller(&request)) {
        return next.run(request).await;
    }
    tracing::warn!(caller = %RateLimit::caller(&request), "rate limited");
    Response::error(McpError::new(RATE_LIMITED, "Rate limit exceeded: retry in a second"))
}

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::main]
async fn main() -> Result<(), modelcontext::Error> {
    init_logging();
    let limits = Arc::new(RateLimit::default());
    let server = McpServer::new("rate-limited")
        .tool(add::tool())?
        .middleware(from_fn(move |request, next| limit(Arc::clone(&limits), request, next)));
    let (addr, serve) = server.http_endpoint().bind("127.0.0.1:8000").await?;
    tracing::info!("serving MCP at http://{addr}/mcp");
    serve.await
}

/// Logs to stderr, `RUST_LOG` honoured (default `info`); each request's span is shown when
/// it closes (`RUST_LOG=modelcontext=debug`).
fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .init();
}
