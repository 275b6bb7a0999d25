//! DNS-rebinding protection: which `Host` and `Origin` headers an endpoint accepts.
//!
//! Spec (`basic/transports`, security): servers MUST validate `Origin`; local servers SHOULD
//! bind to 127.0.0.1. A web page on `evil.example` that resolves its own name to 127.0.0.1
//! still sends `Host: evil.example`, so checking `Host` too closes the rebinding hole.

use axum::response::Response;
use http::{StatusCode, header};
use modelcontext_types::McpError;

use super::Shared;
use super::respond::{error_response, header_str};

/// The hosts and origins an HTTP endpoint accepts.
#[derive(Debug, Clone)]
pub struct AllowList {
    hosts: Vec<String>,
    origins: Vec<String>,
    enabled: bool,
}

impl Default for AllowList {
    /// Loopback only: `localhost`, `127.0.0.1` and `[::1]`, on any port.
    fn default() -> Self {
        AllowList { hosts: Vec::new(), origins: Vec::new(), enabled: true }
    }
}

const LOOPBACK: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

impl AllowList {
    /// Also accepts `host` (a name, with or without `:port`; without a port any port matches).
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.hosts.push(host.into().to_ascii_lowercase());
        self
    }

    /// Also accepts `origin`, e.g. `https://app.example.com`.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.origins.push(origin.into().to_ascii_lowercase());
        self
    }

    /// Turns the checks off, e.g. behind a reverse proxy that already enforces them.
    pub fn disabled() -> Self {
        AllowList { enabled: false, ..Default::default() }
    }

    /// Whether a request's `Host` header is acceptable. A missing `Host` is refused.
    pub(crate) fn host_ok(&self, host: Option<&str>) -> bool {
        if !self.enabled {
            return true;
        }
        let Some(host) = host else { return false };
        let name = strip_port(host);
        // The allowed names are stored lowercase; a header's case does not matter.
        LOOPBACK.iter().any(|l| l.eq_ignore_ascii_case(name))
            || self
                .hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host) || h.eq_ignore_ascii_case(name))
    }

    /// Whether a request's `Origin` header is acceptable. Non-browser clients send none.
    pub(crate) fn origin_ok(&self, origin: Option<&str>) -> bool {
        if !self.enabled {
            return true;
        }
        let Some(origin) = origin.map(str::to_ascii_lowercase) else { return true };
        if self.origins.contains(&origin) {
            return true;
        }
        let Some(authority) =
            origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        LOOPBACK.contains(&strip_port(authority))
    }
}

/// `localhost:8000` -> `localhost`, `[::1]:80` -> `[::1]`; a bare name is returned as is, and
/// so is a malformed bracketed one (`[::1]evil`, found by the `http_headers` fuzz target), which
/// then matches no loopback name.
fn strip_port(authority: &str) -> &str {
    let is_port = |port: &str| port.bytes().all(|b| b.is_ascii_digit());
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end)
                if authority[end + 1..]
                    .strip_prefix(':')
                    .map_or(authority.len() == end + 1, is_port) =>
            {
                &authority[..=end]
            }
            _ => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((name, port)) if is_port(port) => name,
        _ => authority,
    }
}

/// Host first (421: the request was not meant for us), then Origin (403).
pub(crate) fn check_request<B>(shared: &Shared, request: &http::Request<B>) -> Option<Response> {
    let allow = &shared.options.allow;
    let headers = request.headers();
    // HTTP/2 clients name the host in `:authority`, which hyper puts in the URI, and send no
    // `Host` (RFC 9113 §8.3.1); an HTTP/1.1 request's URI has no authority (origin form).
    let host = header_str(headers, header::HOST).or(request.uri().authority().map(|a| a.as_str()));
    if !allow.host_ok(host) {
        let error = McpError::invalid_request("Invalid Host header");
        return Some(error_response(StatusCode::MISDIRECTED_REQUEST, None, error));
    }
    if !allow.origin_ok(header_str(headers, header::ORIGIN)) {
        let error = McpError::invalid_request("Invalid Origin header");
        return Some(error_response(StatusCode::FORBIDDEN, None, error));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::AllowList;

    #[test]
    fn loopback_is_allowed_on_any_port_and_nothing_else() {
        let list = AllowList::default();
        for host in
            ["localhost", "localhost:8000", "127.0.0.1:1", "[::1]", "[::1]:3000", "LOCALHOST"]
        {
            assert!(list.host_ok(Some(host)), "{host}");
        }
        for host in
            ["evil.example.com", "evil.example.com:80", "localhost.evil.com", "127.0.0.1.nip.io"]
        {
            assert!(!list.host_ok(Some(host)), "{host}");
        }
        assert!(!list.host_ok(None));
        assert!(list.origin_ok(None));
        assert!(list.origin_ok(Some("http://localhost:5173")));
        assert!(list.origin_ok(Some("https://127.0.0.1")));
        assert!(!list.origin_ok(Some("http://evil.example.com")));
        assert!(!list.origin_ok(Some("null")));
        assert!(!list.origin_ok(Some("file://localhost")));
        // Text after `]` that is not a port is no loopback address.
        assert!(!list.host_ok(Some("[::1]evil.example")));
        assert!(!list.origin_ok(Some("http://[::1]evil.example")));
        assert!(!list.origin_ok(Some("http://[::1]/")));
    }

    #[test]
    fn extra_hosts_and_origins_can_be_allowed() {
        let list = AllowList::default()
            .allow_host("mcp.example.com")
            .allow_origin("https://app.example.com");
        assert!(list.host_ok(Some("mcp.example.com:443")));
        assert!(list.origin_ok(Some("https://app.example.com")));
        assert!(!list.origin_ok(Some("https://other.example.com")));
        assert!(AllowList::disabled().host_ok(Some("anything")));
    }
}
