//! The JSON-RPC engine both peers run on.
//!
//! One loop per connection owns the connection's state. For every incoming message, in order:
//! responses complete the matching outgoing request; `notifications/cancelled` aborts the
//! handler it names (a cancelled request gets no answer); `notifications/progress` reaches the
//! caller that asked for it; other notifications go to the [`Dispatch`] in order; requests go
//! to the [`Dispatch`] too (those that would start work only within the in-flight limit),
//! which answers at once or returns a future that runs concurrently with everything else.
//! On a connection that negotiated 2025-03-26, a line holding a JSON array is a batch: its
//! elements go the same ways, and the answers to its requests go back as one array.
//!
//! Two halves: [`peer`] is the outgoing side (requests to the peer and their pending answers,
//! progress routing, timeouts, cancellation), [`incoming`] the loop (handlers, admission to
//! the in-flight limit). This module holds what both speak: the [`Dispatch`] a loop drives, its
//! [`Reply`], and [`start`]. With feature `http`, [`outside_loop`] is the engine's one group of
//! HTTP-only items: what an HTTP session's POSTs use to do the loop's work in their own tasks.

use std::future::Future;
use std::pin::Pin;

use modelcontext_types::{McpError, Notification, RawValue, Request};
use tokio::sync::oneshot;

use crate::transport::Connection;

mod incoming;
mod peer;

#[cfg(feature = "http")]
pub(crate) mod outside_loop;

pub(crate) use incoming::catching_panics;
pub use peer::Peer;
pub(crate) use peer::{ProgressCallback, RequestOptions, WeakPeer};

/// A boxed, sendable future: what request handlers return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// The outcome of a request as it goes on the wire.
pub type Outcome = Result<Box<RawValue>, McpError>;

/// How the [`Dispatch`] answers a request.
pub(crate) enum Reply {
    /// The answer is ready.
    Now(Outcome),
    /// The answer needs work; it runs concurrently and can be cancelled.
    Later(BoxFuture<Outcome>),
    /// A stream that lives until cancelled (`subscriptions/listen`): it runs like `Later`, but
    /// when the peer goes away it is stopped instead of awaited.
    Stream(BoxFuture<Outcome>),
}

/// The protocol side of a connection: what to do with requests and notifications.
///
/// Called from the engine loop, one message at a time and in arrival order, with `&mut self`:
/// per-connection state (the negotiated era, say) needs no lock.
pub(crate) trait Dispatch: Send + 'static {
    fn request(&mut self, request: Request, peer: &Peer) -> Reply;
    fn notification(&mut self, notification: Notification, peer: &Peer);

    /// How many of the peer's requests may have a handler running at once (listen streams
    /// aside); a request that would start one more is refused before its handler is built
    /// (see [`admit`](incoming::admit)), while immediate answers, responses and cancellations
    /// keep flowing.
    fn max_in_flight(&self) -> usize {
        usize::MAX
    }

    /// Whether `request`'s handler runs the application's code, so that the in-flight limit
    /// applies to it (every request, unless the dispatch knows better). Asked before
    /// [`Dispatch::request`], from the method alone, so that a refusal costs nothing: it must
    /// be cheap and leave the dispatch as it was.
    fn starts_work(&self, _request: &Request) -> bool {
        true
    }

    /// `request` was refused with `error` before it was dispatched (the in-flight limit): a
    /// chance to record it. Only called on refusal.
    fn refused(&self, _request: &Request, _error: &McpError) {}

    /// Whether a JSON array read from the transport is a batch to answer (the connection
    /// negotiated 2025-03-26) rather than refused as an invalid request. Asked only when one
    /// arrives.
    fn accepts_batches(&self) -> bool {
        false
    }
}

/// Stops the engine loop when dropped.
pub(crate) struct Stop(#[allow(dead_code)] oneshot::Sender<()>);

/// Starts the engine on `connection`. Returns the [`Peer`] for sending, the loop's future
/// (the caller spawns or awaits it; it ends when the peer goes away or [`Stop`] is dropped,
/// then finishes the transport's shutdown), and the [`Stop`] handle. End of input means the
/// peer is gone (stdio, memory): streams stop, other requests are answered first.
pub(crate) fn start<D: Dispatch>(
    connection: Connection,
    dispatch: D,
) -> (Peer, impl Future<Output = ()> + Send + 'static, Stop) {
    let Connection { sender, receiver, shutdown } = connection;
    let peer = Peer::new(sender);
    // Nobody hands this loop handlers: its handover channel is closed from the start.
    let (_, handed_over) = tokio::sync::mpsc::unbounded_channel();
    let handovers = (handed_over, Default::default());
    let (run, stop) = incoming::run_for(peer.clone(), receiver, dispatch, true, handovers);
    let run = async move {
        run.await;
        if let Some(shutdown) = shutdown {
            shutdown.await;
        }
    };
    (peer, run, stop)
}
