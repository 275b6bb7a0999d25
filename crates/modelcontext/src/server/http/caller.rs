//! Who is calling: what an HTTP request tells its handlers beyond the JSON-RPC message.
//!
//! Every request's headers travel to its handlers (`Context::http_headers`). With the `auth`
//! feature and [`HttpOptions::auth`](super::HttpOptions) set, the bearer token is verified
//! first: the verified `auth::Principal` and its [`PrincipalId`] travel too, a tool's own
//! scopes are checked before it runs, and a handshake-era session only answers the principal
//! that opened it.

use axum::response::Response;
use http::HeaderMap;
use modelcontext_types::{Message, method};

use super::Shared;
use crate::server::{Extensions, PrincipalId};

/// Who sends one HTTP request, as extensions (with `auth`, the verified principal), or the
/// refusal of its credentials. `method` and `path` are what a DPoP proof must name. The
/// headers are not among them: they join the extensions where handlers will see them
/// ([`with_headers`]), as a session's POST after `initialize` does not.
pub(crate) async fn identify(
    shared: &Shared,
    method: &http::Method,
    path: &str,
    headers: &HeaderMap,
) -> Result<Extensions, Response> {
    #[cfg_attr(not(feature = "auth-server"), allow(unused_mut))]
    let mut extensions = Extensions::new();
    #[cfg(feature = "auth-server")]
    if let Some(auth) = &shared.options.auth {
        let principal = auth.authorize_request(method, path, headers).await?;
        extensions.insert(PrincipalId(principal_key(&principal)));
        extensions.insert(principal);
    }
    #[cfg(not(feature = "auth-server"))]
    let _ = (shared, method, path, headers);
    Ok(extensions)
}

/// `extensions` with the request's `headers`, which its handlers read
/// (`Context::http_headers`).
pub(crate) fn with_headers(mut extensions: Extensions, headers: HeaderMap) -> Extensions {
    extensions.insert(headers);
    extensions
}

/// Subject and client together: the same user through another client is another caller.
#[cfg(feature = "auth-server")]
fn principal_key(principal: &crate::auth::Principal) -> String {
    let subject = principal.subject.as_deref().unwrap_or("");
    let client = principal.client_id.as_deref().unwrap_or("");
    format!("{subject}\u{1f}{client}")
}

/// Whether the caller may use a session opened by `owner` (always, without authentication).
pub(crate) fn owns(extensions: &Extensions, owner: Option<&PrincipalId>) -> bool {
    extensions.get::<PrincipalId>() == owner
}

/// Whether the endpoint checks per-tool scopes at all (so a `tools/call` is worth reading for
/// its tool's name before the session parses it).
fn checks_tool_scopes(shared: &Shared) -> bool {
    #[cfg(feature = "auth-server")]
    return shared.options.auth.is_some();
    #[cfg(not(feature = "auth-server"))]
    {
        let _ = shared;
        false
    }
}

/// [`check_tool_scopes`] for every `tools/call` among `messages`, read before a session
/// parses them (the session parses a request under its lock, once it has it).
#[allow(clippy::result_large_err)] // the refusal is the HTTP answer itself, on a cold path
pub(crate) fn check_called_tools<'m>(
    shared: &Shared,
    extensions: &Extensions,
    messages: impl IntoIterator<Item = &'m Message>,
) -> Result<(), Response> {
    if !checks_tool_scopes(shared) {
        return Ok(());
    }
    for tool in messages.into_iter().filter_map(called_tool) {
        check_tool_scopes(shared, extensions, &tool)?;
    }
    Ok(())
}

/// The tool a `tools/call` names, read without parsing the rest of its params (the session
/// parses them once it has the request; scopes are checked before that).
fn called_tool(message: &Message) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Name {
        name: String,
    }
    let Message::Request(request) = message else { return None };
    if request.method != method::TOOLS_CALL {
        return None;
    }
    serde_json::from_str::<Name>(request.params.as_ref()?.get()).ok().map(|n| n.name)
}

/// HTTP 403 `insufficient_scope` when the caller lacks scopes `tool` requires, naming every
/// scope the call needs (spec `basic/authorization`: all of them in one challenge).
#[cfg(feature = "auth-server")]
#[allow(clippy::result_large_err)] // the refusal is the HTTP answer itself, on a cold path
pub(crate) fn check_tool_scopes(
    shared: &Shared,
    extensions: &Extensions,
    tool: &str,
) -> Result<(), Response> {
    let (Some(auth), Some(principal)) =
        (&shared.options.auth, extensions.get::<crate::auth::Principal>())
    else {
        return Ok(());
    };
    let tool_scopes = shared.server.tool_scopes(tool);
    if auth.missing_scopes(principal, &tool_scopes).is_empty() {
        return Ok(());
    }
    let mut needed = auth.required_scopes.clone();
    needed.extend(tool_scopes.iter().filter(|s| !auth.required_scopes.contains(s)).cloned());
    Err(auth.insufficient_scope(&needed))
}

/// Without the `auth` feature there are no scopes to check.
#[cfg(not(feature = "auth-server"))]
#[allow(clippy::result_large_err)] // the refusal is the HTTP answer itself, on a cold path
pub(crate) fn check_tool_scopes(_: &Shared, _: &Extensions, _: &str) -> Result<(), Response> {
    Ok(())
}
