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
use std::time::Duration;

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
mod peer_router;
mod respond;
mod security;
mod serve;
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

/// Default request body limit: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Default limit of a request's head (request line and headers): 64 KiB. hyper's own cap is
/// about 400 KiB and Node's 16 KiB; an MCP request carries a bearer token (a JWT of a few KiB)
/// and, in 2026-07-28, `Mcp-Param-*` mirrors of tool arguments, so 64 KiB leaves room for
/// both while keeping a flood of huge heads cheap.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 64 * 1024;

/// Default limit of header fields per request: 100, hyper's default (and Apache's
/// `LimitRequestFields`); hyper keeps that many on the stack, more costs an allocation.
pub const DEFAULT_MAX_HEADERS: usize = 100;

/// Default time a client has to send a request's head: 30 s, hyper's default
/// `header_read_timeout`. Also closes a kept-alive connection idle for that long.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Default time a client has to send a whole request body once its head arrived: 30 s, the
/// same window as the head (a 4 MiB body then needs at least ~140 KB/s).
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Default time one write to a client may stay blocked: 30 s. A peer that stops reading an
/// SSE stream for that long loses the connection (and its stream can be resumed).
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Default limit of GET streams (standalone and resumed) one session may hold open: 16, well
/// above what a client needs (one standalone stream plus resumptions of dropped ones) and
/// more than the 6 connections a browser opens to one host over HTTP/1.1.
pub const DEFAULT_MAX_SSE_STREAMS_PER_SESSION: usize = 16;

/// Default limit of GET streams open on one endpoint: 10 000, one per session at the default
/// [`HttpOptions::max_sessions`].
pub const DEFAULT_MAX_SSE_STREAMS: usize = 10_000;

#[cfg(feature = "tls")]
/// Default time a client has to finish the TLS handshake: 10 s. A handshake is one or two
/// round trips; the bound only matters against peers that connect and stall.
pub const DEFAULT_TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

#[cfg(feature = "tls")]
/// Default limit of HTTP/2 streams open at once on one connection: 100, the least RFC 9113
/// §6.5.2 recommends and what nginx and Apache allow by default. A stream is a request in
/// flight or an open SSE stream; a browser-like client needs a handful.
pub const DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS: u32 = 100;

#[cfg(feature = "tls")]
/// Default HTTP/2 flow-control window of one stream: 1 MiB, hyper's default. Bounds what a
/// client may send on one stream before the server reads it.
pub const DEFAULT_HTTP2_STREAM_WINDOW: u32 = 1024 * 1024;

#[cfg(feature = "tls")]
/// Default HTTP/2 flow-control window of a connection: 1 MiB, hyper's default.
pub const DEFAULT_HTTP2_CONNECTION_WINDOW: u32 = 1024 * 1024;

#[cfg(feature = "tls")]
/// Default largest HTTP/2 frame the server accepts: 16 KiB, the protocol's initial value.
pub const DEFAULT_HTTP2_MAX_FRAME_SIZE: u32 = 16 * 1024;

#[cfg(feature = "tls")]
/// Default time an HTTP/2 keep-alive PING may go unanswered before the connection is
/// closed: 20 s, hyper's default (only used when PINGs are on).
pub const DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(20);

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

