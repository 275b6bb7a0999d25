//! What a handler's [`Context`] offers only when the server speaks HTTP.

use super::Context;

impl Context {
    /// The HTTP headers of the request, when it came over Streamable HTTP. For a 2026-07-28
    /// request these are its own headers; in a 2025-11-25 session, those of the request that
    /// opened the session (`initialize`).
    pub fn http_headers(&self) -> Option<&http::HeaderMap> {
        self.extension::<http::HeaderMap>()
    }
}
