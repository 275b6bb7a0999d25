//! Reading the bearer token, and the answers that refuse a request (RFC 6750 section 3, spec
//! 2026-07-28 `basic/authorization` error handling): a `WWW-Authenticate: Bearer` challenge
//! that points at the protected resource metadata, and a JSON-RPC error body without id.

use axum::body::Body;
use axum::response::Response;
use http::header::{AUTHORIZATION, CONTENT_TYPE, HeaderName, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, StatusCode};
use modelcontext_types::{
    INTERNAL_ERROR, INVALID_REQUEST, McpError, Message, Response as RpcResponse,
};

use super::dpop_policy::{PROOF_ALGORITHM_NAMES, ProofRefusal};
use super::{AuthOptions, VerifyError, VerifyErrorKind};

/// What the `Authorization` header holds.
pub(crate) enum Credentials<'a> {
    Bearer(&'a str),
    /// A DPoP-bound token and the request's proof (RFC 9449 section 7.1).
    Dpop {
        token: &'a str,
        proof: &'a str,
    },
    /// No header, or credentials of another scheme: the client has no bearer token yet.
    Missing,
    Malformed(&'static str),
}

/// The token of the request (RFC 6750 section 2.1: `Bearer` is case-insensitive, the token is
/// a token68; RFC 9449: `DPoP` with one `DPoP` proof header). Only the header counts: a token
/// in the query string is never read.
pub(crate) fn credentials(headers: &HeaderMap) -> Credentials<'_> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else { return Credentials::Missing };
    if values.next().is_some() {
        return Credentials::Malformed("More than one Authorization header");
    }
    let Ok(value) = value.to_str() else {
        return Credentials::Malformed("The Authorization header is not visible ASCII");
    };
    let value = value.trim();
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    let dpop = scheme.eq_ignore_ascii_case("dpop");
    if !scheme.eq_ignore_ascii_case("bearer") && !dpop {
        return Credentials::Missing;
    }
    let token = rest.trim_start_matches(' ');
    if token.is_empty() {
        return Credentials::Malformed("The Authorization header has no bearer token");
    }
    if !is_token68(token) {
        return Credentials::Malformed("The bearer token is not a token68");
    }
    if !dpop {
        return Credentials::Bearer(token);
    }
    let mut proofs = headers.get_all(DPOP).iter();
    match (proofs.next().map(HeaderValue::to_str), proofs.next()) {
        (Some(Ok(proof)), None) if !proof.trim().is_empty() => {
            Credentials::Dpop { token, proof: proof.trim() }
        }
        (None, _) => Credentials::Malformed("A DPoP token needs a DPoP proof header"),
        _ => Credentials::Malformed("The request needs exactly one DPoP proof header"),
    }
}

const DPOP: HeaderName = HeaderName::from_static("dpop");
const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

/// `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`
fn is_token68(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    let allowed = |b: u8| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b);
    !body.is_empty() && body.bytes().all(allowed)
}

/// The answer to a token the verifier refused.
pub(crate) fn refused(options: &AuthOptions, error: &VerifyError) -> Response {
    match error.kind() {
        VerifyErrorKind::InsufficientScope => {
            let mut needed = options.required_scopes.clone();
            for scope in error.scopes() {
                if !needed.contains(scope) {
                    needed.push(scope.clone());
                }
            }
            forbidden(options, &needed)
        }
        VerifyErrorKind::Unavailable => unavailable(error),
        _ => unauthorized(options, Some(error)),
    }
}

/// 401: no token (no `error`, RFC 6750 section 3.1), or an invalid one (`invalid_token`).
/// `scope` tells the client what to ask for: the required scopes, else the advertised ones.
pub(crate) fn unauthorized(options: &AuthOptions, error: Option<&VerifyError>) -> Response {
    let mut params = Vec::new();
    if let Some(error) = error {
        params.push(("error", "invalid_token".to_owned()));
        params.push(("error_description", error.message().to_owned()));
    }
    params.push(("resource_metadata", options.resource_metadata_url()));
    let scopes = if options.required_scopes.is_empty() {
        &options.scopes_supported
    } else {
        &options.required_scopes
    };
    if let Some(scope) = scope_param(scopes) {
        params.push(("scope", scope));
    }
    let message = match error {
        Some(error) => format!("Unauthorized: {}", error.message()),
        None => "Unauthorized: a bearer token is required".to_owned(),
    };
    let mut response =
        respond(StatusCode::UNAUTHORIZED, None, McpError::new(INVALID_REQUEST, message));
    // RFC 9449 section 7.1: DPoP is offered beside Bearer (Bearer first: older clients read
    // only the first challenge), or alone when it is required.
    let mut dpop = params.clone();
    dpop.push(("algs", PROOF_ALGORITHM_NAMES.to_owned()));
    let mut challenges = vec![("DPoP", dpop)];
    if !options.dpop.is_required() {
        challenges.insert(0, ("Bearer", params));
    }
    add_challenges(&mut response, &challenges);
    response
}

