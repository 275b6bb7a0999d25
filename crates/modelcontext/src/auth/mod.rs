//! Authorization (feature `auth`): an MCP server over HTTP as an OAuth 2.1 resource server
//! (spec 2026-07-28 `basic/authorization`).
//!
//! - [`AuthOptions`]: the resource's identity (its canonical URI), its authorization servers,
//!   its scopes, and the [`TokenVerifier`] that checks bearer tokens.
//! - [`JwtVerifier`] (JWT access tokens, keys from the issuer's JWKS) and
//!   [`IntrospectionVerifier`] (opaque tokens, RFC 7662) are ready; implement [`TokenVerifier`]
//!   for anything else.
//! - [`metadata_router`] serves the RFC 9728 protected resource metadata that tells clients
//!   where to get tokens; [`AuthOptions::authorize`] answers a request without a usable token
//!   with the 401 / 403 / 400 challenge the spec prescribes.
//! - [`client`]: the other side, an OAuth 2.1 client that gets tokens for the HTTP client
//!   transport ([`client::OAuthClient`]).
//!
//! Tokens are only read from the `Authorization: Bearer` header (never the query string), are
//! never logged, and are never passed on to anyone but their issuer's introspection endpoint.
//! Over stdio there is no authorization: the spec has stdio servers take credentials from
//! their environment.

use std::sync::Arc;

use axum::response::Response;
use http::HeaderMap;
use serde_json::Value;

use crate::Error;

mod challenge;
pub mod client;
mod fetch;
mod introspection;
mod jwt;
mod metadata;
mod principal;

pub use introspection::IntrospectionVerifier;
pub use jwt::JwtVerifier;
pub use metadata::metadata_router;
pub use principal::{
    Principal, ScopeHierarchy, TokenVerifier, VerifyError, VerifyErrorKind, missing_scopes,
};

/// How an HTTP endpoint is protected. The fields are public; [`AuthOptions::new`] checks the
/// resource URI and fills the rest with defaults.
#[derive(Clone)]
pub struct AuthOptions {
    /// The canonical URI of this MCP server (RFC 8707 / RFC 9728 `resource`), e.g.
    /// `https://mcp.example.com/mcp`: tokens must carry it as their audience.
    pub resource: String,
    /// The issuers of the authorization servers clients may get tokens from (at least one).
    pub authorization_servers: Vec<String>,
    /// The scopes advertised in the metadata document (`offline_access` is never advertised).
    pub scopes_supported: Vec<String>,
    /// Scopes every request needs; a token without them gets 403 `insufficient_scope`.
    pub required_scopes: Vec<String>,
    /// Which scopes imply which others (empty: none).
    pub scope_hierarchy: ScopeHierarchy,
    /// Checks the bearer tokens.
    pub verifier: Arc<dyn TokenVerifier>,
}

impl AuthOptions {
    /// Protects the MCP server at `resource` (its canonical `http(s)://` URI, no fragment),
    /// whose tokens come from `authorization_server` and are checked by `verifier`.
    pub fn new(
        resource: impl Into<String>,
        authorization_server: impl Into<String>,
        verifier: impl TokenVerifier,
    ) -> Result<AuthOptions, Error> {
        let resource = resource.into();
        metadata::check_resource(&resource)?;
        Ok(AuthOptions {
            resource,
            authorization_servers: vec![authorization_server.into()],
            scopes_supported: Vec::new(),
            required_scopes: Vec::new(),
            scope_hierarchy: ScopeHierarchy::default(),
            verifier: Arc::new(verifier),
        })
    }

    /// Sets the advertised scopes.
    pub fn scopes_supported(
        mut self,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> AuthOptions {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the scopes every request needs.
    pub fn required_scopes(
        mut self,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> AuthOptions {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the scope hierarchy.
    pub fn scope_hierarchy(mut self, hierarchy: ScopeHierarchy) -> AuthOptions {
        self.scope_hierarchy = hierarchy;
        self
    }

    /// The URL of the metadata document: RFC 9728 inserts the well-known segment between the
    /// host and the path of the resource URI.
    pub fn resource_metadata_url(&self) -> String {
        metadata::resource_metadata_url(&self.resource)
    }

    /// The RFC 9728 protected resource metadata document.
    pub fn metadata(&self) -> Value {
        metadata::document(self)
    }

    /// The principal behind the request's bearer token, or the response refusing it: 401 with a
    /// `WWW-Authenticate` challenge pointing at the metadata (no token, or an invalid, expired
    /// or foreign one), 403 `insufficient_scope` (a valid token without
    /// [`AuthOptions::required_scopes`]), 400 (a malformed `Authorization` header), 503 (the
    /// token cannot be checked now). Each carries a JSON-RPC error without id.
    ///
    /// For protecting routes of your own beside the MCP endpoint.
    pub async fn authorize(&self, headers: &HeaderMap) -> Result<Principal, Response> {
        authorize(self, headers).await
    }

    /// The scopes of `required` that `principal` lacks, through the scope hierarchy.
    pub fn missing_scopes(&self, principal: &Principal, required: &[String]) -> Vec<String> {
        self.scope_hierarchy.missing(principal, required)
    }

    /// The 403 `insufficient_scope` answer for an operation that needs every scope of
    /// `needed` (all of them, not only the missing ones: the client asks for them at once).
    pub fn insufficient_scope(&self, needed: &[String]) -> Response {
        challenge::forbidden(self, needed)
    }
}

impl std::fmt::Debug for AuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthOptions")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("required_scopes", &self.required_scopes)
            .field("scope_hierarchy", &self.scope_hierarchy)
            .finish_non_exhaustive()
    }
}

/// The HTTP endpoint's hook: see [`AuthOptions::authorize`].
pub(crate) async fn authorize(
    options: &AuthOptions,
    headers: &HeaderMap,
) -> Result<Principal, Response> {
    let token = match challenge::bearer_token(headers) {
        challenge::Credentials::Bearer(token) => token,
        challenge::Credentials::Missing => return Err(challenge::unauthorized(options, None)),
        challenge::Credentials::Malformed(reason) => {
            return Err(challenge::bad_request(options, reason));
        }
    };
    let principal = match options.verifier.verify(token).await {
        Ok(principal) => principal,
        Err(error) => return Err(challenge::refused(options, &error)),
    };
    if !options.missing_scopes(&principal, &options.required_scopes).is_empty() {
        return Err(challenge::forbidden(options, &options.required_scopes));
    }
    Ok(principal)
}

/// Whether two resource URIs name the same resource: scheme and host compare without case
/// (spec 2026-07-28: servers SHOULD accept uppercase ones), and a lone trailing slash is
/// ignored; everything else compares exactly.
pub(crate) fn same_resource(a: &str, b: &str) -> bool {
    fn canonical(uri: &str) -> String {
        let uri = uri.trim();
        let Some(split) = uri.find("://") else { return uri.to_owned() };
        let rest = &uri[split + 3..];
        let host_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(host_end);
        let path = if path == "/" { "" } else { path };
        format!("{}://{}{path}", uri[..split].to_ascii_lowercase(), authority.to_ascii_lowercase())
    }
    a == b || canonical(a) == canonical(b)
}
