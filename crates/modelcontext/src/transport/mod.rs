//! Transports move whole JSON-RPC messages between two peers; framing lives inside them.
//!
//! The engine never sees bytes: it gets a [`Connection`], a pair of channels (the shape
//! lsp-server chose). Channels rather than `async fn send/recv(&mut self)` because the engine
//! must read while it writes, and two `&mut self` futures cannot both be pending in a `select!`.

use std::future::Future;
use std::pin::Pin;

use modelcontext_types::{DecodeError, Message};
use tokio::sync::mpsc;

mod child;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
mod memory;
#[cfg(feature = "http")]
pub(crate) mod sse;
mod std_streams;
mod stdio;

pub use child::ChildProcess;
pub use memory::memory_pair;
pub use std_streams::{ProcessStdin, ProcessStdout};
pub use stdio::{DEFAULT_MAX_LINE_BYTES, Stdio};

/// What a transport hands the engine: a decoded message, or the reason a frame did not decode
/// (the engine answers those with the JSON-RPC error the spec prescribes).
pub type Incoming = Result<Message, DecodeError>;

/// A future that finishes a transport's shutdown once the engine has let go of the sender.
pub type Shutdown = Pin<Box<dyn Future<Output = ()> + Send>>;

/// One open connection to a peer: channels of whole messages.
pub struct Connection {
    /// Messages to the peer. Dropping every clone closes the outgoing side (EOF on stdio).
    pub sender: mpsc::Sender<Message>,
    /// Messages from the peer; `None` once the peer is gone.
    pub receiver: mpsc::Receiver<Incoming>,
    /// Awaited after the engine stops, e.g. to reap a child process.
    pub shutdown: Option<Shutdown>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").finish_non_exhaustive()
    }
}

/// `network.transport` of a pipe (stdio, and the in-memory pipes that carry the same bytes).
pub(crate) const PIPE: &str = "pipe";
/// `network.transport` of HTTP.
#[cfg(feature = "http")]
pub(crate) const TCP: &str = "tcp";

/// Anything that can carry whole JSON-RPC messages.
pub trait Transport: Send + 'static {
    /// Starts the transport's IO tasks and returns the message channels. Needs a Tokio runtime.
    fn open(self) -> Connection;

    /// OpenTelemetry's `network.transport` for this transport: `pipe` unless it says
    /// otherwise (HTTP says `tcp`). Read by the client's spans.
    #[doc(hidden)]
    fn network_transport(&self) -> &'static str {
        PIPE
    }

    /// Where the transport keeps the session id it learns (a handshake-era HTTP session), for
    /// the client's spans (`mcp.session.id`). Asked before [`Transport::open`].
    #[doc(hidden)]
    fn session_id_watch(&self) -> Option<SessionIdWatch> {
        None
    }

    /// Where the transport says that what it opens for a session after the client's
    /// `notifications/initialized` is open (over HTTP, the handshake era's GET stream), so
    /// that the client is connected only then. Asked before [`Transport::open`].
    #[doc(hidden)]
    fn settled(&self) -> Option<Settled> {
        None
    }
}

/// Said once by a transport when the session it carries is fully open, and waited for once
/// by the client that connects through it: a server-initiated message sent right after the
/// client connected (a list change) then finds its stream there.
#[doc(hidden)]
#[derive(Clone, Debug, Default)]
pub struct Settled(std::sync::Arc<tokio::sync::Notify>);

impl Settled {
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn say(&self) {
        // A permit: the client may start waiting after it was said.
        self.0.notify_one();
    }

    pub(crate) async fn wait(&self) {
        self.0.notified().await;
    }
}

/// A session id a transport learns as it goes, shared with the client that reads it into its
/// spans. Written once per session (and on renewal), read only when a span is recorded.
#[doc(hidden)]
#[derive(Clone, Debug, Default)]
pub struct SessionIdWatch(std::sync::Arc<std::sync::RwLock<Option<std::sync::Arc<str>>>>);

impl SessionIdWatch {
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn set(&self, id: Option<&str>) {
        let mut slot = self.0.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        *slot = id.map(std::sync::Arc::from);
    }

    pub(crate) fn get(&self) -> Option<std::sync::Arc<str>> {
        self.0.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

impl Transport for Connection {
    fn open(self) -> Connection {
        self
    }
}

/// How many messages may wait in a channel before the sender waits: enough to batch writes,
/// small enough to push back on a peer that floods us.
pub(crate) const CHANNEL_CAPACITY: usize = 64;
