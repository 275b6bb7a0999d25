//! [`HttpOptions`], the settings of an HTTP endpoint, in groups: limits on each request and
//! connection, handshake-era sessions, SSE streams, and TLS with HTTP/2; and their defaults.

use std::sync::Arc;
use std::time::Duration;

use super::events::{EventStore, MemoryEventStore};
use super::peer_router::{PeerRouter, STANDALONE_CLAIM_TTL};
use super::security::AllowList;
use super::session_store::SessionStore;
#[cfg(feature = "tls")]
use super::tls::ServerTls;

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

/// Settings of an [`HttpEndpoint`](super::HttpEndpoint). Secure by default: loopback-only
/// `Host`/`Origin`.
///
/// Grouped by what they govern: [`limits`](HttpOptions::limits) on each request and
/// connection, [`sessions`](HttpOptions::sessions) of the handshake era,
/// [`streams`](HttpOptions::streams) (SSE), and [`tls`](HttpOptions::tls) (feature `tls`).
/// Start from the defaults and change what you need with the setters, which keep the names
/// of the settings (`max_body_bytes`, `session_idle_timeout`, …), or set a whole group:
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
/// assert_eq!(options.limits.max_body_bytes, 1024 * 1024);
/// assert_eq!(options.sessions.idle_timeout, Duration::from_secs(600));
/// ```
///
/// Non-exhaustive, so that settings can be added without breaking you: it cannot be built
/// with a struct literal, but its fields can be read and assigned.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Accepted `Host` and `Origin` headers (DNS-rebinding protection).
    pub allow: AllowList,
    /// What one request or connection may cost: sizes and read/write times.
    pub limits: HttpLimits,
    /// Handshake-era sessions: how many, how long, shared how across instances.
    pub sessions: SessionOptions,
    /// SSE streams: how many, their keep-alive, their events' store, or none at all.
    pub streams: StreamOptions,
    /// OAuth 2.1 protection (feature `auth`): every request needs a valid bearer token for
    /// this resource; [`HttpEndpoint::router`](super::HttpEndpoint::router) also serves the
    /// protected-resource metadata. Mounting
    /// [`HttpEndpoint::into_service`](super::HttpEndpoint::into_service) yourself? Merge
    /// [`auth::metadata_router`](crate::auth::metadata_router) at your path too.
    #[cfg(feature = "auth-server")]
    pub auth: Option<crate::auth::AuthOptions>,
    /// HTTPS and HTTP/2 (feature `tls`).
    #[cfg(feature = "tls")]
    pub tls: TlsOptions,
}

/// What one request or connection may cost ([`HttpOptions::limits`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpLimits {
    /// Largest request body accepted, counted on the bytes read, chunked or not (413 beyond
    /// it). Default [`DEFAULT_MAX_BODY_BYTES`].
    pub max_body_bytes: usize,
    /// Largest request head (request line and headers, in bytes) accepted: 431 with an empty
    /// body and the connection closed beyond it. Default [`DEFAULT_MAX_HEADER_BYTES`].
    /// Applies to [`HttpEndpoint::serve`](super::HttpEndpoint::serve) and
    /// [`McpServer::serve_http`](crate::McpServer::serve_http); mounted in your own axum
    /// stack, the endpoint gets that stack's settings.
    pub max_header_bytes: usize,
    /// Most header fields per request: 431 with an empty body beyond it. Default
    /// [`DEFAULT_MAX_HEADERS`]. Like `max_header_bytes`, set by `HttpEndpoint::serve`.
    pub max_headers: usize,
    /// Time a client has to send a request's head; after it the connection is closed without
    /// an answer (slowloris). Default [`DEFAULT_HEADER_READ_TIMEOUT`]. Set by
    /// `HttpEndpoint::serve`.
    pub header_read_timeout: Duration,
    /// Time a client has to send a POST body: 408 with a JSON-RPC error beyond it. Default
    /// [`DEFAULT_BODY_READ_TIMEOUT`].
    pub body_read_timeout: Duration,
    /// Time one write to a client may stay blocked (a client that stops reading); after it the
    /// connection is closed and its streams' buffers freed. Default [`DEFAULT_WRITE_TIMEOUT`].
    /// Set by `HttpEndpoint::serve`.
    pub write_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            max_headers: DEFAULT_MAX_HEADERS,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            write_timeout: DEFAULT_WRITE_TIMEOUT,
        }
    }
}

