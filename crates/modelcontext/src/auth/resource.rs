//! The resource server's side of `auth` (feature `auth-server`): what protects an HTTP
//! endpoint, and the check of each request's credentials.

use std::sync::Arc;

use axum::response::Response;
use http::HeaderMap;
use serde_json::Value;

use super::{
    DpopPolicy, Principal, ScopeHierarchy, TokenVerifier, VerifyError, challenge, metadata, origin,
};
use crate::Error;

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
    /// How DPoP-bound tokens and their proofs are checked (default [`DpopPolicy::new`]:
    /// accepted beside bearer tokens).
    pub dpop: Arc<DpopPolicy>,
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
            dpop: Arc::new(DpopPolicy::default()),
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

    /// Sets how DPoP is checked (e.g. [`DpopPolicy::required`], server nonces).
    pub fn dpop(mut self, policy: DpopPolicy) -> AuthOptions {
        self.dpop = Arc::new(policy);
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
    /// A DPoP-bound token (`Authorization: DPoP`) needs a proof for `POST` to
    /// [`AuthOptions::resource`]; use [`AuthOptions::authorize_request`] for other routes.
    pub async fn authorize(&self, headers: &HeaderMap) -> Result<Principal, Response> {
        let path = self.resource.parse::<http::Uri>().map(|u| u.path().to_owned());
        let path = path.unwrap_or_else(|_| "/".to_owned());
        authorize(self, &http::Method::POST, &path, headers).await
    }

    /// [`AuthOptions::authorize`] for a request of `method` to `path` on this server: what a
    /// DPoP proof must name (RFC 9449 `htm`, and `htu`, the resource's origin and `path`).
    /// For protecting routes of your own beside the MCP endpoint.
    pub async fn authorize_request(
        &self,
        method: &http::Method,
        path: &str,
        headers: &HeaderMap,
    ) -> Result<Principal, Response> {
        authorize(self, method, path, headers).await
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

/// The HTTP endpoint's hook: see [`AuthOptions::authorize_request`].
async fn authorize(
    options: &AuthOptions,
    method: &http::Method,
    path: &str,
    headers: &HeaderMap,
) -> Result<Principal, Response> {
    let (token, proof) = match challenge::credentials(headers) {
        challenge::Credentials::Bearer(token) => (token, None),
        challenge::Credentials::Dpop { token, proof } => (token, Some(proof)),
        challenge::Credentials::Missing => return Err(challenge::unauthorized(options, None)),
        challenge::Credentials::Malformed(reason) => {
            return Err(challenge::bad_request(options, reason));
        }
    };
    if proof.is_none() && options.dpop.is_required() {
        let error = VerifyError::invalid("This server only accepts DPoP-bound tokens");
        return Err(challenge::unauthorized(options, Some(&error)));
    }
    // The proof first: it costs no call to the authorization server.
    let thumbprint = match proof {
        Some(proof) => {
            let url = request_url(&options.resource, path);
            let checked = options.dpop.check(proof, method.as_str(), &url, token);
            Some(checked.map_err(|refusal| challenge::bad_proof(options, refusal))?)
        }
        None => None,
    };
    let principal = match options.verifier.verify(token).await {
        Ok(principal) => principal,
        Err(error) => return Err(challenge::refused(options, &error)),
    };
    let bound_to = principal.claims.get("cnf").and_then(|c| c.get("jkt")).and_then(Value::as_str);
    let binding = match (bound_to, thumbprint.as_deref()) {
        (None, None) => Ok(()),
        (Some(jkt), Some(thumbprint)) if jkt == thumbprint => Ok(()),
        (Some(_), Some(_)) => Err("The access token is bound to another DPoP key"),
        (Some(_), None) => Err("The access token is DPoP-bound: present it with a DPoP proof"),
        (None, Some(_)) => Err("The access token is not DPoP-bound"),
    };
    if let Err(reason) = binding {
        return Err(challenge::unauthorized(options, Some(&VerifyError::invalid(reason))));
    }
    if !options.missing_scopes(&principal, &options.required_scopes).is_empty() {
        return Err(challenge::forbidden(options, &options.required_scopes));
    }
    Ok(principal)
}

/// The URL a request to `path` reached, as the client named it: the resource's origin (the
/// server may sit behind a proxy that rewrites its own) and the request's path.
fn request_url(resource: &str, path: &str) -> String {
    format!("{}{path}", origin(resource))
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
