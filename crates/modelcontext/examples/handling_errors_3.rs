//! "Handling errors", third listing: a resource that does not exist.
//!
//! `cargo run --example handling_errors_3` serves it on stdio. Reading `books://Nothing`
//! fails with `{"code":-32602,"message":"No book titled 'Nothing' in the catalog.",
//! "data":{"uri":"books://Nothing"}}`: resources have only the protocol path.

use modelcontext::{McpServer, ResourceError, resource};

const CATALOG: &[(&str, &str)] = &[("Dune", "Frank Herbert"), ("Neuromancer", "William Gibson")];

/// The catalog entry for one book.
#[resource("books://{title}")]
fn book(title: String) -> Result<String, ResourceError> {
    let found = CATALOG.iter().find(|(t, _)| *t == title);
    let missing = || ResourceError::not_found(format!("No book titled '{title}' in the catalog."));
    found.map(|(t, author)| format!("{t} by {author}")).ok_or_else(missing)
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
    McpServer::new("Bookshop").resource(book::resource())?.run_stdio().await
}
