//! The grants: registration, the authorization code grant with PKCE and `iss` checks, the
//! token and refresh requests, and the client credentials grant.

use std::time::{Duration, SystemTime};

use http::HeaderMap;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::discovery::{ServerMetadata, WithoutMetadata, server_metadata, split_url};
use super::http::basic_auth;
use super::{AuthError, ClientAuth, ClientCredentials, OAuthClient, RedirectHandler, StoredTokens};

const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

impl OAuthClient {
    /// The registration to use with this authorization server, in the spec's order:
    /// pre-registered, one made before with this issuer, a Client ID Metadata Document, then
    /// dynamic registration.
    pub(super) async fn registration(
        &self,
        metadata: &ServerMetadata,
        redirect_uri: &str,
    ) -> Result<ClientCredentials, AuthError> {
        if let Some((credentials, issuer)) = &self.pre_registered {
            if issuer.as_ref().is_none_or(|i| *i == metadata.issuer) {
                return Ok(credentials.clone());
            }
        }
        if let Some(known) = self.store.client(&metadata.issuer) {
            return Ok(known);
        }
        if let Some(url) = self.client_metadata_url.as_ref() {
            if metadata.client_id_metadata_document_supported {
                let credentials = ClientCredentials {
                    client_id: url.clone(),
                    client_secret: None,
                    token_endpoint_auth_method: Some("none".into()),
                };
                // Kept like a registration: a later process refreshing the tokens needs the
                // client_id they were issued to, and may not be configured with the URL.
                self.store.save_client(&metadata.issuer, credentials.clone());
                return Ok(credentials);
            }
        }
        let Some(endpoint) = &metadata.registration_endpoint else {
            return Err(AuthError::new(format!(
                "no way to register with {}: no pre-registered credentials, no Client ID \
                 Metadata Document support, no registration endpoint",
                metadata.issuer
            )));
        };
        let method = match &metadata.token_endpoint_auth_methods {
            Some(methods) if methods.iter().any(|m| m == "none") => "none",
            Some(methods) if methods.iter().any(|m| m == "client_secret_basic") => {
                "client_secret_basic"
            }
            Some(methods) if methods.iter().any(|m| m == "client_secret_post") => {
                "client_secret_post"
            }
            _ => "none",
        };
        let request = json!({
            "client_name": self.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": application_type(redirect_uri),
        });
        let answer = self.http.post_json(endpoint, &request).await?;
        let body = answer.json().unwrap_or_default();
        if !answer.status.is_success() {
            return Err(oauth_error("client registration", answer.status.as_u16(), &body));
        }
        let text = |key: &str| body.get(key).and_then(Value::as_str).map(str::to_owned);
        let client_id =
            text("client_id").ok_or_else(|| AuthError::new("the registration has no client_id"))?;
        let credentials = ClientCredentials {
            client_id,
            client_secret: text("client_secret"),
            token_endpoint_auth_method: text("token_endpoint_auth_method"),
        };
        self.store.save_client(&metadata.issuer, credentials.clone());
        Ok(credentials)
    }

