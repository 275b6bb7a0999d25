//! Quickstart: run the Bookshop in memory, connect a client, and walk through every case of
//! the "Handling errors" chapter, printing what the client gets back.
//!
//! `cargo run --example quickstart`

#[path = "bookshop.rs"]
#[allow(dead_code)]
mod bookshop;

use modelcontext::{CallToolResult, Client, EraMode};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), modelcontext::Error> {
    // Logs go to stderr (on stdio, stdout carries the protocol), filtered by `RUST_LOG`;
    // `RUST_LOG=modelcontext=debug` shows each request's span (method, target, id) as it closes.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .init();
    let server = bookshop::bookshop()?;
    for mode in [EraMode::Modern, EraMode::Handshake] {
        // The in-memory transport serializes every message, exactly as stdio would.
        let client = Client::builder().era(mode).connect(server.in_memory()).await?;
        println!("== {} ({:?} era)", client.protocol_version(), client.era());

        show("success", client.call_tool("get_author", json!({"title": "Dune"})).await);
        show("tool error", client.call_tool("get_author", json!({"title": "Nothing"})).await);
        show(
            "protocol error",
            client.call_tool("get_author_strict", json!({"title": "Nothing"})).await,
        );
        show("wrong-type argument", client.call_tool("get_author", json!({"title": 5})).await);
        show(
            "constraint violated",
            client.call_tool("search_books", json!({"query": "d", "limit": 999})).await,
        );
        match client.read_resource("books://Dune").await {
            Ok(read) => println!("resource:            {}", json!(read.contents)),
            Err(err) => println!("resource:            error {err:#}"),
        }
        match client.read_resource("books://Nothing").await {
            Ok(read) => println!("resource not found:  unexpected {}", json!(read.contents)),
            Err(err) => println!("resource not found:  {}", json!(err.as_mcp_error())),
        }
        client.close().await;
    }
    Ok(())
}

/// Prints a tool call's outcome: a result (check `is_error`) or a protocol error.
fn show(case: &str, outcome: Result<CallToolResult, modelcontext::Error>) {
    let label = format!("{case}:");
    match outcome {
        Ok(result) => {
            println!("{label:<21}is_error={} content={}", result.is_error(), json!(result.content))
        }
        Err(err) => match err.as_mcp_error() {
            Some(error) => println!("{label:<21}JSON-RPC error {}", json!(error)),
            None => println!("{label:<21}failed: {err:#}"),
        },
    }
}
