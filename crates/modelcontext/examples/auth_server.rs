//! A protected MCP server: an OAuth 2.1 resource server (feature `auth`).
//!
//! `ISSUER=http://127.0.0.1:9000 cargo run --example auth_server --features auth` serves
//! http://127.0.0.1:8000/mcp and accepts JWT access tokens that `ISSUER` signed for exactly
//! this resource. A client without a token gets `401` with
//! `WWW-Authenticate: Bearer resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp", scope="files:read"`,
//! reads that document, and gets a token from the authorization server it names.

use modelcontext::auth::{AuthOptions, JwtVerifier};
use modelcontext::server::http::HttpOptions;
use modelcontext::{Context, McpServer, tool};

/// The canonical URI of this server: tokens must carry it as their audience (RFC 8707).
const RESOURCE: &str = "http://127.0.0.1:8000/mcp";

/// Who the caller is, as its access token says.
#[tool]
fn whoami(ctx: Context) -> String {
    match ctx.principal() {
        Some(p) => format!(
            "{} (client {}, scopes: {})",
            p.subject.as_deref().unwrap_or("unknown subject"),
            p.client_id.as_deref().unwrap_or("unknown"),
            p.scopes.join(" ")
        ),
        None => "anonymous".to_owned(),
    }
}

/// Delete a file. Needs `files:write` on top of the `files:read` every request needs: a token
/// without it gets 403 `insufficient_scope` naming both, and the client steps up.
#[tool]
fn delete_file(path: String) -> String {
    format!("deleted {path} (not really)")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs go to stderr (on stdio, stdout carries the protocol), filtered by `RUST_LOG`;
    // `RUST_LOG=modelcontext=debug` shows each request's span (method, target, id) as it closes.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .init();
    let issuer = std::env::var("ISSUER").unwrap_or_else(|_| "http://127.0.0.1:9000".to_owned());
    // The key set is found through the issuer's metadata and cached; rotated keys are fetched.
    let verifier = JwtVerifier::new(&issuer, RESOURCE)?;
    let auth = AuthOptions::new(RESOURCE, &issuer, verifier)?
        .scopes_supported(["files:read", "files:write"])
        .required_scopes(["files:read"]);
    let server = McpServer::new("auth-example")
        .tool(whoami::tool())?
        .tool(delete_file::tool().required_scopes(["files:write"]))?;
    let options = HttpOptions::default().auth(auth);
    let (addr, serve) = server.http_endpoint_with(options).bind("127.0.0.1:8000").await?;
    eprintln!("serving protected MCP at http://{addr}/mcp (tokens from {issuer})");
    serve.await?;
    Ok(())
}
