//! Mounting an MCP endpoint inside an existing axum application: its own path, the app's
//! middleware and routes beside it, and graceful shutdown on Ctrl-C.
//!
//! `cargo run --example axum_mount`, then MCP at http://127.0.0.1:8001/api/mcp and a plain
//! health check at http://127.0.0.1:8001/healthz.

use axum::Router;
use axum::routing::get;
use modelcontext::{McpServer, tool};

/// Say hello.
#[tool]
fn hello(name: String) -> String {
    format!("Hello, {name}!")
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
    let mcp = McpServer::new("mounted").tool(hello::tool())?;
    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        // The endpoint is a tower Service: mount it at any path, wrap it in any layer.
        .route_service("/api/mcp", mcp.http_endpoint().into_service());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8001").await?;
    eprintln!("serving at http://{}/api/mcp", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
