//! The OAuth client's own HTTP calls (metadata documents, registration, token requests):
//! hyper-util like the transport, bounded in time and size, redirects never followed.
//! Errors never carry request bodies or headers, which hold secrets.

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Map, Value};

use super::AuthError;

/// Connect, send and read must fit in this.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Metadata documents and token answers are small.
const MAX_BODY: usize = 1024 * 1024;

#[derive(Clone)]
pub(super) struct Http {
    client: Hyper<HttpConnector, Full<Bytes>>,
}

pub(super) struct Answer {
    pub status: StatusCode,
    pub body: Bytes,
}

impl Answer {
    /// The body as a JSON object, if it is one.
    pub fn json(&self) -> Option<Map<String, Value>> {
        serde_json::from_slice(&self.body).ok()
    }
}

impl Http {
    pub fn new() -> Http {
        let mut connector = HttpConnector::new();
        connector.set_connect_timeout(Some(TIMEOUT));
        connector.set_nodelay(true);
        Http { client: Hyper::builder(TokioExecutor::new()).build(connector) }
    }

    pub async fn get(&self, url: &str) -> Result<Answer, AuthError> {
        self.send(Method::GET, url, HeaderMap::new(), Bytes::new()).await
    }

    /// POST a form; `headers` may carry `Authorization`.
    pub async fn post_form(
        &self,
        url: &str,
        mut headers: HeaderMap,
        form: &[(&str, &str)],
    ) -> Result<Answer, AuthError> {
        let body: Vec<String> = form
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    crate::auth::fetch::form_encode(k),
                    crate::auth::fetch::form_encode(v)
                )
            })
            .collect();
        let form_type = HeaderValue::from_static("application/x-www-form-urlencoded");
        headers.insert(CONTENT_TYPE, form_type);
        self.send(Method::POST, url, headers, Bytes::from(body.join("&"))).await
    }

    pub async fn post_json(&self, url: &str, body: &Value) -> Result<Answer, AuthError> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        self.send(Method::POST, url, headers, Bytes::from(body.to_string())).await
    }

    async fn send(
        &self,
        method: Method,
        url: &str,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Answer, AuthError> {
        check_url(url)?;
        let mut request = Request::builder()
            .method(method.clone())
            .uri(url)
            .body(Full::new(body))
            .map_err(|_| AuthError::new(format!("invalid URL {url}")))?;
        *request.headers_mut() = headers;
        request.headers_mut().insert(ACCEPT, HeaderValue::from_static("application/json"));
        let exchange = async {
            let response = self.client.request(request).await.map_err(|e| e.to_string())?;
            let status = response.status();
            let limited = Limited::new(response.into_body(), MAX_BODY);
            let body = limited.collect().await.map_err(|e| e.to_string())?.to_bytes();
            Ok::<_, String>(Answer { status, body })
        };
        match tokio::time::timeout(TIMEOUT, exchange).await {
            Ok(result) => result.map_err(|e| AuthError::new(format!("{method} {url}: {e}"))),
            Err(_) => Err(AuthError::new(format!("{method} {url}: no answer within {TIMEOUT:?}"))),
        }
    }
}

/// Only `http://` URLs with a host (no TLS connector yet, as in the transport).
fn check_url(url: &str) -> Result<(), AuthError> {
    let uri: http::Uri = url.parse().map_err(|_| AuthError::new(format!("invalid URL {url:?}")))?;
    match (uri.scheme_str(), uri.host()) {
        (Some("http"), Some(_)) => Ok(()),
        (Some("https"), _) => {
            Err(AuthError::new(format!("{url}: https is not supported yet (no TLS connector)")))
        }
        _ => Err(AuthError::new(format!("{url}: expected an http:// URL"))),
    }
}

/// `Authorization: Basic` for a client id and secret (RFC 6749 §2.3.1: each form-encoded).
pub(super) fn basic_auth(client_id: &str, secret: &str) -> HeaderMap {
    use crate::auth::fetch::form_encode;
    let pair = format!("{}:{}", form_encode(client_id), form_encode(secret));
    let mut headers = HeaderMap::new();
    if let Ok(mut value) =
        HeaderValue::from_str(&format!("Basic {}", crate::base64::encode(pair.as_bytes())))
    {
        value.set_sensitive(true);
        headers.insert(HeaderName::from_static("authorization"), value);
    }
    headers
}
