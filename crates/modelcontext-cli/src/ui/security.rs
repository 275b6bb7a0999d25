//! Who may use `mcp ui`: only the page it served, in a browser on this machine.
//!
//! The UI can start any program (a stdio server is a command line), so it is guarded the way
//! the MCP Inspector's proxy was not (CVE-2025-49596: no authentication, and DNS rebinding let
//! any web page drive it):
//!
//! - it listens on 127.0.0.1 only;
//! - every request carries the random token printed with the URL: in the query of the first
//!   load, then in an `HttpOnly`, `SameSite=Strict` cookie the browser sends with the page's
//!   own requests (and never with another site's);
//! - the `Host` header must name the loopback address and our port (a rebound DNS name that
//!   resolves to 127.0.0.1 still carries its own name: 421);
//! - an `Origin` header, when present, must be the UI's own origin (403), so another page open
//!   in the same browser cannot post to the API even with the cookie.
//!
//! The token is compared in constant time: how long a refusal takes says nothing about how
//! much of a guess was right.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

/// The name of the cookie that carries the token after the first load, before its port:
/// cookies are not kept apart by port, so two UIs on one machine need two names.
const COOKIE_PREFIX: &str = "mcp_ui_";

/// The header a script may send the token in instead of the cookie.
pub const TOKEN_HEADER: &str = "x-mcp-ui-token";

/// What a request must show to be served.
#[derive(Debug, Clone)]
pub struct Guard {
    /// 32 hex digits from the OS's random source.
    pub token: String,
    /// The port we listen on, which `Host` and `Origin` must name.
    pub port: u16,
}

impl Guard {
    /// A guard with a new random token, for a server on `port`.
    pub fn new(port: u16) -> Result<Guard, String> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)
            .map_err(|err| format!("no random source for a token: {err}"))?;
        let token = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Guard { token, port })
    }

    /// The URL to open: the page, with the token.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/?token={}", self.port, self.token)
    }

    /// Why a request with these headers and query may not be served, as a status and a line.
    pub fn refusal(
        &self,
        headers: &HeaderMap,
        query: Option<&str>,
    ) -> Option<(StatusCode, &'static str)> {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        if !self.is_own_host(host) {
            return Some((
                StatusCode::MISDIRECTED_REQUEST,
                "this server answers to 127.0.0.1 and localhost only",
            ));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let own = origin.to_str().ok().and_then(|o| o.strip_prefix("http://"));
            if !own.is_some_and(|o| self.is_own_host(o)) {
                return Some((StatusCode::FORBIDDEN, "requests from other origins are refused"));
            }
        }
        let cookie = cookie_token(headers, &self.cookie_name());
        let presented = [query_token(query), header_token(headers), cookie];
        if !presented.into_iter().flatten().any(|token| same(token, &self.token)) {
            return Some((StatusCode::FORBIDDEN, "no valid token: open the URL `mcp ui` printed"));
        }
        None
    }

    /// `127.0.0.1:PORT` or `localhost:PORT`.
    fn is_own_host(&self, host: &str) -> bool {
        let Some((name, port)) = host.rsplit_once(':') else { return false };
        matches!(name, "127.0.0.1" | "localhost") && port.parse() == Ok(self.port)
    }

    fn cookie_name(&self) -> String {
        format!("{COOKIE_PREFIX}{}", self.port)
    }

    /// The cookie that carries the token from the first load on.
    pub fn cookie(&self) -> HeaderValue {
        let name = self.cookie_name();
        let cookie = format!("{name}={}; HttpOnly; SameSite=Strict; Path=/", self.token);
        HeaderValue::from_str(&cookie).unwrap_or_else(|_| HeaderValue::from_static(""))
    }
}

/// The axum middleware: refuses what [`Guard::refusal`] refuses, before any handler runs.
pub async fn check(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    if let Some((status, why)) = guard.refusal(request.headers(), request.uri().query()) {
        let mut refused = Response::new(Body::from(format!("{why}\n")));
        *refused.status_mut() = status;
        refused.headers_mut().insert(header::CONTENT_SECURITY_POLICY, page_policy());
        return refused;
    }
    let first_load = query_token(request.uri().query()).is_some();
    let mut response = next.run(request).await.into_response();
    let headers = response.headers_mut();
    if first_load {
        headers.insert(header::SET_COOKIE, guard.cookie());
    }
    // An MCP Apps view comes with a policy of its own (its server's origins, and framed by
    // the page only: `super::apps::view_policy`); everything else is the page's, and is
    // framed by nobody.
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(header::CONTENT_SECURITY_POLICY, page_policy());
        headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    }
    // Not cached, nor sniffed into another type.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    response
}

