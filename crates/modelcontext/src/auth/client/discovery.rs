//! Finding the authorization server: the `WWW-Authenticate` challenge, RFC 9728 protected
//! resource metadata (from the challenge, else the well-known URIs, path form then root), and
//! RFC 8414 / OpenID Connect authorization server metadata, in the spec's order, with the
//! issuer check.

use serde_json::{Map, Value};

use super::AuthError;
use super::http::Http;

/// The parameters of a `Bearer` challenge (RFC 6750 §3), or of a `DPoP` one (RFC 9449 §7.1)
/// when there is no `Bearer` challenge, names lowercased.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BearerChallenge {
    /// `resource_metadata` (RFC 9728 §5.1).
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the operation needs, space-separated.
    pub scope: Option<String>,
    /// `error`, e.g. `invalid_token` or `insufficient_scope`.
    pub error: Option<String>,
}

impl BearerChallenge {
    /// Reads the `Bearer` challenge of a `WWW-Authenticate` value, else its `DPoP` challenge
    /// (other schemes ignored).
    pub fn parse(header: &str) -> Option<BearerChallenge> {
        let lower = header.to_ascii_lowercase();
        let start = find_scheme(&lower, "bearer")
            .map(|at| at + "bearer".len())
            .or_else(|| find_scheme(&lower, "dpop").map(|at| at + "dpop".len()))?;
        let mut challenge = BearerChallenge::default();
        let mut rest = header[start..].trim_start();
        loop {
            rest = rest.trim_start_matches([' ', ',', '\t']);
            let Some(eq) = rest.find('=') else { break };
            let name = rest[..eq].trim();
            if name.contains(' ') {
                break; // the next challenge's scheme
            }
            let name = name.to_ascii_lowercase();
            let after = rest[eq + 1..].trim_start();
            let (value, remaining) = if let Some(quoted) = after.strip_prefix('"') {
                let mut value = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, next)) = chars.next() {
                                value.push(next);
                            }
                        }
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => value.push(c),
                    }
                }
                (value, &quoted[end.min(quoted.len())..])
            } else {
                let end = after.find(',').unwrap_or(after.len());
                (after[..end].trim().to_owned(), &after[end..])
            };
            match name.as_str() {
                "resource_metadata" => challenge.resource_metadata = Some(value),
                "scope" => challenge.scope = Some(value),
                "error" => challenge.error = Some(value),
                _ => {}
            }
            rest = remaining;
        }
        Some(challenge)
    }
}

fn find_scheme(lower: &str, scheme: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = lower[from..].find(scheme) {
        let at = from + i;
        let before_ok = at == 0 || matches!(lower.as_bytes()[at - 1], b' ' | b',');
        let after = lower.as_bytes().get(at + scheme.len());
        if before_ok && matches!(after, None | Some(b' ')) {
            return Some(at);
        }
        from = at + scheme.len();
    }
    None
}

/// `scheme://authority` and the path of a URL (the path without a lone `/`, query dropped).
pub(super) fn split_url(url: &str) -> Result<(String, String), AuthError> {
    let uri: http::Uri = url.parse().map_err(|_| AuthError::new(format!("invalid URL {url:?}")))?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(AuthError::new(format!("not an absolute URL: {url:?}")));
    };
    let path = uri.path().trim_end_matches('/');
    Ok((format!("{scheme}://{authority}"), path.to_owned()))
}

/// The protected resource: its canonical identifier and its authorization servers.
pub(super) struct ResourceMetadata {
    pub resource: String,
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Option<Vec<String>>,
}

/// RFC 9728 discovery for the MCP server at `server_url`. `None` when the server publishes
/// no metadata at all (a pre-2025-06-18 server).
pub(super) async fn resource_metadata(
    http: &Http,
    server_url: &str,
    from_challenge: Option<&str>,
) -> Result<Option<ResourceMetadata>, AuthError> {
    let (origin, path) = split_url(server_url)?;
    let mut candidates = Vec::new();
    if let Some(url) = from_challenge {
        candidates.push(url.to_owned());
    } else {
        if !path.is_empty() {
            candidates.push(format!("{origin}/.well-known/oauth-protected-resource{path}"));
        }
        candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
    }
    for url in candidates {
        let answer = http.get(&url).await?;
        if !answer.status.is_success() {
            tracing::debug!(%url, status = %answer.status, "no protected resource metadata here");
            continue;
        }
        let document = answer
            .json()
            .ok_or_else(|| AuthError::new(format!("{url}: the metadata is not a JSON object")))?;
        let resource = document
            .get("resource")
            .and_then(Value::as_str)
            .ok_or_else(|| AuthError::new(format!("{url}: the metadata has no `resource`")))?
            .to_owned();
        // RFC 9728 §3.3 / spec: the metadata must be about the server the client talks to.
        if !resource_covers(&resource, server_url) {
            return Err(AuthError::new(format!(
                "the protected resource metadata names resource {resource}, not {server_url}"
            )));
        }
        let authorization_servers = strings(&document, "authorization_servers").unwrap_or_default();
        if authorization_servers.is_empty() {
            return Err(AuthError::new(format!("{url}: no `authorization_servers`")));
        }
        let scopes_supported = strings(&document, "scopes_supported");
        return Ok(Some(ResourceMetadata { resource, authorization_servers, scopes_supported }));
    }
    Ok(None)
}

