//! A tool that asks the user before it acts (elicitation), the same code in both eras.
//!
//! `cargo run --example confirm` runs the server in memory and a client whose "user" always
//! confirms. On a 2025-11-25 connection the question is a live `elicitation/create` request to
//! the client; on a 2026-07-28 connection the server answers `input_required` and the client
//! retries with the answer (MRTR). The handler cannot tell the difference. With `--stdio` it
//! only serves, over stdin and stdout, for a client such as `mcp` to answer the question.

use modelcontext::types::ElicitResult;
use modelcontext::{Client, Context, Elicitation, EraMode, McpServer, ToolError, tool};
use serde_json::json;

/// What the user is asked to fill in: a flat struct of primitives becomes the form.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    /// Really delete it?
    confirm: bool,
}

/// Delete a file, after the user confirms.
#[tool]
async fn delete_file(ctx: Context, path: String) -> Result<String, ToolError> {
    let answer = ctx
        .elicit::<Confirm>(format!("Delete {path}?"))
        .await
        .map_err(|e| ToolError::new(e.message))?;
    match answer {
        Elicitation::Accepted(Confirm { confirm: true }) => Ok(format!("deleted {path}")),
        Elicitation::Cancelled => Err(ToolError::new("the user dismissed the question")),
        _ => Ok(format!("kept {path}")),
    }
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
    let server = McpServer::new("confirm").tool(delete_file::tool())?;
    if std::env::args().any(|arg| arg == "--stdio") {
        return server.run_stdio().await;
    }
    for era in [EraMode::Handshake, EraMode::Modern] {
        // Setting a handler declares the `elicitation` capability; this "user" always says yes.
        let client = Client::builder()
            .era(era)
            .on_elicit(|question| async move {
                eprintln!(
                    "  the user is asked: {}",
                    serde_json::to_string(&question).unwrap_or_default()
                );
                let mut content = serde_json::Map::new();
                content.insert("confirm".into(), true.into());
                Ok(ElicitResult::accept(content))
            })
            .connect(server.in_memory())
            .await?;
        let result = client.call_tool("delete_file", json!({"path": "notes.txt"})).await?;
        println!("{} -> {}", client.protocol_version(), json!(result.content));
    }
    Ok(())
}
