//! A per-principal call budget kept behind an async trait: each caller may make `CALLS` tool
//! calls; the middleware asks the budget before every call, answers a caller whose budget is
//! spent with a tool error of its own, and tells the others in the result's `_meta` how many
//! calls they have left. The budget here lives in memory; one kept in Redis or a database
//! implements the same trait, and the middleware awaits it just the same.
//!
//! `cargo run --example budget` then point an MCP client at http://127.0.0.1:8000/mcp.
//! Without authentication there is no principal, so the HTTP session (or, for a stateless
//! 2026-07-28 request, one shared "anonymous" account) is the caller; behind
//! `HttpOptions::auth` the verified principal is.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use modelcontext::server::Middleware;
use modelcontext::server::middleware::{Next, Request, ResponseFuture};
use modelcontext::types::{CallToolResult, ContentBlock};
use modelcontext::{McpServer, tool};
use serde_json::{Value, json};
use tokio::sync::Mutex;

/// Calls each caller may make.
const CALLS: u64 = 3;

/// Where the budgets live. `spend` takes one call from `caller`'s budget and says how many
/// are left, or `None` when there was none to take.
trait Budget: Send + Sync + 'static {
    fn spend(&self, caller: &str) -> impl Future<Output = Option<u64>> + Send;
}

/// Budgets in this process's memory, behind an async lock (a store elsewhere is awaited the
/// same way).
#[derive(Default)]
struct InMemoryBudget {
    spent: Mutex<HashMap<String, u64>>,
}

impl Budget for InMemoryBudget {
    async fn spend(&self, caller: &str) -> Option<u64> {
        let mut spent = self.spent.lock().await;
        let calls = spent.entry(caller.to_owned()).or_default();
        if *calls >= CALLS {
            return None;
        }
        *calls += 1;
        Some(CALLS - *calls)
    }
}

/// The middleware: a [`Middleware`] of its own type, sharing the budget with every request.
struct CallBudget<B>(Arc<B>);

impl<B: Budget> Middleware for CallBudget<B> {
    fn handle(&self, request: Request, next: Next) -> ResponseFuture {
        let budget = Arc::clone(&self.0);
        Box::pin(async move {
            // Only tool calls are counted; listing stays free.
            if request.tool_name().is_none() {
                return next.run(request).await;
            }
            let caller = caller(&request);
            let Some(left) = budget.spend(&caller).await else {
                tracing::warn!(%caller, "call budget spent");
                let text = format!("{caller} has used all {CALLS} calls");
                return request.tool_result(CallToolResult::error(vec![ContentBlock::text(text)]));
            };
            next.run(request).await.map_result(|mut result: CallToolResult| {
                let meta = result.meta.get_or_insert_default();
                meta.insert("example/callsLeft".into(), Value::from(left));
                result
            })
        })
    }
}

/// Who is calling: the principal, else the session, else everyone at once.
fn caller(request: &Request) -> String {
    match (request.principal(), request.session_id()) {
        (Some(principal), _) => principal.0.clone(),
        (None, Some(session)) => format!("session {session}"),
        (None, None) => "anonymous".to_owned(),
    }
}

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::main]
async fn main() -> Result<(), modelcontext::Error> {
    init_logging();
    let budget = Arc::new(InMemoryBudget::default());
    let server =
        McpServer::new("budgeted").tool(add::tool())?.middleware(CallBudget(Arc::clone(&budget)));
    // The same server in memory first: four calls, the fourth over budget.
    let client = modelcontext::Client::connect(server.in_memory()).await?;
    for _ in 0..=CALLS {
        let result = client.call_tool("add", json!({"a": 1, "b": 2})).await?;
        tracing::info!(result = %serde_json::to_string(&result).unwrap_or_default(), "in memory");
    }
    client.close().await;
    let (addr, serve) = server.http_endpoint().bind("127.0.0.1:8000").await?;
    tracing::info!("serving MCP at http://{addr}/mcp");
    serve.await
}

/// Logs to stderr, `RUST_LOG` honoured (default `info`).
fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}