/// Handshake-era sessions ([`HttpOptions::sessions`]).
#[derive(Clone)]
#[non_exhaustive]
pub struct SessionOptions {
    /// A session with no request for this long is forgotten (404 afterwards). Default 30
    /// minutes.
    pub idle_timeout: Duration,
    /// At most this many sessions at once (503 beyond it). Default 10 000.
    pub max_sessions: usize,
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
    /// Shares sessions with the other instances of a deployment (see [`SessionStore`] and
    /// `docs::deployment`): any instance can then serve any session. `None` (the default):
    /// sessions live in the instance that made them, and no store is ever called.
    pub store: Option<Arc<dyn SessionStore>>,
    /// Carries a session's messages to the instance that must handle them (see
    /// [`PeerRouter`] and `docs::deployment`): the client's answers to our requests and its
    /// cancellations, wherever they are POSTed, and what the session sends outside a request
    /// to the one instance holding its GET stream (a GET on another instance meanwhile gets
    /// 409). `None` (the default): they are handled by the instance that receives them,
    /// request ids stay numbers, and each instance only knows of its own GET streams.
    pub peer_router: Option<Arc<dyn PeerRouter>>,
    /// How long a [`peer_router`](SessionOptions::peer_router) claim on a session's GET
    /// stream lives unrenewed; the holder renews it every third of that, so an instance whose
    /// claim was taken from it ends its stream within a third. Default
    /// [`STANDALONE_CLAIM_TTL`]; at least 30 ms. Shorter means more router calls per open GET
    /// stream (one per renewal).
    pub standalone_claim_ttl: Duration,
    /// How long a 2026-07-28 `tasks/update` for a task running on another instance waits,
    /// relayed through the [`peer_router`](SessionOptions::peer_router), for that instance to
    /// take the answers in; past it the client gets an error saying no instance took them
    /// up (the one running the task may have stopped). Default 5 s.
    pub task_update_relay_timeout: Duration,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            stateless: false,
            store: None,
            peer_router: None,
            standalone_claim_ttl: STANDALONE_CLAIM_TTL,
            task_update_relay_timeout: Duration::from_secs(5),
        }
    }
}

impl std::fmt::Debug for SessionOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionOptions")
            .field("idle_timeout", &self.idle_timeout)
            .field("max_sessions", &self.max_sessions)
            .field("stateless", &self.stateless)
            .field("store", &self.store.is_some())
            .field("peer_router", &self.peer_router.as_ref().map(|router| router.instance()))
            .field("standalone_claim_ttl", &self.standalone_claim_ttl)
            .field("task_update_relay_timeout", &self.task_update_relay_timeout)
            .finish()
    }
}

/// SSE streams ([`HttpOptions::streams`]).
#[derive(Clone)]
#[non_exhaustive]
pub struct StreamOptions {
    /// GET streams (standalone and `Last-Event-ID` resumptions) one session may hold open:
    /// 429 beyond it. Default [`DEFAULT_MAX_SSE_STREAMS_PER_SESSION`].
    pub max_per_session: usize,
    /// GET streams (handshake-era and 2024-11-05 `/sse`) open on the endpoint: 503 beyond it.
    /// Default [`DEFAULT_MAX_SSE_STREAMS`]. A POST's own SSE answer is not counted here: it
    /// is one request, bounded by [`McpServer::max_in_flight`](crate::McpServer::max_in_flight)
    /// per session.
    pub max_open: usize,
    /// Interval of `:` keep-alive comments on long-lived SSE streams. Default 15 s.
    pub keep_alive: Duration,
    /// Keeps handshake-era SSE events for resumption with `Last-Event-ID`. Default: a
    /// [`MemoryEventStore`].
    pub event_store: Arc<dyn EventStore>,
    /// What an SSE event the [`event_store`](StreamOptions::event_store) fails to keep does.
    /// Off (the default): it goes out without an id, so the client has it but cannot resume
    /// from it; it is counted
    /// ([`HttpEndpoint::unstored_events`](super::HttpEndpoint::unstored_events)) and logged.
    /// On: its stream ends there instead (the request goes on; its later events are stored),
    /// so every event a client receives can be resumed from.
    pub durable_events: bool,
    /// Answers every POSTed request with one `application/json` body, never an SSE stream
    /// (Python's `json_response=True`), for proxies and clients that cannot read streams.
    /// What a handler sends before its result has nowhere to go on its POST then: a 2025-11-25
    /// session sends it on the GET stream (kept for resumption if none is open); a 2026-07-28
    /// request's notifications (progress, logs) are dropped, and `subscriptions/listen` is
    /// refused. Off by default.
    pub json_response: bool,
    /// Also serves the deprecated 2024-11-05 HTTP+SSE transport (`GET /sse`, `POST
    /// /messages`) beside the endpoint, for clients that predate Streamable HTTP. Only
    /// [`HttpEndpoint::router`](super::HttpEndpoint::router) serves it. Off by default.
    pub legacy_sse: bool,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            max_per_session: DEFAULT_MAX_SSE_STREAMS_PER_SESSION,
            max_open: DEFAULT_MAX_SSE_STREAMS,
            keep_alive: Duration::from_secs(15),
            event_store: Arc::new(MemoryEventStore::default()),
            durable_events: false,
            json_response: false,
            legacy_sse: false,
        }
    }
}

