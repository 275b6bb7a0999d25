//! How every command but `login` authorizes its HTTP requests: a bearer token from
//! `--token-env`, else the tokens `mcp login` stored for that URL (refreshed when they
//! expire), else none.
//!
//! Tokens live in one file, `$XDG_CONFIG_HOME/mcp/tokens.json` (else
//! `~/.config/mcp/tokens.json`), kept by the SDK's `FileTokenStore`: private (0600), replaced
//! atomically, keyed by the server URL.

use std::path::PathBuf;

use modelcontext::auth::client::{FileTokenStore, OAuthClient};
use modelcontext::net::HttpClient;
use modelcontext::transport::http::HttpTransport;

use crate::cli::Cli;
use crate::failure::Failure;
use crate::loopback::CALLBACK_PATH;

/// The name this client registers under.
pub const CLIENT_NAME: &str = "mcp (modelcontext command line)";
/// The token file: `$XDG_CONFIG_HOME/mcp/tokens.json`, else `~/.config/mcp/tokens.json`
/// (`%APPDATA%\mcp\tokens.json` on Windows when there is no `HOME`).
pub fn token_file() -> Result<PathBuf, String> {
    let non_empty =
        |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let config = non_empty("XDG_CONFIG_HOME")
        .or_else(|| non_empty("HOME").map(|home| home.join(".config")))
        .or_else(|| non_empty("APPDATA"))
        .ok_or("no place for the token file: set XDG_CONFIG_HOME or HOME")?;
    Ok(config.join("mcp").join("tokens.json"))
}

/// The key tokens are stored under: the URL as the HTTP transport spells it (the OAuth client
/// is handed that spelling), which adds the `/` path to a bare origin.
pub fn token_key(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if rest[authority_end..].starts_with('/') {
        return url.to_owned();
    }
    format!("{scheme}://{}/{}", &rest[..authority_end], &rest[authority_end..])
}

/// Authorizes `transport` for a command other than `login`: `--token-env`, else stored tokens.
pub fn authorize(
    cli: &Cli,
    url: &str,
    transport: HttpTransport,
    client: &HttpClient,
) -> Result<HttpTransport, Failure> {
    if let Some(name) = &cli.token_env {
        let token = std::env::var(name).map_err(|_| {
            Failure::Usage(format!("--token-env {name}: the environment variable is not set"))
        })?;
        let token = token.trim();
        if token.is_empty() {
            return Err(Failure::Usage(format!("--token-env {name}: the variable is empty")));
        }
        return transport
            .header("Authorization", &format!("Bearer {token}"))
            .map_err(|_| Failure::Usage(format!("--token-env {name}: not a valid bearer token")));
    }
    // Without a home there is no token file, so nothing was stored.
    let Ok(path) = token_file() else { return Ok(transport) };
    let store = FileTokenStore::new(path);
    let key = token_key(url);
    match store.load(&key) {
        Ok(Some(_)) => Ok(transport.auth(stored_login(url, store, client))),
        Ok(None) => Ok(transport),
        Err(err) => Err(Failure::Other(format!("{err} (remove it, then run `mcp login {url}`)"))),
    }
}

/// The access token `mcp login` stored for `url`, for a host's config (`mcp install
/// --with-login`), and when it expires.
pub fn stored_access_token(url: &str) -> Result<(String, Option<std::time::SystemTime>), String> {
    let path = token_file()?;
    match FileTokenStore::new(&path).load(&token_key(url)) {
        Ok(Some(tokens)) => Ok((tokens.access_token, tokens.expires_at)),
        Ok(None) => Err(format!("no stored login for {url}: run `mcp login {url}` first")),
        Err(err) => Err(err.to_string()),
    }
}

/// An OAuth client that uses and refreshes the stored tokens, and never starts a login: when
/// they can no longer be refreshed it says to log in again.
pub fn stored_login(url: &str, store: FileTokenStore, client: &HttpClient) -> OAuthClient {
    let message = format!("the stored login for {url} no longer works; run `mcp login {url}`");
    // The redirect URI is only used to register, and the registration is stored too.
    let redirect_uri = format!("http://127.0.0.1{CALLBACK_PATH}");
    OAuthClient::authorization_code(CLIENT_NAME, redirect_uri, move |_| {
        let message = message.clone();
        async move { Err(message) }
    })
    .token_store(store)
    .http_client(client.clone())
}

#[cfg(test)]
mod tests {
    use super::token_key;

    #[test]
    fn keys_are_spelled_as_the_transport_spells_urls() {
        assert_eq!(token_key("http://127.0.0.1:8000/mcp"), "http://127.0.0.1:8000/mcp");
        assert_eq!(token_key("http://127.0.0.1:8000"), "http://127.0.0.1:8000/");
        assert_eq!(token_key("http://h?x=1"), "http://h/?x=1");
        assert_eq!(token_key("not a url"), "not a url");
    }
}
