//! The OAuth 2.1 client side of MCP authorization (spec 2026-07-28 `basic/authorization`):
//! how an HTTP client gets the access tokens a protected server asks for.
//!
//! The HTTP client transport sends `Authorization: Bearer` from an [`AuthProvider`] on every
//! request; when the server answers 401, or 403 `insufficient_scope`, it hands the challenge to
//! the provider and retries with the token it gets back (a bounded number of times).
//! [`OAuthClient`] is the ready provider:
//!
//! - discovery: the challenge's `resource_metadata`, else the RFC 9728 well-known URIs (path
//!   form, then root); the authorization server's RFC 8414 / OpenID Connect metadata in the
//!   spec's order, refused unless its `issuer` is the one the URL was built from; a server
//!   that publishes neither (the 2025-03-26 revision) is authorized at `/authorize`, `/token`
//!   and `/register` on its own origin, as that revision says;
//! - the authorization code grant with PKCE S256 (refused when the server does not advertise
//!   it), `state`, RFC 8707 `resource` in both requests, RFC 9207 `iss` checks; the user's
//!   part (a browser) is a [`RedirectHandler`] that takes the authorization URL and returns
//!   the URL the server redirected to;
//! - scopes: the challenge's, else the resource's `scopes_supported`, else none; step-up
//!   requests the union with what was asked before; `offline_access` when the authorization
//!   server offers it; refresh tokens;
//! - registration: pre-registered credentials, a Client ID Metadata Document URL, or dynamic
//!   registration (`application_type: native`), kept per authorization server (a new server
//!   means a new registration); token endpoint authentication `client_secret_basic`,
//!   `client_secret_post` or `none`;
//! - the client credentials grant (machine to machine) with a secret or a `private_key_jwt`
//!   assertion (ES256);
//! - workload identity federation ([`OAuthClient::jwt_bearer`]): the RFC 7523 JWT bearer grant
//!   with an assertion the platform issues the workload (a Kubernetes service account token,
//!   a cloud instance identity), fetched anew for every grant;
//! - enterprise-managed authorization ([`OAuthClient::enterprise_managed`], MCP extension
//!   `io.modelcontextprotocol/enterprise-managed-authorization`): the user's identity assertion
//!   from single sign-on is exchanged at the enterprise identity provider (RFC 8693) for an
//!   ID-JAG, which the MCP server's authorization server takes as a JWT bearer grant;
//! - DPoP (RFC 9449, [`OAuthClient::dpop`]): tokens bound to the client's key, a fresh proof on
//!   every token request and every MCP request, the servers' nonces kept and retried with
//!   (`use_dpop_nonce`), and [key rotation](OAuthClient::rotate_dpop_key);
//! - where tokens and registrations are kept: a [`TokenStore`], in memory by default
//!   ([`MemoryTokenStore`]) or in a private JSON file a later process reads
//!   ([`FileTokenStore`], what the `mcp` command uses).
//!
//! ```no_run
//! # async fn run() -> Result<(), modelcontext::Error> {
//! use modelcontext::auth::client::OAuthClient;
//! use modelcontext::transport::http::HttpTransport;
//! let oauth = OAuthClient::authorization_code("my-app", "http://127.0.0.1:8765/callback", |url| async move {
//!     println!("open {url} and paste the URL you were redirected to");
//!     let mut line = String::new();
//!     std::io::stdin().read_line(&mut line).map_err(|e| e.to_string())?;
//!     Ok(line.trim().to_owned())
//! });
//! let transport = HttpTransport::new("http://127.0.0.1:8000/mcp")?.auth(oauth);
//! let client = modelcontext::Client::connect(transport).await?;
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use ::http::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use futures_util::future::BoxFuture;

use crate::auth::DpopKey;

mod assertion;
mod discovery;
mod dpop;
mod file_store;
mod flow;
mod http;

pub use assertion::IdentityProvider;
pub use discovery::BearerChallenge;
use discovery::WithoutMetadata;
pub use file_store::FileTokenStore;