impl std::fmt::Debug for StreamOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamOptions")
            .field("max_per_session", &self.max_per_session)
            .field("max_open", &self.max_open)
            .field("keep_alive", &self.keep_alive)
            .field("durable_events", &self.durable_events)
            .field("json_response", &self.json_response)
            .field("legacy_sse", &self.legacy_sse)
            .finish_non_exhaustive()
    }
}

/// HTTPS and HTTP/2 ([`HttpOptions::tls`], feature `tls`).
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TlsOptions {
    /// Serve HTTPS with this certificate: HTTP/1.1 and HTTP/2 by ALPN. `None` (the default)
    /// serves plain HTTP/1.1. Used by [`HttpEndpoint::serve`](super::HttpEndpoint::serve);
    /// mounted in your own stack, the endpoint is served with that stack's TLS.
    pub certificate: Option<ServerTls>,
    /// Time a client has to finish the TLS handshake; after it the socket is closed. Default
    /// [`DEFAULT_TLS_HANDSHAKE_TIMEOUT`].
    pub handshake_timeout: Duration,
    /// HTTP/2 streams open at once on one connection (`SETTINGS_MAX_CONCURRENT_STREAMS`): a
    /// stream beyond it is refused with `RST_STREAM(REFUSED_STREAM)`, the connection and its
    /// other streams unaffected. Default [`DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS`].
    pub http2_max_concurrent_streams: u32,
    /// HTTP/2 flow-control window of each stream. Default [`DEFAULT_HTTP2_STREAM_WINDOW`].
    pub http2_initial_stream_window_size: u32,
    /// HTTP/2 flow-control window of each connection. Default
    /// [`DEFAULT_HTTP2_CONNECTION_WINDOW`].
    pub http2_initial_connection_window_size: u32,
    /// Largest HTTP/2 frame accepted (16 KiB to 16 MiB - 1). Default
    /// [`DEFAULT_HTTP2_MAX_FRAME_SIZE`].
    pub http2_max_frame_size: u32,
    /// Interval of HTTP/2 PINGs that check an idle peer is still there; `None` (the default)
    /// sends none, since the idle timeout and the SSE keep-alive comments already do the work.
    pub http2_keep_alive_interval: Option<Duration>,
    /// Time a PING may go unanswered before the connection is closed. Default
    /// [`DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT`].
    pub http2_keep_alive_timeout: Duration,
}

#[cfg(feature = "tls")]
impl Default for TlsOptions {
    fn default() -> Self {
        TlsOptions {
            certificate: None,
            handshake_timeout: DEFAULT_TLS_HANDSHAKE_TIMEOUT,
            http2_max_concurrent_streams: DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS,
            http2_initial_stream_window_size: DEFAULT_HTTP2_STREAM_WINDOW,
            http2_initial_connection_window_size: DEFAULT_HTTP2_CONNECTION_WINDOW,
            http2_max_frame_size: DEFAULT_HTTP2_MAX_FRAME_SIZE,
            http2_keep_alive_interval: None,
            http2_keep_alive_timeout: DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT,
        }
    }
}