    /// The authorization code grant: the user's visit to the authorization endpoint (through
    /// the redirect handler), the checks on the answer, then the token request.
    pub(super) async fn authorization_code_grant(
        &self,
        client: &ClientCredentials,
        metadata: &ServerMetadata,
        redirect_uri: &str,
        handler: &RedirectHandler,
        resource: &str,
        scopes: &[String],
    ) -> Result<StoredTokens, AuthError> {
        let endpoint = metadata.authorization_endpoint.as_deref().ok_or_else(|| {
            AuthError::new(format!("{} has no authorization_endpoint", metadata.issuer))
        })?;
        let s256 =
            metadata.code_challenge_methods.as_ref().is_some_and(|m| m.iter().any(|m| m == "S256"));
        if !s256 {
            return Err(AuthError::new(format!(
                "{} does not advertise PKCE S256 (code_challenge_methods_supported); refusing \
                 to authorize",
                metadata.issuer
            )));
        }
        let verifier = random_token()?;
        let challenge = base64url(&Sha256::digest(verifier.as_bytes()));
        let state = random_token()?;
        let scope = scopes.join(" ");
        let mut params = vec![
            ("response_type", "code"),
            ("client_id", client.client_id.as_str()),
            ("redirect_uri", redirect_uri),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("state", state.as_str()),
            ("resource", resource),
        ];
        if !scope.is_empty() {
            params.push(("scope", scope.as_str()));
        }
        let query: Vec<String> =
            params.iter().map(|(k, v)| format!("{k}={}", crate::auth::form_encode(v))).collect();
        let separator = if endpoint.contains('?') { '&' } else { '?' };
        let url = format!("{endpoint}{separator}{}", query.join("&"));
        let redirect =
            handler(url).await.map_err(|e| AuthError::new(format!("authorization: {e}")))?;
        let answer = query_params(&redirect)?;
        let get = |key: &str| answer.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        // RFC 9207: compared before anything else in the answer is believed, errors included.
        match get("iss") {
            Some(iss) if iss != metadata.issuer => {
                return Err(AuthError::new(format!(
                    "the authorization response's iss {iss:?} is not the issuer {:?}; refusing it",
                    metadata.issuer
                )));
            }
            None if metadata.iss_parameter_supported => {
                return Err(AuthError::new(
                    "the authorization response has no iss, which its server promised; refusing it",
                ));
            }
            _ => {}
        }
        if let Some(error) = get("error") {
            let description = get("error_description").unwrap_or("");
            return Err(AuthError::new(format!("authorization refused: {error} {description}")));
        }
        if !same_secret(get("state"), &state) {
            return Err(AuthError::new("the authorization response's state does not match"));
        }
        let code =
            get("code").ok_or_else(|| AuthError::new("the authorization response has no code"))?;
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier.as_str()),
            ("resource", resource),
        ];
        let scope_field = scope.clone();
        let headers = client_authentication(client, metadata, &mut form);
        let mut tokens = self.token_request(metadata, headers, &form, resource).await?;
        if tokens.scope.is_none() && !scope_field.is_empty() {
            tokens.scope = Some(scope_field);
        }
        Ok(tokens)
    }

    /// Refreshes `tokens` with their own authorization server.
    pub(super) async fn refresh(
        &self,
        server_url: &str,
        tokens: &StoredTokens,
    ) -> Result<String, AuthError> {
        let metadata = tokens_server_metadata(&self.http, tokens).await?;
        self.refresh_with(server_url, tokens, &metadata).await
    }

    pub(super) async fn refresh_with(
        &self,
        server_url: &str,
        tokens: &StoredTokens,
        metadata: &ServerMetadata,
    ) -> Result<String, AuthError> {
        let refresh_token =
            tokens.refresh_token.as_deref().ok_or_else(|| AuthError::new("no refresh token"))?;
        let client = match &self.grant {
            super::Grant::AuthorizationCode { redirect_uri, .. } => {
                self.registration(metadata, redirect_uri).await?
            }
            super::Grant::ClientCredentials { .. }
            | super::Grant::JwtBearer { .. }
            | super::Grant::EnterpriseManaged { .. } => {
                return Err(AuthError::new("no refresh for a machine-to-machine grant"));
            }
        };
        let mut form = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("resource", tokens.resource.as_str()),
        ];
        let headers = client_authentication(&client, metadata, &mut form);
        let mut fresh = self.token_request(metadata, headers, &form, &tokens.resource).await?;
        if fresh.refresh_token.is_none() {
            fresh.refresh_token = tokens.refresh_token.clone();
        }
        if fresh.scope.is_none() {
            fresh.scope = tokens.scope.clone();
        }
        let access = fresh.access_token.clone();
        self.store.save_tokens(server_url, fresh);
        Ok(access)
    }

    /// RFC 7009: asks the tokens' authorization server to revoke them (the refresh token,
    /// which takes its access tokens with it on most servers, then the access token).
    /// `Ok(false)` when the server has no revocation endpoint.
    pub(super) async fn revoke_tokens(&self, tokens: &StoredTokens) -> Result<bool, AuthError> {
        let metadata = tokens_server_metadata(&self.http, tokens).await?;
        let Some(endpoint) = metadata.revocation_endpoint.as_deref() else {
            return Ok(false);
        };
        let client = self.store.client(&metadata.issuer).ok_or_else(|| {
            AuthError::new(format!("no registration with {} to revoke with", metadata.issuer))
        })?;
        let refresh = tokens.refresh_token.as_deref().map(|t| (t, "refresh_token"));
        let access = Some((tokens.access_token.as_str(), "access_token"));
        for (token, hint) in refresh.into_iter().chain(access) {
            let mut form = vec![("token", token), ("token_type_hint", hint)];
            let headers = client_authentication(&client, &metadata, &mut form);
            let answer = self.http.post_form(endpoint, headers, &form).await?;
            // RFC 7009 §2.2: 200 for a token revoked or already invalid.
            if !answer.status.is_success() {
                let body = answer.json().unwrap_or_default();
                return Err(oauth_error("revocation", answer.status.as_u16(), &body));
            }
        }
        Ok(true)
    }

    /// The client credentials grant, authenticated with a secret or a signed JWT assertion.
    pub(super) async fn client_credentials_grant(
        &self,
        client_id: &str,
        auth: &ClientAuth,
        metadata: &ServerMetadata,
        resource: &str,
        scopes: &[String],
    ) -> Result<StoredTokens, AuthError> {
        let secret_client = match auth {
            ClientAuth::Secret(secret) => Some(ClientCredentials {
                client_id: client_id.to_owned(),
                client_secret: Some(secret.clone()),
                token_endpoint_auth_method: None,
            }),
            ClientAuth::PrivateKeyJwt { .. } => None,
        };
        let assertion = match auth {
            ClientAuth::PrivateKeyJwt { private_key_pem, algorithm } => {
                client_assertion(client_id, &metadata.issuer, private_key_pem, algorithm)?
            }
            ClientAuth::Secret(_) => String::new(),
        };
        let scope = scopes.join(" ");
        let mut form = vec![("grant_type", "client_credentials"), ("resource", resource)];
        if !scope.is_empty() {
            form.push(("scope", scope.as_str()));
        }
        let headers = match &secret_client {
            Some(client) => client_authentication(client, metadata, &mut form),
            None => {
                form.push(("client_id", client_id));
                form.push(("client_assertion_type", JWT_BEARER));
                form.push(("client_assertion", assertion.as_str()));
                HeaderMap::new()
            }
        };
        self.token_request(metadata, headers, &form, resource).await
    }

    /// A request to the token endpoint, with a DPoP proof when DPoP is on (retried once with
    /// the server's nonce on `use_dpop_nonce`, RFC 9449 section 8).
    pub(super) async fn token_request(
        &self,
        metadata: &ServerMetadata,
        headers: HeaderMap,
        form: &[(&str, &str)],
        resource: &str,
    ) -> Result<StoredTokens, AuthError> {
        let endpoint = metadata.token_endpoint.as_str();
        let mut nonce_retried = false;
        let (answer, body, proof_key) = loop {
            let mut request_headers = headers.clone();
            let mut proof_key = None;
            if let Some(dpop) = &self.dpop {
                let (key, name, proof) = dpop.token_request_proof(endpoint)?;
                request_headers.insert(name, proof);
                proof_key = Some(key);
            }
            let answer = self.http.post_form(endpoint, request_headers, form).await?;
            let body = answer.json().unwrap_or_default();
            let Some(dpop) = &self.dpop else { break (answer, body, proof_key) };
            dpop.observe(endpoint, &answer.headers);
            let wants_nonce = body.get("error").and_then(Value::as_str) == Some("use_dpop_nonce");
            if !wants_nonce || nonce_retried {
                break (answer, body, proof_key);
            }
            nonce_retried = true;
        };
        if !answer.status.is_success() {
            return Err(oauth_error("token request", answer.status.as_u16(), &body));
        }
        let text = |key: &str| body.get(key).and_then(Value::as_str).map(str::to_owned);
        let access_token = text("access_token")
            .ok_or_else(|| AuthError::new("the token answer has no access_token"))?;
        let token_type = text("token_type").unwrap_or_default();
        if let (Some(dpop), Some(key)) = (&self.dpop, proof_key) {
            if token_type.eq_ignore_ascii_case("dpop") {
                dpop.bind(&access_token, key);
            }
        }
        let expires_at = body
            .get("expires_in")
            .and_then(Value::as_u64)
            .map(|secs| SystemTime::now() + Duration::from_secs(secs));
        Ok(StoredTokens {
            access_token,
            refresh_token: text("refresh_token"),
            expires_at,
            scope: text("scope"),
            issuer: metadata.issuer.clone(),
            resource: resource.to_owned(),
        })
    }
}