/// Settings of an [`HttpEndpoint`]. Secure by default: loopback-only `Host`/`Origin`.
///
/// Start from the defaults and change what you need with the setters, which are named after
/// the fields:
///
/// ```
/// use std::time::Duration;
/// use modelcontext::HttpOptions;
/// use modelcontext::server::http::AllowList;
///
/// let options = HttpOptions::default()
///     .allow(AllowList::default().allow_host("mcp.example.com"))
///     .max_body_bytes(1024 * 1024)
///     .session_idle_timeout(Duration::from_secs(600));
/// ```
///
/// Non-exhaustive, so that settings can be added without breaking you: it cannot be built
/// with a struct literal, but its fields can be read and assigned.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Accepted `Host` and `Origin` headers (DNS-rebinding protection).
    pub allow: AllowList,
    /// Largest request body accepted, counted on the bytes read, chunked or not (413 beyond
    /// it). Default [`DEFAULT_MAX_BODY_BYTES`].
    pub max_body_bytes: usize,
    /// Largest request head (request line and headers, in bytes) accepted: 431 with an empty
    /// body and the connection closed beyond it. Default [`DEFAULT_MAX_HEADER_BYTES`].
    /// Applies to [`HttpEndpoint::serve`] and [`McpServer::serve_http`]; mounted in your own
    /// axum stack, the endpoint gets that stack's settings.
    pub max_header_bytes: usize,
    /// Most header fields per request: 431 with an empty body beyond it. Default
    /// [`DEFAULT_MAX_HEADERS`]. Like `max_header_bytes`, set by [`HttpEndpoint::serve`].
    pub max_headers: usize,
    /// Time a client has to send a request's head; after it the connection is closed without
    /// an answer (slowloris). Default [`DEFAULT_HEADER_READ_TIMEOUT`]. Set by
    /// [`HttpEndpoint::serve`].
    pub header_read_timeout: Duration,
    /// Time a client has to send a POST body: 408 with a JSON-RPC error beyond it. Default
    /// [`DEFAULT_BODY_READ_TIMEOUT`].
    pub body_read_timeout: Duration,
    /// Time one write to a client may stay blocked (a client that stops reading); after it the
    /// connection is closed and its streams' buffers freed. Default [`DEFAULT_WRITE_TIMEOUT`].
    /// Set by [`HttpEndpoint::serve`].
    pub write_timeout: Duration,
    /// GET streams (standalone and `Last-Event-ID` resumptions) one session may hold open:
    /// 429 beyond it. Default [`DEFAULT_MAX_SSE_STREAMS_PER_SESSION`].
    pub max_sse_streams_per_session: usize,
    /// GET streams (handshake-era and 2024-11-05 `/sse`) open on the endpoint: 503 beyond it.
    /// Default [`DEFAULT_MAX_SSE_STREAMS`]. A POST's own SSE answer is not counted here: it
    /// is one request, bounded by [`McpServer::max_in_flight`] per session.
    pub max_sse_streams: usize,
    /// A handshake-era session with no request for this long is forgotten (404 afterwards).
    pub session_idle_timeout: Duration,
    /// At most this many handshake-era sessions at once (503 beyond it).
    pub max_sessions: usize,
    /// Interval of `:` keep-alive comments on long-lived SSE streams.
    pub keep_alive: Duration,
    /// Keeps handshake-era SSE events for resumption with `Last-Event-ID`.
    pub event_store: Arc<dyn EventStore>,
    /// Shares handshake-era sessions with the other instances of a deployment (see
    /// [`SessionStore`] and `docs::deployment`): any instance can then serve any session.
    /// `None` (the default): sessions live in the instance that made them, and no store is
    /// ever called.
    pub session_store: Option<Arc<dyn SessionStore>>,
    /// What an SSE event the [`event_store`](HttpOptions::event_store) fails to keep does.
    /// Off (the default): it goes out without an id, so the client has it but cannot resume
    /// from it; it is counted ([`HttpEndpoint::unstored_events`]) and logged. On: its stream
    /// ends there instead (the request goes on; its later events are stored), so every event
    /// a client receives can be resumed from.
    pub durable_events: bool,
    /// Carries a session's messages to the instance that must handle them (see
    /// [`PeerRouter`] and `docs::deployment`): the client's answers to our requests and its
    /// cancellations, wherever they are POSTed, and what the session sends outside a request
    /// to the one instance holding its GET stream (a GET on another instance meanwhile gets
    /// 409). `None` (the default): they are handled by the instance that receives them,
    /// request ids stay numbers, and each instance only knows of its own GET streams.
    pub peer_router: Option<Arc<dyn PeerRouter>>,
    /// How long a [`peer_router`](HttpOptions::peer_router) claim on a session's GET stream
    /// lives unrenewed; the holder renews it every third of that, so an instance whose claim
    /// was taken from it ends its stream within a third. Default [`STANDALONE_CLAIM_TTL`];
    /// at least 30 ms. Shorter means more router calls per open GET stream (one per renewal).
    pub standalone_claim_ttl: Duration,
    /// How long a 2026-07-28 `tasks/update` for a task running on another instance waits,
    /// relayed through the [`peer_router`](HttpOptions::peer_router), for that instance to
    /// take the answers in; past it the client gets an error saying no instance took them
    /// up (the one running the task may have stopped). Default 5 s.
    pub task_update_relay_timeout: Duration,
    /// Also serves the deprecated 2024-11-05 HTTP+SSE transport (`GET /sse`, `POST
    /// /messages`) beside the endpoint, for clients that predate Streamable HTTP. Only the
    /// [`HttpEndpoint::router`] serves it. Off by default.
    pub legacy_sse: bool,
    /// Answers every POSTed request with one `application/json` body, never an SSE stream
    /// (Python's `json_response=True`), for proxies and clients that cannot read streams.
    /// What a handler sends before its result has nowhere to go on its POST then: a 2025-11-25
    /// session sends it on the GET stream (kept for resumption if none is open); a 2026-07-28
    /// request's notifications (progress, logs) are dropped, and `subscriptions/listen` is
    /// refused. Off by default.
    pub json_response: bool,
    /// Serves the handshake era without sessions (Python's `stateless_http=True`): no
    /// `Mcp-Session-Id`, any instance of a fleet can answer any request, nothing is kept
    /// between requests. `initialize` is answered (with no `subscribe` or `listChanged`
    /// capabilities), and each later request is served on its own as a client of the
    /// `MCP-Protocol-Version` it names that declared no capabilities: no server-to-client
    /// requests (a handler's `elicit`, `sample` or `list_roots` fails with -32021), no GET
    /// stream, no DELETE (405), no `resources/subscribe` (-32601), and `logging/setLevel` is
    /// accepted but has no request to apply to. 2026-07-28 requests are stateless anyway.
    /// Off by default.
    pub stateless: bool,
    /// OAuth 2.1 protection (feature `auth`): every request needs a valid bearer token for
    /// this resource; [`HttpEndpoint::router`] also serves the protected-resource metadata.
    /// Mounting [`HttpEndpoint::into_service`] yourself? Merge
    /// [`auth::metadata_router`](crate::auth::metadata_router) at your path too.
    #[cfg(feature = "auth-server")]
    pub auth: Option<crate::auth::AuthOptions>,
    /// Serve HTTPS with this certificate (feature `tls`): HTTP/1.1 and HTTP/2 by ALPN. `None`
    /// (the default) serves plain HTTP/1.1. Used by [`HttpEndpoint::serve`]; mounted in your
    /// own stack, the endpoint is served with that stack's TLS.
    #[cfg(feature = "tls")]
    pub tls: Option<ServerTls>,
    /// Time a client has to finish the TLS handshake; after it the socket is closed. Default
    /// [`DEFAULT_TLS_HANDSHAKE_TIMEOUT`].
    #[cfg(feature = "tls")]
    pub tls_handshake_timeout: Duration,
    /// HTTP/2 streams open at once on one connection (`SETTINGS_MAX_CONCURRENT_STREAMS`): a
    /// stream beyond it is refused with `RST_STREAM(REFUSED_STREAM)`, the connection and its
    /// other streams unaffected. Default [`DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS`].
    #[cfg(feature = "tls")]
    pub http2_max_concurrent_streams: u32,
    /// HTTP/2 flow-control window of each stream. Default [`DEFAULT_HTTP2_STREAM_WINDOW`].
    #[cfg(feature = "tls")]
    pub http2_initial_stream_window_size: u32,
    /// HTTP/2 flow-control window of each connection. Default
    /// [`DEFAULT_HTTP2_CONNECTION_WINDOW`].
    #[cfg(feature = "tls")]
    pub http2_initial_connection_window_size: u32,
    /// Largest HTTP/2 frame accepted (16 KiB to 16 MiB - 1). Default
    /// [`DEFAULT_HTTP2_MAX_FRAME_SIZE`].
    #[cfg(feature = "tls")]
    pub http2_max_frame_size: u32,
    /// Interval of HTTP/2 PINGs that check an idle peer is still there; `None` (the default)
    /// sends none, since the idle timeout and the SSE keep-alive comments already do the work.
    #[cfg(feature = "tls")]
    pub http2_keep_alive_interval: Option<Duration>,
    /// Time a PING may go unanswered before the connection is closed. Default
    /// [`DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT`].
    #[cfg(feature = "tls")]
    pub http2_keep_alive_timeout: Duration,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("HttpOptions");
        out.field("allow", &self.allow)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_header_bytes", &self.max_header_bytes)
            .field("max_headers", &self.max_headers)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("write_timeout", &self.write_timeout)
            .field("max_sse_streams_per_session", &self.max_sse_streams_per_session)
            .field("max_sse_streams", &self.max_sse_streams)
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("max_sessions", &self.max_sessions)
            .field("keep_alive", &self.keep_alive)
            .field("session_store", &self.session_store.is_some())
            .field("peer_router", &self.peer_router.as_ref().map(|router| router.instance()))
            .field("standalone_claim_ttl", &self.standalone_claim_ttl)
            .field("task_update_relay_timeout", &self.task_update_relay_timeout)
            .field("legacy_sse", &self.legacy_sse)
            .field("json_response", &self.json_response)
            .field("stateless", &self.stateless);
        #[cfg(feature = "tls")]
        out.field("tls", &self.tls)
            .field("tls_handshake_timeout", &self.tls_handshake_timeout)
            .field("http2_max_concurrent_streams", &self.http2_max_concurrent_streams)
            .field("http2_initial_stream_window_size", &self.http2_initial_stream_window_size)
            .field(
                "http2_initial_connection_window_size",
                &self.http2_initial_connection_window_size,
            )
            .field("http2_max_frame_size", &self.http2_max_frame_size)
            .field("http2_keep_alive_interval", &self.http2_keep_alive_interval)
            .field("http2_keep_alive_timeout", &self.http2_keep_alive_timeout);
        out.finish_non_exhaustive()
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            allow: AllowList::default(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            max_headers: DEFAULT_MAX_HEADERS,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            write_timeout: DEFAULT_WRITE_TIMEOUT,
            max_sse_streams_per_session: DEFAULT_MAX_SSE_STREAMS_PER_SESSION,
            max_sse_streams: DEFAULT_MAX_SSE_STREAMS,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            keep_alive: Duration::from_secs(15),
            event_store: Arc::new(MemoryEventStore::default()),
            session_store: None,
            durable_events: false,
            peer_router: None,
            standalone_claim_ttl: STANDALONE_CLAIM_TTL,
            task_update_relay_timeout: Duration::from_secs(5),
            legacy_sse: false,
            json_response: false,
            stateless: false,
            #[cfg(feature = "auth-server")]
            auth: None,
            #[cfg(feature = "tls")]
            tls: None,
            #[cfg(feature = "tls")]
            tls_handshake_timeout: DEFAULT_TLS_HANDSHAKE_TIMEOUT,
            #[cfg(feature = "tls")]
            http2_max_concurrent_streams: DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS,
            #[cfg(feature = "tls")]
            http2_initial_stream_window_size: DEFAULT_HTTP2_STREAM_WINDOW,
            #[cfg(feature = "tls")]
            http2_initial_connection_window_size: DEFAULT_HTTP2_CONNECTION_WINDOW,
            #[cfg(feature = "tls")]
            http2_max_frame_size: DEFAULT_HTTP2_MAX_FRAME_SIZE,
            #[cfg(feature = "tls")]
            http2_keep_alive_interval: None,
            #[cfg(feature = "tls")]
            http2_keep_alive_timeout: DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT,
        }
    }
}

