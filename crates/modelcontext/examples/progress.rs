//! A long tool that reports progress, and a client that shows it.
//!
//! `cargo run --example progress`; with `--stdio` it only serves, over stdin and stdout (for
//! `mcp --stdio "target/debug/examples/progress --stdio" call index files=50`). The client asks for progress by giving a callback; the
//! SDK then attaches a progress token, routes each `notifications/progress` to the callback,
//! and (with `reset_timeout_on_progress`) keeps a slow but lively call from timing out.

use std::time::Duration;

use modelcontext::{CallOptions, Client, Context, McpServer, tool};
use serde_json::json;

/// Index `files` documents, reporting progress after each one.
#[tool]
async fn index(ctx: Context, #[arg(minimum = 1, maximum = 1000)] files: u32) -> String {
    // Sent only if the client asked for logs at info or below.
    ctx.info(format!("indexing {files} documents")).await;
    for done in 1..=files {
        tokio::time::sleep(Duration::from_millis(20)).await; // the real work would go here
        // Sent only if the caller asked for progress; must increase from call to call.
        ctx.report_progress(f64::from(done), Some(f64::from(files)), Some("indexing")).await;
    }
    format!("indexed {files} documents")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), modelcontext::Error> {
    // Logs go to stderr (on stdio, stdout carries the protocol), filtered by `RUST_LOG`;
    // `RUST_LOG=modelcontext=debug` shows each request's span (method, target, id) as it closes.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .init();
    let server = McpServer::new("indexer").tool(index::tool())?;
    if std::env::args().any(|arg| arg == "--stdio") {
        return server.run_stdio().await;
    }
    let client = Client::connect(server.in_memory()).await?;
    let options = CallOptions::new()
        .timeout(Duration::from_millis(200))
        .reset_timeout_on_progress(Duration::from_secs(30))
        .on_progress(|p| {
            eprintln!(
                "  {}/{} {}",
                p.progress,
                p.total.unwrap_or(0.0),
                p.message.as_deref().unwrap_or("")
            )
        });
    let result = client.call_tool_with("index", json!({"files": 5}), &options).await?;
    println!("{}", json!(result.content));
    Ok(())
}
