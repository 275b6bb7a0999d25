//! The few HTTP calls a resource server makes itself: GET a JSON document (authorization server
//! metadata, a key set) and POST a form (introspection). Bounded in time and size.
//!
//! Plain `http://` only, like the client transport: TLS is not built in yet. Errors never
//! carry a request body or header, since those hold tokens and client secrets.

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Map, Value};

use crate::Error;

/// The whole exchange (connect, send, read) must fit in this.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Key sets and metadata documents are a few KiB; anything far larger is not one.
const MAX_BODY: usize = 1024 * 1024;

#[derive(Clone)]
pub(crate) struct Fetcher {
    client: Hyper<HttpConnector, Full<Bytes>>,
}

/// What came back: the status and the body as a JSON object.
pub(crate) struct Answer {
    pub status: StatusCode,
    pub body: Map<String, Value>,
}

impl Fetcher {
    pub(crate) fn new() -> Fetcher {
        let mut connector = HttpConnector::new();
        connector.set_connect_timeout(Some(TIMEOUT));
        connector.set_nodelay(true);
        Fetcher { client: Hyper::builder(TokioExecutor::new()).build(connector) }
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
        let exchange = async {
            let response = self.client.request(request).await.map_err(|e| e.to_string())?;
            let status = response.status();
            let limited = Limited::new(response.into_body(), MAX_BODY);
            let bytes = limited.collect().await.map_err(|e| e.to_string())?.to_bytes();
            let body = serde_json::from_slice(&bytes).map_err(|e| format!("not JSON: {e}"))?;
            Ok::<_, String>(Answer { status, body })
        };
        match tokio::time::timeout(TIMEOUT, exchange).await {
            Ok(result) => result.map_err(|e| format!("{method} {url}: {e}")),
            Err(_) => Err(format!("{method} {url}: no answer within {TIMEOUT:?}")),
        }
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

/// Checks that `url` is one this module can fetch: absolute `http://` with a host. A
/// non-loopback host gets a warning, since keys and introspection answers fetched in the clear
/// can be forged on the way.
pub(crate) fn check_url(url: &str, what: &str) -> Result<(), Error> {
    let parsed: Uri = url.parse().map_err(|e| invalid_input(format!("{what} {url:?}: {e}")))?;
    let host = parsed.host().unwrap_or("");
    match parsed.scheme_str() {
        Some("http") if !host.is_empty() => {}
        Some("https") => {
            let reason = "https is not supported yet (no TLS connector); use http://";
            return Err(invalid_input(format!("{what} {url}: {reason}")));
        }
        _ => return Err(invalid_input(format!("{what} {url}: expected an http:// URL"))),
    }
    let loopback = host == "localhost"
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if !loopback {
        tracing::warn!(url, "{what} is fetched over plain HTTP from a non-loopback host");
    }
    Ok(())
}

pub(crate) fn invalid_input(message: String) -> Error {
    Error::from(std::io::Error::new(std::io::ErrorKind::InvalidInput, message))
}

/// `application/x-www-form-urlencoded` encoding of one value (RFC 6749 appendix B).
pub(crate) fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(char::from(byte));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}
