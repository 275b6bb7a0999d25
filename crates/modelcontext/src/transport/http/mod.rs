//! Streamable HTTP (feature `http`): both protocol eras on one endpoint.
//!
//! Per POST the era is chosen from the request itself (spec 2026-07-28, backward
//! compatibility): a request carrying the modern `_meta` envelope, or a modern
//! `MCP-Protocol-Version` header, is served statelessly; anything else follows the
//! 2025-11-25 session rules (`initialize` mints an `Mcp-Session-Id`).
//!
//! ```no_run
//! # async fn run(server: modelcontext::McpServer) -> Result<(), modelcontext::Error> {
//! // Standalone, at http://127.0.0.1:8000/mcp:
//! server.serve_http("127.0.0.1:8000").await?;
//! # Ok(()) }
//! ```
//!
//! Inside an existing axum application, with its own path and middleware:
//!
//! ```no_run
//! # fn app(server: modelcontext::McpServer) -> axum::Router {
//! axum::Router::new().route_service("/tools/mcp", server.http_endpoint().into_service())
//! # }
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use tokio::net::TcpListener;

use crate::{Error, McpServer};

mod caller;
mod client;
mod events;
mod exchange;
mod headers;
mod legacy_sse;
mod security;
mod sessions;

pub use client::*;
pub use events::{EventStore, MemoryEventStore};
pub use security::AllowList;

/// Default request body limit: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// An MCP endpoint over Streamable HTTP, configured and ready to serve or mount.
#[derive(Clone)]
pub struct HttpEndpoint {
    inner: Arc<Shared>,
}

/// What every request of one endpoint shares.
pub(crate) struct Shared {
    pub server: McpServer,
    pub options: HttpOptions,
    pub sessions: sessions::Sessions,
}

/// Settings of an [`HttpEndpoint`]. Secure by default: loopback-only `Host`/`Origin`.
#[derive(Clone)]
pub struct HttpOptions {
    /// Accepted `Host` and `Origin` headers (DNS-rebinding protection).
    pub allow: AllowList,
    /// Largest request body accepted (413 beyond it).
    pub max_body_bytes: usize,
    /// A handshake-era session with no request for this long is forgotten (404 afterwards).
    pub session_idle_timeout: Duration,
    /// At most this many handshake-era sessions at once (503 beyond it).
    pub max_sessions: usize,
    /// Interval of `:` keep-alive comments on long-lived SSE streams.
    pub keep_alive: Duration,
    /// Keeps handshake-era SSE events for resumption with `Last-Event-ID`.
    pub event_store: Arc<dyn EventStore>,
    /// Also serves the deprecated 2024-11-05 HTTP+SSE transport (`GET /sse`, `POST
    /// /messages`) beside the endpoint, for clients that predate Streamable HTTP. Only the
    /// [`HttpEndpoint::router`] serves it. Off by default.
    pub legacy_sse: bool,
    /// OAuth 2.1 protection (feature `auth`): every request needs a valid bearer token for
    /// this resource; [`HttpEndpoint::router`] also serves the protected-resource metadata.
    /// Mounting [`HttpEndpoint::into_service`] yourself? Merge
    /// [`auth::metadata_router`](crate::auth::metadata_router) at your path too.
    #[cfg(feature = "auth")]
    pub auth: Option<crate::auth::AuthOptions>,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("allow", &self.allow)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("max_sessions", &self.max_sessions)
            .field("keep_alive", &self.keep_alive)
            .field("legacy_sse", &self.legacy_sse)
            .finish_non_exhaustive()
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            allow: AllowList::default(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            keep_alive: Duration::from_secs(15),
            event_store: Arc::new(MemoryEventStore::default()),
            legacy_sse: false,
            #[cfg(feature = "auth")]
            auth: None,
        }
    }
}

impl McpServer {
    /// An HTTP endpoint for this server with default options.
    pub fn http_endpoint(&self) -> HttpEndpoint {
        self.http_endpoint_with(HttpOptions::default())
    }

    /// An HTTP endpoint for this server with `options`.
    pub fn http_endpoint_with(&self, options: HttpOptions) -> HttpEndpoint {
        let sessions = sessions::Sessions::new(options.max_sessions, options.session_idle_timeout);
        HttpEndpoint { inner: Arc::new(Shared { server: self.clone(), options, sessions }) }
    }

    /// Serves Streamable HTTP at `http://<addr>/mcp` until the process ends.
    pub async fn serve_http(&self, addr: &str) -> Result<(), Error> {
        let listener = TcpListener::bind(addr).await?;
        self.http_endpoint().serve(listener).await
    }
}

impl HttpEndpoint {
    /// An axum router with the endpoint at `/mcp` (and `/sse` + `/messages` when
    /// [`HttpOptions::legacy_sse`] is on).
    pub fn router(&self) -> axum::Router {
        let mut router = axum::Router::new().route_service("/mcp", self.clone().into_service());
        if self.inner.options.legacy_sse {
            router = router.merge(legacy_sse::routes(self.inner.clone()));
        }
        #[cfg(feature = "auth")]
        if let Some(auth) = &self.inner.options.auth {
            router = router.merge(crate::auth::metadata_router(auth, "/mcp"));
        }
        router
    }

    /// The endpoint as a tower `Service`, to mount at any path of any axum/tower stack.
    pub fn into_service(
        self,
    ) -> impl tower::Service<
        Request,
        Response = Response,
        Error = std::convert::Infallible,
        Future = impl Send + 'static,
    > + Clone
    + Send
    + 'static {
        tower::service_fn(move |request: Request| {
            let shared = self.inner.clone();
            async move { Ok(exchange::handle(shared, request).await) }
        })
    }

    /// Serves the endpoint at `/mcp` on `listener` (TCP_NODELAY on every connection).
    pub async fn serve(&self, listener: TcpListener) -> Result<(), Error> {
        use axum::serve::ListenerExt;
        let listener = listener.tap_io(|tcp| {
            // Small JSON-RPC answers must not wait for Nagle's algorithm.
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, self.router()).await?;
        Ok(())
    }

    /// Binds `addr`, returning the bound address and the serving future: lets tests use port 0.
    pub async fn bind(
        &self,
        addr: &str,
    ) -> Result<
        (SocketAddr, impl std::future::Future<Output = Result<(), Error>> + Send + use<>),
        Error,
    > {
        let listener = TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let endpoint = self.clone();
        Ok((local, async move { endpoint.serve(listener).await }))
    }
}

/// A body that is one JSON text.
pub(crate) fn json_body(text: String) -> Body {
    Body::from(text)
}
