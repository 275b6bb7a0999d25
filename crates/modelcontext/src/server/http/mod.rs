//! The Streamable HTTP server (feature `http`): both protocol eras on one endpoint. The
//! client side is [`crate::transport::http`].
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

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use tokio::net::TcpListener;

use crate::{Error, McpServer};

mod batch;
mod body;
mod caller;
mod events;
mod exchange;
mod headers;
mod http1;
#[cfg(feature = "tls")]
mod http2;
mod legacy_sse;
mod modern;
mod options;
mod peer_router;
mod respond;
mod security;
mod serve;
mod served;
mod session_store;
mod sessions;
mod stateless;
mod stream;
mod task_relay;
#[cfg(feature = "tls")]
mod tls;

pub use events::{
    Appended, DEFAULT_EVENT_STREAMS, DEFAULT_EVENTS_PER_STREAM, DEFAULT_MAX_EVENTS, EventFeed,
    EventStore, MemoryEventStore, StoredEvent, StreamId, event_id,
};
pub use options::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_HEADER_BYTES, DEFAULT_MAX_HEADERS, DEFAULT_MAX_SSE_STREAMS,
    DEFAULT_MAX_SSE_STREAMS_PER_SESSION, DEFAULT_WRITE_TIMEOUT, HttpLimits, HttpOptions,
    SessionOptions, StreamOptions,
};
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub use options::{
    DEFAULT_HTTP2_CONNECTION_WINDOW, DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT,
    DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS, DEFAULT_HTTP2_MAX_FRAME_SIZE,
    DEFAULT_HTTP2_STREAM_WINDOW, DEFAULT_TLS_HANDSHAKE_TIMEOUT, TlsOptions,
};
pub use peer_router::{
    ClaimFuture, Direction, HolderFuture, MAX_INSTANCE_LEN, MemoryInstance, MemoryPeerRouter,
    PeerRouter, RouteError, RouteFuture, Routed, STANDALONE_CLAIM_TTL, valid_instance,
};
pub use security::AllowList;
pub use session_store::{
    MemorySessionStore, SessionChange, SessionEvent, SessionRecord, SessionStore, StoreError,
    StoreFuture,
};
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub use tls::ServerTls;

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
    /// GET streams open on this endpoint ([`HttpOptions::max_sse_streams`]).
    pub sse_streams: Arc<std::sync::atomic::AtomicUsize>,
}

// Listed on `McpServer`'s page, which needs no feature: the badge names the one these need.
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
impl McpServer {
    /// An HTTP endpoint for this server with default options.
    pub fn http_endpoint(&self) -> HttpEndpoint {
        self.http_endpoint_with(HttpOptions::default())
    }

    /// An HTTP endpoint for this server with `options`.
    pub fn http_endpoint_with(&self, options: HttpOptions) -> HttpEndpoint {
        let relay = options.sessions.peer_router.clone().map(|router| {
            let timeout = options.sessions.task_update_relay_timeout;
            let relay = Arc::new(task_relay::RouterRelay::new(router, self.downgrade(), timeout));
            self.relay_task_updates(relay.clone());
            relay
        });
        let sessions = sessions::Sessions::new(&options, relay);
        let sse_streams = Arc::default();
        let shared = Shared { server: self.clone(), options, sessions, sse_streams };
        HttpEndpoint { inner: Arc::new(shared) }
    }

    /// Serves Streamable HTTP at `http://<addr>/mcp` until the process ends, inside the
    /// server's [`lifespan`](McpServer::lifespan).
    pub async fn serve_http(&self, addr: &str) -> Result<(), Error> {
        let listener = TcpListener::bind(addr).await?;
        let running = self.start().await?;
        let served = self.http_endpoint().serve(listener).await;
        running.shutdown().await;
        served
    }

    /// Serves Streamable HTTP at `https://<addr>/mcp` until the process ends (feature
    /// `tls`): HTTP/1.1 and HTTP/2, chosen by ALPN. Other options: [`HttpOptions::tls`].
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub async fn serve_https(&self, addr: &str, tls: ServerTls) -> Result<(), Error> {
        let listener = TcpListener::bind(addr).await?;
        self.http_endpoint_with(HttpOptions::default().tls(tls)).serve(listener).await
    }
}

impl HttpEndpoint {
    /// SSE events the event store failed to keep since the endpoint was made (each sent
    /// without an id, or ending its stream with [`HttpOptions::durable_events`]).
    pub fn unstored_events(&self) -> u64 {
        self.inner.sessions.unstored_events()
    }

    /// An axum router with the endpoint at `/mcp` (and `/sse` + `/messages` when
    /// [`HttpOptions::legacy_sse`] is on).
    pub fn router(&self) -> axum::Router {
        let router = axum::Router::new().route_service("/mcp", self.clone().into_service());
        match self.other_routes() {
            Some(others) => router.merge(others),
            None => router,
        }
    }

    /// The routes the endpoint serves besides `/mcp`, if it has any: `/sse` + `/messages`
    /// with [`HttpOptions::legacy_sse`], the OAuth metadata with `auth`.
    fn other_routes(&self) -> Option<axum::Router> {
        let mut others: Option<axum::Router> = None;
        if self.inner.options.streams.legacy_sse {
            others = Some(legacy_sse::routes(self.inner.clone()));
        }
        #[cfg(feature = "auth-server")]
        if let Some(auth) = &self.inner.options.auth {
            let metadata = crate::auth::metadata_router(auth, "/mcp");
            others = Some(match others {
                Some(others) => others.merge(metadata),
                None => metadata,
            });
        }
        others
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

    /// Serves the endpoint at `/mcp` on `listener` (TCP_NODELAY on every connection), with the
    /// connection limits of [`HttpOptions`]: head size and field count, header read timeout,
    /// write timeout. Plain HTTP/1.1 by default; with [`HttpOptions::tls`] (feature `tls`),
    /// HTTPS with HTTP/1.1 or HTTP/2 as ALPN chooses, and the TLS and HTTP/2 limits too.
    /// Plain-text connections do not accept HTTP/2 (no `h2c`): MCP clients speak HTTP/1.1 to
    /// a plain-text server, and the TLS-terminating proxies that speak `h2c` to a backend can
    /// speak HTTP/1.1 to it as well.
    pub async fn serve(&self, listener: TcpListener) -> Result<(), Error> {
        // An endpoint with no other routes is served without a router (the same answers).
        let served = match self.other_routes() {
            Some(_) => served::Served::Router(self.router()),
            None => served::Served::Endpoint(self.inner.clone()),
        };
        self.serve_served(listener, served).await
    }

    /// [`HttpEndpoint::serve`] with `router` in place of [`HttpEndpoint::router`]: the
    /// endpoint's router merged with routes or layers of your own (a health check, a
    /// gateway's token check), served with the same connection limits and TLS.
    pub async fn serve_router(
        &self,
        listener: TcpListener,
        router: axum::Router,
    ) -> Result<(), Error> {
        self.serve_served(listener, served::Served::Router(router)).await
    }

    async fn serve_served(
        &self,
        listener: TcpListener,
        served: served::Served,
    ) -> Result<(), Error> {
        // An endpoint made outside a runtime starts following the router here: a relayed
        // `tasks/update` must be heard before any handshake-era session exists.
        self.inner.sessions.start_routing();
        serve::serve(listener, &self.inner.options, served).await?;
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