/// Why a token could not be obtained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthError(String);

impl AuthError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> AuthError {
        AuthError(message.into())
    }
}

impl std::fmt::Display for AuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AuthError {}

impl From<String> for AuthError {
    fn from(message: String) -> AuthError {
        AuthError(message)
    }
}

/// A server's refusal, as the transport saw it.
#[derive(Clone, Debug)]
pub struct Challenge {
    /// The MCP endpoint the request went to.
    pub server_url: String,
    /// 401, or 403 (`insufficient_scope`).
    pub status: u16,
    /// The `WWW-Authenticate` header, if any.
    pub www_authenticate: Option<String>,
    /// The token the refused request carried.
    pub rejected_token: Option<String>,
}

/// Where the HTTP client transport gets its bearer tokens.
pub trait AuthProvider: Send + Sync + 'static {
    /// The token to send to `server_url` now, if there is one.
    fn access_token<'a>(&'a self, server_url: &'a str) -> BoxFuture<'a, Option<String>>;
    /// The server refused a request: a new token to retry with, or why there is none.
    fn on_challenge<'a>(
        &'a self,
        challenge: &'a Challenge,
    ) -> BoxFuture<'a, Result<String, AuthError>>;
    /// How many times one request may be re-authorized before its refusal is final.
    fn max_attempts(&self) -> usize {
        DEFAULT_MAX_AUTH_ATTEMPTS
    }
    /// The headers presenting `token` on a request of `method` to `url`:
    /// `Authorization: Bearer` by default; a DPoP client sends `Authorization: DPoP` and a
    /// fresh proof instead.
    fn authorization(&self, method: &str, url: &str, token: &str) -> Result<HeaderMap, AuthError> {
        let _ = (method, url);
        Ok(bearer_headers(token))
    }
    /// Sees the headers of every answer of the server at `server_url` (a DPoP client keeps
    /// the server's `DPoP-Nonce`). Does nothing by default.
    fn observe_response(&self, server_url: &str, headers: &HeaderMap) {
        let _ = (server_url, headers);
    }
}

/// `Authorization: Bearer <token>`, marked sensitive (empty if the token is not a header value).
pub fn bearer_headers(token: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Ok(mut value) = HeaderValue::from_str(&format!("Bearer {token}")) {
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    headers
}

/// A client registration with one authorization server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientCredentials {
    /// The `client_id`.
    pub client_id: String,
    /// The secret, for confidential clients.
    pub client_secret: Option<String>,
    /// `client_secret_basic`, `client_secret_post` or `none`; chosen from the server's
    /// metadata when absent.
    pub token_endpoint_auth_method: Option<String>,
}

/// The tokens for one MCP server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredTokens {
    /// The bearer token.
    pub access_token: String,
    /// The refresh token, if one was issued.
    pub refresh_token: Option<String>,
    /// When the access token expires, if the server said.
    pub expires_at: Option<SystemTime>,
    /// The scopes asked for (space-separated).
    pub scope: Option<String>,
    /// The authorization server that issued them.
    pub issuer: String,
    /// The `resource` they were issued for.
    pub resource: String,
}

impl StoredTokens {
    fn expired(&self) -> bool {
        let margin = Duration::from_secs(30);
        self.expires_at.is_some_and(|at| at <= SystemTime::now() + margin)
    }
}

/// Keeps tokens (per MCP server URL) and client registrations (per authorization server
/// issuer). [`MemoryTokenStore`] is the default; [`FileTokenStore`] keeps them in a file
/// for later processes; implement it to persist them elsewhere.
pub trait TokenStore: Send + Sync + 'static {
    /// The tokens for the MCP server at `server_url`.
    fn tokens(&self, server_url: &str) -> Option<StoredTokens>;
    /// Keeps the tokens for the MCP server at `server_url`.
    fn save_tokens(&self, server_url: &str, tokens: StoredTokens);
    /// This client's registration with the authorization server `issuer`.
    fn client(&self, issuer: &str) -> Option<ClientCredentials>;
    /// Keeps this client's registration with the authorization server `issuer`.
    fn save_client(&self, issuer: &str, client: ClientCredentials);
}

