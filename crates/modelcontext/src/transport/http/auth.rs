//! OAuth on the client transport (feature `auth-client`): every request carries the provider's
//! token, presented as the provider says (`Bearer`, or `DPoP` with a fresh proof); a 401, or a 403 `insufficient_scope`, asks the provider for a new token and
//! sends the request again, at most [`AuthProvider::max_attempts`] times.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{HeaderMap, WWW_AUTHENTICATE};
use http::{Method, StatusCode};
use modelcontext_types::Response;

use super::{Body, HttpTransport, Shared};
use crate::auth::client::{AuthProvider, BearerChallenge, Challenge};

// Listed on `HttpTransport`'s page, which needs only `http`.
#[cfg_attr(docsrs, doc(cfg(feature = "auth-client")))]
impl HttpTransport {
    /// Authorizes every request with `provider` (e.g. an
    /// [`OAuthClient`](crate::auth::client::OAuthClient)), which is asked for a new token when
    /// the server refuses one.
    pub fn auth(self, provider: impl AuthProvider) -> HttpTransport {
        self.auth_provider(Arc::new(provider))
    }

    /// [`HttpTransport::auth`] with a shared provider.
    pub fn auth_provider(mut self, provider: Arc<dyn AuthProvider>) -> HttpTransport {
        self.auth = Some(provider);
        self
    }
}

impl Shared {
    pub(super) async fn send_authorized(
        &self,
        provider: &dyn AuthProvider,
        method: Method,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<http::Response<Body>, String> {
        let url = self.config.url.to_string();
        let mut token = provider.access_token(&url).await;
        let mut attempts = 0;
        loop {
            let mut request_headers = headers.clone();
            if let Some(token) = token.as_deref() {
                // A fresh set per attempt: a DPoP proof is never sent twice.
                let presented = provider.authorization(method.as_str(), &url, token);
                request_headers.extend(presented.map_err(|e| e.to_string())?);
            }
            let answer = self.send_once(method.clone(), request_headers, body.clone()).await?;
            provider.observe_response(&url, answer.headers());
            let www_authenticate = answer
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            if !is_challenge(answer.status(), www_authenticate.as_deref())
                || attempts >= provider.max_attempts()
            {
                return Ok(answer);
            }
            attempts += 1;
            let challenge = Challenge {
                server_url: url.clone(),
                status: answer.status().as_u16(),
                www_authenticate,
                rejected_token: token.clone(),
            };
            match provider.on_challenge(&challenge).await {
                Ok(fresh) => {
                    self.state().auth_failure = None;
                    token = Some(fresh);
                }
                Err(err) => {
                    tracing::warn!(%err, "could not obtain an access token");
                    self.state().auth_failure = Some(err.to_string());
                    return Ok(answer);
                }
            }
        }
    }
}

impl Shared {
    /// [`Shared::explain_refusal`] on a refusal's JSON-RPC error.
    pub(super) fn explain_refused_response(
        &self,
        status: StatusCode,
        mut response: Response,
    ) -> Response {
        if let Err(error) = &mut response.result {
            self.explain_refusal(status, &mut error.message);
        }
        response
    }

    /// Adds why authorization failed to the error of a request left refused (401 / 403).
    pub(super) fn explain_refusal(&self, status: StatusCode, message: &mut String) {
        if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            if let Some(reason) = self.state().auth_failure.clone() {
                message.push_str(&format!(" (authorization failed: {reason})"));
            }
        }
    }
}

/// 401, or 403 whose challenge says `insufficient_scope` (other 403s are not about tokens).
fn is_challenge(status: StatusCode, www_authenticate: Option<&str>) -> bool {
    match status {
        StatusCode::UNAUTHORIZED => true,
        StatusCode::FORBIDDEN => www_authenticate
            .and_then(BearerChallenge::parse)
            .is_some_and(|c| c.error.as_deref() == Some("insufficient_scope")),
        _ => false,
    }
}