/// `pub fn field(self, value) -> Self` for each field given, documented by the doc comment
/// given, so the setters cannot drift from the fields they set.
macro_rules! setters {
    ($($(#[$attr:meta])* $field:ident: $ty:ty;)*) => {
        impl HttpOptions {
            $(
                $(#[$attr])*
                pub fn $field(mut self, $field: $ty) -> Self {
                    self.$field = $field;
                    self
                }
            )*
        }
    };
}

setters! {
    /// Sets the accepted `Host` and `Origin` headers (default: loopback only).
    allow: AllowList;
    /// Sets the largest request body accepted (default [`DEFAULT_MAX_BODY_BYTES`]).
    max_body_bytes: usize;
    /// Sets the largest request head accepted (default [`DEFAULT_MAX_HEADER_BYTES`]).
    max_header_bytes: usize;
    /// Sets the most header fields per request (default [`DEFAULT_MAX_HEADERS`]).
    max_headers: usize;
    /// Sets the time a client has to send a request's head (default
    /// [`DEFAULT_HEADER_READ_TIMEOUT`]).
    header_read_timeout: Duration;
    /// Sets the time a client has to send a POST body (default [`DEFAULT_BODY_READ_TIMEOUT`]).
    body_read_timeout: Duration;
    /// Sets the time one write to a client may stay blocked (default [`DEFAULT_WRITE_TIMEOUT`]).
    write_timeout: Duration;
    /// Sets the GET streams one session may hold open (default
    /// [`DEFAULT_MAX_SSE_STREAMS_PER_SESSION`]).
    max_sse_streams_per_session: usize;
    /// Sets the GET streams open on the endpoint (default [`DEFAULT_MAX_SSE_STREAMS`]).
    max_sse_streams: usize;
    /// Sets how long an idle handshake-era session is kept (default 30 minutes).
    session_idle_timeout: Duration;
    /// Sets the most handshake-era sessions at once (default 10 000).
    max_sessions: usize;
    /// Sets the interval of keep-alive comments on SSE streams (default 15 s).
    keep_alive: Duration;
    /// Sets where handshake-era SSE events are kept for resumption (default: a
    /// [`MemoryEventStore`]).
    event_store: Arc<dyn EventStore>;
    /// Ends a stream whose event cannot be stored, instead of sending it without an id
    /// (default off; see the field).
    durable_events: bool;
    /// Sets how long a claim on a session's GET stream lives unrenewed (default
    /// [`STANDALONE_CLAIM_TTL`]; see the field).
    standalone_claim_ttl: Duration;
    /// Sets how long a relayed `tasks/update` waits for the instance running its task
    /// (default 5 s; see the field).
    task_update_relay_timeout: Duration;
    /// Also serves the deprecated 2024-11-05 HTTP+SSE transport (default off).
    legacy_sse: bool;
    /// Answers every request with one JSON body, never SSE (default off; see the field).
    json_response: bool;
    /// Serves the handshake era without sessions (default off; see the field).
    stateless: bool;
}

setters! {
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets the time a client has to finish the TLS handshake (default
    /// [`DEFAULT_TLS_HANDSHAKE_TIMEOUT`]).
    tls_handshake_timeout: Duration;
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets the HTTP/2 streams open at once per connection (default
    /// [`DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS`]).
    http2_max_concurrent_streams: u32;
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets the HTTP/2 window of each stream (default [`DEFAULT_HTTP2_STREAM_WINDOW`]).
    http2_initial_stream_window_size: u32;
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets the HTTP/2 window of each connection (default
    /// [`DEFAULT_HTTP2_CONNECTION_WINDOW`]).
    http2_initial_connection_window_size: u32;
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets the largest HTTP/2 frame accepted (default [`DEFAULT_HTTP2_MAX_FRAME_SIZE`]).
    http2_max_frame_size: u32;
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets the interval of HTTP/2 keep-alive PINGs (default `None`: none sent).
    http2_keep_alive_interval: Option<Duration>;
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets the time a PING may go unanswered (default [`DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT`]).
    http2_keep_alive_timeout: Duration;
}

#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
impl HttpOptions {
    /// Serves HTTPS with this certificate chain and key (feature `tls`), HTTP/1.1 and HTTP/2.
    pub fn tls(mut self, tls: ServerTls) -> Self {
        self.tls = Some(tls);
        self
    }
}

impl HttpOptions {
    /// Shares handshake-era sessions through `store` (default: none, each instance keeps its
    /// own): a session made on one instance can be used on any other that has the same store.
    pub fn session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.session_store = Some(store);
        self
    }

    /// Routes a session's answers and cancellations between instances through `router`
    /// (default: none). Use it with a [`session_store`](Self::session_store), so that any
    /// instance can serve the session the message came in.
    pub fn peer_router(mut self, router: Arc<dyn PeerRouter>) -> Self {
        self.peer_router = Some(router);
        self
    }
}

#[cfg(feature = "auth-server")]
impl HttpOptions {
    /// Protects the endpoint with OAuth 2.1 (feature `auth`): every request needs a valid
    /// bearer token for this resource.
    pub fn auth(mut self, auth: crate::auth::AuthOptions) -> Self {
        self.auth = Some(auth);
        self
    }
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
        let relay = options.peer_router.clone().map(|router| {
            let timeout = options.task_update_relay_timeout;
            let server = Arc::downgrade(&self.inner);
            let relay = Arc::new(task_relay::RouterRelay::new(router, server, timeout));
            crate::server::tasks::set_relay(&self.inner, relay.clone());
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
        let mut router = axum::Router::new().route_service("/mcp", self.clone().into_service());
        if self.inner.options.legacy_sse {
            router = router.merge(legacy_sse::routes(self.inner.clone()));
        }
        #[cfg(feature = "auth-server")]
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

    /// Serves the endpoint at `/mcp` on `listener` (TCP_NODELAY on every connection), with the
    /// connection limits of [`HttpOptions`]: head size and field count, header read timeout,
    /// write timeout. Plain HTTP/1.1 by default; with [`HttpOptions::tls`] (feature `tls`),
    /// HTTPS with HTTP/1.1 or HTTP/2 as ALPN chooses, and the TLS and HTTP/2 limits too.
    /// Plain-text connections do not accept HTTP/2 (no `h2c`): MCP clients speak HTTP/1.1 to
    /// a plain-text server, and the TLS-terminating proxies that speak `h2c` to a backend can
    /// speak HTTP/1.1 to it as well.
    pub async fn serve(&self, listener: TcpListener) -> Result<(), Error> {
        // An endpoint made outside a runtime starts following the router here: a relayed
        // `tasks/update` must be heard before any handshake-era session exists.
        self.inner.sessions.start_routing();
        serve::serve(listener, &self.inner.options, self.router()).await?;
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