/// A [`TokenStore`] in memory: everything is forgotten with the process.
#[derive(Default)]
pub struct MemoryTokenStore {
    tokens: Mutex<HashMap<String, StoredTokens>>,
    clients: Mutex<HashMap<String, ClientCredentials>>,
}

impl TokenStore for MemoryTokenStore {
    fn tokens(&self, server_url: &str) -> Option<StoredTokens> {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner()).get(server_url).cloned()
    }
    fn save_tokens(&self, server_url: &str, tokens: StoredTokens) {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner()).insert(server_url.into(), tokens);
    }
    fn client(&self, issuer: &str) -> Option<ClientCredentials> {
        self.clients.lock().unwrap_or_else(|p| p.into_inner()).get(issuer).cloned()
    }
    fn save_client(&self, issuer: &str, client: ClientCredentials) {
        self.clients.lock().unwrap_or_else(|p| p.into_inner()).insert(issuer.into(), client);
    }
}

/// The user's part of the authorization code grant: takes the authorization URL, returns
/// the redirect URL (with `code`, `state`, `iss`) the authorization server sent the browser to.
pub type RedirectHandler =
    Arc<dyn Fn(String) -> BoxFuture<'static, Result<String, String>> + Send + Sync>;

/// How a machine-to-machine client authenticates in the client credentials grant.
#[derive(Clone)]
pub enum ClientAuth {
    /// A client secret (`client_secret_basic`, or `client_secret_post` if the server only
    /// supports that).
    Secret(String),
    /// A `private_key_jwt` assertion (RFC 7523) signed with this PKCS#8 PEM key; only ES256.
    PrivateKeyJwt {
        /// The private key, PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
        private_key_pem: String,
        /// The JWS algorithm; only `ES256`.
        algorithm: String,
    },
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientAuth::Secret(_) => f.write_str("Secret(..)"),
            ClientAuth::PrivateKeyJwt { algorithm, .. } => write!(f, "PrivateKeyJwt({algorithm})"),
        }
    }
}

/// Where a grant's assertion comes from, asked anew for every grant (platform tokens rotate).
pub type AssertionSource =
    Arc<dyn Fn() -> BoxFuture<'static, Result<String, String>> + Send + Sync>;

enum Grant {
    AuthorizationCode {
        redirect_uri: String,
        handler: RedirectHandler,
    },
    ClientCredentials {
        client_id: String,
        auth: ClientAuth,
    },
    JwtBearer {
        client_id: String,
        assertion: AssertionSource,
    },
    EnterpriseManaged {
        idp: IdentityProvider,
        client: ClientCredentials,
        identity_assertion: AssertionSource,
    },
}

/// How many times one request may be re-authorized before its refusal is final.
pub const DEFAULT_MAX_AUTH_ATTEMPTS: usize = 2;

/// The OAuth 2.1 [`AuthProvider`]: see the [module documentation](self).
pub struct OAuthClient {
    grant: Grant,
    client_name: String,
    pre_registered: Option<(ClientCredentials, Option<String>)>,
    client_metadata_url: Option<String>,
    offline_access: bool,
    store: Arc<dyn TokenStore>,
    max_attempts: usize,
    http: http::Http,
    /// One authorization at a time: requests refused together share its token.
    flow: tokio::sync::Mutex<()>,
    dpop: Option<dpop::DpopState>,
    /// The scopes asked for so far, per MCP server (step-up asks for the union).
    requested: Mutex<HashMap<String, Vec<String>>>,
}