/// The Content-Security-Policy of every response but the MCP Apps views. The page runs only
/// its own script and style files (no inline code, no `eval`, no other origin), so a string
/// from a server's answer that ends up in the page cannot run as script; it talks only to this server;
/// it loads nothing by default, images and audio only where content blocks need them
/// (`data:` for embedded ones, https icons); it frames only its own URLs (the MCP Apps views
/// at `/view/N`, sandboxed); no plugins, no `<base>`, no form posts, and no page may frame it.
pub const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data: https:; media-src 'self' data:; connect-src 'self'; \
     frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

fn page_policy() -> HeaderValue {
    HeaderValue::from_static(PAGE_POLICY)
}

/// `token=...` in a query string.
fn query_token(query: Option<&str>) -> Option<&str> {
    query?.split('&').find_map(|pair| pair.strip_prefix("token="))
}

fn header_token(headers: &HeaderMap) -> Option<&str> {
    headers.get(TOKEN_HEADER)?.to_str().ok()
}

/// The cookie `name` among the `Cookie` headers' `name=value` pairs.
fn cookie_token<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|line| line.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(name)?.strip_prefix('='))
}

/// Equal, in a time that depends on the lengths only, not on where the first difference is.
fn same(presented: &str, token: &str) -> bool {
    presented.as_bytes().ct_eq(token.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard { token: "0123456789abcdef0123456789abcdef".into(), port: 4321 }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).expect("header"));
        }
        map
    }

    #[test]
    fn the_token_host_and_origin_are_all_checked() {
        let g = guard();
        let token = Some("token=0123456789abcdef0123456789abcdef");
        let ok = headers(&[("host", "127.0.0.1:4321")]);
        assert_eq!(g.refusal(&ok, token), None);
        assert_eq!(g.refusal(&headers(&[("host", "localhost:4321")]), token), None);
        let status = |h: &HeaderMap, q| g.refusal(h, q).map(|(status, _)| status.as_u16());
        assert_eq!(status(&ok, None), Some(403));
        assert_eq!(status(&ok, Some("token=0123456789abcdef0123456789abcdee")), Some(403));
        assert_eq!(status(&ok, Some("token=")), Some(403));
        assert_eq!(status(&headers(&[("host", "evil.example:4321")]), token), Some(421));
        assert_eq!(status(&headers(&[("host", "127.0.0.1:80")]), token), Some(421));
        assert_eq!(status(&HeaderMap::new(), token), Some(421));
        let foreign = headers(&[("host", "127.0.0.1:4321"), ("origin", "http://evil.example")]);
        assert_eq!(status(&foreign, token), Some(403));
        let own = headers(&[("host", "127.0.0.1:4321"), ("origin", "http://localhost:4321")]);
        assert_eq!(status(&own, token), None);
        let null = headers(&[("host", "127.0.0.1:4321"), ("origin", "null")]);
        assert_eq!(status(&null, token), Some(403));
    }

    #[test]
    fn the_cookie_and_header_carry_the_token_too() {
        let g = guard();
        let cookie = headers(&[
            ("host", "127.0.0.1:4321"),
            ("cookie", "a=b; mcp_ui_4321=0123456789abcdef0123456789abcdef"),
        ]);
        assert_eq!(g.refusal(&cookie, None), None);
        let other_port = headers(&[
            ("host", "127.0.0.1:4321"),
            ("cookie", "mcp_ui_4322=0123456789abcdef0123456789abcdef"),
        ]);
        assert!(g.refusal(&other_port, None).is_some());
        let header = headers(&[
            ("host", "127.0.0.1:4321"),
            ("x-mcp-ui-token", "0123456789abcdef0123456789abcdef"),
        ]);
        assert_eq!(g.refusal(&header, None), None);
    }

    #[test]
    fn tokens_are_random_hex() {
        let (a, b) = (Guard::new(1).expect("token"), Guard::new(1).expect("token"));
        assert_eq!(a.token.len(), 32);
        assert!(a.token.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a.token, b.token);
        assert!(same("abc", "abc") && !same("abd", "abc") && !same("ab", "abc"));
    }
}
