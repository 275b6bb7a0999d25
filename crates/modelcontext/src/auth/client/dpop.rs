//! The OAuth client's DPoP state (RFC 9449): its key, the key each token was bound to, and
//! the nonces servers handed out.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use http::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};

use super::AuthError;
use crate::auth::{DpopKey, origin};

const DPOP: HeaderName = HeaderName::from_static("dpop");
const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

/// At most this many tokens and servers are remembered; past it the oldest knowledge is
/// dropped (a forgotten token is sent as a bearer token, refused, and replaced).
const MAX_ENTRIES: usize = 256;

pub(super) struct DpopState {
    key: Mutex<Arc<DpopKey>>,
    /// Access token → the key it is bound to (tokens survive a key rotation until replaced).
    bound: Mutex<HashMap<String, Arc<DpopKey>>>,
    /// Origin → the last nonce that server gave.
    nonces: Mutex<HashMap<String, String>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl DpopState {
    pub fn new(key: DpopKey) -> DpopState {
        DpopState {
            key: Mutex::new(Arc::new(key)),
            bound: Mutex::default(),
            nonces: Mutex::default(),
        }
    }

    pub fn rotate(&self, key: DpopKey) {
        *lock(&self.key) = Arc::new(key);
    }

    pub fn key(&self) -> Arc<DpopKey> {
        lock(&self.key).clone()
    }

    /// The `DPoP` header of a token request to `url` (with the server's nonce, if known),
    /// and the key that signed it.
    pub fn token_request_proof(
        &self,
        url: &str,
    ) -> Result<(Arc<DpopKey>, HeaderName, HeaderValue), AuthError> {
        let key = self.key();
        let nonce = self.nonce(url);
        let proof = key.proof("POST", url, None, nonce.as_deref())?;
        Ok((key, DPOP, header_value(&proof)?))
    }

    /// Notes a token the authorization server bound to `key` (`token_type` DPoP).
    pub fn bind(&self, access_token: &str, key: Arc<DpopKey>) {
        let mut bound = lock(&self.bound);
        if bound.len() >= MAX_ENTRIES {
            bound.clear();
        }
        bound.insert(access_token.to_owned(), key);
    }

    /// The headers presenting `token` on a request: `Authorization: DPoP` and a fresh proof
    /// when the token is bound, else `None` (a bearer token).
    pub fn present(
        &self,
        method: &str,
        url: &str,
        token: &str,
    ) -> Result<Option<HeaderMap>, AuthError> {
        let Some(key) = lock(&self.bound).get(token).cloned() else { return Ok(None) };
        let nonce = self.nonce(url);
        let proof = key.proof(method, url, Some(token), nonce.as_deref())?;
        let mut headers = HeaderMap::new();
        let mut authorization = header_value(&format!("DPoP {token}"))?;
        authorization.set_sensitive(true);
        headers.insert(AUTHORIZATION, authorization);
        headers.insert(DPOP, header_value(&proof)?);
        Ok(Some(headers))
    }

    /// Keeps the `DPoP-Nonce` a server at `url` sent, for the next proofs to it (nonces are
    /// per server, RFC 9449 section 8).
    pub fn observe(&self, url: &str, headers: &HeaderMap) {
        let Some(nonce) = headers.get(DPOP_NONCE).and_then(|v| v.to_str().ok()) else { return };
        let mut nonces = lock(&self.nonces);
        if nonces.len() >= MAX_ENTRIES {
            nonces.clear();
        }
        nonces.insert(origin(url).to_owned(), nonce.to_owned());
    }

    fn nonce(&self, url: &str) -> Option<String> {
        lock(&self.nonces).get(origin(url)).cloned()
    }
}

fn header_value(text: &str) -> Result<HeaderValue, AuthError> {
    HeaderValue::from_str(text).map_err(|_| AuthError::new("a DPoP header is not visible ASCII"))
}
