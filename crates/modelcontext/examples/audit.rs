//! A request layer that audits every request: who asked for what, in which era, over which
//! transport, and how it ended, one structured `tracing` event per request on stderr.
//!
//! `cargo run --example audit` serves stdio (logs on stderr, never stdout): try
//! `printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}' | cargo run --example audit`

use modelcontext::server::{RequestInfo, RequestLayer};
use modelcontext::types::{McpError, RawValue};
use modelcontext::{McpServer, tool};

/// Writes one audit line per request, after its outcome is known.
struct Audit;

impl RequestLayer for Audit {
    fn after(&self, info: &RequestInfo, outcome: Result<&RawValue, &McpError>) {
        let principal = info.principal().map_or("-", |p| p.0.as_str());
        let target = info.target.as_deref().unwrap_or("-");
        match outcome {
            Ok(_) => tracing::info!(
                target: "audit",
                method = %info.method, target, principal, id = %info.id,
                era = ?info.era, transport = info.transport, "answered"
            ),
            Err(error) => tracing::info!(
                target: "audit",
                method = %info.method, target, principal, id = %info.id,
                era = ?info.era, transport = info.transport, code = error.code.0, "refused"
            ),
        }
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
    McpServer::new("audited").tool(add::tool())?.layer(Audit).run_stdio().await
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