/// Adds the client's authentication to a token request: the registered method, else the
/// best the server supports (`client_secret_basic`, then `client_secret_post`), else `none`.
/// The metadata of the server that issued `tokens`. Tokens whose issuer is their resource's
/// own origin came from a server without metadata (before 2025-06-18), whose default
/// endpoints still apply.
async fn tokens_server_metadata(
    http: &super::http::Http,
    tokens: &StoredTokens,
) -> Result<ServerMetadata, AuthError> {
    let own_origin = split_url(&tokens.resource).is_ok_and(|(origin, _)| origin == tokens.issuer);
    let without =
        if own_origin { WithoutMetadata::DefaultEndpoints } else { WithoutMetadata::Refuse };
    server_metadata(http, &tokens.issuer, without).await
}

pub(super) fn client_authentication<'a>(
    client: &'a ClientCredentials,
    metadata: &ServerMetadata,
    form: &mut Vec<(&'a str, &'a str)>,
) -> HeaderMap {
    let supported = |m: &str| {
        metadata.token_endpoint_auth_methods.as_ref().is_none_or(|s| s.iter().any(|x| x == m))
    };
    let method = match (&client.token_endpoint_auth_method, &client.client_secret) {
        (Some(method), _) => method.as_str(),
        (None, Some(_)) if supported("client_secret_basic") => "client_secret_basic",
        (None, Some(_)) if supported("client_secret_post") => "client_secret_post",
        _ => "none",
    };
    match (method, &client.client_secret) {
        ("client_secret_basic", Some(secret)) => basic_auth(&client.client_id, secret),
        ("client_secret_post", Some(secret)) => {
            form.push(("client_id", &client.client_id));
            form.push(("client_secret", secret));
            HeaderMap::new()
        }
        _ => {
            form.push(("client_id", &client.client_id));
            HeaderMap::new()
        }
    }
}

