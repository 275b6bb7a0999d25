//! [`IntrospectionVerifier`]: opaque tokens checked by asking the authorization server
//! (RFC 7662), authenticated with this resource server's own client credentials.

use std::time::Duration;

use futures_util::future::BoxFuture;
use http::StatusCode;
use serde_json::Value;

use super::fetch::{Fetcher, check_url};
use super::{Principal, TokenVerifier, VerifyError, same_resource};
use super::{form_encode, now_seconds};
use crate::Error;

/// Verifies tokens through an RFC 7662 introspection endpoint, authenticating with HTTP Basic
/// client credentials. An answer counts when it is `active`, not expired or not yet valid, from
/// the expected issuer (if set) and for this resource (`aud`, RFC 8707). Answers are not
/// cached: every request asks.
///
/// ```no_run
/// # fn f() -> Result<(), modelcontext::Error> {
/// use modelcontext::auth::IntrospectionVerifier;
/// let verifier = IntrospectionVerifier::new(
///     "http://127.0.0.1:9000/introspect", "mcp-server", "its-secret", "http://127.0.0.1:8000/mcp",
/// )?;
/// # Ok(()) }
/// ```
pub struct IntrospectionVerifier {
    endpoint: String,
    /// The `Authorization: Basic ..` value; never printed.
    credentials: String,
    audiences: Vec<String>,
    issuer: Option<String>,
    leeway: Duration,
    accept_missing_audience: bool,
    fetcher: Fetcher,
}

impl IntrospectionVerifier {
    /// Asks `endpoint` as client `client_id` with `client_secret`; tokens must be for the
    /// resource `audience` (the canonical URI of this MCP server).
    pub fn new(
        endpoint: impl Into<String>,
        client_id: &str,
        client_secret: &str,
        audience: impl Into<String>,
    ) -> Result<IntrospectionVerifier, Error> {
        let endpoint = endpoint.into();
        check_url(&endpoint, "introspection endpoint")?;
        // RFC 6749 section 2.3.1: each part is form-encoded before the Basic encoding.
        let pair = format!("{}:{}", form_encode(client_id), form_encode(client_secret));
        Ok(IntrospectionVerifier {
            endpoint,
            credentials: format!("Basic {}", crate::base64::encode(pair.as_bytes())),
            audiences: vec![audience.into()],
            issuer: None,
            leeway: Duration::from_secs(30),
            accept_missing_audience: false,
            fetcher: Fetcher::default(),
        })
    }

    /// Fetches through `client` (a private CA, proxies, your own service) instead of a
    /// default [`HttpClient`](crate::net::HttpClient).
    pub fn http_client(mut self, client: crate::net::HttpClient) -> IntrospectionVerifier {
        self.fetcher = Fetcher::with_client(client);
        self
    }

    /// Also accepts tokens whose `aud` is `audience` (an alias of this resource).
    pub fn audience(mut self, audience: impl Into<String>) -> IntrospectionVerifier {
        self.audiences.push(audience.into());
        self
    }

    /// Requires the answer's `iss` to be `issuer`.
    pub fn issuer(mut self, issuer: impl Into<String>) -> IntrospectionVerifier {
        self.issuer = Some(issuer.into());
        self
    }

    /// Clock skew allowed on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> IntrospectionVerifier {
        self.leeway = leeway;
        self
    }

    /// Accepts answers without `aud`. Only for an authorization server that binds every token
    /// it issues to this resource by other means: otherwise a token issued for another service
    /// would be accepted here.
    pub fn accept_missing_audience(mut self) -> IntrospectionVerifier {
        self.accept_missing_audience = true;
        self
    }

    async fn check(&self, token: &str) -> Result<Principal, VerifyError> {
        let form = format!("token={}&token_type_hint=access_token", form_encode(token));
        let answer = self.fetcher.post_form(&self.endpoint, &self.credentials, form).await;
        let answer = answer.map_err(|reason| {
            tracing::warn!(%reason, "token introspection failed");
            unavailable()
        })?;
        if answer.status != StatusCode::OK {
            tracing::warn!(status = %answer.status, "the introspection endpoint refused us");
            return Err(unavailable());
        }
        if answer.body.get("active") != Some(&Value::Bool(true)) {
            return Err(VerifyError::invalid("The access token is not active"));
        }
        self.judge(Principal::from_claims(answer.body))
    }

    fn judge(&self, principal: Principal) -> Result<Principal, VerifyError> {
        let now = now_seconds();
        let leeway = self.leeway.as_secs();
        let number = |name: &str| principal.claims.get(name).and_then(Value::as_u64);
        if number("exp").is_some_and(|exp| exp.saturating_add(leeway) < now) {
            return Err(VerifyError::expired());
        }
        if number("nbf").is_some_and(|nbf| nbf > now.saturating_add(leeway)) {
            return Err(VerifyError::invalid("The access token is not valid yet"));
        }
        if let Some(issuer) = &self.issuer {
            if principal.claims.get("iss").and_then(Value::as_str) != Some(issuer) {
                return Err(VerifyError::invalid("The access token is from another issuer"));
            }
        }
        let ours = principal
            .audience
            .iter()
            .any(|aud| self.audiences.iter().any(|mine| same_resource(aud, mine)));
        let unbound = principal.audience.is_empty() && self.accept_missing_audience;
        if ours || unbound { Ok(principal) } else { Err(VerifyError::wrong_audience()) }
    }
}

fn unavailable() -> VerifyError {
    VerifyError::unavailable("The access token cannot be introspected now")
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, VerifyError>> {
        Box::pin(self.check(token))
    }
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.endpoint)
            .field("audiences", &self.audiences)
            .field("issuer", &self.issuer)
            .field("leeway", &self.leeway)
            .finish_non_exhaustive()
    }
}
