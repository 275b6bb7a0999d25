//! "Handling errors", first listing: an error the model can fix.
//!
//! `cargo run --example handling_errors_1` serves it on stdio. Calling `get_author` with a
//! title that is not in the catalog gives a result with `isError: true` and the text
//! `Error executing tool get_author: No book titled 'Nothing' in the catalog.`: the model
//! reads it and tries a better title.

use modelcontext::{McpServer, tool};

const CATALOG: &[(&str, &str)] = &[("Dune", "Frank Herbert"), ("Neuromancer", "William Gibson")];

/// Look up the author of a book in the catalog.
#[tool]
fn get_author(title: String) -> Result<String, String> {
    let found = CATALOG.iter().find(|(t, _)| *t == title).map(|(_, author)| author.to_string());
    found.ok_or_else(|| format!("No book titled '{title}' in the catalog."))
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