/// `native` for loopback and custom-scheme redirects (CLIs, desktop apps), `web` otherwise.
fn application_type(redirect_uri: &str) -> &'static str {
    let host = redirect_uri.parse::<http::Uri>().ok().and_then(|u| u.host().map(str::to_owned));
    match host.as_deref() {
        Some("localhost" | "127.0.0.1" | "[::1]") | None => "native",
        Some(_) if !redirect_uri.starts_with("https://") => "native",
        Some(_) => "web",
    }
}

pub(super) fn oauth_error(
    what: &str,
    status: u16,
    body: &serde_json::Map<String, Value>,
) -> AuthError {
    let error = body.get("error").and_then(Value::as_str).unwrap_or("");
    let description = body.get("error_description").and_then(Value::as_str).unwrap_or("");
    AuthError::new(
        format!("{what} failed: HTTP {status} {error} {description}").trim_end().to_owned(),
    )
}

/// 32 random bytes, base64url: a PKCE verifier (43 characters) or a `state`.
fn random_token() -> Result<String, AuthError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| AuthError::new(format!("no randomness: {e}")))?;
    Ok(base64url(&bytes))
}

/// Whether the `state` that came back is ours, in a time that does not say how much of a
/// guess matched (a host's redirect endpoint may be reachable by others).
fn same_secret(presented: Option<&str>, ours: &str) -> bool {
    use subtle::ConstantTimeEq;
    presented.is_some_and(|presented| presented.as_bytes().ct_eq(ours.as_bytes()).into())
}