impl OAuthClient {
    /// A client that obtains tokens with the authorization code grant, sending the user to
    /// the authorization URL through `handler`, with `redirect_uri` (loopback or https) as
    /// its registered redirect.
    pub fn authorization_code<F, Fut>(
        client_name: impl Into<String>,
        redirect_uri: impl Into<String>,
        handler: F,
    ) -> OAuthClient
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        let handler: RedirectHandler = Arc::new(move |url| Box::pin(handler(url)));
        let grant = Grant::AuthorizationCode { redirect_uri: redirect_uri.into(), handler };
        OAuthClient::with_grant(grant, client_name.into())
    }

    /// A machine-to-machine client (the client credentials grant).
    pub fn client_credentials(client_id: impl Into<String>, auth: ClientAuth) -> OAuthClient {
        let client_id = client_id.into();
        let name = client_id.clone();
        OAuthClient::with_grant(Grant::ClientCredentials { client_id, auth }, name)
    }

    fn with_grant(grant: Grant, client_name: String) -> OAuthClient {
        OAuthClient {
            grant,
            client_name,
            pre_registered: None,
            client_metadata_url: None,
            offline_access: true,
            store: Arc::new(MemoryTokenStore::default()),
            max_attempts: DEFAULT_MAX_AUTH_ATTEMPTS,
            http: http::Http::default(),
            flow: tokio::sync::Mutex::new(()),
            dpop: None,
            requested: Mutex::default(),
        }
    }

    /// Workload identity federation: a machine-to-machine client that authenticates as
    /// `client_id` with the RFC 7523 JWT bearer grant, presenting the JWT that `assertion`
    /// returns (the platform's token for this workload; asked anew for every grant, as such
    /// tokens rotate). A refused grant is reported, not retried with another grant type.
    pub fn jwt_bearer<F, Fut>(client_id: impl Into<String>, assertion: F) -> OAuthClient
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        let client_id = client_id.into();
        let name = client_id.clone();
        let assertion: AssertionSource = Arc::new(move || Box::pin(assertion()));
        OAuthClient::with_grant(Grant::JwtBearer { client_id, assertion }, name)
    }

    /// Enterprise-managed authorization: the user's identity assertion from single sign-on
    /// (`identity_assertion`, e.g. their OpenID Connect ID token) is exchanged at `idp` for an
    /// ID-JAG naming the MCP server's authorization server and resource (RFC 8693), which is
    /// then presented there as a JWT bearer grant, authenticated as `client_id` (with
    /// `client_secret` if the client is confidential). No browser is involved.
    pub fn enterprise_managed<F, Fut>(
        idp: IdentityProvider,
        client_id: impl Into<String>,
        client_secret: Option<String>,
        identity_assertion: F,
    ) -> OAuthClient
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        let client = ClientCredentials {
            client_id: client_id.into(),
            client_secret,
            token_endpoint_auth_method: None,
        };
        let name = client.client_id.clone();
        let identity_assertion: AssertionSource = Arc::new(move || Box::pin(identity_assertion()));
        OAuthClient::with_grant(Grant::EnterpriseManaged { idp, client, identity_assertion }, name)
    }

    /// Binds tokens to `key` with DPoP (RFC 9449): every token request carries a proof, tokens
    /// the authorization server binds (`token_type` DPoP) are presented with
    /// `Authorization: DPoP` and a fresh proof per request, and servers' nonces are used.
    /// Tokens the server issues as plain bearer tokens are sent as such.
    pub fn dpop(mut self, key: DpopKey) -> OAuthClient {
        self.dpop = Some(dpop::DpopState::new(key));
        self
    }

    /// Replaces the DPoP key: tokens requested from now on are bound to `key`. Tokens bound to
    /// the previous key keep being presented with it until they are replaced (a refresh,
    /// made with the new key, rebinds them; a server that refuses that gets a new
    /// authorization). Does nothing without [`OAuthClient::dpop`].
    pub fn rotate_dpop_key(&self, key: DpopKey) {
        if let Some(dpop) = &self.dpop {
            dpop.rotate(key);
        }
    }

    /// The thumbprint (`cnf.jkt`) of the current DPoP key, if DPoP is on.
    pub fn dpop_thumbprint(&self) -> Option<String> {
        self.dpop.as_ref().map(|d| d.key().thumbprint().to_owned())
    }

    /// Uses credentials registered out of band, with the authorization server `issuer` (any
    /// server when `None`).
    pub fn pre_registered(
        mut self,
        client_id: impl Into<String>,
        client_secret: Option<String>,
        issuer: Option<String>,
    ) -> OAuthClient {
        let credentials = ClientCredentials {
            client_id: client_id.into(),
            client_secret,
            token_endpoint_auth_method: None,
        };
        self.pre_registered = Some((credentials, issuer));
        self
    }

    /// The https URL of this client's Client ID Metadata Document, used as its `client_id`
    /// with authorization servers that support them.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> OAuthClient {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Sends its requests (discovery, registration, tokens) through `client` (a private CA,
    /// proxies, your own service) instead of a default [`HttpClient`](crate::net::HttpClient).
    pub fn http_client(mut self, client: crate::net::HttpClient) -> OAuthClient {
        self.http = http::Http::with_client(client);
        self
    }

    /// Whether to ask for `offline_access` (a refresh token) when the server offers it
    /// (default: yes).
    pub fn offline_access(mut self, request: bool) -> OAuthClient {
        self.offline_access = request;
        self
    }

    /// Where tokens and registrations are kept (default: [`MemoryTokenStore`]).
    pub fn token_store(mut self, store: impl TokenStore) -> OAuthClient {
        self.store = Arc::new(store);
        self
    }

    /// How many times one request may be re-authorized (default 2).
    pub fn max_attempts(mut self, attempts: usize) -> OAuthClient {
        self.max_attempts = attempts;
        self
    }

    /// Asks the authorization server that issued `tokens` to revoke them (RFC 7009), with
    /// this client's registration there from the token store. `Ok(false)` when the server
    /// offers no revocation endpoint. The tokens stay in the store: removing them is the
    /// caller's part (e.g. [`FileTokenStore::remove`]).
    pub async fn revoke(&self, tokens: &StoredTokens) -> Result<bool, AuthError> {
        self.revoke_tokens(tokens).await
    }

    async fn current_token(&self, server_url: &str) -> Option<String> {
        let tokens = self.store.tokens(server_url)?;
        if !tokens.expired() {
            return Some(tokens.access_token);
        }
        let _flow = self.flow.lock().await;
        match self.refresh(server_url, &tokens).await {
            Ok(fresh) => Some(fresh),
            Err(err) => {
                tracing::debug!(%err, "refreshing an expired token failed");
                None
            }
        }
    }

    async fn challenged(&self, challenge: &Challenge) -> Result<String, AuthError> {
        if let Some(token) = self.nonce_retry(challenge) {
            return Ok(token);
        }
        let _flow = self.flow.lock().await;
        let url = challenge.server_url.as_str();
        let stored = self.store.tokens(url);
        if let Some(tokens) = &stored {
            // Another request was re-authorized while this one waited.
            if Some(&tokens.access_token) != challenge.rejected_token.as_ref() && !tokens.expired()
            {
                return Ok(tokens.access_token.clone());
            }
        }
        let bearer = challenge
            .www_authenticate
            .as_deref()
            .and_then(BearerChallenge::parse)
            .unwrap_or_default();
        let insufficient =
            challenge.status == 403 || bearer.error.as_deref() == Some("insufficient_scope");
        let resource_metadata =
            discovery::resource_metadata(&self.http, url, bearer.resource_metadata.as_deref())
                .await?;
        let without = match resource_metadata {
            Some(_) => WithoutMetadata::Refuse,
            None => WithoutMetadata::DefaultEndpoints,
        };
        let (resource, issuer, resource_scopes) = match resource_metadata {
            Some(m) => (m.resource, m.authorization_servers[0].clone(), m.scopes_supported),
            // No metadata (a server older than 2025-06-18): the server's origin is the issuer.
            None => (url.to_owned(), discovery::split_url(url)?.0, None),
        };
        let metadata = discovery::server_metadata(&self.http, &issuer, without).await?;
        // A refresh cannot widen the scope, and tokens from another server are of no use.
        if let Some(tokens) = stored.filter(|t| t.issuer == metadata.issuer && !insufficient) {
            if tokens.refresh_token.is_some() {
                match self.refresh_with(url, &tokens, &metadata).await {
                    Ok(fresh) => return Ok(fresh),
                    Err(err) => tracing::debug!(%err, "refresh failed; authorizing again"),
                }
            }
        }
        let mut scopes: Vec<String> = match (&bearer.scope, &resource_scopes) {
            (Some(scope), _) => scope.split_whitespace().map(str::to_owned).collect(),
            (None, Some(supported)) => supported.clone(),
            (None, None) => Vec::new(),
        };
        {
            let mut requested = self.requested.lock().unwrap_or_else(|p| p.into_inner());
            let previous = requested.entry(url.to_owned()).or_default();
            // Step-up: what was asked before, then what is asked now.
            let new: Vec<String> = scopes.drain(..).filter(|s| !previous.contains(s)).collect();
            scopes = previous.iter().cloned().chain(new).collect();
            *previous = scopes.clone();
        }
        let tokens = match &self.grant {
            Grant::ClientCredentials { client_id, auth } => {
                self.client_credentials_grant(client_id, auth, &metadata, &resource, &scopes)
                    .await?
            }
            Grant::JwtBearer { client_id, assertion } => {
                self.jwt_bearer_grant(client_id, assertion, &metadata, &resource, &scopes).await?
            }
            Grant::EnterpriseManaged { idp, client, identity_assertion } => {
                let grant = (idp, client, identity_assertion);
                self.enterprise_grant(grant, &metadata, &resource, &scopes).await?
            }
            Grant::AuthorizationCode { redirect_uri, handler } => {
                let offers_offline = metadata
                    .scopes_supported
                    .as_ref()
                    .is_some_and(|s| s.iter().any(|s| s == "offline_access"));
                if self.offline_access
                    && offers_offline
                    && !scopes.iter().any(|s| s == "offline_access")
                {
                    scopes.push("offline_access".into());
                }
                let client = self.registration(&metadata, redirect_uri).await?;
                self.authorization_code_grant(
                    &client,
                    &metadata,
                    redirect_uri,
                    handler,
                    &resource,
                    &scopes,
                )
                .await?
            }
        };
        let access = tokens.access_token.clone();
        self.store.save_tokens(url, tokens);
        Ok(access)
    }
}

