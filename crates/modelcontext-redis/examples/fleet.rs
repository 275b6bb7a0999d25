//! One instance of a bookshop deployment: start several, each on its own port, with the same
//! Redis and the same signing key, and put any load balancer in front.
//!
//! ```sh
//! KEY=$(openssl rand -hex 32)
//! cargo run -p modelcontext-redis --example fleet -- --http 127.0.0.1:8001 \
//!     --redis redis://127.0.0.1:6379/ --signing-key $KEY
//! cargo run -p modelcontext-redis --example fleet -- --http 127.0.0.1:8002 \
//!     --redis redis://127.0.0.1:6379/ --signing-key $KEY
//! ```
//!
//! A cursor or an MRTR `requestState` from one instance opens on the other (same key ring),
//! the `restock` tool called on one instance notifies the listen streams held by all of them
//! (same Redis bus), and a 2025-11-25 session made on one instance is served by any other
//! (same session store), its SSE streams resume on any of them (same event store), and the
//! client's answers to the server's requests (elicitation, sampling, roots) and its
//! cancellations reach the instance running the call wherever they land (same peer router):
//! clients of both eras need no sticky routing (see
//! `modelcontext::docs::deployment`).

use std::sync::Arc;

use modelcontext::server::KeyRing;
use modelcontext::{Context, HttpOptions, McpServer, ResourceDef, ToolDef};
use modelcontext_redis::Deployment;
use serde::Deserialize;

/// The deployment's name: the key prefix in Redis and the key ring's audience.
const DEPLOYMENT: &str = "bookshop";

#[derive(Deserialize, schemars::JsonSchema)]
struct Restock {
    /// The title that came back in stock.
    title: String,
}

struct Args {
    http: String,
    redis: String,
    signing_keys: Vec<String>,
}

const USAGE: &str =
    "usage: fleet --http HOST:PORT --redis URL --signing-key HEX [--signing-key HEX]...";

fn parse_args() -> Option<Args> {
    let (mut http, mut redis, mut signing_keys) = (None, None, Vec::new());
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        match word.as_str() {
            "--http" => http = Some(words.next()?),
            "--redis" => redis = Some(words.next()?),
            "--signing-key" => signing_keys.push(words.next()?),
            _ => return None,
        }
    }
    let args = Args { http: http?, redis: redis?, signing_keys };
    (!args.signing_keys.is_empty()).then_some(args)
}

fn bookshop() -> Result<McpServer, modelcontext::Error> {
    let restock = ToolDef::new("restock", |cx: Context, Restock { title }: Restock| async move {
        // Every instance's subscribers of this book hear it, through Redis.
        cx.notify_resource_updated(format!("books://{title}"));
        format!("{title} is back in stock")
    });
    McpServer::new("bookshop")
        .tool(restock)?
        .resource(ResourceDef::new("books://Dune", || async { "Dune, by Frank Herbert" }))?
        .resource(ResourceDef::new("books://Emma", || async { "Emma, by Jane Austen" }))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(args) = parse_args() else {
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    let deployment = Deployment::new(&args.redis, DEPLOYMENT)?;
    let ring = KeyRing::from_hex(&args.signing_keys)?.audience(DEPLOYMENT);
    let server = bookshop()?.key_ring(ring).subscription_bus(deployment.bus().await?);
    let listener = tokio::net::TcpListener::bind(args.http.as_str()).await?;
    eprintln!("bookshop instance on http://{}/mcp", listener.local_addr()?);
    let sessions = Arc::new(deployment.session_store()?);
    let events = Arc::new(deployment.event_store()?);
    let router = Arc::new(deployment.peer_router()?);
    let options =
        HttpOptions::default().session_store(sessions).event_store(events).peer_router(router);
    server.http_endpoint_with(options).serve(listener).await?;
    Ok(())
}
