//! Authorization over HTTP (OAuth 2.1, spec 2026-07-28 `basic/authorization`), in two halves
//! that can be had apart: feature `auth-server` for an MCP server as a resource server,
//! feature `auth-client` for a client that gets tokens (feature `auth` is both).
//!
//! Resource server (`auth-server`):
//! - [`AuthOptions`]: the resource's identity (its canonical URI), its authorization servers,
//!   its scopes, and the [`TokenVerifier`] that checks bearer tokens.
//! - [`JwtVerifier`] (JWT access tokens, keys from the issuer's JWKS) and
//!   [`IntrospectionVerifier`] (opaque tokens, RFC 7662) are ready; implement [`TokenVerifier`]
//!   for anything else.
//! - [`metadata_router`] serves the RFC 9728 protected resource metadata that tells clients
//!   where to get tokens; [`AuthOptions::authorize`] answers a request without a usable token
//!   with the 401 / 403 / 400 challenge the spec prescribes.
//! - DPoP (RFC 9449): a token bound to a client key (`cnf.jkt`) is accepted with
//!   `Authorization: DPoP` and a valid proof of that key for this request; [`DpopPolicy`]
//!   (in [`AuthOptions::dpop`]) sets the proof window, server nonces, the replay cache, and
//!   whether bearer tokens are refused. A bound token sent as a bearer token, a proof replayed,
//!   made for another method, URL or token, or by another key, are refused with a
//!   `WWW-Authenticate: DPoP` challenge.
//!
//! Client (`auth-client`):
//! - [`client`]: an OAuth 2.1 client that gets tokens for the HTTP client transport
//!   ([`client::OAuthClient`]), with DPoP ([`DpopKey`]), workload identity federation and
//!   enterprise-managed authorization. It signs with ES256 only (`p256`), and links no RSA code.
//!
//! Tokens are only read from the `Authorization` header (`Bearer` or `DPoP`, never the query
//! string), are never logged, and are never passed on to anyone but their issuer's
//! introspection endpoint.
//! Over stdio there is no authorization: the spec has stdio servers take credentials from
//! their environment.

use std::time::{SystemTime, UNIX_EPOCH};

#[cfg(feature = "auth-server")]
mod challenge;
#[cfg(feature = "auth-client")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth-client")))]
pub mod client;
mod dpop;
#[cfg(feature = "auth-server")]
mod dpop_policy;
#[cfg(feature = "auth-server")]
mod fetch;
#[cfg(feature = "auth-server")]
mod introspection;
#[cfg(feature = "auth-server")]
mod jwt;
#[cfg(feature = "auth-server")]
mod metadata;
#[cfg(feature = "auth-server")]
mod principal;
#[cfg(feature = "auth-server")]
mod resource;

#[cfg(feature = "auth-client")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth-client")))]
pub use dpop::DpopKey;
#[cfg(feature = "auth-server")]
pub(crate) use resource::same_resource;
#[cfg(feature = "auth-server")]
pub use {
    dpop_policy::DpopPolicy,
    introspection::IntrospectionVerifier,
    jwt::JwtVerifier,
    metadata::metadata_router,
    principal::{
        Principal, ScopeHierarchy, TokenVerifier, VerifyError, VerifyErrorKind, missing_scopes,
    },
    resource::AuthOptions,
};

/// `scheme://authority` of a URL.
pub(crate) fn origin(url: &str) -> &str {
    let split = url.find("://").map_or(0, |i| i + 3);
    let end = url[split..].find(['/', '?', '#']).map_or(url.len(), |i| split + i);
    &url[..end]
}

/// Seconds since the Unix epoch (`iat`, `exp`), 0 on a clock before it.
pub(crate) fn now_seconds() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `application/x-www-form-urlencoded` encoding of one value (RFC 6749 appendix B).
pub(crate) fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(char::from(byte));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}