impl AuthProvider for OAuthClient {
    fn access_token<'a>(&'a self, server_url: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(self.current_token(server_url))
    }

    fn on_challenge<'a>(
        &'a self,
        challenge: &'a Challenge,
    ) -> BoxFuture<'a, Result<String, AuthError>> {
        Box::pin(self.challenged(challenge))
    }

    fn max_attempts(&self) -> usize {
        self.max_attempts
    }

    fn authorization(&self, method: &str, url: &str, token: &str) -> Result<HeaderMap, AuthError> {
        match &self.dpop {
            Some(dpop) => {
                Ok(dpop.present(method, url, token)?.unwrap_or_else(|| bearer_headers(token)))
            }
            None => Ok(bearer_headers(token)),
        }
    }

    fn observe_response(&self, server_url: &str, headers: &HeaderMap) {
        if let Some(dpop) = &self.dpop {
            dpop.observe(server_url, headers);
        }
    }
}

impl OAuthClient {
    /// A `use_dpop_nonce` refusal of a token that is otherwise fine: the same token again (the
    /// nonce came with the answer, so the next proof carries it).
    fn nonce_retry(&self, challenge: &Challenge) -> Option<String> {
        self.dpop.as_ref()?;
        let parsed = challenge.www_authenticate.as_deref().and_then(BearerChallenge::parse)?;
        (parsed.error.as_deref() == Some("use_dpop_nonce"))
            .then(|| challenge.rejected_token.clone())
            .flatten()
    }
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("client_name", &self.client_name)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("offline_access", &self.offline_access)
            .finish_non_exhaustive()
    }
}
