//! Tools that ask the client for what only it has: a model (sampling) and the user's
//! workspace (roots). A stdio server for a client such as `mcp` to answer:
//!
//! ```text
//! mcp --stdio target/debug/examples/ask_client --sampling-cmd 'tr a-z A-Z' call summarize text=hi
//! mcp --stdio target/debug/examples/ask_client --root . call workspace
//! mcp --stdio "target/debug/examples/ask_client --changes" listen --resource notes://today
//! ```
//!
//! With `--changes` it also announces a change every 100 ms (the tool list, and the resource
//! `notes://today`), for `mcp listen` to show.

use modelcontext::types::{CreateMessageRequestParams, SamplingMessage};
use modelcontext::{Context, McpServer, ToolError, resource, tool};

/// Summarize `text` with the client's model.
#[tool]
async fn summarize(ctx: Context, text: String) -> Result<String, ToolError> {
    let question = CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text(format!("Summarize in one line: {text}"))],
        100,
    );
    let answer = ctx.sample(question).await.map_err(|e| ToolError::new(e.message))?;
    let said: Vec<String> = (answer.content.blocks().iter())
        .map(|block| serde_json::to_value(block).unwrap_or_default())
        .filter_map(|block| block.get("text").and_then(|t| t.as_str()).map(str::to_owned))
        .collect();
    Ok(format!("{} (by {})", said.join(" "), answer.model))
}

/// The folders the client shares with the server, one URI a line.
#[tool]
async fn workspace(ctx: Context) -> Result<String, ToolError> {
    let roots = ctx.list_roots().await.map_err(|e| ToolError::new(e.message))?;
    Ok(roots.into_iter().map(|root| root.uri).collect::<Vec<_>>().join("\n"))
}

/// Today's notes: what `--changes` says is updated.
#[resource("notes://today")]
fn today() -> String {
    "nothing yet".into()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), modelcontext::Error> {
    let server = (McpServer::new("ask-client").tool(summarize::tool())?)
        .tool(workspace::tool())?
        .resource(today::resource())?;
    if std::env::args().any(|arg| arg == "--changes") {
        let announcer = server.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                announcer.notify_tools_changed();
                announcer.notify_resource_updated("notes://today");
            }
        });
    }
    server.run_stdio().await
}
