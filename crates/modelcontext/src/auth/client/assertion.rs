//! The grants built on assertions: the RFC 7523 JWT bearer grant (workload identity
//! federation) and enterprise-managed authorization (an RFC 8693 token exchange at the
//! enterprise identity provider for an ID-JAG, then the JWT bearer grant with it).

use http::HeaderMap;
use serde_json::Value;

use super::discovery::ServerMetadata;
use super::flow::{client_authentication, oauth_error};
use super::http::basic_auth;
use super::{AssertionSource, AuthError, ClientCredentials, OAuthClient, StoredTokens};

/// RFC 7523 section 2.1.
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// RFC 8693 section 2.1.
const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The Identity Assertion JWT Authorization Grant's token type.
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// RFC 8693 section 3: an OpenID Connect ID token.
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

/// The enterprise identity provider of [`OAuthClient::enterprise_managed`]: where the user's
/// identity assertion is exchanged for an ID-JAG, and how this client authenticates there.
#[derive(Clone)]
pub struct IdentityProvider {
    /// The IdP's token endpoint.
    pub token_endpoint: String,
    /// This client's `client_id` at the IdP (the one its single sign-on uses).
    pub client_id: String,
    /// Its secret there, if the IdP authenticates clients (sent as HTTP Basic).
    pub client_secret: Option<String>,
    /// The type of the identity assertion (default
    /// `urn:ietf:params:oauth:token-type:id_token`; `...:saml2` for a SAML assertion).
    pub subject_token_type: String,
}

impl IdentityProvider {
    /// The IdP whose token endpoint is `token_endpoint`, where this client is `client_id`.
    pub fn new(
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
    ) -> IdentityProvider {
        IdentityProvider {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
            subject_token_type: ID_TOKEN.to_owned(),
        }
    }

    /// Authenticates at the IdP with `secret`.
    pub fn client_secret(mut self, secret: impl Into<String>) -> IdentityProvider {
        self.client_secret = Some(secret.into());
        self
    }
}

impl std::fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("subject_token_type", &self.subject_token_type)
            .finish_non_exhaustive()
    }
}

type EnterpriseGrant<'a> = (&'a IdentityProvider, &'a ClientCredentials, &'a AssertionSource);

impl OAuthClient {
    /// RFC 7523 JWT bearer grant with the workload's assertion, as public client `client_id`.
    pub(super) async fn jwt_bearer_grant(
        &self,
        client_id: &str,
        assertion: &AssertionSource,
        metadata: &ServerMetadata,
        resource: &str,
        scopes: &[String],
    ) -> Result<StoredTokens, AuthError> {
        let assertion =
            assertion().await.map_err(|e| AuthError::new(format!("no workload assertion: {e}")))?;
        let scope = scopes.join(" ");
        let mut form = vec![
            ("grant_type", JWT_BEARER_GRANT),
            ("assertion", assertion.as_str()),
            ("client_id", client_id),
            ("resource", resource),
        ];
        if !scope.is_empty() {
            form.push(("scope", scope.as_str()));
        }
        self.token_request(metadata, HeaderMap::new(), &form, resource).await
    }

    /// Enterprise-managed authorization: the identity assertion for an ID-JAG at the IdP, then
    /// the ID-JAG as a JWT bearer grant at the MCP server's authorization server.
    pub(super) async fn enterprise_grant(
        &self,
        (idp, client, identity_assertion): EnterpriseGrant<'_>,
        metadata: &ServerMetadata,
        resource: &str,
        scopes: &[String],
    ) -> Result<StoredTokens, AuthError> {
        let subject = identity_assertion()
            .await
            .map_err(|e| AuthError::new(format!("no identity assertion: {e}")))?;
        let id_jag = self.exchange_for_id_jag(idp, &subject, metadata, resource, scopes).await?;
        let scope = scopes.join(" ");
        let mut form = vec![
            ("grant_type", JWT_BEARER_GRANT),
            ("assertion", id_jag.as_str()),
            ("resource", resource),
        ];
        if !scope.is_empty() {
            form.push(("scope", scope.as_str()));
        }
        let headers = client_authentication(client, metadata, &mut form);
        self.token_request(metadata, headers, &form, resource).await
    }

    /// RFC 8693 token exchange at the IdP: the ID-JAG for this authorization server
    /// (`audience`, its issuer) and MCP server (`resource`).
    async fn exchange_for_id_jag(
        &self,
        idp: &IdentityProvider,
        subject: &str,
        metadata: &ServerMetadata,
        resource: &str,
        scopes: &[String],
    ) -> Result<String, AuthError> {
        let scope = scopes.join(" ");
        let mut form = vec![
            ("grant_type", TOKEN_EXCHANGE_GRANT),
            ("requested_token_type", ID_JAG),
            ("audience", metadata.issuer.as_str()),
            ("resource", resource),
            ("subject_token", subject),
            ("subject_token_type", idp.subject_token_type.as_str()),
        ];
        if !scope.is_empty() {
            form.push(("scope", scope.as_str()));
        }
        let headers = match &idp.client_secret {
            Some(secret) => basic_auth(&idp.client_id, secret),
            None => {
                form.push(("client_id", idp.client_id.as_str()));
                HeaderMap::new()
            }
        };
        let answer = self.http.post_form(&idp.token_endpoint, headers, &form).await?;
        let body = answer.json().unwrap_or_default();
        if !answer.status.is_success() {
            return Err(oauth_error("token exchange", answer.status.as_u16(), &body));
        }
        let issued = body.get("issued_token_type").and_then(Value::as_str);
        if issued != Some(ID_JAG) {
            return Err(AuthError::new(format!(
                "the identity provider issued {} instead of an ID-JAG",
                issued.unwrap_or("no issued_token_type")
            )));
        }
        body.get("access_token")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| AuthError::new("the token exchange answer has no access_token"))
    }
}
