//! The few HTTP calls a resource server makes itself: GET a JSON document (authorization server
//! metadata, a key set) and POST a form (introspection), through the SDK's one
//! [`HttpClient`] (`https://` with the `tls` feature), bounded in time and size. Errors never
//! carry a request body or header, since those hold tokens and client secrets.

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, StatusCode};
use http_body_util::Full;
use serde_json::{Map, Value};

use crate::Error;
use crate::net::HttpClient;

#[derive(Clone, Default)]
pub(crate) struct Fetcher {
    client: HttpClient,
}

/// What came back: the status and the body as a JSON object.
pub(crate) struct Answer {
    pub status: StatusCode,
    pub body: Map<String, Value>,
}

impl Fetcher {
    pub(crate) fn with_client(client: HttpClient) -> Fetcher {
        Fetcher { client }
    }

    /// GET `url` as JSON; only a 200 with a JSON object counts.
    pub(crate) async fn get_json(&self, url: &str) -> Result<Map<String, Value>, String> {
        let answer = self.send(Method::GET, url, None, None).await?;
        if answer.status != StatusCode::OK {
            return Err(format!("GET {url} answered {}", answer.status));
        }
        Ok(answer.body)
    }

    /// POST the form `body` to `url` with an `Authorization` header.
    pub(crate) async fn post_form(
        &self,
        url: &str,
        authorization: &str,
        body: String,
    ) -> Result<Answer, String> {
        self.send(Method::POST, url, Some(authorization), Some(body)).await
    }

    async fn send(
        &self,
        method: Method,
        url: &str,
        authorization: Option<&str>,
        body: Option<String>,
    ) -> Result<Answer, String> {
        let request = build(method.clone(), url, authorization, body)?;
        let (status, _, bytes) = self.client.fetch(request).await?;
        let body = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{method} {url}: not a JSON object: {e}"))?;
        Ok(Answer { status, body })
    }
}

fn build(
    method: Method,
    url: &str,
    authorization: Option<&str>,
    body: Option<String>,
) -> Result<Request<Full<Bytes>>, String> {
    let mut builder = Request::builder().method(method).uri(url);
    builder = builder.header(ACCEPT, HeaderValue::from_static("application/json"));
    if let Some(authorization) = authorization {
        let mut value = HeaderValue::from_str(authorization)
            .map_err(|_| "the client credentials are not a valid header value".to_owned())?;
        value.set_sensitive(true);
        builder = builder.header(AUTHORIZATION, value);
    }
    if body.is_some() {
        let form = HeaderValue::from_static("application/x-www-form-urlencoded");
        builder = builder.header(CONTENT_TYPE, form);
    }
    let body = Full::new(Bytes::from(body.unwrap_or_default()));
    builder.body(body).map_err(|_| format!("invalid request URL {url}"))
}

/// Checks that `url` is one this module can fetch: absolute `http://` or `https://` with a
/// host. (A plain `http://` host beyond this machine is warned about when it is reached: keys
/// and introspection answers fetched in the clear can be forged on the way.)
pub(crate) fn check_url(url: &str, what: &str) -> Result<(), Error> {
    crate::net::check_url(url).map(drop).map_err(|e| invalid_input(format!("{what}: {e}")))
}

pub(crate) fn invalid_input(message: String) -> Error {
    Error::from(std::io::Error::new(std::io::ErrorKind::InvalidInput, message))
}
