//! The Bookshop of the "Handling errors" chapter, line for line: two ways for a tool to fail,
//! a resource that may not exist, and arguments checked before any function runs.
//!
//! `cargo run --example bookshop` serves it over stdio; `cargo run --example bookshop -- --http
//! 127.0.0.1:8000` serves Streamable HTTP at `http://127.0.0.1:8000/mcp`.

use modelcontext::server::http::HttpOptions;
use modelcontext::types::INVALID_PARAMS;
use modelcontext::{McpError, McpServer, ResourceError, prompt, resource, tool};

const CATALOG: &[(&str, &str)] = &[("Dune", "Frank Herbert"), ("Neuromancer", "William Gibson")];

fn lookup(title: &str) -> Option<&'static str> {
    CATALOG.iter().find(|(t, _)| *t == title).map(|(_, author)| *author)
}

/// Look up the author of a book in the catalog.
#[tool]
fn get_author(title: String) -> Result<String, String> {
    // An ordinary error: the model reads it and can retry with a better title.
    lookup(&title)
        .map(str::to_owned)
        .ok_or_else(|| format!("No book titled '{title}' in the catalog."))
}

/// Look up the author of a book in the catalog (fails the whole request on a miss).
#[tool]
fn get_author_strict(title: String) -> Result<String, McpError> {
    // A protocol error: the request itself fails and the host, not the model, sees it.
    lookup(&title).map(str::to_owned).ok_or_else(|| {
        McpError::new(INVALID_PARAMS, format!("No book titled '{title}' in the catalog."))
    })
}

/// Search the catalog by title or author.
#[tool]
fn search_books(
    #[arg(description = "Title or author to search for.")] query: String,
    #[arg(description = "Maximum number of results.", default = 10, minimum = 1, maximum = 50)]
    limit: i64,
) -> String {
    let needle = query.to_lowercase();
    let hits: Vec<&str> = CATALOG
        .iter()
        .filter(|(title, author)| {
            title.to_lowercase().contains(&needle) || author.to_lowercase().contains(&needle)
        })
        .map(|(title, _)| *title)
        .take(usize::try_from(limit).unwrap_or(0))
        .collect();
    hits.join("\n")
}

/// The catalog entry for one book.
#[resource("books://{title}")]
fn book(title: String) -> Result<String, ResourceError> {
    match lookup(&title) {
        Some(author) => Ok(format!("{title} by {author}")),
        None => Err(ResourceError::not_found(format!("No book titled '{title}' in the catalog."))),
    }
}

/// Ask for a short review of a book.
#[prompt]
fn review(#[arg(description = "The book to review.")] title: String) -> String {
    format!("Write a two-sentence review of {title}.")
}

/// The bookshop server, shared with the quickstart.
pub fn bookshop() -> Result<McpServer, modelcontext::Error> {
    McpServer::new("Bookshop")
        .version(env!("CARGO_PKG_VERSION"))
        .instructions("Use search_books to find titles, get_author to look one up.")
        .tool(get_author::tool())?
        .tool(get_author_strict::tool())?
        .tool(search_books::tool())?
        .resource(book::resource())?
        .prompt(review::prompt())
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<(), modelcontext::Error> {
    // Logs go to stderr (on stdio, stdout carries the protocol), filtered by `RUST_LOG`;
    // `RUST_LOG=modelcontext=debug` shows each request's span (method, target, id) as it closes.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .init();
    let server = bookshop()?;
    // `-- --http 127.0.0.1:8000` serves Streamable HTTP at /mcp; the default is stdio, where
    // stdout carries only protocol messages.
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, addr] if flag == "--http" => server.serve_http(addr).await,
        // Also serve the 2024-11-05 HTTP+SSE transport (`/sse`, `/messages`) for old clients.
        [flag, addr, legacy] if flag == "--http" && legacy == "--legacy-sse" => {
            let options = HttpOptions::default().legacy_sse(true);
            let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
            server.http_endpoint_with(options).serve(listener).await
        }
        [] => server.run_stdio().await,
        _ => {
            eprintln!("usage: bookshop [--http HOST:PORT [--legacy-sse]]");
            std::process::exit(2);
        }
    }
}
