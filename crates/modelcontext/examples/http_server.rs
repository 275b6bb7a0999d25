//! A standalone Streamable HTTP server: both protocol eras on one endpoint.
//!
//! `cargo run --example http_server` then point any MCP client at http://127.0.0.1:8000/mcp.
//! A 2026-07-28 client is served statelessly; a 2025-11-25 client gets a session from
//! `initialize`. Only loopback `Host`/`Origin` headers are accepted by default, which stops
//! DNS-rebinding attacks from web pages.

use modelcontext::server::http::{AllowList, HttpOptions};
use modelcontext::{Context, McpServer, tool};

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Count to `n`, reporting progress: an HTTP client that sent a progress token receives the
/// updates as server-sent events before the result.
#[tool]
async fn count(ctx: Context, #[arg(maximum = 100)] n: u32) -> String {
    for i in 1..=n {
        ctx.report_progress(f64::from(i), Some(f64::from(n)), None).await;
    }
    format!("counted to {n}")
}

#[tokio::main]
async fn main() -> Result<(), modelcontext::Error> {
    // Logs go to stderr (on stdio, stdout carries the protocol), filtered by `RUST_LOG`;
    // `RUST_LOG=modelcontext=debug` shows each request's span (method, target, id) as it closes.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .init();
    let server = McpServer::new("http-example").tool(add::tool())?.tool(count::tool())?;
    // The defaults are right for a local server; this shows where a deployment adds its names.
    let options =
        HttpOptions::default().allow(AllowList::default().allow_host("mcp.internal.example"));
    let (addr, serve) = server.http_endpoint_with(options).bind("127.0.0.1:8000").await?;
    eprintln!("serving MCP at http://{addr}/mcp");
    serve.await
}