/// `pub fn setting(self, value) -> Self` for each setting given, which sets the field at the
/// path given and is documented by the doc comment given, so the setters cannot drift from
/// the fields they set.
macro_rules! setters {
    ($($(#[$attr:meta])* $setter:ident => $($path:ident).+ : $ty:ty;)*) => {
        impl HttpOptions {
            $(
                $(#[$attr])*
                pub fn $setter(mut self, value: $ty) -> Self {
                    self.$($path).+ = value;
                    self
                }
            )*
        }
    };
}

setters! {
    /// Sets the accepted `Host` and `Origin` headers (default: loopback only).
    allow => allow: AllowList;
    /// Sets every limit on requests and connections at once.
    limits => limits: HttpLimits;
    /// Sets every session setting at once.
    sessions => sessions: SessionOptions;
    /// Sets every SSE stream setting at once.
    streams => streams: StreamOptions;
    /// Sets the largest request body accepted (default [`DEFAULT_MAX_BODY_BYTES`]).
    max_body_bytes => limits.max_body_bytes: usize;
    /// Sets the largest request head accepted (default [`DEFAULT_MAX_HEADER_BYTES`]).
    max_header_bytes => limits.max_header_bytes: usize;
    /// Sets the most header fields per request (default [`DEFAULT_MAX_HEADERS`]).
    max_headers => limits.max_headers: usize;
    /// Sets the time a client has to send a request's head (default
    /// [`DEFAULT_HEADER_READ_TIMEOUT`]).
    header_read_timeout => limits.header_read_timeout: Duration;
    /// Sets the time a client has to send a POST body (default [`DEFAULT_BODY_READ_TIMEOUT`]).
    body_read_timeout => limits.body_read_timeout: Duration;
    /// Sets the time one write to a client may stay blocked (default [`DEFAULT_WRITE_TIMEOUT`]).
    write_timeout => limits.write_timeout: Duration;
    /// Sets how long an idle handshake-era session is kept (default 30 minutes).
    session_idle_timeout => sessions.idle_timeout: Duration;
    /// Sets the most handshake-era sessions at once (default 10 000).
    max_sessions => sessions.max_sessions: usize;
    /// Serves the handshake era without sessions (default off; see
    /// [`SessionOptions::stateless`]).
    stateless => sessions.stateless: bool;
    /// Sets how long a claim on a session's GET stream lives unrenewed (default
    /// [`STANDALONE_CLAIM_TTL`]; see [`SessionOptions::standalone_claim_ttl`]).
    standalone_claim_ttl => sessions.standalone_claim_ttl: Duration;
    /// Sets how long a relayed `tasks/update` waits for the instance running its task
    /// (default 5 s; see [`SessionOptions::task_update_relay_timeout`]).
    task_update_relay_timeout => sessions.task_update_relay_timeout: Duration;
    /// Sets the GET streams one session may hold open (default
    /// [`DEFAULT_MAX_SSE_STREAMS_PER_SESSION`]).
    max_sse_streams_per_session => streams.max_per_session: usize;
    /// Sets the GET streams open on the endpoint (default [`DEFAULT_MAX_SSE_STREAMS`]).
    max_sse_streams => streams.max_open: usize;
    /// Sets the interval of keep-alive comments on SSE streams (default 15 s).
    keep_alive => streams.keep_alive: Duration;
    /// Sets where handshake-era SSE events are kept for resumption (default: a
    /// [`MemoryEventStore`]).
    event_store => streams.event_store: Arc<dyn EventStore>;
    /// Ends a stream whose event cannot be stored, instead of sending it without an id
    /// (default off; see [`StreamOptions::durable_events`]).
    durable_events => streams.durable_events: bool;
    /// Answers every request with one JSON body, never SSE (default off; see
    /// [`StreamOptions::json_response`]).
    json_response => streams.json_response: bool;
    /// Also serves the deprecated 2024-11-05 HTTP+SSE transport (default off).
    legacy_sse => streams.legacy_sse: bool;
}

setters! {
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets every TLS and HTTP/2 setting at once.
    tls_options => tls: TlsOptions;
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets the time a client has to finish the TLS handshake (default
    /// [`DEFAULT_TLS_HANDSHAKE_TIMEOUT`]).
    tls_handshake_timeout => tls.handshake_timeout: Duration;
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets the HTTP/2 streams open at once per connection (default
    /// [`DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS`]).
    http2_max_concurrent_streams => tls.http2_max_concurrent_streams: u32;
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets the HTTP/2 window of each stream (default [`DEFAULT_HTTP2_STREAM_WINDOW`]).
    http2_initial_stream_window_size => tls.http2_initial_stream_window_size: u32;
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets the HTTP/2 window of each connection (default
    /// [`DEFAULT_HTTP2_CONNECTION_WINDOW`]).
    http2_initial_connection_window_size => tls.http2_initial_connection_window_size: u32;
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets the largest HTTP/2 frame accepted (default [`DEFAULT_HTTP2_MAX_FRAME_SIZE`]).
    http2_max_frame_size => tls.http2_max_frame_size: u32;
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets the interval of HTTP/2 keep-alive PINGs (default `None`: none sent).
    http2_keep_alive_interval => tls.http2_keep_alive_interval: Option<Duration>;
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    /// Sets the time a PING may go unanswered (default [`DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT`]).
    http2_keep_alive_timeout => tls.http2_keep_alive_timeout: Duration;
}

#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
impl HttpOptions {
    /// Serves HTTPS with this certificate chain and key (feature `tls`), HTTP/1.1 and HTTP/2.
    pub fn tls(mut self, tls: ServerTls) -> Self {
        self.tls.certificate = Some(tls);
        self
    }
}

impl HttpOptions {
    /// Shares handshake-era sessions through `store` (default: none, each instance keeps its
    /// own): a session made on one instance can be used on any other that has the same store.
    pub fn session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.sessions.store = Some(store);
        self
    }

    /// Routes a session's answers and cancellations between instances through `router`
    /// (default: none). Use it with a [`session_store`](Self::session_store), so that any
    /// instance can serve the session the message came in.
    pub fn peer_router(mut self, router: Arc<dyn PeerRouter>) -> Self {
        self.sessions.peer_router = Some(router);
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
