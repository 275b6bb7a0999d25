//! A middleware that audits every request: who asked for what, in which era, over which
//! transport, how it ended and how long it took, one structured `tracing` event per request
//! on stderr.
//!
//! `cargo run --example audit` serves stdio (logs on stderr, never stdout): try
//! `printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}' | cargo run --example audit`

use std::time::Instant;

use modelcontext::server::middleware::{Next, Request, Response, from_fn};
use modelcontext::{McpServer, tool};

/// Writes one audit line per request, once its outcome is known.
async fn audit(request: Request, next: Next) -> Response {
    // What the line needs, taken before the request moves on.
    let method = request.method().to_owned();
    let target = request.target().unwrap_or("-").to_owned();
    let principal = request.principal().map_or("-", |p| p.0.as_str()).to_owned();
    let (id, era, transport) = (request.id().to_string(), request.era(), request.transport());
    let started = Instant::now();
    let response = next.run(request).await;
    let micros = started.elapsed().as_micros() as u64;
    match response.outcome() {
        Ok(_) => tracing::info!(
            target: "audit",
            method, target, principal, id, ?era, transport, micros, "answered"
        ),
        Err(error) => tracing::info!(
            target: "audit",
            method, target, principal, id, ?era, transport, micros, code = error.code.0, "refused"
        ),
    }
    response
}

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::main]
async fn main() -> Result<(), modelcontext::Error> {
    init_logging();
    McpServer::new("audited").tool(add::tool())?.middleware(from_fn(audit)).run_stdio().await
}

/// Logs to stderr (stdout carries the protocol), `RUST_LOG` honoured (default `info`).
fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .init();
}
