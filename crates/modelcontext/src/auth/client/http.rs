//! The OAuth client's own HTTP calls (metadata documents, registration, token requests),
//! through the SDK's one [`HttpClient`]: bounded in time and size, redirects never followed.
//! Errors never carry request bodies or headers, which hold secrets.

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, StatusCode};
use http_body_util::Full;
use serde_json::{Map, Value};

use super::AuthError;
use crate::net::HttpClient;

#[derive(Clone, Default)]
pub(super) struct Http {
    client: HttpClient,
}

pub(super) struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    /// The body as a JSON object, if it is one.
    pub fn json(&self) -> Option<Map<String, Value>> {
        serde_json::from_slice(&self.body).ok()
    }
}

impl Http {
    pub fn with_client(client: HttpClient) -> Http {
        Http { client }
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
                format!("{}={}", crate::auth::form_encode(k), crate::auth::form_encode(v))
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
        crate::net::check_url(url).map_err(AuthError::new)?;
        let mut request = Request::builder()
            .method(method)
            .uri(url)
            .body(Full::new(body))
            .map_err(|_| AuthError::new(format!("invalid URL {url}")))?;
        *request.headers_mut() = headers;
        request.headers_mut().insert(ACCEPT, HeaderValue::from_static("application/json"));
        let (status, headers, body) = self.client.fetch(request).await.map_err(AuthError::new)?;
        Ok(Answer { status, headers, body })
    }
}

/// `Authorization: Basic` for a client id and secret (RFC 6749 §2.3.1: each form-encoded).
pub(super) fn basic_auth(client_id: &str, secret: &str) -> HeaderMap {
    use crate::auth::form_encode;
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
