//! "Handling errors", second listing: an error the model cannot fix.
//!
//! `cargo run --example handling_errors_2` serves it on stdio. The same miss now fails the
//! whole `tools/call` with the JSON-RPC error `{"code":-32602,"message":"No book titled
//! 'Nothing' in the catalog."}`: no result, nothing for the model to read. (For this tool
//! that is the wrong choice; the listing shows the mechanism.)

use modelcontext::types::INVALID_PARAMS;
use modelcontext::{McpError, McpServer, tool};

const CATALOG: &[(&str, &str)] = &[("Dune", "Frank Herbert"), ("Neuromancer", "William Gibson")];

/// Look up the author of a book in the catalog.
#[tool]
fn get_author(title: String) -> Result<String, McpError> {
    let found = CATALOG.iter().find(|(t, _)| *t == title).map(|(_, author)| author.to_string());
    found.ok_or_else(|| {
        McpError::new(INVALID_PARAMS, format!("No book titled '{title}' in the catalog."))
    })
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
    McpServer::new("Bookshop").tool(get_author::tool())?.run_stdio().await
}
