//! Who a verified token speaks for, the verifier trait, and the ways a token fails.

use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

/// Checks a bearer token and says whom it speaks for.
///
/// [`JwtVerifier`](super::JwtVerifier) and [`IntrospectionVerifier`](super::IntrospectionVerifier)
/// are ready to use; implement this for anything else (a database of API tokens, say). An
/// implementation must check that the token was issued for this resource (RFC 8707) and is
/// still valid, and must never log the token or forward it anywhere but to the party that
/// issued it.
pub trait TokenVerifier: Send + Sync + 'static {
    /// The principal behind `token`, or why it is refused.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, VerifyError>>;
}

/// The caller a token was issued to, as the verifier found it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Principal {
    /// The resource owner (`sub`), when the token names one.
    pub subject: Option<String>,
    /// The OAuth client the token was issued to (`client_id`, else `azp`).
    pub client_id: Option<String>,
    /// The granted scopes (`scope`, space-separated, or `scp`).
    pub scopes: Vec<String>,
    /// When the token stops being valid (`exp`).
    pub expires_at: Option<SystemTime>,
    /// The audiences the token was issued for (`aud`).
    pub audience: Vec<String>,
    /// Every claim of the token (or of the introspection answer), for application checks.
    pub claims: Map<String, Value>,
}

impl Principal {
    /// Reads the registered claims out of a JWT payload or an RFC 7662 introspection answer.
    pub fn from_claims(claims: Map<String, Value>) -> Principal {
        let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
        Principal {
            subject: text("sub"),
            client_id: text("client_id").or_else(|| text("azp")),
            scopes: scopes_of(&claims),
            expires_at: claims.get("exp").and_then(Value::as_u64).map(seconds_to_time),
            audience: strings(claims.get("aud")),
            claims,
        }
    }

    /// Whether `scope` was granted literally (no hierarchy; see [`ScopeHierarchy`]).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

/// RFC 9068 `scope` (one space-separated string); some servers send `scp` (array or string).
fn scopes_of(claims: &Map<String, Value>) -> Vec<String> {
    match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(s)) => s.split_ascii_whitespace().map(str::to_owned).collect(),
        other => strings(other),
    }
}

/// A string claim or an array of strings, as a list.
fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => {
            items.iter().filter_map(Value::as_str).map(str::to_owned).collect()
        }
        _ => Vec::new(),
    }
}

pub(crate) fn seconds_to_time(seconds: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(seconds)
}

/// Why a token was refused. The message is for logs and the response's description; it never
/// contains the token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    kind: VerifyErrorKind,
    message: String,
    scopes: Vec<String>,
}

/// The class of a [`VerifyError`]; it decides the HTTP answer.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyErrorKind {
    /// Malformed, badly signed, from another issuer, not yet valid, revoked: 401.
    Invalid,
    /// Past its expiry: 401.
    Expired,
    /// Issued for another resource (RFC 8707): 401.
    WrongAudience,
    /// Valid, but lacks scopes the operation needs: 403 `insufficient_scope`.
    InsufficientScope,
    /// The token could not be checked now (the key set or the introspection endpoint is
    /// unreachable): 503, so the client keeps its token and retries.
    Unavailable,
}

impl VerifyError {
    /// An error of `kind` with a description (never the token itself).
    pub fn new(kind: VerifyErrorKind, message: impl Into<String>) -> VerifyError {
        VerifyError { kind, message: message.into(), scopes: Vec::new() }
    }

    /// [`VerifyErrorKind::Invalid`].
    pub fn invalid(message: impl Into<String>) -> VerifyError {
        VerifyError::new(VerifyErrorKind::Invalid, message)
    }

    /// [`VerifyErrorKind::Expired`].
    pub fn expired() -> VerifyError {
        VerifyError::new(VerifyErrorKind::Expired, "The access token expired")
    }

    /// [`VerifyErrorKind::WrongAudience`].
    pub fn wrong_audience() -> VerifyError {
        VerifyError::new(
            VerifyErrorKind::WrongAudience,
            "The access token is not for this resource",
        )
    }

    /// [`VerifyErrorKind::InsufficientScope`], naming every scope the operation needs.
    pub fn insufficient_scope(needed: impl IntoIterator<Item = impl Into<String>>) -> VerifyError {
        let mut error = VerifyError::new(VerifyErrorKind::InsufficientScope, "Insufficient scope");
        error.scopes = needed.into_iter().map(Into::into).collect();
        error
    }

    /// [`VerifyErrorKind::Unavailable`].
    pub fn unavailable(message: impl Into<String>) -> VerifyError {
        VerifyError::new(VerifyErrorKind::Unavailable, message)
    }

    /// The class of this error.
    pub fn kind(&self) -> VerifyErrorKind {
        self.kind
    }

    /// The description.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// For [`VerifyErrorKind::InsufficientScope`]: the scopes the operation needs.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for VerifyError {}

/// Which scopes imply which: the spec (2026-07-28 `basic/authorization`, scope challenge
/// handling) has servers account for hierarchies where a broad scope implies narrower ones.
/// Empty by default: a scope grants only itself.
///
/// ```
/// # use modelcontext::auth::ScopeHierarchy;
/// let h = ScopeHierarchy::new().implies("files", ["files:read", "files:write"]);
/// assert!(h.grants(&["files".to_string()], "files:read"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct ScopeHierarchy {
    implied: HashMap<String, Vec<String>>,
}

impl ScopeHierarchy {
    /// No scope implies another.
    pub fn new() -> ScopeHierarchy {
        ScopeHierarchy::default()
    }

    /// Records that `broad` implies each of `narrower` (transitively).
    pub fn implies(
        mut self,
        broad: impl Into<String>,
        narrower: impl IntoIterator<Item = impl Into<String>>,
    ) -> ScopeHierarchy {
        let entry = self.implied.entry(broad.into()).or_default();
        entry.extend(narrower.into_iter().map(Into::into));
        self
    }

    /// Whether the `granted` scopes include `scope`, directly or through the hierarchy.
    pub fn grants(&self, granted: &[String], scope: &str) -> bool {
        let mut seen: Vec<&str> = Vec::new();
        let mut todo: Vec<&str> = granted.iter().map(String::as_str).collect();
        while let Some(next) = todo.pop() {
            if next == scope {
                return true;
            }
            if seen.contains(&next) {
                continue;
            }
            seen.push(next);
            todo.extend(self.implied.get(next).into_iter().flatten().map(String::as_str));
        }
        false
    }

    /// The scopes of `required` that `principal` lacks, in the order given.
    pub fn missing(&self, principal: &Principal, required: &[String]) -> Vec<String> {
        let lacking = required.iter().filter(|s| !self.grants(&principal.scopes, s));
        lacking.cloned().collect()
    }
}

/// The scopes of `required` that `principal` was not granted (literal match, no hierarchy;
/// [`AuthOptions::missing_scopes`](super::AuthOptions::missing_scopes) applies the options'
/// [`ScopeHierarchy`]).
pub fn missing_scopes(principal: &Principal, required: &[String]) -> Vec<String> {
    ScopeHierarchy::default().missing(principal, required)
}