fn base64url(bytes: &[u8]) -> String {
    crate::base64::encode_url(bytes)
}

/// The query parameters of a URL, decoded as a form (`+` is a space); a malformed `%` escape
/// refuses the whole answer.
fn query_params(url: &str) -> Result<Vec<(String, String)>, AuthError> {
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
    let query = query.split('#').next().unwrap_or("");
    let decode = |text: &str| {
        // Checked as it came, so an error shows the escape as sent; then `+` is a space.
        let decoded = modelcontext_types::percent::decode(text.as_bytes())
            .and_then(|_| modelcontext_types::percent::decode(text.replace('+', " ").as_bytes()));
        decoded.map_err(|e| AuthError::new(format!("the authorization response's query: {e}")))
    };
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            Ok((decode(k)?, decode(v)?))
        })
        .collect()
}

/// An RFC 7523 client assertion: `iss` = `sub` = the client id, `aud` = the issuer.
fn client_assertion(
    client_id: &str,
    issuer: &str,
    pem: &str,
    algorithm: &str,
) -> Result<String, AuthError> {
    if algorithm != "ES256" {
        return Err(AuthError::new(format!(
            "unsupported signing algorithm {algorithm} (only ES256)"
        )));
    }
    let key = crate::auth::dpop::p256_key_from_pem(pem, "the private key")?;
    let now = crate::auth::now_seconds();
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": issuer,
        "iat": now,
        "exp": now + 300,
        "jti": random_token()?,
    });
    let header = json!({ "typ": "JWT", "alg": "ES256" });
    Ok(crate::auth::dpop::sign_es256(&key, &header, &claims))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_decode() {
        let params =
            query_params("http://localhost:3000/cb?code=a%2Fb&state=x+y&iss=http%3A%2F%2Fh")
                .expect("well formed");
        assert_eq!(params[0], ("code".into(), "a/b".into()));
        assert_eq!(params[1], ("state".into(), "x y".into()));
        assert_eq!(params[2], ("iss".into(), "http://h".into()));
        assert_eq!(
            query_params("http://localhost:3000/cb?code=%2B1%2b&state=a%20b").expect("decoded"),
            [("code".into(), "+1+".into()), ("state".into(), "a b".into())]
        );
    }

    #[test]
    fn a_malformed_escape_refuses_the_answer() {
        let error = query_params("http://localhost:3000/cb?code=%+1&state=s").expect_err("%+1");
        assert_eq!(
            error.to_string(),
            r#"the authorization response's query: malformed percent-escape "%+1""#
        );
    }

    #[test]
    fn only_our_exact_state_is_accepted() {
        let ours = "pQ3-x_9aZ";
        assert!(same_secret(Some("pQ3-x_9aZ"), ours));
        for other in [None, Some(""), Some("pQ3-x_9a"), Some("pQ3-x_9aZZ"), Some("pQ3-x_9aY")] {
            assert!(!same_secret(other, ours), "{other:?}");
        }
    }

    #[test]
    fn pkce_matches_rfc7636_appendix_b() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(
            base64url(&Sha256::digest(verifier.as_bytes())),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}