/// 401 for a refused DPoP proof: `invalid_dpop_proof`, or `use_dpop_nonce` with the nonce
/// to use in `DPoP-Nonce` (RFC 9449 sections 7.1 and 9).
pub(crate) fn bad_proof(options: &AuthOptions, refusal: ProofRefusal) -> Response {
    let (error, reason, nonce) = match refusal {
        ProofRefusal::Invalid(reason) => ("invalid_dpop_proof", reason, None),
        ProofRefusal::UseNonce(nonce) => {
            ("use_dpop_nonce", "The DPoP proof needs the server's nonce".to_owned(), Some(nonce))
        }
    };
    let params = vec![
        ("error", error.to_owned()),
        ("error_description", reason.clone()),
        ("algs", PROOF_ALGORITHM_NAMES.to_owned()),
        ("resource_metadata", options.resource_metadata_url()),
    ];
    let message = format!("Unauthorized: {reason}");
    let mut response =
        respond(StatusCode::UNAUTHORIZED, None, McpError::new(INVALID_REQUEST, message));
    add_challenges(&mut response, &[("DPoP", params)]);
    if let Some(value) = nonce.and_then(|n| HeaderValue::from_str(&n).ok()) {
        response.headers_mut().insert(DPOP_NONCE, value);
    }
    response
}

/// 403 `insufficient_scope`, naming every scope the operation needs in one challenge.
pub(crate) fn forbidden(options: &AuthOptions, needed: &[String]) -> Response {
    let mut params = vec![("error", "insufficient_scope".to_owned())];
    if let Some(scope) = scope_param(needed) {
        params.push(("scope", scope));
    }
    params.push(("resource_metadata", options.resource_metadata_url()));
    let message =
        format!("Forbidden: the access token lacks a required scope ({})", needed.join(" "));
    respond(StatusCode::FORBIDDEN, Some(&params), McpError::new(INVALID_REQUEST, message))
}

/// 400 `invalid_request`: the `Authorization` header could not be read.
pub(crate) fn bad_request(options: &AuthOptions, reason: &str) -> Response {
    let params = [
        ("error", "invalid_request".to_owned()),
        ("error_description", reason.to_owned()),
        ("resource_metadata", options.resource_metadata_url()),
    ];
    respond(StatusCode::BAD_REQUEST, Some(&params), McpError::new(INVALID_REQUEST, reason))
}

/// 503: the token could not be checked; a 401 would make the client throw away a good token.
fn unavailable(error: &VerifyError) -> Response {
    let message = format!("Service unavailable: {}", error.message());
    respond(StatusCode::SERVICE_UNAVAILABLE, None, McpError::new(INTERNAL_ERROR, message))
}

/// Scopes as one `scope` value; `offline_access` is left out (spec 2026-07-28: refresh tokens
/// are not a resource requirement).
fn scope_param(scopes: &[String]) -> Option<String> {
    let scopes: Vec<&str> =
        scopes.iter().map(String::as_str).filter(|s| *s != "offline_access").collect();
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

fn respond(status: StatusCode, challenge: Option<&[(&str, String)]>, error: McpError) -> Response {
    let body = Message::Response(RpcResponse::error(None, error)).encode();
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(params) = challenge {
        add_challenges(&mut response, &[("Bearer", params.to_vec())]);
    }
    response
}

/// One `WWW-Authenticate` header per challenge, in order.
fn add_challenges(response: &mut Response, challenges: &[(&str, Vec<(&str, String)>)]) {
    for (scheme, params) in challenges {
        if let Ok(value) = HeaderValue::from_str(&challenge(scheme, params)) {
            response.headers_mut().append(WWW_AUTHENTICATE, value);
        }
    }
}

/// `Scheme name="value", ...` with each value a quoted-string (RFC 9110 section 5.6.4).
fn challenge(scheme: &str, params: &[(&str, String)]) -> String {
    let quoted = params.iter().map(|(name, value)| {
        let value: String = value
            .chars()
            .filter(|c| *c == ' ' || c.is_ascii_graphic())
            .flat_map(|c| if c == '"' || c == '\\' { vec!['\\', c] } else { vec![c] })
            .collect();
        format!("{name}=\"{value}\"")
    });
    format!("{scheme} {}", quoted.collect::<Vec<_>>().join(", "))
}