/// Whether the metadata's `resource` identifies `server_url`: the same origin, and a path
/// equal to or a parent of the server's (compared without case on scheme and host).
fn resource_covers(resource: &str, server_url: &str) -> bool {
    let (Ok((r_origin, r_path)), Ok((s_origin, s_path))) =
        (split_url(resource), split_url(server_url))
    else {
        return false;
    };
    if resource.contains('#') || !r_origin.eq_ignore_ascii_case(&s_origin) {
        return false;
    }
    r_path.is_empty() || s_path == r_path || s_path.starts_with(&format!("{r_path}/"))
}

fn strings(document: &Map<String, Value>, key: &str) -> Option<Vec<String>> {
    let values = document.get(key)?.as_array()?;
    Some(values.iter().filter_map(Value::as_str).map(str::to_owned).collect())
}

/// The authorization server metadata that matters here.
#[derive(Clone, Debug)]
pub(super) struct ServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: Option<String>,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    /// RFC 7009 token revocation, if the server offers it.
    pub revocation_endpoint: Option<String>,
    pub scopes_supported: Option<Vec<String>>,
    pub code_challenge_methods: Option<Vec<String>>,
    pub token_endpoint_auth_methods: Option<Vec<String>>,
    pub iss_parameter_supported: bool,
    pub client_id_metadata_document_supported: bool,
}

/// Whether a server that publishes no authorization server metadata gets the 2025-03-26
/// revision's default endpoints, or an error.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum WithoutMetadata {
    /// The revisions since 2025-06-18: the metadata is required.
    Refuse,
    /// A server that also published no protected resource metadata: it predates 2025-06-18,
    /// and its origin is its authorization server.
    DefaultEndpoints,
}

/// The metadata of the authorization server `issuer`: RFC 8414 then OpenID Connect discovery
/// URLs in the spec's order; the first document found must name `issuer` exactly.
pub(super) async fn server_metadata(
    http: &Http,
    issuer: &str,
    without: WithoutMetadata,
) -> Result<ServerMetadata, AuthError> {
    let (origin, path) = split_url(issuer)?;
    let candidates = if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    };
    for url in candidates {
        let answer = http.get(&url).await?;
        if !answer.status.is_success() {
            continue;
        }
        let Some(document) = answer.json() else { continue };
        let named = document.get("issuer").and_then(Value::as_str).unwrap_or_default();
        // RFC 8414 §3.3: the issuer must be identical to the one the URL was built from.
        if named != issuer {
            return Err(AuthError::new(format!(
                "{url}: the metadata names issuer {named:?}, expected {issuer:?}; refusing it"
            )));
        }
        let text = |key: &str| document.get(key).and_then(Value::as_str).map(str::to_owned);
        let token_endpoint = text("token_endpoint")
            .ok_or_else(|| AuthError::new(format!("{url}: no token_endpoint")))?;
        return Ok(ServerMetadata {
            issuer: named.to_owned(),
            authorization_endpoint: text("authorization_endpoint"),
            token_endpoint,
            registration_endpoint: text("registration_endpoint"),
            revocation_endpoint: text("revocation_endpoint"),
            scopes_supported: strings(&document, "scopes_supported"),
            code_challenge_methods: strings(&document, "code_challenge_methods_supported"),
            token_endpoint_auth_methods: strings(
                &document,
                "token_endpoint_auth_methods_supported",
            ),
            iss_parameter_supported: document
                .get("authorization_response_iss_parameter_supported")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            client_id_metadata_document_supported: document
                .get("client_id_metadata_document_supported")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        });
    }
    if without == WithoutMetadata::DefaultEndpoints {
        tracing::debug!(%issuer, "no authorization server metadata; the 2025-03-26 default endpoints");
        return Ok(default_endpoints(&origin));
    }
    Err(AuthError::new(format!("no authorization server metadata found for {issuer}")))
}

/// The 2025-03-26 revision's fallback for a server without metadata: `/authorize`, `/token`
/// and `/register` at its origin. That revision requires PKCE of every client, so S256 counts
/// as offered.
fn default_endpoints(origin: &str) -> ServerMetadata {
    ServerMetadata {
        issuer: origin.to_owned(),
        authorization_endpoint: Some(format!("{origin}/authorize")),
        token_endpoint: format!("{origin}/token"),
        registration_endpoint: Some(format!("{origin}/register")),
        revocation_endpoint: None,
        scopes_supported: None,
        code_challenge_methods: Some(vec!["S256".to_owned()]),
        token_endpoint_auth_methods: None,
        iss_parameter_supported: false,
        client_id_metadata_document_supported: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_parsed() {
        let c = BearerChallenge::parse(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp""#,
        )
        .expect("a bearer challenge");
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://x/.well-known/oauth-protected-resource/mcp")
        );
        let c = BearerChallenge::parse("Basic realm=\"x\", Bearer error=invalid_token")
            .expect("a bearer challenge");
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert!(BearerChallenge::parse("Basic realm=\"x\"").is_none());
    }

    #[test]
    fn resources_cover_their_paths() {
        assert!(resource_covers("http://h:1", "http://h:1/mcp"));
        assert!(resource_covers("http://h:1/mcp", "http://h:1/mcp"));
        assert!(!resource_covers("https://evil.example.com/mcp", "http://h:1/mcp"));
        assert!(!resource_covers("http://h:1/mc", "http://h:1/mcp"));
    }
}
