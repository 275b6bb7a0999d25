//! OAuth 2.0 Protected Resource Metadata (RFC 9728): the document that tells a client which
//! authorization servers issue tokens for this MCP server, and where it is served.

use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::header::{ACCESS_CONTROL_ALLOW_ORIGIN, CONTENT_TYPE};
use http::{HeaderValue, Uri};
use serde_json::{Map, Value, json};

use super::AuthOptions;
use super::dpop_policy::PROOF_ALGORITHM_NAMES;
use super::fetch::invalid_input;
use crate::Error;

const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// A router serving the metadata document of `options` at `/.well-known/oauth-protected-resource`
/// and at `/.well-known/oauth-protected-resource<endpoint_path>` (the MCP endpoint's path, e.g.
/// `/mcp`), and at the path [`AuthOptions::resource_metadata_url`] names if that differs.
/// Merge it into the application's router beside the endpoint.
pub fn metadata_router(options: &AuthOptions, endpoint_path: &str) -> axum::Router {
    let document = options.metadata();
    let mut paths = vec![WELL_KNOWN.to_owned(), well_known_path(endpoint_path)];
    if let Ok(url) = options.resource_metadata_url().parse::<Uri>() {
        paths.push(url.path().to_owned());
    }
    paths.sort();
    paths.dedup();
    let mut router = axum::Router::new();
    for path in &paths {
        if !routable(path) {
            tracing::warn!(path, "the metadata document cannot be routed at this path");
            continue;
        }
        let document = document.clone();
        router = router.route(path, get(move || serve(document.clone())));
    }
    router
}

async fn serve(document: Value) -> Response {
    let mut response = document.to_string().into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    // Browser-based clients read the document from another origin.
    headers.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    response
}

/// The well-known path for a resource at `path` (RFC 9728 section 3.1).
fn well_known_path(path: &str) -> String {
    let path = path.trim_end_matches('/');
    if path.is_empty() {
        WELL_KNOWN.to_owned()
    } else {
        format!("{WELL_KNOWN}/{}", path.trim_start_matches('/'))
    }
}

/// axum would panic on route syntax (`{..}`, a segment starting with `:` or `*`).
fn routable(path: &str) -> bool {
    !path.contains(['{', '}']) && !path.split('/').any(|s| s.starts_with([':', '*']))
}

/// The metadata URL of `resource`: origin + well-known segment + path (and query).
pub(crate) fn resource_metadata_url(resource: &str) -> String {
    let Ok(uri) = resource.parse::<Uri>() else { return format!("{resource}{WELL_KNOWN}") };
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return format!("{resource}{WELL_KNOWN}");
    };
    let path = well_known_path(uri.path());
    let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
    format!("{scheme}://{authority}{path}{query}")
}

/// The document: `resource`, `authorization_servers`, `scopes_supported` (without
/// `offline_access`, which the spec says not to advertise; omitted when empty), and
/// `bearer_methods_supported` (the header only: tokens in a query string are refused), and
/// the DPoP proof algorithms accepted (`dpop_signing_alg_values_supported`, with
/// `dpop_bound_access_tokens_required` when bearer tokens are refused).
pub(crate) fn document(options: &AuthOptions) -> Value {
    let mut document = Map::new();
    document.insert("resource".into(), json!(options.resource));
    document.insert("authorization_servers".into(), json!(options.authorization_servers));
    let scopes: Vec<&String> =
        options.scopes_supported.iter().filter(|s| *s != "offline_access").collect();
    if !scopes.is_empty() {
        document.insert("scopes_supported".into(), json!(scopes));
    }
    document.insert("bearer_methods_supported".into(), json!(["header"]));
    let algorithms: Vec<&str> = PROOF_ALGORITHM_NAMES.split(' ').collect();
    document.insert("dpop_signing_alg_values_supported".into(), json!(algorithms));
    if options.dpop.is_required() {
        document.insert("dpop_bound_access_tokens_required".into(), json!(true));
    }
    Value::Object(document)
}

/// A resource URI is absolute `http(s)://` with a host and no fragment (RFC 8707 section 2).
pub(crate) fn check_resource(resource: &str) -> Result<(), Error> {
    let problem = if resource.contains('#') {
        Some("it has a fragment")
    } else {
        match resource.parse::<Uri>() {
            Ok(uri)
                if matches!(uri.scheme_str(), Some("http" | "https")) && uri.host().is_some() =>
            {
                None
            }
            _ => Some("expected an absolute http(s):// URI with a host"),
        }
    };
    match problem {
        Some(problem) => Err(invalid_input(format!("resource {resource:?}: {problem}"))),
        None => Ok(()),
    }
}
