//! The Bookshop of the "Handling errors" chapter, line for line: two ways for a tool to fail,
//! a resource that may not exist, and arguments checked before any function runs.
//!
//! `cargo run --example bookshop` serves it over stdio; `cargo run --example bookshop -- --http
//! 127.0.0.1:8000` serves Streamable HTTP at `http://127.0.0.1:8000/mcp`, and adding
//! `--tls-cert cert.pem --tls-key key.pem` serves `https://127.0.0.1:8000/mcp` (HTTP/1.1 and
//! HTTP/2) from a PEM certificate chain and key. `--signing-key <64 hex digits>` (repeatable:
//! the first seals, all open) makes several instances one deployment: a cursor or an MRTR
//! `requestState` from one is accepted by all. Add `--redis redis://127.0.0.1:6379/` (with
//! `--http` and a signing key) and they share everything else through Redis
//! (`modelcontext-redis`): change notifications, 2025-11-25 sessions, their SSE event logs,
//! and the client's answers and cancellations, so a request of either era may reach any
//! instance through any load balancer, with no stickiness (`docs::deployment`).

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

/// What the command line asked for.
#[derive(Default)]
struct Args {
    /// `--http HOST:PORT`; stdio without it.
    http: Option<String>,
    /// `--legacy-sse`: also the 2024-11-05 HTTP+SSE transport (`/sse`, `/messages`).
    legacy_sse: bool,
    /// `--tls-cert FILE --tls-key FILE`: https, HTTP/1.1 and HTTP/2.
    tls_cert: Option<String>,
    tls_key: Option<String>,
    /// `--signing-key HEX`, repeatable: the key ring shared by every instance.
    signing_keys: Vec<String>,
    /// `--redis URL`: one deployment with the other instances on this Redis.
    redis: Option<String>,
}

const USAGE: &str = "usage: bookshop [--http HOST:PORT [--legacy-sse] [--tls-cert CHAIN.pem \
                     --tls-key KEY.pem] [--redis URL]] [--signing-key HEX]... \
                     (--redis needs --http and a --signing-key)";

/// The deployment's name: the key prefix in Redis and the key ring's audience, the same on
/// every instance.
const DEPLOYMENT: &str = "bookshop";

fn parse_args() -> Option<Args> {
    let mut args = Args::default();
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        match word.as_str() {
            "--http" => args.http = Some(words.next()?),
            "--legacy-sse" => args.legacy_sse = true,
            "--tls-cert" => args.tls_cert = Some(words.next()?),
            "--tls-key" => args.tls_key = Some(words.next()?),
            "--signing-key" => args.signing_keys.push(words.next()?),
            "--redis" => args.redis = Some(words.next()?),
            _ => return None,
        }
    }
    let tls_alone = args.http.is_none() && (args.legacy_sse || args.tls_cert.is_some());
    let half_tls = args.tls_cert.is_some() != args.tls_key.is_some();
    // A fleet serves HTTP, and its instances must open each other's cursors and MRTR state.
    let lone_redis = args.redis.is_some() && (args.http.is_none() || args.signing_keys.is_empty());
    (!tls_alone && !half_tls && !lone_redis).then_some(args)
}

/// The HTTP options the flags ask for; a bad certificate or key stops the server here.
fn http_options(args: &Args) -> Result<HttpOptions, modelcontext::Error> {
    let options = HttpOptions::default().legacy_sse(args.legacy_sse);
    match (&args.tls_cert, &args.tls_key) {
        #[cfg(feature = "tls")]
        (Some(cert), Some(key)) => {
            Ok(options.tls(modelcontext::server::http::ServerTls::from_pem_files(cert, key)?))
        }
        #[cfg(not(feature = "tls"))]
        (Some(_), Some(_)) => {
            eprintln!("bookshop: built without the `tls` feature; https is not available");
            std::process::exit(2);
        }
        _ => Ok(options),
    }
}

/// With `--redis`: the bus on the server, and the stores and router of the handshake era in
/// `options`, all on the deployment's Redis.
async fn join_fleet(
    url: &str,
    server: McpServer,
    options: HttpOptions,
) -> Result<(McpServer, HttpOptions), modelcontext_redis::Error> {
    let deployment = modelcontext_redis::Deployment::new(url, DEPLOYMENT)?;
    let server = server.subscription_bus(deployment.bus().await?);
    let options = options
        .session_store(std::sync::Arc::new(deployment.session_store()?))
        .event_store(std::sync::Arc::new(deployment.event_store()?))
        .peer_router(std::sync::Arc::new(deployment.peer_router()?));
    Ok((server, options))
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs go to stderr (on stdio, stdout carries the protocol), filtered by `RUST_LOG`;
    // `RUST_LOG=modelcontext=debug` shows each request's span (method, target, id) as it closes.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .init();
    let mut server = bookshop()?;
    // The default is stdio, where stdout carries only protocol messages. `--http` serves
    // Streamable HTTP at /mcp: http://HOST:PORT/mcp, or https:// with a certificate and key.
    let Some(args) = parse_args() else {
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    if !args.signing_keys.is_empty() {
        // The audience is the deployment's name, the same on every instance.
        let ring = modelcontext::server::KeyRing::from_hex(&args.signing_keys)?;
        server = server.key_ring(ring.audience(DEPLOYMENT));
    }
    let Some(addr) = &args.http else { return Ok(server.run_stdio().await?) };
    let mut options = http_options(&args)?;
    if let Some(url) = &args.redis {
        (server, options) = join_fleet(url, server, options).await?;
    }
    let listener = tokio::net::TcpListener::bind(addr.as_str()).await?;
    eprintln!("bookshop on http://{}/mcp", listener.local_addr()?);
    Ok(server.http_endpoint_with(options).serve(listener).await?)
}
