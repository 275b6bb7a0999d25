//! A gateway in front of other MCP servers: one endpoint, each server namespaced, a tool
//! hidden and one described better for a model. Usage:
//! `cargo run --example gateway -- <bookshop binary>` then point a client at
//! http://127.0.0.1:8080/mcp (`mcp tools http://127.0.0.1:8080/mcp`).

use modelcontext::server::compose::{Transform, Upstream};
use modelcontext::{ChildProcess, Error, McpServer};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let program = std::env::args().nth(1).unwrap_or_else(|| "bookshop".into());
    // Restarted with backoff if it crashes; calls in flight fail, later ones wait for it.
    let books = Upstream::builder("books", move |client| {
        let spawned = ChildProcess::new(&program).spawn();
        async move { client.connect(spawned?).await }
    })
    .connect()
    .await?;
    // A second server, in process: any McpServer mounts directly.
    let greeter = McpServer::new("greeter")
        .tool(modelcontext::ToolDef::new("get_author", || async {
            "Every book here was written by its author."
        }))?;
    let books_view = Transform::new()
        .namespace("books")
        .deny(["get_author_strict"])
        .describe("search_books", "Find books in the catalog by a word of their title.");
    McpServer::new("gateway")
        .mount(&books, books_view)
        .await?
        .mount_server(&greeter, Transform::new().namespace("greeter"))
        .await?
        .serve_http("127.0.0.1:8080")
        .await
}
